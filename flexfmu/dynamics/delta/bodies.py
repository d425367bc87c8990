"""A Delta link as a flexible body: nodal values delta = Psi xi, energies from invariants.

A link's finite elements (:mod:`flexfmu.modes.elements`, nodal values in
the link frame, x along the link) carry its elastic displacement
u(s) = N(s) delta. Here delta = Psi xi over a basis of the link's own
(:mod:`flexfmu.dynamics.delta.reduction`): the full nodal values, or a
Craig-Bampton basis of a few coordinates. Every energy of the link is a
polynomial in xi and xi' whose coefficients are integrals over the link of
products of the columns of N Psi (the flexible body's *invariants*,
Shabana's inertia shape integrals). They are numbers computed once, scaled
by the symbolic section parameters (rho A, rho Ip, EA, EI, GJ), so the cost
of evaluating a link depends on the size of xi and not on its element
count, and a link with the full basis gives the element energies exactly
(a test compares them with :class:`flexfmu.dynamics.delta.assembly.ElementEnergies`).

With the link's origin velocity a and angular velocity omega (both in the
link frame) and r(s) = s e_x + S(s) xi the position of the section at s
(S = N Psi, displacement fields u, v, w), a point moves with
V = a + omega x r + S xi', so

    T = 1/2 m |a|^2 + a . (omega x r_bar) + a . C1 xi' + 1/2 omega' J(xi) omega
        + omega . h(xi, xi') + 1/2 xi' M_xi xi' + (torsion: 1/2 int rho Ip (omega_x + phi')^2)

with m = rho A L, r_bar = int rho A r ds, C1 = int rho A S ds,
J = int rho A (|r|^2 I - r r') ds, h = int rho A r x S xi' ds and
M_xi = int rho A S'S ds. The potentials are gravity -g . int rho A (o + R r) ds,
strain 1/2 xi' K_xi xi and the axial-load term 1/2 xi' (N0 G0 + N1 G1) xi for
an axial force N(s) = N0 + N1 s acting on the bending slopes.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from flexfmu.modes.elements import (
    BeamSection, NodeLayout, field_shapes, gauss_rule, points_for, straight_beam,
)

DISPLACEMENTS = ("u", "v", "w")  # the fields along the link frame's x, y and z
# the section coefficients the stiffness invariants are per unit of, and where BeamSection keeps them
STIFFNESS_KEYS = ("EA", "EIz", "EIy", "GJ")
_UNIT_SECTIONS = {key: BeamSection(0, 0, *(float(key == k) for k in ("EA", "EIy", "EIz", "GJ")))
                  for key in STIFFNESS_KEYS}


@dataclass(frozen=True)
class Invariants:
    """The numeric invariants of one link for a basis Psi (per unit section coefficient).

    Attributes (k = basis size)
    ----------
    length : float
    first_moment : (3, k)
        int S ds (times rho A: C1).
    second_moment : (3, k)
        int s S ds (times rho A).
    products : (3, 3, k, k)
        products[b, c] = int S_b' S_c ds (times rho A).
    twist, twist_mass : (k,), (k, k)
        int S_phi ds and int S_phi' S_phi ds (times rho Ip).
    stiffness : dict
        ``EA``, ``EIz``, ``EIy``, ``GJ`` -> (k, k), Psi' K Psi of the unit section coefficient.
    geometric : (2, k, k)
        int (S_v'' S_v' + S_w'' S_w') ds and int s (...) ds over the slopes' shapes (times N0 and N1).
    """

    length: float
    first_moment: np.ndarray
    second_moment: np.ndarray
    products: np.ndarray
    twist: np.ndarray
    twist_mass: np.ndarray
    stiffness: dict
    geometric: np.ndarray

    @property
    def size(self) -> int:
        return self.first_moment.shape[1]


def link_invariants(approximation: str, elements: int, length: float, psi: np.ndarray) -> Invariants:
    """The :class:`Invariants` of a straight link of ``elements`` elements of ``approximation`` and ``length``
    (m) for the basis ``psi`` (rows: the link's nodal values, node by node in
    :class:`~flexfmu.modes.elements.NodeLayout` order; columns: the coordinates xi), integrated exactly by
    Gauss rules."""
    size = NodeLayout(approximation).size
    l = length / elements
    x, w = gauss_rule(points_for(approximation, 2) + 1, l)  # one more: the integrands carry a factor s
    N0, N1 = field_shapes(approximation, l, x, 0), field_shapes(approximation, l, x, 1)
    k = psi.shape[1]
    first, second = np.zeros((3, k)), np.zeros((3, k))
    products, twist, twist_mass = np.zeros((3, 3, k, k)), np.zeros(k), np.zeros((k, k))
    geometric = np.zeros((2, k, k))
    for e in range(elements):
        rows = psi[e * size:(e + 2) * size]
        s = e * l + x
        S = np.stack([N0[f].T @ rows for f in DISPLACEMENTS])  # (3, points, k)
        phi = N0["phi"].T @ rows
        slopes = [N1[f].T @ rows for f in ("v", "w")]
        first += np.einsum("g,bgk->bk", w, S)
        second += np.einsum("g,bgk->bk", w * s, S)
        products += np.einsum("g,bgk,cgl->bckl", w, S, S)
        twist += w @ phi
        twist_mass += (phi.T * w) @ phi
        for j, weight in enumerate((w, w * s)):
            geometric[j] += sum((slope.T * weight) @ slope for slope in slopes)
    stiffness = {}
    for key, section in _UNIT_SECTIONS.items():
        _, K = straight_beam(approximation, elements, length, section)
        stiffness[key] = psi.T @ K @ psi
    return Invariants(length, first, second, products, twist, twist_mass, stiffness, geometric)


@dataclass(frozen=True)
class LinkProperties:
    """One link type's parameters (numbers or symbols): length, rho A, rho Ip, EA, E Iy, E Iz, G J."""

    length: object
    mass_per_length: object
    torsion_inertia: object
    EA: object
    EIy: object
    EIz: object
    GJ: object


