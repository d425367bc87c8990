"""``flexfmu crosscheck ARM.toml --scenario NAME [--out DIR]`` (or ``--all``).

Runs the reference, the native FMU (co-simulation and model exchange), the
Python-backed FMU and, in closed loop, a controller FMU; compares every pair
on the scenario's outputs; writes report.json, report.md and PNG plots into
DIR; exits 1 when a comparison is outside its tolerance.
"""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub) -> None:
    parser = sub.add_parser("crosscheck", help="cross-validate FMUs of an arm against the reference")
    parser.add_argument("arm", nargs="?", help="arm specification (TOML); omit with --all")
    parser.add_argument("--scenario", action="append", help="scenario name (repeatable; default: the arm's scenarios)")
    parser.add_argument("--all", action="store_true", help="every example arm with its scenarios")
    parser.add_argument("--out", default="out/crosscheck", help="report directory (default: %(default)s)")
    parser.add_argument("--duration", type=float, default=None, help="shorten the scenarios to this many seconds")
    parser.set_defaults(run=run)


def run(args) -> int:
    from harness.crosscheck import all_cases, crosscheck, scenarios_for
    from harness.scenario import ScenarioError, load_scenario, scenario_names

    if args.all == bool(args.arm):
        print("error: give an arm specification or --all (not both)", file=sys.stderr)
        return 2
    if args.all:
        cases = all_cases()
    else:
        names = args.scenario or scenarios_for(Path(args.arm).stem)
        if not names:
            print(f"error: no scenario is written for {Path(args.arm).stem!r}; pass --scenario "
                  f"(one of {', '.join(scenario_names())})", file=sys.stderr)
            return 2
        try:
            for name in names:
                load_scenario(name)
        except ScenarioError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        cases = [(Path(args.arm), name) for name in names]
    report = crosscheck(cases, Path(args.out), args.duration)
    failed = [c for case in report["cases"] for c in case["comparisons"] if not c["passed"]]
    worst = {}
    for case in report["cases"]:
        for c in case["comparisons"]:
            key = (case["arm"], case["scenario"])
            worst[key] = max(worst.get(key, 0.0), c["max_abs"] / c["tolerance"])
    for (arm, scenario), ratio in worst.items():
        print(f"{arm}/{scenario}: worst difference {ratio:.2g} x its tolerance")
    print(f"{'PASS' if not failed else 'FAIL'}: {len(failed)} failed comparison(s); report in {args.out}/report.md "
          f"({report['wall_time_s']:.0f} s)")
    return 1 if failed else 0
