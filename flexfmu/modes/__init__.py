"""Assumed-mode shape families for uniform Euler-Bernoulli links.

:func:`mode_set` turns a link's :class:`~flexfmu.spec.arm.Modes` entry into a
:class:`ModeSet`: shape functions usable on numpy and CasADi arguments, plus
the dimensionless integrals the dynamics code scales by ``L``, ``rho`` and
``EI``. Families:

``pinned-pinned``
    ``sin(k pi xi)``, unnormalised, chord frame.
``clamped-free``
    Cantilever eigenfunctions, ``int phi**2 = 1``, ``phi(1) > 0``, tangent
    frame.
``clamped-mass``
    Eigenfunctions of a clamped beam with a tip mass and rotary inertia,
    same normalisation and frame as clamped-free.
``user``
    Sympy expressions in ``xi``, in the frame the spec names.

The table of families is :data:`flexfmu.modes.families.FAMILIES`; each
row holds its builder (``sine.pinned_pinned``, ``beam.clamped_free``,
``beam.clamped_mass``, ``user.user_shapes``).
"""

from __future__ import annotations

from flexfmu.modes.families import FAMILIES
from flexfmu.modes.frequency import cantilever_betas, clamped_mass_betas
from flexfmu.modes.modeset import ModeSet, build_mode_set
from flexfmu.spec.arm import FRAMES, Modes

__all__ = ["ModeSet", "mode_set", "cantilever_betas", "clamped_mass_betas"]


def mode_set(modes: Modes, tip_mass_ratio: float = 0.0, tip_inertia_ratio: float = 0.0) -> ModeSet:
    """Build the mode shapes and integrals described by ``modes``.

    The family's row of :data:`flexfmu.modes.families.FAMILIES` gives the
    frame and the function that builds the shapes.

    Parameters
    ----------
    modes : Modes
        Family, count and (for ``user``) shapes and frame of one link.
    tip_mass_ratio : float
        ``M_tip / (rho L)``; used only by families solved for a tip load.
    tip_inertia_ratio : float
        ``J_tip / (rho L**3)``; likewise. With both ratios zero,
        ``clamped-mass`` gives the clamped-free shapes.

    Returns
    -------
    ModeSet

    Raises
    ------
    ValueError
        For an unknown family or frame, a negative count or load, user shapes
        whose number differs from ``count`` or that violate their frame's
        end conditions.
    """
    if modes.family not in FAMILIES:
        raise ValueError(f"unknown mode family {modes.family!r}; known: {', '.join(FAMILIES)}")
    if modes.count < 0:
        raise ValueError(f"mode count must be >= 0, got {modes.count}")
    family = FAMILIES[modes.family]
    frame = family.frame or modes.frame
    if frame not in FRAMES:
        raise ValueError(f"the frame of family {family.name!r} must be one of {FRAMES}, got {frame!r}")
    shapes, betas = family.build(modes, tip_mass_ratio, tip_inertia_ratio)
    beta = None if betas is None else tuple(map(float, betas))
    return build_mode_set(family.name, frame, shapes, modes.count, beta)
