"""Plan a vibration-free move, then check it on the exported FMU.

The plan (``flexfmu.control.planning``) is written as ``torques.csv`` (a time
column and tau[j], each row held until the next) and replayed through the
plant FMU's co-simulation interface for the move plus a settling time. Its
residual tip vibration after the move (RMS distance of the tip from its mean
position) is compared with paper 004's quintic trajectory under computed
torque (kp 36, kd 12: 6 rad/s, critically damped) with the same move time, run through the same FMU; on an
arm whose sampled loop those gains destabilise (Canadarm2's light rotors behind stiff springs: a 1 kHz loop
with kd 12 on 1.8e5 kg m^2 of link diverges in 5 ms), the same law at the highest bandwidth 6 / 2^k rad/s
whose sampled loop decays (:meth:`flexfmu.control.closed_loop.ClosedLoop.decay_rate`), and where none does
(Canadarm2 again: at kp = kd = 0 the law's gravity term, fed back from the motor angles, makes the loop grow
at 5 1/s), the quintic's
computed torque as feedforward, sampled at the controller's step and held, open loop like the plan. Both
start from the plan's start, every coordinate given. The FMU replay's joint coordinates at the switch times
are also compared with the plan's own states (the planner's prediction).
Writes ``plan.json``, ``report.md``, ``plan.png``, ``torques.csv``,
``plant.fmu`` and IPOPT's iteration log ``ipopt.log``; the result passes when
the plan leaves at least 10 times less residual vibration.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from flexfmu.control.closed_loop import ClosedLoop
from flexfmu.control.controllers import HeldInputs, SampledController
from flexfmu.control.laws import build_law, rigid_computed_torque, rigid_selection
from flexfmu.control.planning import PlanSettings, held_goal_is_stable, plan_motion
from flexfmu.control.references import quintic_reference
from flexfmu.dynamics.metadata import DEFLECTION, JOINT_ANGLE, TIP_POSITION
from flexfmu.harness.reports.envelope import envelope_lines, envelope_outputs, envelope_summary
from flexfmu.harness.reports.plots import plot_plan
from flexfmu.harness.running.runner import run_fmu
from flexfmu.harness.workflows.verify import residual_tip_vibration
from flexfmu.targets import ExportSettings, export_fmu

REQUIRED_REDUCTION = 10.0
BASELINE_BANDWIDTH = 6.0  # rad/s: paper 004's kp 36, kd 12
BASELINE_HALVINGS = 12  # the slowest baseline tried is 6 / 2^12 rad/s


@dataclass(frozen=True)
class PlanCheck:
    """A planned move and what the FMU made of it (see the module docstring)."""

    arm: str
    start_rad: list[float]
    goal_rad: list[float]
    move_time_s: float
    settle_s: float
    interval_s: float
    torque_limit_Nm: list[float] | None
    ipopt_iterations: int
    ipopt_status: str
    plan_s: float
    prediction_error_rad: float
    effort_N2m2s: float
    peak_torque_Nm: list[float]
    residual_tip_vibration_plan_m: float
    residual_tip_vibration_baseline_m: float
    reduction: float
    final_joint_error_rad: list[float]
    goal_stable_under_held_torque: bool
    baseline: str
    envelope: dict | None = None

    @property
    def passed(self) -> bool:
        return self.reduction >= REQUIRED_REDUCTION


def plan_on_fmu(model, settings: PlanSettings, out: Path, settle: float = 2.0, sample_step: float = 1e-3,
                progress: bool = False) -> PlanCheck:
    """Plan ``settings`` for ``model``, replay it and the baseline through the
    exported FMU, write the files into ``out`` and return the figures.

    Parameters
    ----------
    model : Model
    settings : PlanSettings
    out : Path
        Folder for the files listed in the module docstring (created if needed).
    settle : float
        How long both replays run on after the move time, s; the residual vibration is measured over it.
    sample_step : float
        The controller sample and FMU communication step, s.
    progress : bool
        Print IPOPT's iteration log as well (it always goes to ``ipopt.log``).

    Returns
    -------
    PlanCheck
    """
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    plan = plan_motion(model, settings, sample_step, progress=progress, log_file=out / "ipopt.log")
    plan_s = time.perf_counter() - began
    write_torques(out / "torques.csv", model.inputs, plan)
    duration = settings.move_time + settle
    fmu = export_fmu(model, out / "plant.fmu", ExportSettings(communication_step=sample_step,
                                                              stop_time=duration)).path
    grid = np.linspace(0.0, duration, int(round(duration / sample_step)) + 1)
    signals = (model.outputs_of(TIP_POSITION) + model.outputs_of(DEFLECTION) + model.outputs_of(JOINT_ANGLE)
               + joint_coordinates(model) + envelope_outputs(model))
    start = rest_coordinates(model, settings.start)
    replay = run_fmu(fmu, model, HeldInputs.from_csv(out / "torques.csv", model.inputs), grid, start, record=signals)
    baseline_gains = stable_baseline_gains(model, settings, sample_step)
    baseline = run_fmu(fmu, model, baseline_controller(model, settings, baseline_gains, grid), grid, start,
                       record=signals)
    planned_residual = residual_tip_vibration(model, replay, settings.move_time)
    baseline_residual = residual_tip_vibration(model, baseline, settings.move_time)
    check = PlanCheck(
        arm=model.arm.name, start_rad=list(settings.start), goal_rad=list(settings.goal),
        move_time_s=settings.move_time, settle_s=settle, interval_s=settings.interval,
        torque_limit_Nm=None if settings.torque_limit is None else list(settings.torque_limit),
        ipopt_iterations=plan.iterations, ipopt_status=plan.status, plan_s=plan_s,
        prediction_error_rad=prediction_error(model, plan, replay, grid), effort_N2m2s=plan.effort,
        peak_torque_Nm=np.abs(plan.torques).max(axis=0).tolist(),
        residual_tip_vibration_plan_m=planned_residual, residual_tip_vibration_baseline_m=baseline_residual,
        reduction=baseline_residual / max(planned_residual, 1e-300),
        final_joint_error_rad=[float(replay[name][-1] - goal)
                               for name, goal in zip(joint_coordinates(model), settings.goal)],
        goal_stable_under_held_torque=held_goal_is_stable(model, plan),
        baseline=("quintic reference, computed-torque feedforward (no gains of the law give a decaying sampled loop)"
                  if baseline_gains is None else
                  f"quintic reference, computed torque kp {baseline_gains['kp']:.4g}, kd {baseline_gains['kd']:.4g}"),
        envelope=envelope_summary(model, {"plan": replay, "baseline": baseline}, start),
    )
    (out / "plan.json").write_text(json.dumps(asdict(check), indent=2))
    plot_plan(replay, baseline, model, settings.move_time, out / "plan.png",
              f"{model.arm.name}: planned torques vs quintic computed torque (FMU runs)")
    (out / "report.md").write_text(_report(check))
    return check


def write_torques(path: Path, names: list[str], plan) -> None:
    """Write ``plan`` (a :class:`flexfmu.control.planning.Plan`) to ``path`` as a CSV of switch points, row i
    holding until row i+1, with a column per input named in ``names``."""
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["time [s]"] + [f"{name} [N.m]" for name in names])
        for t, u in plan.switches():
            writer.writerow([repr(t)] + [repr(v) for v in u])


def rest_coordinates(model, angles) -> dict[str, float]:
    """Start values of every coordinate of the arm of ``model`` at rest with its joints at ``angles``, the
    plan's start: joint angles, rotors with their joints, modal coordinates zero (links straight). All of
    them: an FMU keeps the start values it was exported with for any coordinate not given, and those are
    the static equilibrium at the arm's own start pose (its links' sag there), not the plan's start."""
    S = rigid_selection(model)
    return {name: float(row @ angles) for name, row in zip(model.coordinates, S)}


