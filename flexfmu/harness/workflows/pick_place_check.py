"""Plan a Delta robot's pick-and-place move, then check it on the exported FMU.

The scenario (``delta_pick_place``: paper 003's inverted U under computed torque) is the baseline. The
plan (:mod:`flexfmu.control.delta_planning`) keeps its start, end, move time, controller and gains and
changes only the motor reference: the same curve retimed, bent by at most the path tolerance. Both run
through the plant FMU's co-simulation interface from the scenario's initial state (at rest, links at
their static deflection) to the end of the settling window; their residual vibration after the move
(RMS distance of the platform centre from its mean) is compared. Writes ``reference.csv`` (the planned
motor reference and commanded platform path at each sample), ``plan.json``, ``report.md``, ``plan.png``
and ``plant.fmu`` (the arm's FMU from the harness's cache, built once). The result passes when the plan leaves less residual vibration than the baseline.
"""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from flexfmu.control.controllers import SampledController
from flexfmu.control.cost import end_effector
from flexfmu.control.delta_planning import PickPlaceError, PickPlaceSettings, plan_pick_place
from flexfmu.control.pick_place import PickPlaceMoves
from flexfmu.control.reference_kinds import delta_kinematics
from flexfmu.harness.reports.envelope import envelope_lines, envelope_outputs, envelope_summary
from flexfmu.harness.reports.plots import plot_pick_place
from flexfmu.harness.running.fmu_cache import native_fmu
from flexfmu.harness.running.runner import run_fmu
from flexfmu.harness.workflows.verify import residual_tip_vibration


@dataclass(frozen=True)
class PickPlaceCheck:
    """A planned pick-and-place and what the FMU made of it (see the module docstring)."""

    arm: str
    scenario: str
    move_time_s: float
    settle_s: float
    settings: dict
    planner_iterations: int
    plan_s: float
    planner_residual_history_m: list[float]
    residual_baseline_m: float
    residual_plan_m: float
    reduction: float
    peak_motor_acceleration_rad_s2: float
    baseline_peak_motor_acceleration_rad_s2: float
    path_deviation_m: float
    peak_torque_Nm: list[float]
    baseline_peak_torque_Nm: list[float]
    final_platform_error_m: float
    baseline: str
    coefficients: list[float]
    envelope: dict | None = None

    @property
    def passed(self) -> bool:
        return self.reduction > 1.0


def moves_of(scenario, model, settings: PickPlaceSettings) -> PickPlaceMoves:
    """The family of moves around the inverted U of ``scenario`` for the Delta robot ``model``, with the term
    counts of ``settings``.

    Raises
    ------
    PickPlaceError
        If the scenario's reference is not an inverted U or the scenario is written for another arm.
    """
    spec = scenario.controller.get("reference", {})
    if spec.get("kind") != "inverted_u":
        raise PickPlaceError(f"scenario {scenario.name!r} has no inverted_u reference to plan around; "
                             "use a pick-and-place scenario such as delta_pick_place")
    if scenario.arm != model.arm.name:
        raise PickPlaceError(f"scenario {scenario.name!r} is written for arm {scenario.arm!r}, not "
                             f"{model.arm.name!r}")
    return PickPlaceMoves(spec["start"], spec["travel"], spec["times"], delta_kinematics(model).dims,
                          settings.retiming_terms, settings.correction_terms)


