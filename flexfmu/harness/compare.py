"""Compare runs of one scenario pairwise, output by output.

For every pair of runs and every compared output: the largest absolute
difference, its RMS, and the largest difference relative to the signal's
range (peak to peak in the first run of the pair). A comparison passes when
the largest absolute difference is within the scenario's tolerance for that
output.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import combinations

import numpy as np


@dataclass(frozen=True)
class Comparison:
    first: str
    second: str
    output: str
    max_abs: float
    rms: float
    relative_to_range: float
    tolerance: float

    @property
    def passed(self) -> bool:
        return bool(np.isfinite(self.max_abs) and self.max_abs <= self.tolerance)

    def as_dict(self) -> dict:
        """The fields and ``passed`` as a dict, for report.json."""
        return asdict(self) | {"passed": self.passed}


def compare_runs(runs: dict, compared: list[tuple[str, float]]) -> list[Comparison]:
    """All pairwise comparisons of ``runs`` ({label: Result}) on the
    ``compared`` outputs, given as (name, largest allowed absolute difference)."""
    rows = []
    for (a, ra), (b, rb) in combinations(runs.items(), 2):
        if len(ra.time) != len(rb.time) or not np.allclose(ra.time, rb.time, rtol=0, atol=1e-9):
            raise ValueError(f"runs {a!r} and {b!r} are not sampled at the same times")
        for output, tolerance in compared:
            difference = np.asarray(rb[output]) - np.asarray(ra[output])
            span = float(np.ptp(ra[output])) or 1.0
            max_abs = float(np.max(np.abs(difference)))
            rows.append(Comparison(a, b, output, max_abs, float(np.sqrt(np.mean(difference**2))),
                                   max_abs / span, tolerance))
    return rows
