"""Frame angles, joint rotations and forward kinematics of the planar chain.

All angles in the chain are linear in q: the frame of link i turns by the
joint angles up to i and by the tip slopes of the tangent-framed links before
it. Their Jacobian rows are therefore constant in q (they depend on p only),
which the closed-form derivation exploits and the energy derivation does not
rely on. Rows and selections are kept structurally sparse (``ca.SX(r, c)``
is all structural zeros, ``SX.zeros`` would be dense), so products only
touch the coordinates that matter: this is most of the graph-building speed.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from flexfmu.dynamics.planar.bodies import Coordinates, LinkBody

S = ca.SX([[0, -1], [1, 0]])  # rotation by +90 degrees: d R(phi)/d phi = R S


def rotation(angle: ca.SX) -> ca.SX:
    """Planar rotation matrix R(``angle``)."""
    c, s = ca.cos(angle), ca.sin(angle)
    return ca.vertcat(ca.horzcat(c, -s), ca.horzcat(s, c))


def _unit_row(n: int, index: int) -> ca.SX:
    row = ca.SX(1, n)
    row[0, index] = 1
    return row


def _selection(n: int, indices: tuple[int, ...]) -> ca.SX:
    E = ca.SX(len(indices), n)
    for r, c in enumerate(indices):
        E[r, c] = 1
    return E


@dataclass(frozen=True)
class ChainRows:
    """Constant Jacobian rows of the chain, computed once per build.

    Attributes
    ----------
    selections : E_i, the modal coordinates of link i picked out of q.
    frame_angles : J_phi_i with phi_i = J_phi_i q, the angle of link i's frame.
    joint_rotations : psi_j, link j's root tangent relative to the tip tangent
        of link j-1 (what a joint encoder and a rigid joint's torque see).
    motors : the motor-side angle of each joint (rotor angle of a flexible
        joint, psi_j of a rigid one); torques, friction and rotor inertia act
        on it.
    springs : {joint: row of alpha_j - psi_j} for flexible joints.
    """

    selections: list[ca.SX]
    frame_angles: list[ca.SX]
    joint_rotations: list[ca.SX]
    motors: list[ca.SX]
    springs: dict[int, ca.SX]


def chain_rows(coords: Coordinates, bodies: list[LinkBody]) -> ChainRows:
    """Compute the constant rows of ``ChainRows`` for the chain of layout ``coords`` and link ``bodies``."""
    n = coords.size
    E = [_selection(n, idx) for idx in coords.modal]
    angles, row = [], ca.SX(1, n)
    for i, body in enumerate(bodies):
        row = row + _unit_row(n, coords.theta[i])
        angles.append(row)
        row = row + ca.mtimes(body.distal_rotation, E[i])
    psi = []
    for j, body in enumerate(bodies):
        r = _unit_row(n, coords.theta[j]) + ca.mtimes(body.root_tangent, E[j])
        if j > 0:
            r = r - ca.mtimes(bodies[j - 1].tip_tangent, E[j - 1])
        psi.append(r)
    motors = [_unit_row(n, coords.rotor[j]) if j in coords.rotor else psi[j] for j in range(len(bodies))]
    springs = {j: _unit_row(n, k) - psi[j] for j, k in coords.rotor.items()}
    return ChainRows(E, angles, psi, motors, springs)


def forward_kinematics(coords: Coordinates, bodies: list[LinkBody], q: ca.SX):
    """Origins and angles of every link frame, and the chain's tip, at ``q``
    for the chain of layout ``coords`` and link ``bodies``.

    Returns ``(origins, angles, tip, tip_angle)`` where ``origins[i]`` and
    ``angles[i]`` place link i's frame, ``tip`` is the deflected tip of the
    last link and ``tip_angle`` its tangent angle. Built by accumulation, not
    from the Jacobian rows, so the energy derivation stands on its own. A
    link with geometric stiffening ends at (L - 1/2 f'hl f, w(L)) in its frame.
    """
    origin, angle = ca.SX(2, 1), ca.SX(0)
    origins, angles = [], []
    for i, body in enumerate(bodies):
        f = q[list(coords.modal[i])] if coords.modal[i] else ca.SX(0, 1)
        angle = angle + q[coords.theta[i]]
        origins.append(origin)
        angles.append(angle)
        tip_local = ca.vertcat(body.length, ca.mtimes(body.tip_value, f))
        if body.stiffening:
            tip_local[0] -= 0.5 * ca.mtimes([f.T, body.hl, f])
        tip_turn = ca.mtimes(body.distal_rotation, f) if coords.modal[i] else 0
        tangent = ca.mtimes(body.tip_tangent, f) if coords.modal[i] else 0
        origin = origin + ca.mtimes(rotation(angle), tip_local)
        tip_angle = angle + tip_turn + tangent
        angle = angle + tip_turn
    return origins, angles, origin, tip_angle
