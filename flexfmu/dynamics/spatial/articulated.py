"""Forward dynamics of the spatial chain by the articulated-body algorithm: O(N) work.

The planar passes (``flexfmu.dynamics.planar.articulated``) carried to 3-D bodies.
Body i's velocity is nu_i = X_i mu_i + S_i z_i' (templates: mu_i the joint
frame's velocity handed down by the parent, X_i = diag(R', R', 1) the
joint's turn, S_i how its own rates enter), and mu_i+1 = T_i nu_i. With the
velocity products inside F_i (link_kinematics), M qdd = Q - h is solved by

1. outward: G_i, F_i, T_i, R_i (``link_kinematics``);
2. inward: articulated inertia IA = G + T' Ib_child T, bias pA = F + T' pb_child;
   eliminating z_i'' = zb - K X_i mu_i' leaves what the parent sees of the
   subtree, turned back into the joint frame (``link_articulated``);
3. outward: z_i'' and the child's mu' (``link_acceleration``).

The Newton matrix of the implicit integrator uses the same passes with each
body's structural damping and stiffness added to G (``link_structure``).

Inverse dynamics (recursive Newton-Euler: accelerations outward, forces
inward, ``link_inverse_outward`` and ``link_inverse_inward``) gives the
residual r = M qdd + h - Q without M; the directional derivatives of the
forward dynamics are -M^-1 dr (the inward/outward solve with no bias), which
keeps the generated derivative code to the small inverse-dynamics templates.
"""

from __future__ import annotations

from functools import lru_cache

import casadi as ca

from flexfmu.dynamics.body_layout import small_spd_solve, symmetric_product
from flexfmu.dynamics.spatial import bodies as B
from flexfmu.dynamics.spatial.templates import FRAME, SpatialBodyLayout, joint_turn, link_kinematics


def _turn(layout: SpatialBodyLayout, cs: ca.SX) -> ca.SX:
    """X = diag(Rt, Rt, 1), FRAME x FRAME, with its structural zeros (Rt = Rot(a, theta)', cs its cosine
    and sine)."""
    Rt = joint_turn(layout, cs)
    X = ca.SX(FRAME, FRAME)
    X[0:3, 0:3] = Rt
    X[3:6, 3:6] = Rt
    X[6, 6] = 1
    return X


def inertia_sparsity(layout: SpatialBodyLayout) -> ca.Sparsity:
    """Where the G of a body of ``layout`` (and G plus its structural terms, in the Newton matrix) can be
    nonzero."""
    return link_kinematics(layout).sparsity_out(0) + link_structure(layout).sparsity_out(0)


@lru_cache(maxsize=None)
def link_articulated(layout: SpatialBodyLayout) -> ca.Function:
    """Inward pass: (G, F, T, cs, Ib_child, pb_child, Q) -> (Ib, pb, K, zb), Ib and pb in joint-frame axes.
    G and T are symbols with the sparsity link_kinematics gives them, so the template skips their zeros."""
    sym, d, nz = ca.SX.sym, layout.velocity, layout.coordinates
    G, F, cs = sym("G", inertia_sparsity(layout)), sym("F", d), sym("cs", 2)
    T = sym("T", link_kinematics(layout).sparsity_out(3))
    Ib_child, pb_child, Q = sym("Ib", FRAME, FRAME), sym("pb", FRAME), sym("Q", nz)
    IA = G + symmetric_product(T, ca.mtimes(Ib_child, T))
    pA = F + ca.mtimes(T.T, pb_child)
    S = ca.DM(layout.joint_matrix())
    U = ca.mtimes(IA, S)
    solved = small_spd_solve(ca.mtimes(S.T, U), ca.horzcat(U[:FRAME, :].T, Q - ca.mtimes(S.T, pA)))
    K, zb = solved[:, :FRAME], solved[:, FRAME]
    Ib = IA[:FRAME, :FRAME] - symmetric_product(U[:FRAME, :].T, K)
    pb = pA[:FRAME] + ca.mtimes(U[:FRAME, :], zb)
    X = _turn(layout, cs)
    return ca.Function(layout.name("link_articulated"), [G, F, T, cs, Ib_child, pb_child, Q],
                       [symmetric_product(X, ca.mtimes(Ib, X)), ca.mtimes(X.T, pb), K, zb], {"cse": True})


