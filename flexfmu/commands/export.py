"""``flexfmu export ARM -o OUT [--target NAME]``: an FMU (or other artefact) of an arm.

The targets come from ``flexfmu.targets.TARGETS``: the native FMI 2.0 FMU
(co-simulation and model exchange, compiled C) by default, the same as FMI 3.0
(``--fmi-version 3``), a Simulink S-function and MEX folder (``--target
sfunction``), a scenario's closed loop (``--target fmi2-loop --scenario
S``: the arm and the scenario's controller in one FMU), or a Python-backed
FMU (``--target pythonfmu``), a desktop cross-check that needs Python with
flexfmu where it is imported. Options a
target does not use are refused. A native FMU holds a binary for every
platform whose compiler is present (``--platforms`` chooses); the message
says which were built and which skipped, and why.
"""

from __future__ import annotations

import argparse

from flexfmu.commands._common import UsageError, add_arm
from flexfmu.targets import DEFAULT_TARGET, TARGETS

FMI_VERSIONS = {"2": "fmi2", "3": "fmi3"}  # --fmi-version -> target
# options that are settings: (attribute, flag, ExportSettings field)
SETTING_FLAGS = (("interface", "--interface", "interface"), ("integrator", "--integrator", "integrator"),
                 ("step", "--step", "internal_step"), ("communication_step", "--communication-step",
                                                       "communication_step"),
                 ("stop_time", "--stop-time", "stop_time"), ("platforms", "--platforms", "platforms"),
                 ("allow_unstable_step", "--allow-unstable-step", "allow_unstable_step"),
                 ("realtime_budget", "--realtime-budget", "realtime_budget"))


def add_parser(sub) -> None:
    targets = "; ".join(f"{t.name}: {t.summary}" for t in TARGETS.values())
    parser = sub.add_parser("export", help="export an arm as an FMU", description=f"Targets: {targets}.")
    add_arm(parser)
    parser.add_argument("-o", "--output", required=True, help="the file to write (it appears only when complete)")
    parser.add_argument("--target", choices=tuple(TARGETS), default=None,
                        help=f"what to write (default: {DEFAULT_TARGET})")
    parser.add_argument("--fmi-version", choices=tuple(FMI_VERSIONS), default=None,
                        help="FMI version of the native FMU (the target fmi<N>)")
    parser.add_argument("--backend", choices=("native", "pythonfmu"), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--interface", choices=("cs", "me", "both"), default=None,
                        help="co-simulation, model exchange or both in one FMU (default: both)")
    parser.add_argument("--integrator", choices=("rk4", "implicit", "rosenbrock"), default=None,
                        help="fixed-step co-simulation integrator (default: rk4, or rosenbrock for a stiff arm "
                             "or where RK4's substeps are dear)")
    parser.add_argument("--step", type=float, default=None,
                        help="internal co-simulation step in s (default: from the arm's highest frequency)")
    parser.add_argument("--communication-step", type=float, default=None,
                        help="default communication step in s; any step works, the default internal step divides "
                             "this one (default: 0.001)")
    parser.add_argument("--stop-time", type=float, default=None, help="default stop time in s (default: 5)")
    parser.add_argument("--platforms", type=_platforms, default=None,
                        help="binaries to build, e.g. linux64,win64 (default: every platform whose compiler is "
                             "present)")
    parser.add_argument("--scenario", default=None,
                        help="scenario name or file whose closed loop the target compiles (target fmi2-loop: the "
                             "scenario's sample step is the communication step, its duration the stop time)")
    parser.add_argument("--allow-unstable-step", action="store_true", default=None,
                        help="export an RK4 --step beyond its stability limit for the arm's highest frequency "
                             "(refused otherwise; the model description records it)")
    parser.add_argument("--realtime-budget", type=float, default=None, metavar="FRACTION",
                        help="refuse the export when the compiled doStep, timed on this machine, costs more than "
                             "FRACTION of the communication step (median of many steps; e.g. 0.1 for 10 times "
                             "faster than real time); the cost is timed and recorded either way")
    parser.set_defaults(run=run)


def _platforms(text: str) -> tuple[str, ...]:
    from flexfmu.targets.export import ExportError
    from flexfmu.targets.platforms import parse_platforms

    try:
        return parse_platforms(text)
    except ExportError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def chosen_target(args) -> str:
    """The target the options name, or a UsageError if they disagree."""
    named = []
    if args.target:
        named.append(("--target", args.target))
    if args.fmi_version:
        named.append(("--fmi-version", FMI_VERSIONS[args.fmi_version]))
    if args.backend:
        named.append(("--backend (deprecated: use --target)", "pythonfmu" if args.backend == "pythonfmu" else "fmi2"))
    targets = {target for _, target in named}
    if len(targets) > 1:
        raise UsageError(f"{' and '.join(flag for flag, _ in named)} name different targets "
                         f"({', '.join(sorted(targets))})")
    return targets.pop() if targets else DEFAULT_TARGET


def run(args) -> int:
    from flexfmu import build_model, load_arm
    from flexfmu.control.scenario import load_scenario
    from flexfmu.data import resolve_arm
    from flexfmu.targets import ExportSettings, export

    name = chosen_target(args)
    target = TARGETS[name]
    given = {field: getattr(args, attribute) for attribute, flag, field in SETTING_FLAGS
             if getattr(args, attribute) is not None}
    unused = [flag for attribute, flag, field in SETTING_FLAGS if field in given and field not in target.settings]
    if unused:
        raise UsageError(f"{', '.join(unused)} {'does' if len(unused) == 1 else 'do'} not apply to the target "
                         f"{name} ({target.summary})")
    if bool(args.scenario) != target.scenario:
        raise UsageError(f"the target {name} needs --scenario (the closed loop it compiles)" if target.scenario
                         else f"--scenario does not apply to the target {name} ({target.summary})")
    scenario = load_scenario(args.scenario) if args.scenario else None
    settings = ExportSettings(**given)
    arm_file = resolve_arm(args.arm)
    model = build_model(load_arm(arm_file))
    report = export(model, args.output, settings, name, arm_file, scenario)
    details = [name]
    if "interface" in target.settings:
        details.append(settings.interface)
    if report.internal_step is not None:
        details += [f"{report.integrator}, internal step {report.internal_step:.6g} s",
                    f"highest frequency {report.omega_max:.1f} rad/s of the dynamics as integrated, at the start pose"]
    timing = f" (codegen {report.codegen_s:.2f} s, compile {report.compile_s:.2f} s)" if report.compile_s else ""
    print(f"wrote {report.path} ({', '.join(details)}) in {report.total_s:.2f} s{timing}")
    if report.platforms:
        print(f"binaries: {', '.join(report.platforms)}")
    if report.timing is not None:
        print(f"step cost: {report.timing.text()}")
    for platform, why in report.skipped_platforms.items():
        print(f"skipped {platform}: {why}")
    return 0
