"""``flexfmu plan ARM ...``: a move that leaves the arm at rest, checked on the FMU.

A serial arm (``--from 0,0 --to pi/2,pi/6 --time 2``): joint torques for a point-to-point move that ends at
rest, checked on the exported FMU against paper 004's quintic computed-torque move
(``flexfmu.harness.workflows.plan_check``); exits 1 unless the plan leaves at least 10 times less residual vibration.

The arm's kind names its planner (``flexfmu.kinds``, ``flexfmu.control.planners``).

A Delta robot (``flexfmu plan kuo_delta [--scenario delta_pick_place]``): the motor reference of a
pick-and-place scenario's controller, the scenario's inverted U retimed and bent within a tolerance,
checked on the FMU against the scenario itself (``flexfmu.harness.workflows.pick_place_check``); exits 1 unless the
plan leaves less residual vibration than the septic baseline.
"""

from __future__ import annotations

import sys

from flexfmu.commands._common import DeprecatedFlag, UsageError, add_arm, add_out, parse_angles, positive

SERIAL_SETTLE = 2.0  # s after a serial arm's move


def add_parser(sub) -> None:
    parser = sub.add_parser("plan", help="plan a move that leaves the arm at rest (a serial arm's torques, a Delta "
                                         "robot's pick-and-place reference), checked on the FMU")
    add_arm(parser)
    serial = parser.add_argument_group("serial arms")
    serial.add_argument("--from", dest="start",
                        help="start joint angles, e.g. 0,0 or 0,-45deg (a leading minus needs --from=-90deg,0)")
    serial.add_argument("--to", dest="goal", help="goal joint angles, e.g. pi/2,pi/6 or 90deg,30deg")
    serial.add_argument("--time", type=float, help="move time in s")
    serial.add_argument("--interval", type=float, default=0.01,
                        help="torque hold interval in s, a multiple of --sample-step (default: %(default)s)")
    serial.add_argument("--elements", type=int, default=1,
                        help="collocation elements per hold interval; more for stiff arms (default: %(default)s)")
    serial.add_argument("--sample-step", type=float, default=1e-3,
                        help="controller sample and FMU communication step in s (default: %(default)s)")
    serial.add_argument("--step", type=float, dest="sample_step", action=DeprecatedFlag, new="--sample-step")
    serial.add_argument("--torque-limit", default=None,
                        help="|tau| limit in N m: one value for all joints or one per joint (default: none)")
    delta = parser.add_argument_group("Delta robots")
    delta.add_argument("--scenario", default=None,
                       help="pick-and-place scenario to improve on (default: the arm's first inverted-U scenario, "
                            "delta_pick_place for kuo_delta)")
    delta.add_argument("--path-tolerance", type=float, default=5.0,
                       help="how far the commanded path may bend from the scenario's, mm (default: %(default)s)")
    delta.add_argument("--acceleration-ratio", type=float, default=1.2,
                       help="peak motor acceleration allowed, times the scenario's (default: %(default)s)")
    delta.add_argument("--iterations", type=int, default=6, help="planner steps (default: %(default)s)")
    delta.add_argument("--retiming-terms", type=int, default=8,
                       help="sine terms that retime the path (default: %(default)s)")
    delta.add_argument("--correction-terms", type=int, default=6,
                       help="polynomial terms per axis that bend the path (default: %(default)s)")
    serial.add_argument("--ipopt-log", action="store_true",
                        help="print IPOPT's iteration log here too (it always goes to DIR/ipopt.log)")
    parser.add_argument("--settle", type=float, default=None,
                        help=f"time after the move to check, s (default: {SERIAL_SETTLE} for a serial arm, the "
                             "scenario's time after its move for a Delta robot)")
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
    from flexfmu.kinds import kind_of

    model = build_model(load_arm(args.arm))
    settle = None if args.settle is None else positive("--settle", args.settle)
    return PLANS[kind_of(model.arm).planner.name](args, model, settle)