@lru_cache(maxsize=None)
def link_acceleration(layout: SpatialBodyLayout) -> ca.Function:
    """Outward pass: (mu', cs, K, zb, T) -> (z'', mu'_child)."""
    sym, nz = ca.SX.sym, layout.coordinates
    mud, cs, K, zb = sym("mud", FRAME), sym("cs", 2), sym("K", nz, FRAME), sym("zb", nz)
    T = sym("T", link_kinematics(layout).sparsity_out(3))
    frame = ca.mtimes(_turn(layout, cs), mud)
    zdd = zb - ca.mtimes(K, frame)
    a = ca.vertcat(frame, ca.SX(layout.velocity - FRAME, 1)) + ca.mtimes(ca.DM(layout.joint_matrix()), zdd)
    return ca.Function(layout.name("link_acceleration"), [mud, cs, K, zb, T], [zdd, ca.mtimes(T, a)], {"cse": True})


@lru_cache(maxsize=None)
def link_structure(layout: SpatialBodyLayout) -> ca.Function:
    """(c, h) -> h/2 D + h^2/4 K over nu: the body's modal stiffness and damping, its joint spring and
    viscous friction (the Newton matrix of the implicit midpoint rule, see Model.structure_matrices)."""
    c, h = ca.SX.sym("c", layout.size), ca.SX.sym("h")
    body = layout.unpack(c)
    d, modal = layout.velocity, layout.modal_columns
    K, D = ca.SX(d, d), ca.SX(d, d)
    if layout.modes:
        K_link, D_link = B.modal_stiffness(body, layout.structure)
        K[modal, modal] = K_link
        D[modal, modal] = D_link
    motor, spring = layout.rows(body)
    D += body["viscous"] * ca.mtimes(motor.T, motor)
    if layout.flexible_joint:
        K += body["spring_k"] * ca.mtimes(spring.T, spring)
        D += body["spring_c"] * ca.mtimes(spring.T, spring)
    return ca.Function(layout.name("link_structure"), [c, h], [h / 2 * D + h**2 / 4 * K], {"cse": True})


@lru_cache(maxsize=None)
def link_inverse_outward(layout: SpatialBodyLayout) -> ca.Function:
    """Inverse dynamics, outward: (mu', cs, z'', T) -> (nu', mu'_child): the body's acceleration (without
    the velocity products, which F holds) and the one it hands on."""
    sym = ca.SX.sym
    mud, cs, zdd = sym("mud", FRAME), sym("cs", 2), sym("zdd", layout.coordinates)
    T = sym("T", link_kinematics(layout).sparsity_out(3))
    nud = ca.vertcat(ca.mtimes(_turn(layout, cs), mud), ca.SX(layout.velocity - FRAME, 1))
    nud += ca.mtimes(ca.DM(layout.joint_matrix()), zdd)
    return ca.Function(layout.name("link_inverse_outward"), [mud, cs, zdd, T], [nud, ca.mtimes(T, nud)],
                       {"cse": True})


@lru_cache(maxsize=None)
def link_inverse_inward(layout: SpatialBodyLayout) -> ca.Function:
    """Inverse dynamics, inward: (G, F, T, cs, nu', w_child) -> (generalized force on z, w): the body's
    force G nu' + F plus what its child needs, projected on its own coordinates and, as w, onto the joint
    frame its parent moves."""
    sym, d = ca.SX.sym, layout.velocity
    G, F, cs, nud, w_child = sym("G", inertia_sparsity(layout)), sym("F", d), sym("cs", 2), sym("nud", d), \
        sym("w", FRAME)
    T = sym("T", link_kinematics(layout).sparsity_out(3))
    force = ca.mtimes(G, nud) + F + ca.mtimes(T.T, w_child)
    own = ca.mtimes(ca.DM(layout.joint_matrix()).T, force)
    return ca.Function(layout.name("link_inverse_inward"), [G, F, T, cs, nud, w_child],
                       [own, ca.mtimes(_turn(layout, cs).T, force[:FRAME])], {"cse": True})
