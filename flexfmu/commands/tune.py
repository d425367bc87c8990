"""``flexfmu tune ARM --scenario NAME --params kp,kd [--cost FILE] [--out DIR]``.

Tunes the named gains of the scenario's control law for ARM with exact
gradients, over a horizon that covers the settling after the move, keeping
position feedback and a stability margin (``flexfmu.control.tuning``), then
runs both gain sets through the exported FMU
(``flexfmu.harness.workflows.tune_check``); exits 1 when the FMU's cost differs from
the optimiser's prediction by more than 1 %, a limit fails on the FMU or the
margin is not kept.
"""

from __future__ import annotations

import json

from flexfmu.commands._common import UsageError, add_arm, add_campaign, add_out, campaign_settings, positive


def add_parser(sub) -> None:
    parser = sub.add_parser("tune", help="tune controller gains with exact gradients, checked on the FMU")
    add_arm(parser)
    parser.add_argument("--scenario", required=True, help="closed-loop scenario (name or file)")
    parser.add_argument("--params", required=True, help="comma-separated gains to tune, e.g. kp,kd")
    parser.add_argument("--cost", default=None, help="TOML file with [weights] tracking, vibration, effort")
    add_out(parser, "out/tune")
    parser.add_argument("--max-iterations", type=int, default=30,
                        help="iterations of the optimiser, SLSQP (default: %(default)s)")
    parser.add_argument("--duration", type=float, default=None,
                        help="the tuning horizon in s (default: the scenario's); it must cover the move and the "
                             "scenario's settling after it")
    parser.add_argument("--integrator", choices=("rk4", "implicit", "rosenbrock"), default="rk4",
                        help="the FMU's integrator, which the tuning discretisation follows (default: %(default)s)")
    parser.add_argument("--limit", action="append", default=None, metavar="TERM=VALUE",
                        help="upper bound on a cost term (tracking, vibration, effort): a number (unweighted, in "
                             "rad^2 s, m^2 s, (N m)^2 s) or 'before' (its value with the scenario's gains); "
                             "repeatable; default tracking=before; 'none' for no limit")
    parser.add_argument("--starts", type=int, default=1,
                        help="starting points (the scenario's gains, then random ones), run as a campaign on Dask "
                             "(default: %(default)s)")
    add_campaign(parser)
    parser.set_defaults(run=run)


def parse_limits(texts: list[str] | None) -> dict | None:
    """--limit values -> {term: number or 'before'}; None for the default limits, {} for 'none'."""
    from flexfmu.control.cost import TERMS

    if texts is None:
        return None
    if texts == ["none"]:
        return {}
    limits = {}
    for text in texts:
        term, sep, value = text.partition("=")
        term, value = term.strip(), value.strip()
        if not sep or term not in TERMS:
            raise UsageError(f"--limit {text!r}: expected TERM=VALUE with TERM one of {', '.join(TERMS)}")
        if value == "before":
            limits[term] = value
        else:
            try:
                limits[term] = positive(f"--limit {term}", float(value))
            except ValueError:
                raise UsageError(f"--limit {text!r}: VALUE must be a number > 0 or 'before'") from None
    return limits


def run(args) -> int:
    from flexfmu import build_model, load_arm
    from flexfmu.control.cost import CostWeights, load_cost
    from flexfmu.control.scenario import load_scenario
    from flexfmu.harness.reports.envelope import envelope_console
    from flexfmu.harness.workflows.tune_check import AGREEMENT, tune_on_fmu

    scenario = load_scenario(args.scenario)
    if not scenario.closed_loop:
        raise UsageError(f"{scenario.name} is open loop (controller kind {scenario.controller['kind']!r}): nothing "
                         "to tune")
    duration = None if args.duration is None else positive("--duration", args.duration)
    if args.max_iterations < 1:
        raise UsageError(f"--max-iterations must be >= 1, got {args.max_iterations}")
    if args.starts < 1:
        raise UsageError(f"--starts must be >= 1, got {args.starts}")
    limits, campaign = parse_limits(args.limit), campaign_settings(args)
    weights = load_cost(args.cost) if args.cost else CostWeights()
    model = build_model(load_arm(args.arm))
    scenario.check(model)
    names = [name.strip() for name in args.params.split(",") if name.strip()]

    def progress(iteration, total, cost, gains):
        shown = " ".join(f"{name}={value:.5g}" for name, value in gains.items())
        print(f"  iteration {iteration:3d}/{total}  J = {cost:.6g}  {shown}", flush=True)

    check = tune_on_fmu(model, scenario, names, args.out, weights, args.integrator, args.max_iterations,
                        progress, announce=lambda text: print(text, flush=True), limits=limits,
                        starts=args.starts, campaign=campaign, duration=duration)
    for term in check.terms_before:
        print(f"  {term}: {check.terms_before[term]:.4g} -> {check.terms_after[term]:.4g} on the FMU"
              + (f" (limit {check.limits[term]:.4g})" if term in check.limits else ""))
    print(f"cost {check.fmu_cost_before:.6g} -> {check.fmu_cost_after:.6g} on the FMU (optimiser: "
          f"{check.predicted_cost_before:.6g} -> {check.predicted_cost_after:.6g}, largest difference "
          f"{check.fmu_vs_prediction_relative:.2e} relative, allowed {AGREEMENT:g})")
    print(f"  slowest decay rate at rest along the move: {check.decay_before:.3g} -> {check.decay_after:.3g} 1/s "
          f"(required {check.decay_required:.3g})")
    if not check.limits_kept:
        print("a limit is not kept on the FMU")
    if not check.margin_kept:
        print("the tuned loop does not keep the required stability margin")
    for line in envelope_console(check.envelope, indent=""):
        print(line)
    print(f"{'PASS' if check.passed else 'FAIL'}: tuned gains {json.dumps(check.gains_after)}; "
          f"report in {args.out}/report.md")
    return 0 if check.passed else 1
