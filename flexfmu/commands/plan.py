"""``flexfmu plan ARM --from 0,0 --to pi/2,pi/6 --time 2 [--out DIR]``.

Plans joint torques for a point-to-point move that ends at rest and checks
them on the exported FMU against paper 004's quintic computed-torque move
(``flexfmu.harness.plan_check``); exits 1 unless the plan leaves at least
10 times less residual vibration.
"""

from __future__ import annotations

import sys

from flexfmu.commands._common import DeprecatedFlag, UsageError, add_arm, add_out, parse_angles, positive


def add_parser(sub) -> None:
    parser = sub.add_parser("plan", help="plan torques for a vibration-free point-to-point move, checked on the FMU")
    add_arm(parser)
    parser.add_argument("--from", dest="start", required=True,
                        help="start joint angles, e.g. 0,0 or 0,-45deg (a leading minus needs --from=-90deg,0)")
    parser.add_argument("--to", dest="goal", required=True, help="goal joint angles, e.g. pi/2,pi/6 or 90deg,30deg")
    parser.add_argument("--time", type=float, required=True, help="move time in s")
    parser.add_argument("--settle", type=float, default=2.0, help="time after the move to check, s (default: %(default)s)")
    parser.add_argument("--interval", type=float, default=0.01,
                        help="torque hold interval in s, a multiple of --sample-step (default: %(default)s)")
    parser.add_argument("--elements", type=int, default=1,
                        help="collocation elements per hold interval; more for stiff arms (default: %(default)s)")
    parser.add_argument("--sample-step", type=float, default=1e-3,
                        help="controller sample and FMU communication step in s (default: %(default)s)")
    parser.add_argument("--step", type=float, dest="sample_step", action=DeprecatedFlag, new="--sample-step")
    parser.add_argument("--torque-limit", default=None,
                        help="|tau| limit in N m: one value for all joints or one per joint (default: none)")
    add_out(parser, "out/plan")
    parser.set_defaults(run=run)


def torque_limit(text: str | None, joints: int) -> tuple[float, ...] | None:
    """'1' or '0.5,0.32' -> one limit per joint."""
    if text is None:
        return None
    try:
        limit = [float(item) for item in text.split(",")]
    except ValueError:
        raise UsageError(f"--torque-limit {text!r}: expected numbers in N m, e.g. 1.0 or 0.5,0.32") from None
    return tuple(limit * joints if len(limit) == 1 else limit)


def run(args) -> int:
    from flexfmu import build_model, load_arm
    from flexfmu.control.planning import PlanSettings, check_settings
    from flexfmu.harness.plan_check import REQUIRED_REDUCTION, plan_on_fmu

    settle = positive("--settle", args.settle)
    model = build_model(load_arm(args.arm))
    settings = PlanSettings(start=tuple(parse_angles(args.start, "--from")), goal=tuple(parse_angles(args.goal, "--to")),
                            move_time=args.time, interval=args.interval, elements=args.elements,
                            torque_limit=torque_limit(args.torque_limit, len(model.inputs)))
    check_settings(model, settings, args.sample_step)
    print(f"planning {model.arm.name}: {settings.start} -> {settings.goal} rad in {settings.move_time} s "
          f"({round(settings.move_time / settings.interval)} intervals of {settings.interval} s), IPOPT:", flush=True)
    check = plan_on_fmu(model, settings, args.out, settle, args.sample_step)
    if not check.goal_stable_under_held_torque:
        print("warning: the goal is an unstable rest under the held torque (an arm held up against gravity): "
              "the open-loop replay drifts away from it, so use the plan as feedforward with feedback", file=sys.stderr)
    print(f"residual tip vibration after the move: plan {check.residual_tip_vibration_plan_m:.3e} m, baseline "
          f"{check.residual_tip_vibration_baseline_m:.3e} m ({check.reduction:.3g} x smaller, required "
          f"{REQUIRED_REDUCTION:g} x)")
    print(f"{'PASS' if check.passed else 'FAIL'}: torques in {args.out}/torques.csv; report in {args.out}/report.md")
    return 0 if check.passed else 1
