"""``flexfmu identify ARM --data FILE.csv [--data ...] --params NAME,... --out DIR [--validate FILE.csv]``.

Fits the named physical parameters of ARM to recorded experiments by
weighted least squares through the FMU's own discretisation, with exact
sensitivities (``flexfmu.harness.workflows.identify``), and writes the
estimates with their 95 % intervals, residual plots, the held-out fit and
the calibrated arm file into DIR. Bad files and unidentifiable parameters
are errors (exit 2) before the fit.
"""

from __future__ import annotations

import argparse

from flexfmu.commands._common import UsageError, add_arm, add_out, parse_assignments
from flexfmu.integrate import INTEGRATORS


def add_parser(sub) -> None:
    parser = sub.add_parser("identify", help="fit an arm's physical parameters to measured data, with confidence "
                                             "intervals, and write the calibrated arm file")
    add_arm(parser)
    parser.add_argument("--data", action="append", required=True, metavar="FILE.csv",
                        help="a recorded experiment: columns time, every input and any outputs, named as the FMU "
                             "names them (repeatable: all are fitted at once)")
    parser.add_argument("--params", required=True,
                        help="comma-separated parameters to fit, e.g. link[1].EI,link[1].damping_ratio[1] "
                             "(`flexfmu info ARM` lists them)")
    add_out(parser, "out/identify")
    parser.add_argument("--validate", action="append", default=[], metavar="FILE.csv",
                        help="a held-out experiment to compare the nominal and the calibrated arm on (repeatable)")
    parser.add_argument("--initial", default="",
                        help="initial state of every experiment, e.g. 'theta[1]=-90deg': the arm at rest with its "
                             "joints there and its links at their static equilibrium, unless named too (default: "
                             "at rest at the arm's start pose, where the FMU starts)")
    parser.add_argument("--start", default="",
                        help="starting values of fitted parameters, e.g. 'link[1].EI=600' (default: the arm file's)")
    parser.add_argument("--fit-initial", action="store_true",
                        help="fit each experiment's initial state (coordinates and rates) as well")
    parser.add_argument("--integrator", choices=INTEGRATORS, default="rk4",
                        help="the FMU's integrator, whose discretisation is fitted; pass the one the FMU uses "
                             "(`flexfmu export` picks rosenbrock for a stiff arm) (default: %(default)s)")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True,
                        help="compile the run and its sensitivities to C, cached by content: the first fit of an "
                             "arm, step and parameter set pays the compiler (seconds), later ones load it; the run "
                             "is ten times faster than in CasADi's virtual machine (--no-compile, also used when "
                             "there is no C compiler) (default: compile)")
    parser.set_defaults(run=run)


def _to_error(value: float, error: float) -> str:
    """``value`` to the decimal of a tenth of ``error`` (its standard error): the digits the data support."""
    import math

    if not (math.isfinite(error) and error > 0):
        return f"{value:.6g}"
    return f"{value:.{max(0, 1 - math.floor(math.log10(error)))}f}"


def run(args) -> int:
    from flexfmu import build_model, load_arm
    from flexfmu.control.identification import Z95
    from flexfmu.dynamics.equilibrium import rest_state
    from flexfmu.harness.workflows.identify import identify

    names = [name.strip() for name in args.params.split(",") if name.strip()]
    if not names:
        raise UsageError("--params: name at least one parameter")
    model = build_model(load_arm(args.arm))
    x0 = rest_state(model, parse_assignments(args.initial, model.states, "--initial"))
    start = parse_assignments(args.start, names, "--start")
    result = identify(model, args.arm, args.data, names, args.out, args.validate, fit_initial=args.fit_initial,
                      initial_state=x0, integrator=args.integrator, compile=args.compile, start=start,
                      announce=lambda text: print(text, flush=True))
    fit = result.fit
    for name in fit.names:
        shown = [_to_error(value, fit.standard_error[name]) for value in (fit.estimate[name], *fit.interval(name))]
        print(f"  {name} = {shown[0]} +- {_to_error(Z95 * fit.standard_error[name], fit.standard_error[name])} "
              f"(95 %: [{shown[1]}, {shown[2]}]; was {fit.start[name]:.6g})")
    for warning in fit.warnings:
        print(f"warning: {warning}")
    for v in result.validations:
        shown = ", ".join(f"{name} {v.nominal_rms[name]:.3g} -> {v.calibrated_rms[name]:.3g}" for name in v.nominal_rms)
        print(f"  held out {v.source}: RMS error nominal -> calibrated: {shown}")
    print(f"calibrated arm: {result.calibrated_arm}; report in {args.out}/report.md")
    return 0
