"""The rows of ``flexfmu reproduce`` and the registry's entries: what one reproduced number is, and
what a reproduction provides (the registry itself is ``flexfmu.harness.reproductions.REPRODUCTIONS``).

A row passes only within honest tolerances: a published number within 1 % (:data:`PUBLISHED`), an
analytic one within 1e-6 (:data:`ANALYTIC`), a sign or a count exactly. Anything that would need a looser
tolerance is reported, not reproduced (``passed`` None), with the reason in its note; :func:`relative_row`
refuses a looser tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

PUBLISHED, ANALYTIC = 0.01, 1e-6  # the relative tolerances a published and an analytic number pass within


@dataclass(frozen=True)
class Row:
    """One reproduced number.

    Attributes
    ----------
    source : str
        Paper, table or equation the published value comes from.
    quantity : str
        What is compared, with its conditions.
    published : float
        The published (or analytic) value.
    ours : float
        flexfmu's value.
    unit : str
    tolerance : str
        What the verdict requires, in words (e.g. ``"abs(rel) <= 1e-6"``, ``"ours > 1"``).
    passed : bool or None
        Whether ours meets the tolerance; None for a number we report but do not reproduce (no
        tolerance applies, and the note says why), which neither passes nor fails.
    note : str
        Why we differ, where we do.
    """

    source: str
    quantity: str
    published: float
    ours: float
    unit: str
    tolerance: str
    passed: bool | None
    note: str = ""

    @property
    def relative_difference(self) -> float:
        """ours / published - 1 (nan for a published zero)."""
        return self.ours / self.published - 1.0 if self.published else math.nan


def relative_row(source: str, quantity: str, published: float, ours: float, unit: str, tolerance: float,
                 note: str = "") -> Row:
    """A row that passes when ``ours`` is within the relative ``tolerance`` of ``published``; the other
    parameters (``source``, ``quantity``, ``unit``, ``note``) as for :class:`Row`.

    Raises
    ------
    ValueError
        For a tolerance looser than :data:`PUBLISHED` (1 %): such a number is reported, not reproduced.
    """
    if not 0 < tolerance <= PUBLISHED:
        raise ValueError(f"{quantity}: a tolerance of {tolerance:g} is looser than {PUBLISHED:g}; report the number "
                         "(Row with passed None) and say why instead")
    passed = abs(ours / published - 1.0) <= tolerance
    return Row(source, quantity, float(published), float(ours), unit, f"abs(rel) <= {tolerance:g}", bool(passed), note)


@dataclass(frozen=True)
class Reproduction:
    """An entry of the registry: ``rows(out)`` computes the rows, drawing any figure into the folder
    ``out`` (named in ``figures``)."""

    name: str
    title: str
    rows: Callable[[Path], list[Row]]
    figures: tuple = field(default=())
