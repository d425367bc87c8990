"""The assumed-mode families: one table read by the spec, the modes and the chain.

Each row says what a family needs from a spec file and how the rest of
flexfmu treats it: the link frame it implies, the extra keys of
``[link.modes]`` it takes, whether its shapes are solved for the distal load,
and the function that builds its shapes. The spec loaders, a layer below,
are handed this table by the arm kinds that read modes (``flexfmu.kinds``);
:func:`flexfmu.modes.mode_set` and the chains read it directly.

Adding a family is one row here and one builder function in
``flexfmu/modes`` (see ``docs/spec.md`` for the user-facing description).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flexfmu.modes.beam import clamped_free, clamped_mass
from flexfmu.modes.sine import pinned_pinned
from flexfmu.modes.user import user_shapes
from flexfmu.spec.keys import check_row


@dataclass(frozen=True)
class ModeFamily:
    """One mode-shape family.

    Attributes
    ----------
    name : str
        The ``family`` value of a spec file.
    frame : str or None
        ``"tangent"`` or ``"chord"``; None when the spec names the frame.
    keys : tuple of str
        Keys of ``[link.modes]`` only this family takes.
    tip_load : bool
        True when the shapes are solved for the load distal to the link
        (mass and rotary inertia at its tip), which the chain computes.
    build : callable
        The shape builder, called as ``build(modes, tip_mass_ratio,
        tip_inertia_ratio)`` with a link's ``modes`` (a Modes) and the tip load
        as ``tip_mass_ratio`` = M / (rho L) and ``tip_inertia_ratio`` =
        J / (rho L**3) (used by families with a tip load); returns
        ``(shapes, eigenvalues or None)``.
    summary : str
        One line for messages and ``flexfmu info``.
    """

    name: str
    frame: str | None
    keys: tuple[str, ...]
    tip_load: bool
    build: Callable
    summary: str

    def __post_init__(self):
        check_row("FAMILIES", self.name, build=self.build)


FAMILIES: dict[str, ModeFamily] = {family.name: family for family in (
    ModeFamily("pinned-pinned", "chord", (), False, pinned_pinned,
               "sin(k pi xi), chord frame (paper 000)"),
    ModeFamily("clamped-free", "tangent", (), False, clamped_free,
               "cantilever eigenfunctions, tangent frame"),
    ModeFamily("clamped-mass", "tangent", ("tip_mass", "tip_inertia"), True, clamped_mass,
               "clamped beam with the distal mass and inertia at its tip, tangent frame (paper 004)"),
    ModeFamily("user", None, ("shapes", "frame"), False, user_shapes,
               "expressions in xi given in the spec, in the frame it names"),
)}
