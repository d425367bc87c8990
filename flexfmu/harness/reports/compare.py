"""Compare runs of one scenario pairwise, output by output.

For every pair of runs and every compared output: the largest absolute
difference, its RMS, and the largest difference relative to the signal's
range (peak to peak in the first run of the pair), over the times both runs
cover (a run may stop early: the Python-backed FMU runs a short horizon).

What a comparison allows depends on the pair. Two runs of one fixed-step
scheme (the native FMU and the Python-backed one, both RK4 at the same
internal step) are two implementations of the same discrete system: they
must agree to round-off, ``ROUND_OFF`` times the signal's peak magnitude
(at least 1 in its unit). A prescribed joint's torque (group
``joint_torque``) is inverse dynamics: it weighs the accelerations of the
stiffest modes, which amplify the state's round-off by about b w_max^2 (on
``spinup_beam``, state differences of 2e-13 m give 6e-10 N m), so it is
held to ``ROUND_OFF_GAIN`` times that bound. Any other pair differs by
integration error and is held to the scenario's tolerance for that output,
an absolute bound in the output's unit. A reduced Model's reference against
the unreduced arm's measures the reduction alone: it is held to
``REDUCTION_OF_RANGE`` of the signal's range (issue 21's accuracy target for
a reduced Delta robot's platform path).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import combinations

import numpy as np

from flexfmu.dynamics.metadata import JOINT_TORQUE

ROUND_OFF = 1e-10  # relative to max(1, peak magnitude), for runs of one fixed-step scheme
SCENARIO, SAME_SCHEME, REDUCTION = "scenario", "round-off", "reduction"
REDUCTION_OF_RANGE = 0.01  # a reduced Model's reference against the full one's, relative to the signal's range
ROUND_OFF_GAIN = {JOINT_TORQUE: 100.0}  # output group -> factor on ROUND_OFF (see the module docstring)


@dataclass(frozen=True)
class Comparison:
    """One pair of runs on one output: differences, and the absolute ``tolerance`` in ``unit`` that
    ``max_abs`` must not exceed, of kind ``bound`` (``"scenario"`` or ``"round-off"``)."""

    first: str
    second: str
    output: str
    max_abs: float
    rms: float
    relative_to_range: float
    tolerance: float
    unit: str = ""
    bound: str = SCENARIO

    @property
    def passed(self) -> bool:
        return bool(np.isfinite(self.max_abs) and self.max_abs <= self.tolerance)

    def as_dict(self) -> dict:
        """The fields and ``passed`` as a dict, for report.json."""
        return asdict(self) | {"passed": self.passed}


def compare_runs(runs: dict, compared: list[tuple[str, float]], schemes: dict | None = None,
                 units: dict | None = None, groups: dict | None = None, only: dict | None = None) -> list[Comparison]:
    """All pairwise comparisons of ``runs`` on the ``compared`` outputs.

    Parameters
    ----------
    runs : dict
        {label: Result}; runs of different lengths are compared over the samples they share.
    compared : list of (str, float)
        Output names with the scenario's largest allowed absolute difference.
    schemes : dict, optional
        {label: fixed-step scheme or None}; two runs of one scheme are held to round-off.
    units : dict, optional
        {output: unit}, reported with each comparison.
    groups : dict, optional
        {output: its group}, for the round-off gains of :data:`ROUND_OFF_GAIN`.
    only : dict, optional
        {run: (the runs it is compared with, the bound)}: such a run meets no other run, and is held to that
        bound (:data:`REDUCTION`: a fraction of the signal's range).
    """
    schemes, units, groups, only = schemes or {}, units or {}, groups or {}, only or {}
    rows = []
    for (a, ra), (b, rb) in combinations(runs.items(), 2):
        restricted = [(run, other) for run, other in ((a, b), (b, a)) if run in only]
        if restricted and not all(other in only[run][0] for run, other in restricted):
            continue
        bound = only[restricted[0][0]][1] if restricted else None
        count = min(len(ra.time), len(rb.time))
        if not np.allclose(ra.time[:count], rb.time[:count], rtol=0, atol=1e-9):
            raise ValueError(f"runs {a!r} and {b!r} are not sampled at the same times")
        same_scheme = schemes.get(a) is not None and schemes.get(a) == schemes.get(b)
        for output, tolerance in compared:
            first, second = np.asarray(ra[output])[:count], np.asarray(rb[output])[:count]
            difference = second - first
            span = float(np.ptp(first)) or 1.0
            max_abs = float(np.max(np.abs(difference)))
            kind = bound or (SAME_SCHEME if same_scheme else SCENARIO)
            if kind == SAME_SCHEME:
                gain = ROUND_OFF_GAIN.get(groups.get(output), 1.0)
                tolerance = gain * ROUND_OFF * max(1.0, float(np.max(np.abs(first))))
            elif kind == REDUCTION:
                tolerance = REDUCTION_OF_RANGE * span
            rows.append(Comparison(a, b, output, max_abs, float(np.sqrt(np.mean(difference**2))), max_abs / span,
                                   tolerance, units.get(output, ""), kind))
    return rows
