"""``flexfmu reproduce``: every published or analytic number flexfmu can compute, in one report.

A reproduction is one entry of the registry
(``flexfmu.harness.reproductions.REPRODUCTIONS``, rows in ``reproductions.rows``): a name, a title and a
function that computes its rows (and may draw a figure into the output
folder). A row is one number: where it comes from, the published value,
ours, the relative difference, the tolerance and what it means, and the
verdict. Adding a reproduction (a new paper's table, a new benchmark) is one
module with its function and one line in the registry.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict
from pathlib import Path

from flexfmu.harness.reproductions import REPRODUCTIONS


def reproduce(out: Path, names: list[str] | None = None) -> dict:
    """Run the reproductions (all, or those named in ``names``) and write report.json and report.md
    into ``out``; returns the report's data.

    Raises
    ------
    KeyError
        For a name that is not in the registry.
    """
    registry = {entry.name: entry for entry in REPRODUCTIONS}
    unknown = sorted(set(names or ()) - set(registry))
    if unknown:
        raise KeyError(f"no reproduction {', '.join(unknown)}; there are {', '.join(registry)}")
    out.mkdir(parents=True, exist_ok=True)
    sections = []
    for name in names or registry:
        entry = registry[name]
        began = time.perf_counter()
        rows = entry.rows(out)
        sections.append({"name": name, "title": entry.title, "seconds": time.perf_counter() - began,
                         "figures": list(entry.figures),
                         "rows": [asdict(row) | {"relative_difference": row.relative_difference} for row in rows]})
    data = {"passed": all(row["passed"] is not False for s in sections for row in s["rows"]),
            "reproductions": sections}
    (out / "report.json").write_text(json.dumps(data, indent=2))
    (out / "report.md").write_text(markdown(data))
    return data


VERDICTS = {True: "PASS", False: "**FAIL**", None: "not reproduced"}


def summary(data: dict) -> str:
    """'N of M checked rows within tolerance' of the report ``data``, and how many rows are reported only."""
    verdicts = [row["passed"] for s in data["reproductions"] for row in s["rows"]]
    checked = [v for v in verdicts if v is not None]
    reported = len(verdicts) - len(checked)
    return (f"{sum(checked)} of {len(checked)} checked rows within tolerance"
            + (f"; {reported} reported, not reproduced" if reported else ""))


def markdown(data: dict) -> str:
    """The report's Markdown: one table per reproduction (from ``data``, as :func:`reproduce` returns)."""
    lines = ["# flexfmu reproduces published and analytic numbers", "",
             f"Result: **{'PASS' if data['passed'] else 'FAIL'}** ({summary(data)}). "
             "Relative difference = ours / published - 1.", ""]
    for section in data["reproductions"]:
        lines += [f"## {section['title']}", "",
                  "| source | quantity | published | ours | unit | rel. difference | tolerance | verdict |",
                  "|---|---|---|---|---|---|---|---|"]
        for row in section["rows"]:
            relative = row["relative_difference"]
            relative = "n/a" if math.isnan(relative) else f"{relative:+.2e}"
            lines.append(f"| {row['source']} | {row['quantity']} | {row['published']:.6g} | {row['ours']:.6g} | "
                         f"{row['unit']} | {relative} | {row['tolerance']} | "
                         f"{VERDICTS[row['passed']]} |")
        notes = [row["note"] for row in section["rows"] if row["note"]]
        lines += [""] + [f"- {note}" for note in dict.fromkeys(notes)] + [""]
        lines += [f"![{section['name']}]({figure})" for figure in section["figures"]] + [""]
    return "\n".join(lines)
