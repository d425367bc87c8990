"""Cross-validation reports: report.json, report.md and PNG plots.

The JSON holds every figure the Markdown shows, so a reader (or a test) can
check one against the other. Plots: each compared output overlaid for every
run, and the difference of every run from the reference.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

from flexfmu.harness.reports.compare import REDUCTION_OF_RANGE, ROUND_OFF
from flexfmu.harness.reports.envelope import envelope_console, envelope_lines
from flexfmu.harness.reports.plots import thinned, titled

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name).strip("_")


def plot_runs(runs: dict, outputs: list[str], reference: str, path: Path, title: str,
              units: dict | None = None) -> None:
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
    units : dict, optional
        {output: unit} for the axis labels.
    """
    units = units or {}
    fig, axes = plt.subplots(len(outputs), 2, figsize=(13, 2.6 * len(outputs)), squeeze=False)
    for row, output in zip(axes, outputs):
        unit = f" [{units[output]}]" if units.get(output) else ""
        for label, result in runs.items():
            row[0].plot(*thinned(result.time, result[output]), label=label, lw=1.0)
            if label != reference:
                count = len(result.time)
                row[1].plot(*thinned(result.time, result[output] - runs[reference][output][:count]),
                            label=f"{label} - {reference}", lw=1.0)
        row[0].set(ylabel=f"{output}{unit}")
        row[1].set(ylabel=f"difference{unit}")
        for ax in row:
            ax.grid(True, alpha=0.3)
    # every row draws the same runs in the same colours: one legend per column says which is which (a legend
    # on every axis doubled the time to draw a figure of many outputs)
    for ax in axes[0]:
        ax.legend(fontsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    titled(fig, title)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_report(out: Path, cases: list[dict], wall_time_s: float) -> dict:
    """Write report.json and report.md for ``cases`` into the folder ``out``
    (created if needed); return the JSON data.

    Each case: {"arm", "scenario", "description", "runs": {label: seconds}, "horizons": {label: s},
    "reference_integrator": name or None,
    "comparisons": [Comparison.as_dict()], "envelope": envelope summary or None, "figures": {name [unit]:
    value}, "plot", "scenario_plot"}. ``wall_time_s`` is the whole cross-check's duration, s, reported as
    is. The Markdown has one summary table per case (each pair's worst output against its tolerance), the
    validity envelope and the case's figures; report.json has every output of every pair.
    """
    out.mkdir(parents=True, exist_ok=True)
    passed = all(c["passed"] for case in cases for c in case["comparisons"]) and \
        not any(case.get("errors") for case in cases)
    data = {"passed": passed, "wall_time_s": wall_time_s, "cases": cases}
    (out / "report.json").write_text(json.dumps(data, indent=2))
    lines = ["# flexfmu cross-validation", "",
             f"Result: **{'PASS' if passed else 'FAIL'}** ({len(cases)} case(s), {wall_time_s:.1f} s wall time).", "",
             "Each row is a pair of runs and the output where they differ most relative to its tolerance. "
             "A *scenario* tolerance bounds the largest absolute difference, in the output's unit (the "
             "scenario file says why); a *round-off* tolerance bounds two runs of one fixed-step scheme (the "
             f"native and the Python-backed FMU) at {ROUND_OFF:g} x max(1, peak |value|) (a prescribed joint's "
             "torque, inverse dynamics, at 100 times that); a *reduction* tolerance bounds a reduced arm's "
             f"reference against the unreduced arm's, at {REDUCTION_OF_RANGE:g} of the signal's range (the "
             "reduction's error alone: every other pair holds the integration error). Every output of every "
             "pair is in report.json.", ""]
    for case in cases:
        ok = all(c["passed"] for c in case["comparisons"]) and not case.get("errors")
        verdict = "PASS" if ok else "FAIL"
        runs = ", ".join(f"{k} ({v:.1f} s" + (f", first {case['horizons'][k]:g} s)" if case['horizons'][k]
                                               < max(case['horizons'].values()) else ")")
                         for k, v in case["runs"].items())
        lines += [f"## {case['arm']} / {case['scenario']}: {verdict}", "", case.get("description", ""), "",
                  f"Runs: {runs}.", "", *([f"Reference integrator: {case['reference_integrator']}.", ""]
                                          if case.get("reference_integrator") else []),
                  *envelope_lines(case.get("envelope"))]
        lines += [f"Run **{name} failed**: {message}" for name, message in case.get("errors", {}).items()]
        lines += ["",
                  "| pair | worst output | max difference | tolerance | verdict |", "|---|---|---|---|---|"]
        for pair, rows in _pairs(case["comparisons"]):
            worst = max(rows, key=lambda c: c["max_abs"] / c["tolerance"])
            unit = f" {worst['unit']}" if worst["unit"] else ""
            ok = all(c["passed"] for c in rows)
            lines.append(f"| {pair} | {worst['output']} | {worst['max_abs']:.2e}{unit} | "
                         f"{worst['tolerance']:.1e}{unit} ({worst['bound']}) | {'PASS' if ok else '**FAIL**'} |")
        if case["figures"]:
            lines += ["", "| what the reference run does | value |", "|---|---|"]
            lines += [f"| {name} | {value:.3g} |" for name, value in case["figures"].items()]
        if case.get("scenario_plot"):
            lines += ["", f"![{case['scenario']}]({case['scenario_plot']})"]
        if case.get("plot"):
            lines += ["", f"![{case['scenario']}: runs and their differences]({case['plot']})"]
        lines.append("")
    (out / "report.md").write_text("\n".join(lines))
    return data


def case_lines(case: dict) -> list[str]:
    """What the console says about one ``case`` of a report: its worst difference against its tolerance when
    every run finished, else which runs failed (a worst difference over the runs that happened to finish
    would read as a result); and whether and when runs left the validity envelope."""
    label = f"{case['arm']}/{case['scenario']}"
    if case.get("errors"):
        lines = [f"{label}: {len(case['errors'])} run(s) failed, so no difference is summarised"]
        lines += [f"  run {name} failed: {message}" for name, message in case["errors"].items()]
    else:
        worst = max((c["max_abs"] / c["tolerance"] for c in case["comparisons"]), default=0.0)
        lines = [f"{label}: worst difference {worst:.2g} x its tolerance"]
    return lines + _integrator_lines(case) + envelope_console(case.get("envelope"))


def _integrator_lines(case: dict) -> list[str]:
    """Which integrator the case's reference used, when it ran (the console's line)."""
    name = case.get("reference_integrator")
    return [f"  reference integrated by {name}"] if name else []


def _pairs(comparisons: list[dict]):
    """("first vs second", rows) for each pair, in order of first appearance."""
    pairs: dict[str, list] = {}
    for c in comparisons:
        pairs.setdefault(f"{c['first']} vs {c['second']}", []).append(c)
    return pairs.items()


def plot_file(arm: str, scenario: str, kind: str | None = None) -> str:
    """The plot's file name for the ``arm`` and ``scenario`` names (non-alphanumerics replaced by ``_``),
    with ``__kind`` before the suffix when ``kind`` is given."""
    return f"{_slug(arm)}__{_slug(scenario)}{'__' + kind if kind else ''}.png"
