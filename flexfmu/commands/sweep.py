"""``flexfmu sweep ARM --scenario S --vary NAME=SPEC ... [--samples N --distributions FILE] --out DIR``.

Runs the scenario through its closed-loop FMU (the arm and the scenario's
controller compiled together, ``flexfmu export --target fmi2-loop``) at
every point of a grid of parameters, gains and reference or motion numbers,
and/or at random draws (Monte-Carlo), as a campaign on a local Dask cluster
(or ``--scheduler ADDRESS``); every value is checked against the arm's and
the scenario's ranges before anything runs. Writes ``results.csv`` (a row
per point: values, status, the FMU's error, the figures, the validity
envelope, the FMU's warnings) and ``summary.png``; ``--trajectories`` also
writes each point's samples. Names the points that left the validity
envelope, failed, or were retried after a lost worker. Rerunning the
command skips the points already done; interrupted, it says so. Exits 1 if
a point failed.
"""

from __future__ import annotations

import sys

from flexfmu.commands._common import UsageError, add_arm, add_campaign, add_out, campaign_settings, positive

SHOWN = 5  # points named per kind of trouble


def add_parser(sub) -> None:
    parser = sub.add_parser("sweep", help="run a scenario over a grid or random draws of parameters and gains")
    add_arm(parser)
    parser.add_argument("--scenario", required=True, help="scenario name or file")
    parser.add_argument("--vary", action="append", default=[], metavar="NAME=SPEC",
                        help="a parameter of the arm (payload.mass), a gain (kp), a reference or motion number "
                             "(reference.radius, motion.w0) and its values: START:STEP:STOP or V1,V2,... "
                             "(repeatable; all combinations)")
    parser.add_argument("--samples", type=int, default=0, help="random points drawn from --distributions")
    parser.add_argument("--distributions", default=None, metavar="FILE",
                        help="TOML file of parameter distributions for --samples (uniform low/high, normal mean/std)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random draws (default: %(default)s)")
    parser.add_argument("--duration", type=float, default=None, help="shorten the scenario to this many seconds")
    parser.add_argument("--trajectories", action="store_true",
                        help="also write every point's samples (the compared outputs and the applied inputs) to "
                             "OUT/trajectories/<point>.csv")
    add_out(parser, "out/sweep")
    add_campaign(parser)
    parser.set_defaults(run=run)


def _point(row: dict, names: list[str]) -> str:
    return ", ".join(f"{name}={row[name]:g}" for name in names)


def _show(title: str, lines: list[str]) -> None:
    """Print ``title`` and the first :data:`SHOWN` of ``lines`` (and how many more)."""
    if lines:
        print(f"{title} ({len(lines)}):")
        for line in lines[:SHOWN]:
            print(f"  {line}")
        if len(lines) > SHOWN:
            print(f"  ... and {len(lines) - SHOWN} more (see results.csv)")


def run(args) -> int:
    from flexfmu.control.scenario import load_scenario
    from flexfmu.data import resolve_arm, resolve_scenario
    from flexfmu.harness.campaigns.campaign import RETRIED
    from flexfmu.harness.workflows.sweep import envelope_warnings, grid_points, parse_vary, run_sweep, sample_points

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
    try:
        rows = run_sweep(resolve_arm(args.arm), resolve_scenario(args.scenario), points, args.out,
                         campaign_settings(args), duration, args.trajectories)
    except KeyboardInterrupt:
        print(f"the points done so far are kept in {args.out}/journal.jsonl: run the same command again to resume "
              "(it skips them)", file=sys.stderr)
        raise
    names = list(points[0])
    failed = [row for row in rows if row["status"] != "ok"]
    _show("left the validity envelope", envelope_warnings(rows, names))
    _show("retried after a lost worker", [f"{_point(row, names)} ({row[RETRIED]} time(s))" for row in rows
                                          if row.get(RETRIED)])
    _show("failed", [f"{_point(row, names)}: {row['error']}" for row in failed])
    print(f"{len(rows) - len(failed)} of {len(rows)} points ok; table in {args.out}/results.csv, "
          f"plots in {args.out}/summary.png")
    return 1 if failed else 0
