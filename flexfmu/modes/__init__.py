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
"""

from __future__ import annotations

from flexfmu.modes.beam import ClampedBeamShapes
from flexfmu.modes.frequency import cantilever_betas, clamped_mass_betas
from flexfmu.modes.modeset import ModeSet, build_mode_set
from flexfmu.modes.sine import SineShapes
from flexfmu.modes.user import UserShapes
from flexfmu.modes.validate import check_user_frame
from flexfmu.spec.arm import Modes

__all__ = ["ModeSet", "mode_set", "cantilever_betas", "clamped_mass_betas"]

FRAMES = ("tangent", "chord")


def mode_set(modes: Modes, tip_mass_ratio: float = 0.0, tip_inertia_ratio: float = 0.0) -> ModeSet:
    """Build the mode shapes and integrals described by ``modes``.

    Parameters
    ----------
    modes : Modes
        Family, count and (for ``user``) shapes and frame of one link.
    tip_mass_ratio : float
        ``M_tip / (rho L)``; used only by ``clamped-mass``.
    tip_inertia_ratio : float
        ``J_tip / (rho L**3)``; used only by ``clamped-mass``. With both
        ratios zero, ``clamped-mass`` gives the clamped-free shapes.

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
    family, count = modes.family, modes.count
    if count < 0:
        raise ValueError(f"mode count must be >= 0, got {count}")
    if family == "pinned-pinned":
        shapes = SineShapes(count)
        return build_mode_set(family, "chord", shapes, count, tuple(map(float, shapes.betas)))
    if family == "clamped-free":
        betas = cantilever_betas(count)
        return build_mode_set(family, "tangent", ClampedBeamShapes(betas), count,
                              tuple(map(float, betas)))
    if family == "clamped-mass":
        betas = clamped_mass_betas(count, tip_mass_ratio, tip_inertia_ratio)
        shapes = ClampedBeamShapes(betas, tip_mass_ratio, tip_inertia_ratio)
        return build_mode_set(family, "tangent", shapes, count, tuple(map(float, betas)))
    if family == "user":
        frame = modes.frame or "tangent"
        if frame not in FRAMES:
            raise ValueError(f"user mode frame must be one of {FRAMES}, got {frame!r}")
        if len(modes.shapes) != count:
            raise ValueError(f"user modes: count is {count} but {len(modes.shapes)} shapes given")
        shapes = UserShapes(modes.shapes)
        check_user_frame(shapes, frame)
        return build_mode_set(family, frame, shapes, count, None)
    raise ValueError(f"unknown mode family {family!r}")
