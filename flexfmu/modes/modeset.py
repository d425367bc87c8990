"""The :class:`ModeSet` bundle: shapes plus their dimensionless integrals.

The dynamics code needs each mode family in the same form: shape functions
it can evaluate at numeric or symbolic positions, and a handful of integrals
over ``xi`` in [0, 1] that it scales by length, density and stiffness. This
module computes those integrals once, by quadrature, for any shape provider.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from flexfmu.modes._backend import is_casadi
from flexfmu.modes.quadrature import partial_rule, unit_rule


class Shapes(Protocol):
    """Anything that evaluates derivatives of a list of mode shapes."""

    def derivative(self, xi: Any, order: int) -> list[Any]:
        """Return ``d^order phi_k / dxi^order`` at ``xi``, one entry per mode (``order`` >= 0)."""
        ...


def _frozen(a: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Return ``a`` as a read-only float64 array of ``shape``."""
    out = np.array(a, dtype=float).reshape(shape)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class ModeSet:
    """Assumed-mode shapes of one flexible link and their integrals.

    All quantities are dimensionless in ``xi = x / L``; derivatives are with
    respect to ``xi``. Arrays are read-only.

    Attributes
    ----------
    family : str
        Mode family name.
    count : int
        Number of modes.
    frame : str
        ``"tangent"`` (link x axis along the root tangent) or ``"chord"``
        (x axis through both ends).
    beta : tuple of float or None
        Eigenvalues ``beta_k L`` of the family's frequency equation; ``None``
        for user shapes.
    int_phi : numpy.ndarray
        ``int phi_k dxi``, shape ``(count,)``.
    int_xi_phi : numpy.ndarray
        ``int xi phi_k dxi``, shape ``(count,)``.
    int_phi_phi : numpy.ndarray
        ``int phi_j phi_k dxi``, shape ``(count, count)``, symmetric.
    int_curv_curv : numpy.ndarray
        ``int phi_j'' phi_k'' dxi``, shape ``(count, count)``, symmetric.
    root_slope, tip_value, tip_slope : numpy.ndarray
        ``phi_k'(0)``, ``phi_k(1)``, ``phi_k'(1)``, shape ``(count,)``.
    int_slope_slope : numpy.ndarray
        ``H(1) = int phi_j' phi_k' dxi``: the tip's foreshortening per
        ``f_j f_k / 2``; shape ``(count, count)``, symmetric.
    int_tail_slope_slope : numpy.ndarray
        ``int H(xi) dxi = int (1 - xi) phi_j' phi_k' dxi``: the foreshortening
        summed over the beam's mass.
    int_moment_slope_slope : numpy.ndarray
        ``int xi H(xi) dxi = int (1 - xi^2) / 2 phi_j' phi_k' dxi``: the same
        weighted by the distance from the root, the rotating beam's geometric
        stiffness per ``rho L Omega^2`` (Southwell).
    """

    family: str
    count: int
    frame: str
    beta: tuple[float, ...] | None
    int_phi: np.ndarray
    int_xi_phi: np.ndarray
    int_phi_phi: np.ndarray
    int_curv_curv: np.ndarray
    root_slope: np.ndarray
    tip_value: np.ndarray
    tip_slope: np.ndarray
    int_slope_slope: np.ndarray
    int_tail_slope_slope: np.ndarray
    int_moment_slope_slope: np.ndarray
    shapes: Shapes = field(repr=False)

    def values(self, xi: Any) -> list[Any]:
        """Return ``phi_k(xi)`` for every mode (numpy or CasADi, like ``xi``)."""
        return self.shapes.derivative(xi, 0)

    def slopes(self, xi: Any) -> list[Any]:
        """Return ``dphi_k/dxi`` at ``xi`` for every mode."""
        return self.shapes.derivative(xi, 1)

    def curvatures(self, xi: Any) -> list[Any]:
        """Return ``d2phi_k/dxi2`` at ``xi`` for every mode."""
        return self.shapes.derivative(xi, 2)

    def slope_products_to(self, xi: Any) -> Any:
        """Return ``H(xi) = int_0^xi phi' phi'^T dxi'`` (count x count) at ``xi``.

        A composite Gauss-Legendre rule on ``[0, xi]`` whose nodes move with
        ``xi``, so a symbolic ``xi`` (a point mass whose position is a
        parameter) gives a smooth CasADi expression; numpy for a number.
        """
        nodes, weights = partial_rule(self.count)
        slopes = self.slopes(xi * nodes)
        if is_casadi(xi):
            import casadi as ca

            rows = ca.horzcat(*slopes).T
            return ca.mtimes([rows, ca.diag(xi * weights), rows.T])
        rows = np.array(slopes, dtype=float).reshape(self.count, nodes.size)
        return (rows * (float(xi) * weights)) @ rows.T


def build_mode_set(family: str, frame: str, shapes: Shapes, count: int,
                   beta: tuple[float, ...] | None) -> ModeSet:
    """Evaluate the integrals of ``shapes`` and bundle them into a ModeSet.

    Parameters
    ----------
    family, frame : str
        Stored as given.
    shapes : Shapes
        Provider of the ``count`` mode shapes.
    count : int
        Number of modes ``shapes`` returns.
    beta : tuple of float or None
        Frequency-equation eigenvalues, if the family has them.

    Returns
    -------
    ModeSet
    """
    nodes, weights = unit_rule()
    n = count

    def sample(order: int) -> np.ndarray:
        return np.array(shapes.derivative(nodes, order), dtype=float).reshape(n, nodes.size)

    def at(xi: float, order: int) -> np.ndarray:
        return _frozen([float(v) for v in shapes.derivative(xi, order)], (n,))

    phi = sample(0)
    slope = sample(1)
    curv = sample(2)
    weighted = phi * weights
    mass = weighted @ phi.T
    stiffness = (curv * weights) @ curv.T

    def slope_products(weight: np.ndarray) -> np.ndarray:
        products = (slope * (weights * weight)) @ slope.T
        return _frozen(0.5 * (products + products.T), (n, n))

    return ModeSet(
        family=family,
        count=n,
        frame=frame,
        beta=beta,
        int_phi=_frozen(phi @ weights, (n,)),
        int_xi_phi=_frozen(weighted @ nodes, (n,)),
        int_phi_phi=_frozen(0.5 * (mass + mass.T), (n, n)),
        int_curv_curv=_frozen(0.5 * (stiffness + stiffness.T), (n, n)),
        root_slope=at(0.0, 1),
        tip_value=at(1.0, 0),
        tip_slope=at(1.0, 1),
        int_slope_slope=slope_products(np.ones_like(nodes)),
        int_tail_slope_slope=slope_products(1.0 - nodes),
        int_moment_slope_slope=slope_products(0.5 * (1.0 - nodes**2)),
        shapes=shapes,
    )
