"""Structured closed-form derivation of M(q) and h(q, qd).

Generalises the pseudo-inertia formulation of paper 000 (sections 3.1-3.4)
to rigid links, any mode family and rotary inertias. A point of link i is

    p = o_i + R(phi_i) r(x),   r(x) = (x, Phi(x) f_i),

so its velocity is J_p qd with J_p = J_o + R S r J_phi + R Phi E_i and its
acceleration J_p qdd + a_vp with the velocity-product part

    a_vp = o_vp'' - phi_i'^2 R r + 2 phi_i' R S Phi f_i'.

Stack the link's Jacobian as J_i = [J_o; J_phi; E_i]. Then

    M = sum_i J_i' G_i J_i,     h = sum_i J_i' F_i,

where the generalized inertia G_i (paper 000's pseudo-inertia in the basis
origin, angle, modes) and the generalized force F_i (the projection of
a_vp - g, plus bending stiffness) reduce to the link's mass properties (m, s,
J0, a, b, Mff of chain.LinkBody). No differentiation of energy, no symbolic
solve. J_o and o_vp'' follow the chain recursively, as paper 000's U_ij do.

G_i, F_i and the recursion terms are computed by a small template Function
per mode count, called symbolically for each link: each Python-level CasADi
operation costs tens of microseconds, a call of a prebuilt Function the same
for all of its operations, so this keeps graph building fast.
"""

from __future__ import annotations

from functools import lru_cache

import casadi as ca

from flexfmu.dynamics.forces import dissipation, rotor_inertias, spring_forces
from flexfmu.dynamics.parameters import ParameterSymbols
from flexfmu.dynamics.planar.bodies import Coordinates, LinkBody
from flexfmu.dynamics.planar.frames import ChainRows, rotation


@lru_cache(maxsize=None)
def link_template(modes: int, stiffening: bool = False) -> ca.Function:
    """Link-local terms of the closed form for a link with ``modes`` modes,
    with or without geometric ``stiffening``.

    Inputs: frame angle and rate, f, f', origin velocity-product
    acceleration, gravity, mass properties (m, sx, sy, j0, a, b, Mff, K),
    tip values, and the summed rotary inertias (I, I s, I s's); with
    stiffening also hb, hd and hl (see :mod:`flexfmu.dynamics.planar.bodies`).
    Outputs: G, F, the origin Jacobian increments per unit angle rate and
    per modal coordinate (the tip Jacobian R dr_tip/df, 2 x modes), and the
    next origin's velocity-product acceleration.

    With stiffening the link's kinetic energy is kept to second order in
    (f, f'): s(f) = (sx - 1/2 f'hb f, sy + a.f) with ds/df = C(f) =
    [-(hb f)'; a'], J0 = j0 + f'(Mff - hd)f; the next joint sits at
    r_tip = (L - 1/2 f'hl f, tip_value f). Lagrange's equations of that
    energy add to F the centrifugal stiffening phid^2 hd f, the axial load
    -(Rx . (o'' - g)) hb f and the velocity products of the foreshortening.
    """
    sym = ca.SX.sym
    phi, phid, f, fd = sym("phi"), sym("phid"), sym("f", modes), sym("fd", modes)
    o_vp, g = sym("o_vp", 2), sym("g", 2)
    m, sx, sy, j0 = sym("m"), sym("sx"), sym("sy"), sym("j0")
    a, b = sym("a", modes), sym("b", modes)
    mff, K = sym("mff", modes, modes), sym("K", modes, modes)
    tip_value, L = sym("tip_value", 1, modes), sym("L")
    rot_I, rot_Is, rot_Iss = sym("rot_I"), sym("rot_Is", 1, modes), sym("rot_Iss", modes, modes)
    inputs = [phi, phid, f, fd, o_vp, g, m, sx, sy, j0, a, b, mff, K, tip_value, L, rot_I, rot_Is, rot_Iss]

    R = rotation(phi)
    Rx = R[:, 0]
    perp = lambda v: ca.vertcat(-v[1], v[0])  # noqa: E731  (S v)
    a_rel = o_vp - g
    if stiffening:
        hb, hd, hl = sym("hb", modes, modes), sym("hd", modes, modes), sym("hl", modes, modes)
        inputs += [hb, hd, hl]
        hb_f, hl_f = ca.mtimes(hb, f), ca.mtimes(hl, f)
        s = ca.vertcat(sx - 0.5 * ca.dot(f, hb_f), sy + ca.dot(a, f))
        C = ca.vertcat(-hb_f.T, a.T)  # ds/df
        C_tip = ca.vertcat(-hl_f.T, tip_value)  # dr_tip/df
        r_tip = ca.vertcat(L - 0.5 * ca.dot(f, hl_f), ca.mtimes(tip_value, f))
        inertia = mff - hd  # d2 J0 / df2 / 2
    else:
        s = ca.vertcat(sx, sy + ca.dot(a, f))
        C = ca.vertcat(ca.SX(1, modes), a.T)
        C_tip = ca.vertcat(ca.SX(1, modes), tip_value)
        r_tip = ca.vertcat(L, ca.mtimes(tip_value, f))
        inertia = mff
    Rs = ca.mtimes(R, s)
    c = perp(Rs)  # int R S r dm
    RC = ca.mtimes(R, C)  # int R dr/df dm
    J0 = j0 + ca.mtimes([f.T, inertia, f]) + rot_I
    G = ca.blockcat([
        [m * ca.SX.eye(2), c, RC],
        [c.T, J0, b.T + rot_Is],
        [RC.T, b + rot_Is.T, mff + rot_Iss],
    ])

    # d/dt (dT/dq') - dT/dq without the accelerations, plus dV/dq
    Cfd = ca.mtimes(C, fd)
    force = m * a_rel - phid**2 * Rs + 2 * phid * perp(ca.mtimes(R, Cfd))
    moment = ca.dot(c, a_rel) + 2 * phid * ca.mtimes([f.T, inertia, fd])
    modal = ca.mtimes(RC.T, a_rel) - phid**2 * ca.mtimes(inertia, f) + ca.mtimes(K, f)
    if stiffening:
        force -= ca.mtimes([fd.T, hb, fd]) * Rx  # d/dt C . fd
    F = ca.vertcat(force, moment, modal)

    Rtip = ca.mtimes(R, r_tip)
    tip_jacobian = ca.mtimes(R, C_tip)
    o_vp_next = o_vp - phid**2 * Rtip + 2 * phid * perp(ca.mtimes(tip_jacobian, fd))
    if stiffening:
        o_vp_next -= ca.mtimes([fd.T, hl, fd]) * Rx
    name = f"link_terms_{modes}{'_stiffened' * stiffening}"
    return ca.Function(name, inputs, [G, F, perp(Rtip), tip_jacobian, o_vp_next])


