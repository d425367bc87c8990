"""Closed-form derivation of the spatial chain: body equations projected through recursive Jacobians.

Each link's velocity nu_i (see :mod:`flexfmu.dynamics.spatial.templates`)
is J_i qd with the Jacobian built outward,

    J_i = X_i J_mu,i + S_i E_i,    J_mu,i+1 = T_i J_i,

X_i = diag(R', R', 1) the joint's turn of the handed joint-frame velocity,
S_i how the link's own rates (theta', alpha', f') enter, E_i their selection
from q. The link's body equations G_i nu_i' + F_i (velocity products and
gravity, through the handed accelerations, included in F_i) then give

    M = sum_i J_i' G_i J_i,    h = sum_i J_i' F_i + springs + dissipation,

by d'Alembert's principle in the bodies' own velocities (virtual velocities
J_i dq). One template call per link; the q-space products are sparse.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics.forces import dissipation, spring_forces
from flexfmu.dynamics.spatial.templates import FRAME, joint_turn, link_kinematics


def base_acceleration(chain) -> ca.SX:
    """The acceleration handed to link 1's joint frame of the spatial ``chain``: gravity as an upward
    acceleration of the base, in the joint frame's axes (the base turned by joint 1's fixed rotation)."""
    P = chain.P
    g = ca.vertcat(P["gravity.x"], P["gravity.y"], P["gravity.z"])
    Rf = ca.DM(chain.joints[0].rotation)
    return ca.vertcat(-ca.mtimes(Rf.T, g), ca.SX(FRAME - 3, 1))


def closed_form_dynamics(chain, q, qd):
    """Return (M, h) with M qdd + h = B u for the spatial ``chain`` (a
    :class:`flexfmu.dynamics.spatial.chain.SpatialChain`) at the symbols ``q``, ``qd``."""
    n = chain.coords.size
    M, h = ca.SX(n, n), ca.SX(n, 1)
    J_mu, mu, a_in = ca.SX(FRAME, n), ca.SX(FRAME, 1), base_acceleration(chain)
    for layout, indices, constants in zip(chain.layouts, chain.link_indices, chain.constants):
        E = ca.SX(len(indices), n)
        for r, c in enumerate(indices):
            E[r, c] = 1
        G, F, cs, T, mu, a_in = link_kinematics(layout)(q[indices], qd[indices], mu, a_in, constants)
        Rt = joint_turn(layout, cs)
        turned = ca.vertcat(ca.mtimes(Rt, J_mu[0:3, :]), ca.mtimes(Rt, J_mu[3:6, :]), J_mu[6, :],
                            ca.SX(layout.velocity - FRAME, n))
        J = turned + ca.mtimes(ca.SX(ca.DM(layout.joint_matrix())), E)
        M += ca.mtimes([J.T, G, J])
        h += ca.mtimes(J.T, F)
        J_mu = ca.mtimes(T, J)
    h += spring_forces(chain.rows, chain.P, q) + dissipation(chain.rows, chain.damped_bodies, chain.P, qd)
    return M, h
