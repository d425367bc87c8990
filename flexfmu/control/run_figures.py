"""The figures of a closed-loop run as records, and the rule of its start transient.

A sweep reads numbers, not samples: the closed-loop FMU (``flexfmu.control.loop_system``) folds each
figure in sample by sample and outputs it, and the harness tabulates it under its label. This module holds
what both sides share and nothing heavy (no CasADi), so a campaign worker that only runs the FMU imports
only what it reads.
"""

from __future__ import annotations

from dataclasses import dataclass

TRANSIENT_S = 2.0  # the start transient of a run, s (half the run when that is shorter): figures after it
SETTLE_TIME = "figures.settle_time"  # the closed loop's parameter: when the settled figures start
FOLDS = ("sum", "max", "rms", "first")
ENVELOPE_LEFT = "envelope.left_at_s"  # the column of the time a run first left the validity envelope (None: never)
ENVELOPE_FIGURES = "figure.envelope."  # the closed loop's envelope outputs: each quantity's largest fraction of its limit (max), when it left (first)
ENVELOPE_PEAK = "envelope.peak_fraction"  # the column of its largest quantity as a fraction of that one's limit


def settle_time(duration: float) -> float:
    """When a run of ``duration`` s counts as settled: after the start transient, :data:`TRANSIENT_S` or half
    the run when that is shorter (s)."""
    return min(TRANSIENT_S, 0.5 * float(duration))


@dataclass(frozen=True)
class Figure:
    """One figure of a run, an output of the closed loop.

    Attributes
    ----------
    name : str
        The output's name (``figure.tracking``).
    unit : str
    label : str
        The column it fills in a sweep's table (as :func:`flexfmu.harness.reports.figures.scenario_figures` and
        :func:`flexfmu.control.cost.cost_terms` name it); ``{settled}`` stands for "t >= <settle time> s".
    fold : str
        How the samples' values make the figure (:data:`FOLDS`): their sum, their largest, the root of the
        mean of their squares (over ``count`` entries a sample), or the first time a sample is beyond 0
        (-1 until then).
    settled : bool
        Only the samples after the start transient count.
    count : int
        For ``rms``: how many entries each sample's value sums.
    """

    name: str
    unit: str
    label: str
    fold: str
    settled: bool = False
    count: int = 1

    @property
    def states(self) -> int:
        """How many discrete states it needs: the running sum of squares and the number of entries for
        ``rms``, one otherwise."""
        return 2 if self.fold == "rms" else 1


def term_figure(term: str) -> str:
    """The output of the closed loop that holds the cost's ``term`` (:data:`flexfmu.control.cost.TERMS`), unweighted."""
    return f"figure.{term}"
