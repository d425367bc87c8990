"""Pinned-pinned (sine) assumed modes ``phi_k = sin(k pi xi)``.

Left unnormalised, as in Yu & Chen (2019), so the modal mass is ``m / 2``;
the shapes vanish at both ends and so belong to the chord frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flexfmu.modes._backend import as_argument, math_for


class SineShapes:
    """Shapes ``sin(k pi xi)``, ``k = 1 .. count``, and their derivatives.

    Parameters
    ----------
    count : int
        Number of modes.
    """

    def __init__(self, count: int):
        self.betas = np.pi * np.arange(1, count + 1, dtype=float)

    def derivative(self, xi: Any, order: int) -> list[Any]:
        """Return ``d^order phi_k / dxi^order`` at ``xi`` for every mode.

        Parameters
        ----------
        xi : float, numpy.ndarray or casadi.SX/MX/DM
            Position(s) along the link, ``x / L``.
        order : int
            Derivative order, >= 0.

        Returns
        -------
        list
            One entry per mode, of the same kind as ``xi``.
        """
        xi = as_argument(xi)
        m = math_for(xi)
        out = []
        for b in map(float, self.betas):
            # d^n/dxi^n sin(b xi) = b^n sin(b xi + n pi / 2), expanded exactly.
            sign = -1.0 if order % 4 in (2, 3) else 1.0
            trig = m.sin(b * xi) if order % 2 == 0 else m.cos(b * xi)
            out.append(sign * b**order * trig)
        return out


def pinned_pinned(modes, tip_mass_ratio: float = 0.0, tip_inertia_ratio: float = 0.0):
    """Builder of the ``pinned-pinned`` family: (shapes, eigenvalues k pi).

    ``modes`` is the link's :class:`flexfmu.spec.arm.Modes` (its count is
    used). The tip load, ``tip_mass_ratio`` and ``tip_inertia_ratio``, is
    ignored: the chord frame's shapes do not depend on it.
    """
    shapes = SineShapes(modes.count)
    return shapes, shapes.betas