def _plan_serial(args, model, settle: float | None) -> int:
    from flexfmu.control.planning import PlanSettings, check_settings
    from flexfmu.harness.workflows.plan_check import REQUIRED_REDUCTION, plan_on_fmu

    missing = [flag for flag, value in (("--from", args.start), ("--to", args.goal), ("--time", args.time))
               if value is None]
    if missing:
        raise UsageError(f"planning a move of the serial arm {model.arm.name!r} needs {', '.join(missing)}")
    settings = PlanSettings(start=tuple(parse_angles(args.start, "--from")),
                            goal=tuple(parse_angles(args.goal, "--to")), move_time=args.time,
                            interval=args.interval, elements=args.elements,
                            torque_limit=torque_limit(args.torque_limit, len(model.inputs)))
    check_settings(model, settings, args.sample_step)
    print(f"planning {model.arm.name}: {settings.start} -> {settings.goal} rad in {settings.move_time} s "
          f"({round(settings.move_time / settings.interval)} intervals of {settings.interval} s) with IPOPT "
          f"(its log: {args.out}/ipopt.log)", flush=True)
    check = plan_on_fmu(model, settings, args.out, SERIAL_SETTLE if settle is None else settle, args.sample_step,
                        progress=args.ipopt_log)
    if not check.goal_stable_under_held_torque:
        print("warning: the goal is an unstable rest under the held torque (an arm held up against gravity): "
              "the open-loop replay drifts away from it, so use the plan as feedforward with feedback", file=sys.stderr)
    print(f"residual tip vibration after the move: plan {check.residual_tip_vibration_plan_m:.3e} m, baseline "
          f"{check.residual_tip_vibration_baseline_m:.3e} m ({check.reduction:.3g} x smaller, required "
          f"{REQUIRED_REDUCTION:g} x)")
    _envelope(check.envelope)
    print(f"{'PASS' if check.passed else 'FAIL'}: torques in {args.out}/torques.csv; report in {args.out}/report.md")
    return 0 if check.passed else 1


def _plan_pick_place(args, model, settle: float | None) -> int:
    from flexfmu.control.delta_planning import PickPlaceError, PickPlaceSettings
    from flexfmu.control.reference_kinds import INVERTED_U
    from flexfmu.control.scenario import load_scenario, scenarios_for
    from flexfmu.harness.running.progress import Progress
    from flexfmu.harness.workflows.pick_place_check import pick_place_on_fmu

    serial_only = [flag for flag, value in (("--from", args.start), ("--to", args.goal), ("--time", args.time),
                                            ("--torque-limit", args.torque_limit)) if value is not None]
    serial_only += ["--ipopt-log"] if args.ipopt_log else []
    if serial_only:
        raise UsageError(f"{', '.join(serial_only)}: for serial arms; a Delta robot's move comes from its "
                         "pick-and-place scenario (--scenario)")
    if args.scenario is None:
        candidates = [name for name in scenarios_for(model.arm.name)
                      if load_scenario(name).controller.get("reference", {}).get("kind") == INVERTED_U.name]
        if not candidates:
            raise UsageError(f"arm {model.arm.name!r} has no pick-and-place scenario; name one with --scenario")
        args.scenario = candidates[0]
    scenario = load_scenario(args.scenario)
    settings = PickPlaceSettings(retiming_terms=args.retiming_terms, correction_terms=args.correction_terms,
                                 path_tolerance=args.path_tolerance * 1e-3, acceleration_ratio=args.acceleration_ratio,
                                 iterations=args.iterations)
    problems = settings.problems()
    if problems:
        raise PickPlaceError("; ".join(problems))
    print(f"planning {model.arm.name}: scenario {scenario.name}'s pick-and-place, {settings.iterations} steps "
          f"over {settings.retiming_terms + 3 * settings.correction_terms} coefficients:", flush=True)
    bar = Progress("planner", unit="planner step")
    check = pick_place_on_fmu(model, scenario, args.out, settings, settle,
                              progress=lambda done, total, residual: bar.begin(total) if done == 0 else
                              bar(done, total))
    print(f"residual vibration after the move (FMU): plan {check.residual_plan_m:.3e} m, septic baseline "
          f"{check.residual_baseline_m:.3e} m ({check.reduction:.3g} x smaller); largest bend of the path "
          f"{1e3 * check.path_deviation_m:.2f} mm, peak motor acceleration {check.peak_motor_acceleration_rad_s2:.1f} "
          f"rad/s^2 (baseline {check.baseline_peak_motor_acceleration_rad_s2:.1f})")
    _envelope(check.envelope)
    print(f"{'PASS' if check.passed else 'FAIL'}: reference in {args.out}/reference.csv; "
          f"report in {args.out}/report.md")
    return 0 if check.passed else 1


def _envelope(summary) -> None:
    """Warn when a run of the check left the model's validity envelope."""
    from flexfmu.harness.reports.envelope import envelope_console

    for line in envelope_console(summary, indent=""):
        print(line)


# planner (flexfmu.control.planners.PLANNERS, the arm kind's) -> the command's run of it
PLANS = {"collocation": _plan_serial, "pick_and_place": _plan_pick_place}