def link_arguments(body: LinkBody) -> list:
    """The link-specific arguments of :func:`link_template` for ``body`` after the motion (m ... rot_Iss,
    then hb, hd, hl when the link keeps geometric stiffening)."""
    arguments = [body.mass, body.sx, body.sy, body.j0, body.a, body.b, body.mff, body.stiffness,
                 body.tip_value, body.length, *rotary_sums(body)]
    if body.stiffening:
        arguments += [body.hb, body.hd, body.hl]
    return arguments


def rotary_sums(body: LinkBody):
    """(sum I, sum I s, sum I s's) of the rotary inertias of the link ``body``."""
    I, Is, Iss = ca.SX(0), ca.SX(1, body.modes), ca.SX(body.modes, body.modes)
    for rot in body.rotary:
        I += rot.inertia
        Is += rot.inertia * rot.slope
        Iss += rot.inertia * ca.mtimes(rot.slope.T, rot.slope)
    return I, Is, Iss


def closed_form_dynamics(coords: Coordinates, rows: ChainRows, bodies: list[LinkBody], P: ParameterSymbols, q, qd):
    """Return (M, h) with M qdd + h = B u.

    Parameters
    ----------
    coords, rows, bodies, P, q, qd : chain parts
        The chain's coordinate layout, constant Jacobian rows, link bodies, parameter symbols and the
        symbols of q and qd, as held by :class:`flexfmu.dynamics.planar.PlanarChain`.
    """
    n = coords.size
    g = ca.vertcat(P["gravity.x"], P["gravity.y"])
    M = ca.SX(n, n)
    h = ca.SX(n, 1)
    Jo = ca.SX(2, n)  # Jacobian of the current link's origin
    o_vp = ca.SX(2, 1)  # velocity-product acceleration of that origin
    for body, Jphi, E in zip(bodies, rows.frame_angles, rows.selections):
        f, fd = ca.mtimes(E, q), ca.mtimes(E, qd)
        G, F, dJo_angle, tip_jacobian, o_vp = link_template(body.modes, body.stiffening)(
            ca.mtimes(Jphi, q), ca.mtimes(Jphi, qd), f, fd, o_vp, g, *link_arguments(body),
        )
        J = ca.vertcat(Jo, Jphi, E)
        M += ca.mtimes([J.T, G, J])
        h += ca.mtimes(J.T, F)
        Jo = Jo + ca.mtimes(dJo_angle, Jphi) + ca.mtimes(tip_jacobian, E)

    for inertia, row in rotor_inertias(rows, P):
        M += inertia * ca.mtimes(row.T, row)
    h += spring_forces(rows, P, q) + dissipation(rows, bodies, P, qd)
    return M, h
