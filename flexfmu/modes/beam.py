"""Eigenfunctions of clamped uniform beams (clamped-free, clamped-mass).

Shapes use the bounded basis of :mod:`flexfmu.modes.frequency`, so they can be
evaluated for many modes without overflow or cancellation, on numpy and
CasADi arguments alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flexfmu.modes._backend import as_argument, math_for
from flexfmu.modes.frequency import cantilever_betas, clamped_mass_betas, tip_matrix
from flexfmu.modes.quadrature import unit_rule

# phi^(n) / b**n of c1 cos + c2 sin cycles with period 4 in n:
# (coefficient of cos, coefficient of sin) as multiples of (c1, c2).
_TRIG_CYCLE = (
    lambda c1, c2: (c1, c2),
    lambda c1, c2: (c2, -c1),
    lambda c1, c2: (-c1, -c2),
    lambda c1, c2: (-c2, c1),
)


def basis_coefficients(b: float, mass_ratio: float, inertia_ratio: float) -> np.ndarray:
    """Return unnormalised ``(c1, c2, c3, c4)`` of the mode with eigenvalue ``b``
    of a beam with tip ratios ``mass_ratio`` (M / (rho L)) and ``inertia_ratio`` (J / (rho L**3)).

    At an eigenvalue the two rows of the reduced tip matrix are parallel; the
    null vector ``(c1, c4)`` is taken orthogonal to the larger row (the better
    conditioned choice), and ``c2, c3`` follow from the clamped root.
    """
    m = tip_matrix(b, mass_ratio, inertia_ratio)
    row = m[int(np.argmax(np.linalg.norm(m, axis=1)))]
    c1, c4 = -row[1], row[0]
    e = np.exp(-b)
    return np.array([c1, -c1 - 2.0 * e * c4, -c1 - e * c4, c4])


class ClampedBeamShapes:
    """Normalised mode shapes of a clamped beam with an optional tip load.

    Each shape is scaled so ``integral_0^1 phi_k**2 dxi = 1`` (the beam's own
    mass only, matching the textbook cantilever normalisation) and signed so
    ``phi_k(1) > 0``; a sign convention makes results reproducible.

    Parameters
    ----------
    betas : array_like
        Eigenvalues ``beta_k L`` of the frequency equation for this load.
    mass_ratio, inertia_ratio : float
        Tip ``M / (rho L)`` and ``J / (rho L**3)`` used by the eigenvalues.
    """

    def __init__(self, betas: np.ndarray, mass_ratio: float = 0.0, inertia_ratio: float = 0.0):
        self.betas = np.asarray(betas, dtype=float)
        raw = np.array([basis_coefficients(b, mass_ratio, inertia_ratio) for b in self.betas])
        self.coefficients = raw.reshape(len(self.betas), 4)
        self.coefficients *= self._scales()[:, None]

    def _scales(self) -> np.ndarray:
        """Factors that normalise the raw shapes and fix their tip sign."""
        nodes, weights = unit_rule()
        values = np.array(self.derivative(nodes, 0)).reshape(len(self.betas), nodes.size)
        norms = np.sqrt(values**2 @ weights)
        tip = np.array(self.derivative(1.0, 0), dtype=float)
        slope = np.array(self.derivative(1.0, 1), dtype=float)
        # phi(1) = 0 only in degenerate loads; fall back to the tip slope.
        sign = np.where(np.abs(tip) > 1e-12 * norms, np.sign(tip), np.sign(slope))
        sign[sign == 0] = 1.0
        return sign / norms

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
        for b, coeffs in zip(self.betas, self.coefficients):
            b = float(b)
            c1, c2, c3, c4 = (float(c) for c in coeffs)
            ccos, csin = _TRIG_CYCLE[order % 4](c1, c2)
            bx = b * xi
            scaled = (ccos * m.cos(bx) + csin * m.sin(bx)
                      + (-1.0) ** order * c3 * m.exp(-bx) + c4 * m.exp(bx - b))
            out.append(b**order * scaled)
        return out


def clamped_free(modes, tip_mass_ratio: float = 0.0, tip_inertia_ratio: float = 0.0):
    """Builder of the ``clamped-free`` family: cantilever shapes and eigenvalues for the link's ``modes``
    (a :class:`flexfmu.spec.arm.Modes`; only its count is used). ``tip_mass_ratio`` and
    ``tip_inertia_ratio`` are ignored: the family has no tip load."""
    betas = cantilever_betas(modes.count)
    return ClampedBeamShapes(betas), betas


def clamped_mass(modes, tip_mass_ratio: float = 0.0, tip_inertia_ratio: float = 0.0):
    """Builder of the ``clamped-mass`` family: shapes of a clamped beam with
    the tip mass and inertia ratios, and their eigenvalues.

    ``modes`` is the link's :class:`flexfmu.spec.arm.Modes` (its count is
    used); ``tip_mass_ratio`` is M_tip / (rho L) and ``tip_inertia_ratio``
    J_tip / (rho L**3).
    """
    betas = clamped_mass_betas(modes.count, tip_mass_ratio, tip_inertia_ratio)
    return ClampedBeamShapes(betas, tip_mass_ratio, tip_inertia_ratio), betas
