"""3-D Euler-Bernoulli beam finite elements (paper 003, section 3).

A straight element of length ``l`` carries, in its link frame (x along the
link), the axial displacement u, the torsion angle phi about x and the
bending displacements v (along y) and w (along z). Each field is a Hermite
interpolation of its nodal values and derivatives at the two end nodes; the
paper's two approximations (section 5.2) differ in the highest derivative
carried at a node:

=================  =========================  =====================================
approximation      u and phi                  v and w
=================  =========================  =====================================
``linear-cubic``   linear (value)             cubic Hermite (value, slope)
``cubic-quintic``  cubic Hermite (value,      quintic Hermite (value, slope,
                   derivative)                curvature)
=================  =========================  =====================================

so a node holds 6 (``linear-cubic``: u, phi, v, v', w, w') or 10
(``cubic-quintic``: u, u', phi, phi', v, v', v'', w, w', w'') values, in
the order of :data:`FIELDS` and rising derivative. An element's vector is
its first node's values, then its second node's.

Everything here is numbers (numpy): shape functions at any points, Gauss
rules exact for the products the energies need, and the element integrals
with unit coefficients, which the dynamics scale by rho A, rho Ip, EA, EI
and GJ (eq. 21, 29, 37).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import factorial

import numpy as np

FIELDS = ("u", "phi", "v", "w")
# highest nodal derivative of each field
ORDERS = {
    "linear-cubic": {"u": 0, "phi": 0, "v": 1, "w": 1},
    "cubic-quintic": {"u": 1, "phi": 1, "v": 2, "w": 2},
}
# the nodal values a joint or clamp acts on: displacements and the slopes that rotate the section
JOINT_VALUES = (("u", 0), ("v", 0), ("w", 0), ("phi", 0), ("v", 1), ("w", 1))


@dataclass(frozen=True)
class NodeLayout:
    """The values one node carries for an approximation: ``values[k] = (field, derivative)``."""

    approximation: str

    @property
    def values(self) -> tuple[tuple[str, int], ...]:
        orders = ORDERS[self.approximation]
        return tuple((field, m) for field in FIELDS for m in range(orders[field] + 1))

    @property
    def size(self) -> int:
        """Values per node."""
        return len(self.values)

    def index(self, field: str, derivative: int = 0) -> int:
        """Position of the ``derivative``-th derivative of ``field`` in a node's vector."""
        return self.values.index((field, derivative))

    @property
    def degree(self) -> int:
        """Highest polynomial degree of any field (3 or 5)."""
        return 2 * max(ORDERS[self.approximation].values()) + 1


def check_approximation(approximation: str) -> None:
    """Raise ValueError unless ``approximation`` is one of :data:`ORDERS`."""
    if approximation not in ORDERS:
        raise ValueError(f"approximation must be one of {', '.join(ORDERS)}, got {approximation!r}")


def hermite_coefficients(order: int, length: float) -> np.ndarray:
    """Polynomial coefficients of the Hermite basis on [0, length].

    Row j holds c_j with N_j(x) = sum_p c_j[p] x^p, where the basis carries
    derivatives 0..``order`` at both ends: N_j's m-th derivative is 1 at
    exactly one (node, m) pair (node 0 first, then node 1) and 0 at the others.
    Order 0 is linear, 1 cubic, 2 quintic.

    Parameters
    ----------
    order : int
        Highest nodal derivative.
    length : float
        Element length, m.
    """
    degree = 2 * order + 1
    conditions = np.zeros((degree + 1, degree + 1))
    row = 0
    for x0 in (0.0, length):
        for m in range(order + 1):
            for p in range(m, degree + 1):
                conditions[row, p] = factorial(p) / factorial(p - m) * x0 ** (p - m)
            row += 1
    return np.linalg.inv(conditions).T


def field_shapes(approximation: str, length: float, x, derivative: int = 0) -> dict[str, np.ndarray]:
    """Shape functions of every field at points ``x``: {field: array (element values, points)}.

    Row k of a field's array is the ``derivative``-th x-derivative of that
    field's interpolation for a unit k-th element value (zero rows for the
    other fields' values), so ``field(x) = values @ shapes[field]``.

    Parameters
    ----------
    approximation : str
        A key of :data:`ORDERS`.
    length : float
        Element length, m.
    x : array
        Points in [0, length].
    derivative : int
        Which derivative along x (0 = the field itself).
    """
    layout = NodeLayout(approximation)
    x = np.atleast_1d(np.asarray(x, float))
    out = {}
    for field in FIELDS:
        order = ORDERS[approximation][field]
        coefficients = hermite_coefficients(order, length)
        values = np.zeros((coefficients.shape[0], x.size))
        for p in range(derivative, coefficients.shape[1]):
            values += np.outer(coefficients[:, p] * factorial(p) / factorial(p - derivative), x ** (p - derivative))
        rows = np.zeros((2 * layout.size, x.size))
        for node in range(2):
            for m in range(order + 1):
                rows[node * layout.size + layout.index(field, m)] = values[node * (order + 1) + m]
        out[field] = rows
    return out


