"""Energy-based derivation: the Lagrangian differentiated by CasADi AD.

Kinetic energy T(q, qd) and potential energy V(q) are written as scalars
from the forward kinematics (positions by accumulation, velocities by AD
directional derivatives); then

    M = d2T/dqd2,   h = d/dq(dT/dqd) qd - dT/dq + dV/dq + dissipation.

This shares only the link mass properties with the closed form, so the two
agreeing (tests) checks the recursion, the Jacobians and the signs. A link
with geometric stiffening has its foreshortening in s, in the rate of its
points and in J0 (second order in f, f'), and its tip, where the next link
starts, moves back by 1/2 f'hl f (forward kinematics).
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics.forces import dissipation, rotor_inertias
from flexfmu.dynamics.planar.bodies import Coordinates, LinkBody
from flexfmu.dynamics.planar.frames import ChainRows, S, forward_kinematics, rotation


def energies(coords: Coordinates, rows: ChainRows, bodies: list[LinkBody], P, q, qd):
    """Return (T, V): kinetic and potential (gravity, bending, joint springs).

    Parameters
    ----------
    coords, rows, bodies, P, q, qd : chain parts
        The chain's coordinate layout, constant Jacobian rows, link bodies, parameter symbols and the
        symbols of q and qd, as held by :class:`flexfmu.dynamics.planar.PlanarChain`.
    """
    g = ca.vertcat(P["gravity.x"], P["gravity.y"])
    origins, angles, _, _ = forward_kinematics(coords, bodies, q)
    T, V = ca.SX(0), ca.SX(0)
    for i, body in enumerate(bodies):
        idx = list(coords.modal[i])
        f = q[idx] if idx else ca.SX(0, 1)
        fd = qd[idx] if idx else ca.SX(0, 1)
        od = ca.jtimes(origins[i], q, qd)
        phid = ca.jtimes(angles[i], q, qd)
        R = rotation(angles[i])
        s = ca.vertcat(body.sx, body.sy + ca.mtimes(body.a.T, f))
        J0 = body.j0 + ca.mtimes([f.T, body.mff, f])
        local_rate = ca.vertcat(0, ca.mtimes(body.a.T, fd))  # int dr/dt dm in the link frame
        if body.stiffening:
            s[0] -= 0.5 * ca.mtimes([f.T, body.hb, f])
            J0 -= ca.mtimes([f.T, body.hd, f])
            local_rate[0] -= ca.mtimes([f.T, body.hb, fd])
        T += 0.5 * (
            body.mass * ca.dot(od, od)
            + 2 * ca.dot(od, phid * ca.mtimes(ca.mtimes(R, S), s) + ca.mtimes(R, local_rate))
            + phid**2 * J0
            + 2 * phid * ca.mtimes(body.b.T, fd)
            + ca.mtimes([fd.T, body.mff, fd])
        )
        for rot in body.rotary:
            T += 0.5 * rot.inertia * (phid + ca.mtimes(rot.slope, fd)) ** 2
        V -= ca.dot(g, body.mass * origins[i] + ca.mtimes(R, s))
        V += 0.5 * ca.mtimes([f.T, body.stiffness, f])
    for inertia, row in rotor_inertias(rows, P):
        T += 0.5 * inertia * ca.mtimes(row, qd) ** 2
    for j, row in rows.springs.items():
        V += 0.5 * P[f"joint[{j + 1}].stiffness"] * ca.mtimes(row, q) ** 2
    return T, V


def energy_dynamics(coords: Coordinates, rows: ChainRows, bodies: list[LinkBody], P, q, qd):
    """Return (M, h) from the Lagrangian by automatic differentiation.

    Parameters
    ----------
    coords, rows, bodies, P, q, qd : chain parts
        The chain's coordinate layout, constant Jacobian rows, link bodies, parameter symbols and the
        symbols of q and qd, as held by :class:`flexfmu.dynamics.planar.PlanarChain`.
    """
    T, V = energies(coords, rows, bodies, P, q, qd)
    dT_dqd = ca.gradient(T, qd)
    M = ca.jacobian(dT_dqd, qd)
    h = ca.mtimes(ca.jacobian(dT_dqd, q), qd) - ca.gradient(T, q) + ca.gradient(V, q)
    return M, h + dissipation(rows, bodies, P, qd)
