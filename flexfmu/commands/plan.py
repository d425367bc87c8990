"""``flexfmu plan ARM.toml --from 0,0 --to pi/2,pi/6 --time 2 [--out DIR]``.

Plans joint torques for a point-to-point move that ends at rest
(``flexfmu.control.planning``), writes them as ``torques.csv`` (the harness
and FMPy replay it: a time column and tau[j], each row held until the next),
then checks the plan on the exported FMU: the torques are replayed through
its co-simulation interface for the move plus ``--settle`` seconds, and the
residual tip vibration after the move (RMS distance of the tip from its mean
position) is compared with the harness's baseline, paper 004's quintic
trajectory under computed torque (kp 36, kd 12) with the same move time.
Writes ``plan.json``, ``report.md``, ``plan.png`` and ``plant.fmu`` too;
exits 1 unless the plan leaves at least 10 times less residual vibration.
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
import time
from pathlib import Path

REQUIRED_REDUCTION = 10.0
BASELINE_GAINS = {"kp": 36.0, "kd": 12.0}


def add_parser(sub) -> None:
    parser = sub.add_parser("plan", help="plan torques for a vibration-free point-to-point move, checked on the FMU")
    parser.add_argument("arm", help="arm specification (TOML)")
    parser.add_argument("--from", dest="start", required=True, help="start joint angles, e.g. 0,0 or 0,-45deg (a leading minus needs --from=-90deg,0)")
    parser.add_argument("--to", dest="goal", required=True, help="goal joint angles, e.g. pi/2,pi/6 or 90deg,30deg")
    parser.add_argument("--time", type=float, required=True, help="move time in s")
    parser.add_argument("--settle", type=float, default=2.0, help="time after the move to check, s (default: %(default)s)")
    parser.add_argument("--interval", type=float, default=0.01,
                        help="torque hold interval in s, a multiple of --step (default: %(default)s)")
    parser.add_argument("--elements", type=int, default=1,
                        help="collocation elements per hold interval; more for stiff arms (default: %(default)s)")
    parser.add_argument("--step", type=float, default=1e-3, help="controller sample / FMU communication step in s "
                                                                 "(default: %(default)s)")
    parser.add_argument("--torque-limit", default=None,
                        help="|tau| limit in N m: one value for all joints or one per joint (default: none)")
    parser.add_argument("--out", default="out/plan", help="output directory (default: %(default)s)")
    parser.set_defaults(run=run)


def parse_angles(text: str, option: str) -> list[float]:
    """'0,pi/2,-45deg,1.2' -> radians; the message names the bad entry."""
    values = []
    for item in (part.strip() for part in text.split(",")):
        match = re.fullmatch(r"([-+]?\d*\.?\d*)\*?pi(?:/(\d+\.?\d*))?", item)
        try:
            if match:
                factor = match.group(1)
                factor = -1.0 if factor == "-" else float(factor) if factor not in ("", "+") else 1.0
                values.append(factor * math.pi / float(match.group(2) or 1.0))
            elif item.endswith("deg"):
                values.append(math.radians(float(item[:-3])))
            else:
                values.append(float(item))
        except ValueError:
            raise SystemExit(f"error: {option} {text!r}: {item!r} is not an angle (use 1.2, 90deg or pi/2)") from None
    return values


def run(args) -> int:
    import numpy as np

    from flexfmu import build_model, load_arm
    from flexfmu.control.planning import PlanError, PlanSettings, held_goal_is_stable, plan_motion
    from flexfmu.fmu.export import ExportSettings, export_fmu
    from harness.fmu_runner import run_fmu

    if not args.settle > 0:
        print(f"error: --settle must be > 0, got {args.settle!r}", file=sys.stderr)
        return 2
    model = build_model(load_arm(args.arm))
    nj = len(model.inputs)
    limit = None
    if args.torque_limit is not None:
        try:
            limit = [float(item) for item in args.torque_limit.split(",")]
        except ValueError:
            print(f"error: --torque-limit {args.torque_limit!r}: expected numbers in N m, e.g. 1.0 or 0.5,0.32",
                  file=sys.stderr)
            return 2
        limit = limit * nj if len(limit) == 1 else limit
    settings = PlanSettings(start=tuple(parse_angles(args.start, "--from")), goal=tuple(parse_angles(args.goal, "--to")),
                            move_time=args.time, interval=args.interval, elements=args.elements,
                            torque_limit=None if limit is None else tuple(limit))
    print(f"planning {model.arm.name}: {settings.start} -> {settings.goal} rad in {settings.move_time} s "
          f"({round(settings.move_time / settings.interval)} intervals of {settings.interval} s), IPOPT:", flush=True)
    began = time.perf_counter()
    try:
        plan = plan_motion(model, settings, args.step)
    except PlanError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    plan_s = time.perf_counter() - began
    stable = held_goal_is_stable(model, plan)
    if not stable:
        print("warning: the goal is an unstable rest under the held torque (an arm held up against gravity): "
              "the open-loop replay drifts away from it, so use the plan as feedforward with feedback", file=sys.stderr)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_torques(out / "torques.csv", model.inputs, plan)
    duration = settings.move_time + args.settle
    print("exporting the plant FMU, replaying the plan and the quintic computed-torque baseline", flush=True)
    fmu = export_fmu(model, out / "plant.fmu", ExportSettings(communication_step=args.step, stop_time=duration)).path
    signals = ["tip.x", "tip.y", *[n for n in model.output_names if n.endswith(".deflection")],
               *[f"joint[{j}].angle" for j in range(1, nj + 1)]]
    replay = run_fmu(fmu, duration, args.step, list(model.inputs), out / "torques.csv", signals + list(model.inputs),
                     start_values=rest_coordinates(model, settings.start))
    baseline = baseline_run(fmu, model, settings, duration, args.step, signals)

    from harness.plots import plot_plan
    from harness.verify import residual_tip_vibration

    planned_residual = residual_tip_vibration(replay, settings.move_time)
    baseline_residual = residual_tip_vibration(baseline, settings.move_time)
    reduction = baseline_residual / max(planned_residual, 1e-300)
    final_error = [float(replay[f"joint[{j + 1}].angle"][-1] - settings.goal[j]) for j in range(nj)]
    summary = {
        "arm": model.arm.name, "start_rad": list(settings.start), "goal_rad": list(settings.goal),
        "move_time_s": settings.move_time, "settle_s": args.settle, "interval_s": settings.interval,
        "torque_limit_Nm": limit, "ipopt_iterations": plan.iterations, "ipopt_status": plan.status,
        "plan_s": plan_s, "effort_N2m2s": plan.effort, "peak_torque_Nm": np.abs(plan.torques).max(axis=0).tolist(),
        "residual_tip_vibration_plan_m": planned_residual, "residual_tip_vibration_baseline_m": baseline_residual,
        "reduction": reduction, "final_joint_error_rad": final_error, "goal_stable_under_held_torque": stable,
        "baseline": f"quintic reference, computed torque kp {BASELINE_GAINS['kp']}, kd {BASELINE_GAINS['kd']}",
    }
    (out / "plan.json").write_text(json.dumps(summary, indent=2))
    plot_plan(replay, baseline, model, settings.move_time, out / "plan.png",
              f"{model.arm.name}: planned torques vs quintic computed torque (FMU runs)")
    (out / "report.md").write_text(_report(summary))
    passed = reduction >= REQUIRED_REDUCTION
    print(f"residual tip vibration after the move: plan {planned_residual:.3e} m, baseline {baseline_residual:.3e} m "
          f"({reduction:.3g} x smaller)")
    print(f"{'PASS' if passed else 'FAIL'}: torques in {out}/torques.csv; report in {out}/report.md")
    return 0 if passed else 1


def write_torques(path: Path, names: list[str], plan) -> None:
    """The plan as a CSV of switch points: row i holds until row i+1."""
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["time [s]"] + [f"{name} [N.m]" for name in names])
        for t, u in plan.switches():
            writer.writerow([repr(t)] + [repr(v) for v in u])


def rest_coordinates(model, angles) -> dict[str, float]:
    """Start values of the coordinates of the arm at rest with its joints at
    ``angles``: joint angles, rotors with their joints (links straight)."""
    from flexfmu.control.laws import rigid_selection

    S = rigid_selection(model)
    return {name: float(row @ angles) for name, row in zip(model.coordinates, S) if row.any()}


def baseline_run(fmu, model, settings, duration: float, step: float, signals):
    """Paper 004's move through the FMU: quintic reference, computed torque
    on the rotor encoders when the joints are flexible (collocated), else on
    the joint encoders."""
    from harness.cosim import cosimulation_run
    from harness.scenario import Scenario

    measure = "motor" if any(name.startswith("alpha[") for name in model.coordinates) else "joint"
    scenario = Scenario(
        name="quintic_baseline", description="quintic computed-torque baseline", arm=model.arm.name,
        duration=duration, step=step,
        initial=rest_coordinates(model, settings.start),
        controller={"kind": "computed_torque", **BASELINE_GAINS, "measure": measure,
                    "reference": {"kind": "quintic", "start": list(settings.start), "goal": list(settings.goal),
                                  "move_time": settings.move_time}},
        outputs=signals, tolerances={"default": 0.0},
    )
    return cosimulation_run(fmu, model, scenario, scenario.build_controller(model))


def _report(s: dict) -> str:
    return f"""# Planned move of {s['arm']}

