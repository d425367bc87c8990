"""One row of the table of arm kinds: everything flexfmu needs to know about a kind, in one place.

A kind of arm (a planar chain, a spatial chain, a Delta robot) is read
from its own file format, built on its own symbolic graph, planned by its
own planner and driven through the scenario references its arms can
follow. An :class:`ArmKind` row names all four, as objects the layer test
sees; the rows sit here, above the layers they reference (spec, dynamics,
control) and below the targets and the harness that use them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flexfmu.control.planners import Planner
from flexfmu.control.reference_kinds import ReferenceKind
from flexfmu.spec.keys import check_row


@dataclass(frozen=True)
class ArmKind:
    """One kind of arm.

    Attributes
    ----------
    name : str
        The ``kind`` of an arm file.
    summary : str
        One line for docs and ``flexfmu info``.
    load : callable
        (body, source) -> the arm's dataclass: the spec loader, given the file's table without its ``kind``
        and where it came from; raises SpecError listing every problem.
    graph : type
        The :class:`~flexfmu.dynamics.model.ModelGraph` class its Models are built on.
    planner : Planner
        What ``flexfmu plan`` runs for its arms (:data:`flexfmu.control.planners.PLANNERS`).
    references : tuple of ReferenceKind
        The scenario references its arms can follow (:data:`flexfmu.control.reference_kinds.REFERENCES`).
    home_frequencies : callable, optional
        (arm) -> {"position": home pose, "rad/s": natural frequencies}, what ``flexfmu info`` reports at the
        arm's home pose (None: nothing).
    """

    name: str
    summary: str
    load: Callable
    graph: type
    planner: Planner
    references: tuple[ReferenceKind, ...]
    home_frequencies: Callable | None = None

    def __post_init__(self):
        check_row("KINDS", self.name, load=self.load, graph=self.graph)
        for method in ("dynamics", "energies", "outputs", "structure", "compiled"):
            if not callable(getattr(self.graph, method, None)):
                raise TypeError(f"KINDS row {self.name!r}: graph {self.graph.__name__} has no {method}() of a "
                                "ModelGraph")
        if not getattr(self.graph, "METHODS", ()):
            raise TypeError(f"KINDS row {self.name!r}: graph {self.graph.__name__} names no derivation (METHODS)")
        if not isinstance(self.planner, Planner):
            raise TypeError(f"KINDS row {self.name!r}: planner must be a row of PLANNERS, got {self.planner!r}")
        if not self.references or not all(isinstance(row, ReferenceKind) for row in self.references):
            raise TypeError(f"KINDS row {self.name!r}: references must be rows of REFERENCES, got "
                            f"{self.references!r}")
