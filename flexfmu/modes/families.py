"""The assumed-mode families: one table read by the spec, the modes and the chain.

Each row says what a family needs from a spec file and how the rest of
flexfmu treats it: the link frame it implies, the extra keys of
``[link.modes]`` it takes, whether its shapes are solved for the distal load,
and where the function that builds its shapes lives. The builder is named by
its import path rather than imported, so the spec layer stays free of CasADi
and numerical code; :func:`flexfmu.modes.mode_set` resolves it.

Adding a family is one row here and one builder function in
``flexfmu/modes`` (see ``docs/spec.md`` for the user-facing description).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module


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
    builder : str
        ``"module:function"`` of the shape builder, called as
        ``function(modes, tip_mass_ratio, tip_inertia_ratio)`` and returning
        ``(shapes, eigenvalues or None)``.
    summary : str
        One line for messages and ``flexfmu info``.
    """

    name: str
    frame: str | None
    keys: tuple[str, ...]
    tip_load: bool
    builder: str
    summary: str

    def build(self, modes, tip_mass_ratio: float = 0.0, tip_inertia_ratio: float = 0.0):
        """Call the builder (imported on first use) for a link's ``modes`` (a Modes), with the tip load as
        ``tip_mass_ratio`` = M / (rho L) and ``tip_inertia_ratio`` = J / (rho L**3) (used by families with a
        tip load); returns (shapes, eigenvalues or None)."""
        module, function = self.builder.split(":")
        return getattr(import_module(module), function)(modes, tip_mass_ratio, tip_inertia_ratio)


FAMILIES: dict[str, ModeFamily] = {family.name: family for family in (
    ModeFamily("pinned-pinned", "chord", (), False, "flexfmu.modes.sine:pinned_pinned",
               "sin(k pi xi), chord frame (paper 000)"),
    ModeFamily("clamped-free", "tangent", (), False, "flexfmu.modes.beam:clamped_free",
               "cantilever eigenfunctions, tangent frame"),
    ModeFamily("clamped-mass", "tangent", ("tip_mass", "tip_inertia"), True, "flexfmu.modes.beam:clamped_mass",
               "clamped beam with the distal mass and inertia at its tip, tangent frame (paper 004)"),
    ModeFamily("user", None, ("shapes", "frame"), False, "flexfmu.modes.user:user_shapes",
               "expressions in xi given in the spec, in the frame it names"),
)}
FRAMES = ("tangent", "chord")
MAX_MODES = 20
