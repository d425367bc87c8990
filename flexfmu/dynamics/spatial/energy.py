"""Energy-based derivation of the spatial chain: the Lagrangian differentiated by CasADi AD.

Frames come from :mod:`flexfmu.dynamics.spatial.kinematics` (positions and
rotations by accumulation, in the base frame); velocities are their AD
directional derivatives. A point of link i at p = o + R r(x) has
p' = o' + R' r + R r', so the link's kinetic energy is written with base-frame
rates and the mass integrals Sigma = int r r^T dm and P = int r' r^T dm:

    T_i = m |o'|^2 / 2 + o'.(R' s + R s') + tr(R' Sigma R'^T) / 2 + tr(R'^T R P) + f''M f'/2 + rotary,

with the rotary inertias turning at w = vee(R^T R'). Then M = d2T/dqd2 and
h = d/dq(dT/dqd) qd - dT/dq + dV/dq + dissipation. Nothing here shares the
closed form's body-frame velocities, Euler-Poincare terms or frame transfers.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics.forces import dissipation, rotor_inertias
from flexfmu.dynamics.spatial import bodies as B
from flexfmu.dynamics.spatial.kinematics import frames, link_coordinates
from flexfmu.dynamics.spatial.rotations import vee


def _rate(expression: ca.SX, q: ca.SX, qd: ca.SX) -> ca.SX:
    """d ``expression`` / dt along qd (any shape)."""
    return ca.reshape(ca.jtimes(ca.vec(expression), q, qd), expression.shape[0], expression.shape[1])


def energies(chain, q, qd):
    """Return (T, V): kinetic and potential (gravity, elastic, joint springs) energy of the spatial
    ``chain`` (a :class:`flexfmu.dynamics.spatial.chain.SpatialChain`) at ``q``, ``qd``."""
    P = chain.P
    g = ca.vertcat(P["gravity.x"], P["gravity.y"], P["gravity.z"])
    F = frames(chain.joints, chain.structures, chain.bodies, chain.coords, q)
    T, V = ca.SX(0), ca.SX(0)
    for i, (st, props) in enumerate(zip(chain.structures, chain.bodies)):
        f, fd = link_coordinates(q, chain.coords.modal[i]), link_coordinates(qd, chain.coords.modal[i])
        R, o = F.rotations[i], F.origins[i]
        Rd, od = _rate(R, q, qd), _rate(o, q, qd)
        s = B.first_moment(props, st, f)
        Sigma = B.second_moment(props, st, f)
        s_rate = B.first_moment_rate(props, st, f, fd)
        T += 0.5 * props["m"] * ca.dot(od, od) + ca.dot(od, ca.mtimes(Rd, s) + ca.mtimes(R, s_rate))
        T += 0.5 * ca.trace(ca.mtimes([Rd, Sigma, Rd.T]))
        T += ca.trace(ca.mtimes([Rd.T, R, B.relative_moment(props, st, f, fd)]))
        w = vee(ca.mtimes(R.T, Rd))
        T += 0.5 * ca.mtimes([w.T, props["rot_I"], w])
        if st.modes:
            T += ca.mtimes([w.T, props["rot_IG"], fd])
            T += 0.5 * ca.mtimes([fd.T, B.modal_mass(props, st) + props["rot_GIG"], fd])
            K, _ = B.modal_stiffness(props, st)
            V += 0.5 * ca.mtimes([f.T, K, f])
        V -= ca.dot(g, props["m"] * o + ca.mtimes(R, s))
    for inertia, row in rotor_inertias(chain.rows, P):
        T += 0.5 * inertia * ca.mtimes(row, qd) ** 2
    for j, row in chain.rows.springs.items():
        V += 0.5 * P[f"joint[{j + 1}].stiffness"] * ca.mtimes(row, q) ** 2
    return T, V


def energy_dynamics(chain, q, qd):
    """Return (M, h) of the spatial ``chain`` from its Lagrangian by automatic differentiation, at the
    symbols ``q``, ``qd``."""
    T, V = energies(chain, q, qd)
    dT_dqd = ca.gradient(T, qd)
    M = ca.jacobian(dT_dqd, qd)
    h = ca.mtimes(ca.jacobian(dT_dqd, q), qd) - ca.gradient(T, q) + ca.gradient(V, q)
    return M, h + dissipation(chain.rows, chain.damped_bodies, P=chain.P, qd=qd)