def baseline_controller(model, settings: PlanSettings, gains: dict[str, float] | None,
                        grid: np.ndarray) -> SampledController | HeldInputs:
    """Paper 004's move for ``model`` between the start and goal of ``settings``
    in its move time: quintic reference, computed torque with ``gains`` on the rotor
    encoders when the joints are flexible (collocated), else on the joint
    encoders; with ``gains`` None, the rigid model's computed torque of the reference itself, held from each
    sample time of ``grid`` to the next (feedforward)."""
    reference = quintic_reference(settings.start, settings.goal, settings.move_time)
    if gains is None:
        torques = rigid_computed_torque(model, reference, np.minimum(grid, settings.move_time))
        return HeldInputs([(float(t), list(u)) for t, u in zip(grid, torques)], list(model.inputs))
    law = _baseline_law(model, gains)
    return SampledController(law, law.gain_vector(), reference)


def _baseline_law(model, gains: dict[str, float]):
    measure = "motor" if model.coordinates_of("rotor") else "joint"
    return build_law(model, "computed_torque", measure=measure, **gains)


def stable_baseline_gains(model, settings: PlanSettings, sample_step: float) -> dict[str, float] | None:
    """The baseline's gains for the move of ``settings`` on ``model``: kp = w^2, kd = 2 w at w = 6 rad/s
    (paper 004's), halved until the loop sampled every ``sample_step`` s decays at the start, middle and end
    of the move (its slowest decay rate positive); None if even 6 / 2^BASELINE_HALVINGS rad/s does not."""
    law = _baseline_law(model, {"kp": BASELINE_BANDWIDTH ** 2, "kd": 2 * BASELINE_BANDWIDTH})
    reference = quintic_reference(settings.start, settings.goal, settings.move_time)
    time = np.arange(int(round(settings.move_time / sample_step)) + 1) * sample_step
    loop = ClosedLoop(model, law, reference, time, np.zeros(2 * len(model.coordinates)), native=False)
    for halving in range(BASELINE_HALVINGS + 1):
        omega = BASELINE_BANDWIDTH / 2 ** halving
        gains = {"kp": omega ** 2, "kd": 2 * omega}
        if loop.decay_rate(law.gain_vector(gains), poses=3) > 0:
            return gains
    return None


