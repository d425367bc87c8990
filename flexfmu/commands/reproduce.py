"""``flexfmu reproduce --out DIR [--only NAME ...]``: every published or analytic number, one report.

Runs the registry of reproductions (``flexfmu.harness.reproductions``) and
writes DIR/report.md (a table per reproduction: source, published, ours,
relative difference, tolerance, verdict; figures where the paper has one)
and report.json. Exits 1 if a row is outside its tolerance.
"""

from __future__ import annotations

from flexfmu.commands._common import UsageError, add_out


def add_parser(sub) -> None:
    parser = sub.add_parser("reproduce", help="reproduce the papers' and analytic numbers in one report")
    add_out(parser, "out/reproduce")
    parser.add_argument("--only", action="append", default=None, metavar="NAME",
                        help="run only this reproduction (repeatable; default: all)")
    parser.set_defaults(run=run)


def run(args) -> int:
    from flexfmu.harness.workflows.reproduce import reproduce, summary

    try:
        data = reproduce(args.out, args.only)
    except KeyError as error:
        raise UsageError(f"--only: {error.args[0]}") from None
    for row in (row for section in data["reproductions"] for row in section["rows"]):
        if row["passed"] is False:
            print(f"FAIL {row['source']}: {row['quantity']}: published {row['published']:.6g}, ours {row['ours']:.6g}")
    print(f"{'PASS' if data['passed'] else 'FAIL'}: {summary(data)}; report in {args.out}/report.md")
    return 0 if data["passed"] else 1
