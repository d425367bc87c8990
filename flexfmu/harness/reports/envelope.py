"""The validity envelope in the harness: did a run leave it, when, and how far.

An assumed-mode model is valid for small deflections and a flexible joint's
spring is linear over small angles. The Model lists the quantities that
measure this (outputs of the group ``envelope``, each with the parameter
that limits it, see :mod:`flexfmu.dynamics.metadata`) and a flag output that
is 1 while any is beyond its limit; the FMU warns once per quantity. Here
every run of a cross-check is summarised: the first time it left the
envelope and each quantity's peak as a fraction of its limit.
"""

from __future__ import annotations

import numpy as np

from flexfmu.control.run_figures import ENVELOPE_LEFT, ENVELOPE_PEAK
from flexfmu.dynamics.metadata import ENVELOPE, ENVELOPE_FLAG

LEFT_AT, PEAK = ENVELOPE_LEFT, ENVELOPE_PEAK  # the columns of a table row, as the closed-loop FMU's figures name them


def envelope_outputs(model) -> list[str]:
    """Names of ``model``'s envelope quantities and flag (none for an arm without flexible parts)."""
    return [s.name for s in model.output_table if s.group in (ENVELOPE, ENVELOPE_FLAG)]


def envelope_summary(model, results: dict, overrides: dict | None = None) -> dict | None:
    """How every run stayed inside the validity envelope of ``model``, or None if it has none.

    Parameters
    ----------
    model : Model
    results : dict
        {run label: Result}; runs that did not record the envelope quantities are left out.
    overrides : dict, optional
        Parameter values the runs used instead of the nominal ones (the limits among them count).

    Returns
    -------
    dict or None
        ``{"limits": {quantity: limit}, "runs": {label: {"left_at": first time beyond (s) or None,
        "peak_fraction": {quantity: max |value| / limit}}}}``.
    """
    quantities = [s for s in model.output_table if s.group == ENVELOPE]
    if not quantities:
        return None
    parameters = {**model.parameters, **{k: v for k, v in (overrides or {}).items() if k in model.parameters}}
    limits = {s.name: float(parameters[s.limit]) for s in quantities}
    runs = {}
    for label, result in results.items():
        if not set(limits) <= set(result.names):
            continue
        fractions = np.column_stack([np.abs(result[name]) / limit for name, limit in limits.items()])
        beyond = np.flatnonzero((fractions > 1.0).any(axis=1))
        runs[label] = {"left_at": float(result.time[beyond[0]]) if beyond.size else None,
                       "peak_fraction": dict(zip(limits, map(float, fractions.max(axis=0))))}
    return {"limits": limits, "runs": runs}


def envelope_lines(summary: dict | None) -> list[str]:
    """Markdown lines of a report for the envelope ``summary`` (from :func:`envelope_summary`; none for None)."""
    if not summary or not summary["runs"]:
        return []
    left = {label: run for label, run in summary["runs"].items() if run["left_at"] is not None}
    worst = _worst(summary)
    if not left:
        return [f"Validity envelope: every run stayed inside (largest: {worst[1]} at {worst[0]:.2g} of its limit "
                f"{summary['limits'][worst[1]]:g}).", ""]
    runs = ", ".join(f"{label} at t = {run['left_at']:.4g} s" for label, run in left.items())
    return [f"Validity envelope: **left** by {runs} (largest: {worst[1]} at {worst[0]:.3g} times its limit "
            f"{summary['limits'][worst[1]]:g}); results beyond are outside the model's assumptions.", ""]


def _worst(summary: dict, labels=None) -> tuple[float, str]:
    """(largest peak fraction, its quantity) over the runs of ``summary`` named in ``labels`` (all when None)."""
    return max(((fraction, name) for label, run in summary["runs"].items() if labels is None or label in labels
                for name, fraction in run["peak_fraction"].items()), default=(0.0, ""))


def envelope_console(summary: dict | None, indent: str = "  ") -> list[str]:
    """Console lines for the envelope ``summary`` (from :func:`envelope_summary`), each starting with
    ``indent``: a warning naming every run that left the envelope, when, and the largest excursion; nothing
    when every run stayed inside."""
    if not summary:
        return []
    left = {label: run["left_at"] for label, run in summary["runs"].items() if run["left_at"] is not None}
    if not left:
        return []
    fraction, name = _worst(summary, left)
    runs = ", ".join(f"{label} at t = {t:.4g} s" for label, t in left.items())
    return [f"{indent}warning: left the validity envelope: {runs} (largest: {name} at {fraction:.3g} times its "
            f"limit {summary['limits'][name]:g}); results beyond are outside the model's assumptions"]


def envelope_columns(summary: dict | None, label: str) -> dict:
    """The columns of a table row for the run ``label`` of the envelope ``summary``: when it first left the
    envelope (s; None, an empty cell, if never) and its largest quantity as a fraction of that quantity's
    limit (None for an arm without an envelope)."""
    run = (summary or {"runs": {}})["runs"].get(label)
    if run is None:
        return {LEFT_AT: None, PEAK: None}
    return {LEFT_AT: run["left_at"], PEAK: max(run["peak_fraction"].values())}