def pick_place_on_fmu(model, scenario, out: Path, settings: PickPlaceSettings = PickPlaceSettings(),
                      settle: float | None = None, progress=None) -> PickPlaceCheck:
    """Plan the pick-and-place of ``scenario`` for ``model``, run it and the scenario through the exported FMU,
    write the files into ``out`` and return the figures.

    Parameters
    ----------
    model : Model
        A Delta robot's Model.
    scenario : Scenario
        The baseline: an inverted U under a control law (its gains, sample step and initial state are kept).
    out : Path
        Folder for the files listed in the module docstring (created if needed).
    settings : PickPlaceSettings
    settle : float, optional
        How long both runs go on after the move, s (the scenario's time after its move when None).
    progress : callable, optional
        ``progress(iteration, iterations, residual)`` when the planning starts (iteration 0, once the scenario
        is checked; residual NaN) and after each planner step.

    Returns
    -------
    PickPlaceCheck
    """
    moves = moves_of(scenario, model, settings)
    scenario.check(model)
    duration = scenario.duration if settle is None else moves.move_time + settle
    law = scenario.law(model)
    gains = law.gain_vector()
    if progress is not None:
        progress(0, settings.iterations, float("nan"))  # checked: the planning starts
    plan = plan_pick_place(model, moves, law, gains, scenario.initial_state(model), duration, scenario.step,
                           settings, progress)
    out.mkdir(parents=True, exist_ok=True)
    grid = np.linspace(0.0, duration, int(round(duration / scenario.step)) + 1)
    write_reference(out / "reference.csv", moves, plan.coefficients, grid)
    fmu = out / "plant.fmu"
    shutil.copyfile(native_fmu(model.arm), fmu)
    record = end_effector(model)
    start = scenario.start_values(model)
    runs = {name: run_fmu(fmu, model, SampledController(law, gains, reference), grid, start,
                          record=record + envelope_outputs(model))
            for name, reference in (("plan", plan.reference()), ("baseline", scenario.reference(model)))}
    residual = {name: residual_tip_vibration(model, run, moves.move_time) for name, run in runs.items()}
    final = np.array([runs["plan"][name][-1] for name in record])
    check = PickPlaceCheck(
        arm=model.arm.name, scenario=scenario.name, move_time_s=moves.move_time, settle_s=duration - moves.move_time,
        settings=asdict(settings), planner_iterations=len(plan.history) - 1, plan_s=plan.solve_s,
        planner_residual_history_m=plan.history, residual_baseline_m=residual["baseline"],
        residual_plan_m=residual["plan"], reduction=residual["baseline"] / max(residual["plan"], 1e-300),
        peak_motor_acceleration_rad_s2=plan.peak_acceleration,
        baseline_peak_motor_acceleration_rad_s2=plan.baseline_peak_acceleration,
        path_deviation_m=plan.path_deviation,
        peak_torque_Nm=[float(np.abs(runs["plan"][name]).max()) for name in model.inputs],
        baseline_peak_torque_Nm=[float(np.abs(runs["baseline"][name]).max()) for name in model.inputs],
        final_platform_error_m=float(np.linalg.norm(final - moves.platform_path(plan.coefficients, [duration])[:, 0])),
        baseline=f"scenario {scenario.name}: septic inverted U under {law.kind}",
        coefficients=plan.coefficients.tolist(),
        envelope=envelope_summary(model, runs, start),
    )
    (out / "plan.json").write_text(json.dumps(asdict(check), indent=2))
    commanded = tuple(moves.platform_path(c, grid) for c in (plan.coefficients, np.zeros(moves.size)))
    plot_pick_place(runs["plan"], runs["baseline"], model, commanded, moves.move_time, out / "plan.png",
                    f"{model.arm.name}: planned pick-and-place vs the septic inverted U (FMU runs)")
    (out / "report.md").write_text(_report(check))
    return check


def write_reference(path: Path, moves: PickPlaceMoves, coefficients, grid) -> None:
    """Write the motor reference and commanded platform path of the move ``coefficients`` of ``moves`` at the
    sample times ``grid`` to ``path`` as CSV."""
    R = moves.references(coefficients, grid)
    P = moves.platform_path(coefficients, grid)
    columns = ([f"theta_d[{i}] [rad]" for i in (1, 2, 3)] + [f"der(theta_d[{i}]) [rad/s]" for i in (1, 2, 3)]
               + [f"der(theta_d[{i}],2) [rad/s2]" for i in (1, 2, 3)] + [f"platform_d.{a} [m]" for a in "xyz"])
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["time [s]"] + columns)
        for k, t in enumerate(grid):
            writer.writerow([repr(float(t))] + [repr(float(v)) for v in np.concatenate([R[:, k], P[:, k]])])


def _report(s: PickPlaceCheck) -> str:
    history = ", ".join(f"{1e3 * v:.3f}" for v in s.planner_residual_history_m)
    tolerance, ratio = 1e3 * s.settings["path_tolerance"], s.settings["acceleration_ratio"]
    accel, baseline_accel = (f"{v:.1f}" for v in (s.peak_motor_acceleration_rad_s2,
                                                  s.baseline_peak_motor_acceleration_rad_s2))
    torques, baseline_torques = (", ".join(f"{v:.2f}" for v in values)
                                 for values in (s.peak_torque_Nm, s.baseline_peak_torque_Nm))
    return f"""# Planned pick-and-place of {s.arm}

Baseline: {s.baseline}, move time {s.move_time_s} s.

The plan keeps the baseline's start, end, move time, controller and gains, and changes the motor
reference only: the same curve retimed, and bent by at most {tolerance:g} mm.

| | plan | baseline |
|---|---|---|
| largest bend of the commanded path [mm] | {1e3 * s.path_deviation_m:.2f} | 0 |
| peak motor acceleration [rad/s^2] (limit {ratio:g} x the baseline's) | {accel} | {baseline_accel} |
| peak motor torques [N m] (FMU) | {torques} | {baseline_torques} |

Planner: {s.planner_iterations} Gauss-Newton steps in {s.plan_s:.0f} s. Residual vibration on its closed
loop, baseline first, then after each step: {history} mm.

Both moves run through the exported FMU (co-simulation; the plan from `reference.csv`) and settle
for {s.settle_s:.3g} s after the move:

| residual vibration: RMS distance of the platform centre from its mean after the move | mm |
|---|---|
| planned move | {1e3 * s.residual_plan_m:.4f} |
| septic baseline | {1e3 * s.residual_baseline_m:.4f} |
| reduction | {s.reduction:.3g} x (required: less than the baseline) |

At the end of the run the platform is {1e3 * s.final_platform_error_m:.2f} mm from the commanded end point:
its static sag under gravity.

{chr(10).join(envelope_lines(s.envelope))}![plan](plan.png)
"""