From {s['start_rad']} to {s['goal_rad']} rad in {s['move_time_s']} s; torques held over
{s['interval_s']} s intervals, limit {s['torque_limit_Nm'] or 'none'} N m. IPOPT: {s['ipopt_status']} after
{s['ipopt_iterations']} iterations ({s['plan_s']:.1f} s). Effort {s['effort_N2m2s']:.4g} (N m)^2 s,
peak torques {', '.join(f'{v:.3g}' for v in s['peak_torque_Nm'])} N m.

Replayed through the exported FMU (co-simulation, `torques.csv`) and compared with
the {s['baseline']}, over the {s['settle_s']} s after the move:

| residual tip vibration (RMS distance from the mean tip position) | m |
|---|---|
| planned torques | {s['residual_tip_vibration_plan_m']:.3e} |
| quintic computed-torque baseline | {s['residual_tip_vibration_baseline_m']:.3e} |
| reduction | {s['reduction']:.3g} x (required: {REQUIRED_REDUCTION:g} x) |

Final joint-angle error of the replay: {', '.join(f'{v:.2e}' for v in s['final_joint_error_rad'])} rad.
The goal is {'a stable' if s['goal_stable_under_held_torque'] else 'an UNSTABLE'} rest under the held torque{'' if s['goal_stable_under_held_torque'] else ' (the open-loop replay drifts away from it; use the plan as feedforward with feedback)'}.

![plan](plan.png)
"""
