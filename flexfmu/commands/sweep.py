"""``flexfmu sweep ARM --scenario S --vary NAME=SPEC ... [--samples N --distributions FILE] --out DIR``.

Runs the scenario through the arm's native FMU at every point of a grid of
parameters and gains, and/or at random draws (Monte-Carlo), as a campaign on
a local Dask cluster (or ``--scheduler ADDRESS``); writes ``results.csv``
(a row per point: values, status, error, cost terms, figures) and
``summary.png``. Rerunning the command skips the points already done.
Exits 1 if a point failed.
"""

from __future__ import annotations

from flexfmu.commands._common import UsageError, add_arm, add_campaign, add_out, campaign_settings, positive


def add_parser(sub) -> None:
    parser = sub.add_parser("sweep", help="run a scenario over a grid or random draws of parameters and gains")
    add_arm(parser)
    parser.add_argument("--scenario", required=True, help="scenario name or file")
    parser.add_argument("--vary", action="append", default=[], metavar="NAME=SPEC",
                        help="a parameter or gain and its values: START:STEP:STOP or V1,V2,... (repeatable; "
                             "all combinations)")
    parser.add_argument("--samples", type=int, default=0, help="random points drawn from --distributions")
    parser.add_argument("--distributions", default=None, metavar="FILE",
                        help="TOML file of parameter distributions for --samples (uniform low/high, normal mean/std)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random draws (default: %(default)s)")
    parser.add_argument("--duration", type=float, default=None, help="shorten the scenario to this many seconds")
    add_out(parser, "out/sweep")
    add_campaign(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from flexfmu.control.scenario import load_scenario
    from flexfmu.data import resolve_arm, resolve_scenario
    from flexfmu.harness.workflows.sweep import grid_points, parse_vary, run_sweep, sample_points

    load_scenario(args.scenario)
    if args.samples < 0:
        raise UsageError(f"--samples must be >= 0, got {args.samples}")
    if bool(args.samples) != bool(args.distributions):
        raise UsageError("--samples and --distributions go together")
    if not args.vary and not args.samples:
        raise UsageError("nothing to sweep: give --vary NAME=SPEC and/or --samples N --distributions FILE")
    duration = None if args.duration is None else positive("--duration", args.duration)
    points = grid_points([parse_vary(text) for text in args.vary])
    if args.samples:
        draws = sample_points(args.distributions, args.samples, args.seed)
        points = [grid | draw for grid in points for draw in draws]
    rows = run_sweep(resolve_arm(args.arm), resolve_scenario(args.scenario), points, args.out,
                     campaign_settings(args), duration)
    failed = [row for row in rows if row["status"] != "ok"]
    for row in failed[:5]:
        print(f"failed: {', '.join(f'{k}={row[k]:g}' for k in points[0])}: {row['error']}")
    print(f"{len(rows) - len(failed)} of {len(rows)} points ok; table in {args.out}/results.csv, "
          f"plots in {args.out}/summary.png")
    return 1 if failed else 0
