"""``flexfmu crosscheck ARM --scenario NAME [--out DIR]`` (or ``--all``).

Runs the reference, the native FMU (co-simulation and model exchange), the
Python-backed FMU and, in closed loop, a controller FMU; compares every pair
on the scenario's outputs; writes report.json, report.md and PNG plots into
DIR; exits 1 when a comparison is outside its tolerance. With ``--all`` (or
``--workers``/``--scheduler``) every run is a task on a Dask cluster.
``--motion w0=6`` changes the parameters of the scenarios' prescribed
motion (the ``[motion]`` table, e.g. of ``spinup``).
"""

from __future__ import annotations

from flexfmu.commands._common import UsageError, add_arm, add_campaign, add_out, campaign_settings, positive


def add_parser(sub) -> None:
    parser = sub.add_parser("crosscheck", help="cross-validate FMUs of an arm against the reference")
    add_arm(parser, optional=True)
    parser.add_argument("--scenario", action="append",
                        help="scenario name or file (repeatable; default: the scenarios written for the arm)")
    parser.add_argument("--all", action="store_true", help="every example arm with its scenarios")
    add_out(parser, "out/crosscheck")
    parser.add_argument("--duration", type=float, default=None, help="shorten the scenarios to this many seconds")
    parser.add_argument("--motion", default="", help="parameters of the scenarios' prescribed motion, e.g. 'w0=6' "
                                                     "(scenario spinup)")
    add_campaign(parser)
    parser.set_defaults(run=run)


def motion_parameters(text: str) -> dict[str, float]:
    """'name=value,...' of ``--motion`` as floats (the scenario checks the names)."""
    values = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        try:
            values[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise UsageError(f"--motion {item!r}: expected NAME=NUMBER, e.g. w0=6")
    return values


def run(args) -> int:
    from flexfmu import load_arm
    from flexfmu.control.scenario import load_scenario, scenario_names, scenarios_for
    from flexfmu.data import resolve_arm
    from flexfmu.harness.reports.report import case_lines
    from flexfmu.harness.workflows.crosscheck import all_cases, crosscheck

    if args.all == bool(args.arm):
        raise UsageError("give an arm (file or example name) or --all, not both")
    duration = None if args.duration is None else positive("--duration", args.duration)
    if args.all:
        cases = all_cases()
    else:
        arm_file = resolve_arm(args.arm)
        name = load_arm(arm_file).name
        names = args.scenario or scenarios_for(name)
        if not names:
            raise UsageError(f"no scenario is written for {name!r}; pass --scenario "
                             f"(one of {', '.join(scenario_names())})")
        for scenario in names:
            load_scenario(scenario)  # the file's own problems, before the arm is built
        cases = [(arm_file, scenario) for scenario in names]
    motion = motion_parameters(args.motion)
    if motion:
        loaded = [(arm, load_scenario(scenario)) for arm, scenario in cases]
        if not any(scenario.motion for _, scenario in loaded):
            raise UsageError("--motion: none of the scenarios has a prescribed motion ([motion] table)")
        cases = [(arm, scenario.with_motion(**motion) if scenario.motion else scenario) for arm, scenario in loaded]
    # --all is a campaign on Dask workers; one arm runs here unless --workers or --scheduler says otherwise
    campaign = campaign_settings(args)
    if not args.all and args.workers is None and args.scheduler is None or campaign.serial:
        campaign = None
    report = crosscheck(cases, args.out, duration, campaign)
    failed = [c for case in report["cases"] for c in case["comparisons"] if not c["passed"]]
    for case in report["cases"]:
        print("\n".join(case_lines(case)))
    errors = sum(len(case["errors"]) for case in report["cases"])
    print(f"{'PASS' if report['passed'] else 'FAIL'}: {len(failed)} failed comparison(s), {errors} failed run(s); "
          f"report in {args.out}/report.md ({report['wall_time_s']:.0f} s)")
    return 0 if report["passed"] else 1
