"""Cross-validation reports: report.json, report.md and PNG plots.

The JSON holds every figure the Markdown shows, so a reader (or a test) can
check one against the other. Plots: each compared output overlaid for every
run, and the difference of every run from the reference.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

from flexfmu.harness.envelope import envelope_lines

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name).strip("_")


def plot_runs(runs: dict, outputs: list[str], reference: str, path: Path, title: str) -> None:
    """Overlays (left) and differences from ``reference`` (right), one row per output.

    Parameters
    ----------
    runs : dict
        {label: Result} of the runs to overlay; ``reference`` must be one of the labels.
    outputs : list of str
        The outputs to plot, one row each.
    reference : str
        The label every other run is subtracted from.
    path : Path
        The image file to write.
    title : str
        The figure's title.
    """
    fig, axes = plt.subplots(len(outputs), 2, figsize=(13, 2.6 * len(outputs)), squeeze=False)
    for row, output in zip(axes, outputs):
        for label, result in runs.items():
            row[0].plot(result.time, result[output], label=label, lw=1.0)
            if label != reference:
                row[1].plot(result.time, result[output] - runs[reference][output], label=f"{label} - {reference}", lw=1.0)
        row[0].set(ylabel=output)
        row[1].set(ylabel=f"difference in {output}")
        for ax in row:
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_report(out: Path, cases: list[dict], wall_time_s: float) -> dict:
    """Write report.json and report.md for ``cases`` into the folder ``out``
    (created if needed); return the JSON data.

    Each case: {"arm", "scenario", "runs": {label: seconds}, "comparisons":
    [Comparison.as_dict()], "envelope": envelope summary or None, "plot": file name}. ``wall_time_s`` is the whole
    cross-check's duration, s, reported as is.
    """
    out.mkdir(parents=True, exist_ok=True)
    passed = all(c["passed"] for case in cases for c in case["comparisons"])
    data = {"passed": passed, "wall_time_s": wall_time_s, "cases": cases}
    (out / "report.json").write_text(json.dumps(data, indent=2))
    lines = ["# flexfmu cross-validation", "",
             f"Result: **{'PASS' if passed else 'FAIL'}** ({len(cases)} case(s), {wall_time_s:.1f} s wall time)", ""]
    for case in cases:
        verdict = "PASS" if all(c["passed"] for c in case["comparisons"]) else "FAIL"
        lines += [f"## {case['arm']} / {case['scenario']}: {verdict}", "", case.get("description", ""), "",
                  "Runs: " + ", ".join(f"{k} ({v:.1f} s)" for k, v in case["runs"].items()), "",
                  *envelope_lines(case.get("envelope")),
                  "| pair | output | max abs | RMS | rel. to range | tolerance | |",
                  "|---|---|---|---|---|---|---|"]
        for c in case["comparisons"]:
            lines.append(f"| {c['first']} vs {c['second']} | {c['output']} | {c['max_abs']:.3e} | {c['rms']:.3e} | "
                         f"{c['relative_to_range']:.3e} | {c['tolerance']:.1e} | {'ok' if c['passed'] else '**FAIL**'} |")
        lines += ["", f"![{case['scenario']}]({case['plot']})", ""]
    (out / "report.md").write_text("\n".join(lines))
    return data


def plot_file(arm: str, scenario: str) -> str:
    """The plot's file name for the ``arm`` and ``scenario`` names (non-alphanumerics replaced by ``_``)."""
    return f"{_slug(arm)}__{_slug(scenario)}.png"
