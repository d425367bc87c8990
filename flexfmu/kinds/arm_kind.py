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
        (model) -> {"where": the pose and how the arm is held, in words, "position": the pose, "rad/s": natural
        frequencies} or None, what ``flexfmu info`` reports for an arm of the kind (None: nothing); a
        linearisation about a loaded equilibrium, with the load's geometric stiffness, or saying why not.
    unreduced : callable, optional
        (arm) -> the same arm without reduction of its flexible bodies (None: the kind reduces nothing): the
        full model a crosscheck holds a reduced one against.
    """

    name: str
    summary: str
    load: Callable
    graph: type
    planner: Planner
    references: tuple[ReferenceKind, ...]
    home_frequencies: Callable | None = None
    unreduced: Callable | None = None

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


HOME_FREQUENCIES = 8  # how many flexfmu info reports (paper 003 tabulates eight)


def held_home_frequencies(model) -> dict | None:
    """The first natural frequencies of a serial arm's ``model`` at its start pose (every joint at its
    ``start_angle``) with its joints held by their motors, about the static sag under gravity with the geometric
    stiffness of the links' axial load (:func:`flexfmu.dynamics.linear.held_frequencies`); None for an arm with
    nothing to vibrate."""
    from flexfmu.dynamics.linear import held_frequencies

    pose = model.start_coordinates[model.coordinates_of("joint")]
    omega = held_frequencies(model, pose)
    omega = omega[omega > 0][:HOME_FREQUENCIES]
    if not omega.size:
        return None
    return {"where": "at the start pose (every joint at its start_angle), joints held, about the static sag under "
                     "gravity with the geometric stiffness of the links' axial load",
            "position": [float(angle) for angle in pose], "rad/s": [float(w) for w in omega]}