class FlexibleLink:
    """Energies of one link from its :class:`Invariants` and :class:`LinkProperties` (see the module docstring).

    Every method takes CasADi expressions (or numbers) and returns one.
    """

    def __init__(self, invariants: Invariants, section: LinkProperties):
        self.inv, self.section = invariants, section
        inv = invariants
        self._sum_products = ca.DM(inv.products[0, 0] + inv.products[1, 1] + inv.products[2, 2])
        self._products = [[ca.DM(inv.products[b, c]) for c in range(3)] for b in range(3)]

    def kinetic(self, a, omega, xi, xi_rate):
        """T of the link whose origin moves with ``a`` and turns with ``omega`` (link frame), at the
        coordinates ``xi`` with rates ``xi_rate``."""
        inv, mu, iota = self.inv, self.section.mass_per_length, self.section.torsion_inertia
        L = inv.length
        e_x = ca.DM([1.0, 0.0, 0.0])
        C1, C2 = ca.DM(inv.first_moment), ca.DM(inv.second_moment)
        r_bar = mu * (L**2 / 2 * e_x + ca.mtimes(C1, xi))
        sigma = ca.mtimes(C2, xi)  # int s S xi ds
        upper = {(b, c): ca.bilin(self._products[b][c], xi, xi) for b in range(3) for c in range(b, 3)}
        Q = ca.blockcat([[upper[min(b, c), max(b, c)] for c in range(3)] for b in range(3)])
        J = mu * (L**3 / 3 * ca.diag(ca.DM([0.0, 1.0, 1.0])) + 2 * sigma[0] * ca.DM.eye(3)
                  - ca.mtimes(e_x, sigma.T) - ca.mtimes(sigma, e_x.T) + ca.trace(Q) * ca.DM.eye(3) - Q)
        cross_products = ca.vertcat(*(ca.bilin(self._products[b][c] - self._products[c][b], xi, xi_rate)
                                      for b, c in ((1, 2), (2, 0), (0, 1))))
        h = mu * (ca.cross(e_x, ca.mtimes(C2, xi_rate)) + cross_products)
        translation = (0.5 * mu * L * ca.sumsqr(a) + ca.dot(a, ca.cross(omega, r_bar))
                       + mu * ca.dot(a, ca.mtimes(C1, xi_rate)))
        rotation = 0.5 * ca.bilin(J, omega, omega) + ca.dot(omega, h)
        elastic = 0.5 * mu * ca.bilin(self._sum_products, xi_rate, xi_rate)
        torsion = iota * (0.5 * L * omega[0] ** 2 + omega[0] * ca.dot(ca.DM(inv.twist), xi_rate)
                          + 0.5 * ca.bilin(ca.DM(inv.twist_mass), xi_rate, xi_rate))
        return translation + rotation + elastic + torsion

    def gravity(self, origin, rotation, g, xi):
        """Gravity potential -g . int rho A (o + R r) ds of the link with origin ``origin`` and rotation
        ``rotation`` (base frame) under the gravity vector ``g``."""
        inv, mu = self.inv, self.section.mass_per_length
        local = inv.length**2 / 2 * ca.DM([1.0, 0.0, 0.0]) + ca.mtimes(ca.DM(inv.first_moment), xi)
        return -mu * (inv.length * ca.dot(g, origin) + ca.dot(ca.mtimes(rotation.T, g), local))

    def elastic_mass(self):
        """M_xi of the link's coordinate rates alone (translation and torsion): the mass of its deformation
        relative to its frame."""
        return (self.section.mass_per_length * self._sum_products
                + self.section.torsion_inertia * ca.DM(self.inv.twist_mass))

    def damping(self, alpha, beta):
        """The Rayleigh damping matrix alpha M_xi + beta K_xi of the link's coordinate rates (strain stiffness
        only: material damping does not see the axial load)."""
        return alpha * self.elastic_mass() + beta * self.stiffness()

    def strain(self, xi):
        """Strain energy 1/2 xi' K_xi xi (axial, both bendings, torsion)."""
        return 0.5 * ca.bilin(self.stiffness(), xi, xi)

    def stiffness(self):
        """K_xi = EA K_EA + E Iz K_EIz + E Iy K_EIy + G J K_GJ (symbolic in the section)."""
        return sum(getattr(self.section, key) * ca.DM(self.inv.stiffness[key]) for key in STIFFNESS_KEYS)

    def axial(self, xi, root, slope):
        """1/2 int N(s) (v'^2 + w'^2) ds for the axial force N(s) = ``root`` + ``slope`` s."""
        return 0.5 * ca.bilin(self.geometric_stiffness(root, slope), xi, xi)

    def geometric_stiffness(self, root, slope):
        """The axial load's stiffness N0 G0 + N1 G1 in xi for the axial force N(s) = ``root`` + ``slope`` s."""
        G0, G1 = (ca.DM(G) for G in self.inv.geometric)
        return root * G0 + slope * G1