def joint_coordinates(model) -> list[str]:
    """The names of the joint coordinates theta of ``model`` (the plan's states; the FMU's ``joint[j].angle``
    outputs are the encoders' angles, which on a flexible link add the slope of its tip)."""
    return [model.coordinates[k] for k in model.coordinates_of("joint")]


def prediction_error(model, plan, replay, grid) -> float:
    """The largest difference, rad, between the joint coordinates of the FMU ``replay`` of ``model`` (sampled
    on ``grid``, recording :func:`joint_coordinates`) and the states of ``plan`` at its switch times: how well
    the FMU follows the planner's prediction."""
    rows = np.searchsorted(grid, plan.switch_times - 1e-12)
    replayed = np.column_stack([replay[name] for name in joint_coordinates(model)])[rows]
    return float(np.max(np.abs(replayed - plan.states[:, model.coordinates_of("joint")])))


def _report(s: PlanCheck) -> str:
    stable = s.goal_stable_under_held_torque
    return f"""# Planned move of {s.arm}

From {s.start_rad} to {s.goal_rad} rad in {s.move_time_s} s; torques held over
{s.interval_s} s intervals, limit {s.torque_limit_Nm or 'none'} N m. IPOPT: {s.ipopt_status} after
{s.ipopt_iterations} iterations ({s.plan_s:.1f} s). Effort {s.effort_N2m2s:.4g} (N m)^2 s,
peak torques {', '.join(f'{v:.3g}' for v in s.peak_torque_Nm)} N m.

Replayed through the exported FMU (co-simulation, `torques.csv`) and compared with
the {s.baseline}, over the {s.settle_s} s after the move:

| residual tip vibration (RMS distance from the mean tip position) | m |
|---|---|
| planned torques | {s.residual_tip_vibration_plan_m:.3e} |
| quintic computed-torque baseline | {s.residual_tip_vibration_baseline_m:.3e} |
| reduction | {s.reduction:.3g} x (required: {REQUIRED_REDUCTION:g} x) |

The replay's joint coordinates at the switch times differ from the plan's own states by at most
{s.prediction_error_rad:.2e} rad.
Final joint-angle error of the replay: {', '.join(f'{v:.2e}' for v in s.final_joint_error_rad)} rad.
The goal is {'a stable' if stable else 'an UNSTABLE'} rest under the held torque{'' if stable else ' (the open-loop replay drifts away from it; use the plan as feedforward with feedback)'}.

{chr(10).join(envelope_lines(s.envelope))}![plan](plan.png)
"""