@lru_cache(maxsize=32)
def gauss_rule(points: int, length: float) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre points and weights on [0, ``length``] with ``points`` nodes (exact to degree 2 points - 1)."""
    x, w = np.polynomial.legendre.leggauss(points)
    return 0.5 * length * (x + 1.0), 0.5 * length * w


def points_for(approximation: str, power: int) -> int:
    """Gauss points that integrate a product of ``power`` shape functions of ``approximation`` exactly."""
    return (power * NodeLayout(approximation).degree) // 2 + 1


@dataclass(frozen=True)
class ElementIntegrals:
    """Element integrals with unit coefficients (square matrices over the element's values).

    ``mass`` = int (Nu Nu' + Nv Nv' + Nw Nw') (times rho A, eq. 21),
    ``torsion_mass`` = int Nphi Nphi' (times rho Ip),
    ``axial``, ``bending_v``, ``bending_w``, ``torsion`` = int of the products
    of u', v'', w'' and phi' (times EA, E Iz, E Iy and G J, eq. 29),
    ``geometric`` = int (Nv_x Nv_x' + Nw_x Nw_x') (times the axial force, eq. 34),
    ``first_moment`` = int (Nu, Nv, Nw) (3 x values, for distributed loads).
    """

    mass: np.ndarray
    torsion_mass: np.ndarray
    axial: np.ndarray
    bending_v: np.ndarray
    bending_w: np.ndarray
    torsion: np.ndarray
    geometric: np.ndarray
    first_moment: np.ndarray


@lru_cache(maxsize=32)
def element_integrals(approximation: str, length: float) -> ElementIntegrals:
    """The :class:`ElementIntegrals` of one element of ``approximation`` and ``length`` (m), exact by Gauss."""
    check_approximation(approximation)
    x, w = gauss_rule(points_for(approximation, 2), length)
    N0 = field_shapes(approximation, length, x, 0)
    N1 = field_shapes(approximation, length, x, 1)
    N2 = field_shapes(approximation, length, x, 2)

    def gram(rows):
        return (rows * w) @ rows.T

    return ElementIntegrals(
        mass=gram(N0["u"]) + gram(N0["v"]) + gram(N0["w"]),
        torsion_mass=gram(N0["phi"]),
        axial=gram(N1["u"]),
        bending_v=gram(N2["v"]),
        bending_w=gram(N2["w"]),
        torsion=gram(N1["phi"]),
        geometric=gram(N1["v"]) + gram(N1["w"]),
        first_moment=np.vstack([N0[f] @ w for f in ("u", "v", "w")]),
    )


@dataclass(frozen=True)
class BeamSection:
    """Section and material of a uniform beam, as the element integrals are scaled:
    mass per length rho A, rotary inertia of torsion per length rho Ip, EA, E Iy
    (bending w), E Iz (bending v) and G J."""

    mass_per_length: float
    torsion_inertia: float
    EA: float
    EIy: float
    EIz: float
    GJ: float


def element_matrices(approximation: str, length: float, section: BeamSection) -> tuple[np.ndarray, np.ndarray]:
    """Mass and stiffness (M_e, K_e) of one element (eq. 21 and 29) of ``approximation`` and ``length`` with
    the properties ``section``."""
    e = element_integrals(approximation, length)
    M = section.mass_per_length * e.mass + section.torsion_inertia * e.torsion_mass
    K = (section.EA * e.axial + section.EIz * e.bending_v + section.EIy * e.bending_w
         + section.GJ * e.torsion)
    return M, K


def straight_beam(approximation: str, elements: int, length: float, section: BeamSection):
    """Mass and stiffness of a straight beam of ``elements`` equal elements, nodes 0..elements in order, each
    node's values in :class:`NodeLayout` order (no supports: a free-free beam).

    Parameters
    ----------
    approximation : str
        A key of :data:`ORDERS`.
    elements : int
        Number of elements.
    length : float
        Beam length, m.
    section : BeamSection
        Its section and material.

    Returns
    -------
    M, K : numpy.ndarray
        Square, of size (elements + 1) * values per node.
    """
    size = NodeLayout(approximation).size
    Me, Ke = element_matrices(approximation, length / elements, section)
    M = np.zeros(((elements + 1) * size,) * 2)
    K = np.zeros_like(M)
    for e in range(elements):
        block = slice(e * size, (e + 2) * size)
        M[block, block] += Me
        K[block, block] += Ke
    return M, K
