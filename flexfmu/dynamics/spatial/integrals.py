"""Dimensionless modal integrals of one deformation's shapes, on xi = x / L in [0, 1].

The ModeSet of a family already holds int phi, int xi phi, int phi phi' and
the curvature products; a spatial link also needs the slope products of
geometric stiffening (see docs/dynamics.md), the slope stiffness of rods,
and mass products between different deformations (the axial stretch couples
with bending at second order):

    hL   = int_0^1 phi' phi'^T dxi                 (tip foreshortening; rod stiffness)
    hbar = int_0^1 (1 - xi) phi' phi'^T dxi        (foreshortening summed over the beam's mass)
    dmat = int_0^1 (1 - xi^2) / 2 phi' phi'^T dxi  (its first moment: the rotating-beam stiffness)
    H(xi_p) = int_0^xi_p phi' phi'^T dxi           (at a point mass, symbolic in xi_p)

with phi' = d phi / d xi. For clamped-free modes dmat[0, 0] is Southwell's
1.193336 (tests/test_spatial_bodies.py).
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from flexfmu.modes import ModeSet
from flexfmu.modes.quadrature import unit_rule

POINT_NODES = 48  # Gauss-Legendre nodes of the rule on [0, xi_p]


def _sampled(shapes: ModeSet, order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nodes, weights = unit_rule()
    values = np.array(shapes.shapes.derivative(nodes, order), dtype=float).reshape(shapes.count, nodes.size)
    return nodes, weights, values


def slope_products(shapes: ModeSet) -> dict[str, np.ndarray]:
    """``{"hL", "hbar", "dmat"}`` of ``shapes`` (count x count each, symmetric)."""
    nodes, weights, slopes = _sampled(shapes, 1)

    def product(density: np.ndarray) -> np.ndarray:
        m = (slopes * weights * density) @ slopes.T
        return 0.5 * (m + m.T)

    return {"hL": product(np.ones_like(nodes)), "hbar": product(1.0 - nodes), "dmat": product(0.5 * (1.0 - nodes**2))}


def mass_product(first: ModeSet, second: ModeSet) -> np.ndarray:
    """int_0^1 phi_a phi_b^T dxi between two deformations' shapes ``first`` (rows) and ``second`` (columns)."""
    _, weights, a = _sampled(first, 0)
    _, _, b = _sampled(second, 0)
    return (a * weights) @ b.T


def partial_slope_product(shapes: ModeSet, xi) -> ca.SX:
    """H(``xi``) = int_0^xi phi' phi'^T dxi of ``shapes`` for a symbolic (or numeric) ``xi``, by a
    Gauss-Legendre rule mapped onto [0, xi]: smooth in xi, exact at the rule's accuracy."""
    t, w = np.polynomial.legendre.leggauss(POINT_NODES)
    nodes = ca.DM(0.5 * (t + 1.0)) * xi  # all nodes at once: one graph operation per shape and function
    slopes = ca.horzcat(*shapes.slopes(nodes))  # nodes x count
    return xi * ca.mtimes([slopes.T, ca.diag(ca.DM(0.5 * w)), slopes])
