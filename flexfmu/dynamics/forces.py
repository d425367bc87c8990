"""Generalized forces of a serial chain shared by both derivations: inputs and dissipation.

Joint torques map to generalized forces by virtual work: a torque tau_j on
the motor-side angle m_j = J_m_j q does work tau_j dm_j, so it contributes
J_m_j' tau_j (paper 000 eq. 29-32, paper 002's B = [I, phi'(0) ...]). The
same rows carry friction. Modal damping and joint spring damping are
Rayleigh dissipation. None of these comes from the energy, so both
derivations add the same terms. Planar and spatial chains alike: the
functions read the chain's constant rows (:class:`JointRows`) and its
damped bodies (:class:`DampedBody`), whatever kind built them.
"""

from __future__ import annotations

from typing import Protocol

import casadi as ca

from flexfmu.dynamics.parameters import ParameterSymbols


class JointRows(Protocol):
    """The constant rows over q the joint forces act through.

    ``selections``: per link, E_i picking its modal coordinates out of q;
    ``motors``: per joint, the row of its motor-side angle (rotor of a
    flexible joint, the encoder angle of a rigid one), where torques,
    friction and rotor inertia act; ``springs``: {joint index: row of the
    spring twist alpha_j - psi_j} for the flexible joints.
    """

    selections: list[ca.SX]
    motors: list[ca.SX]
    springs: dict[int, ca.SX]


class DampedBody(Protocol):
    """A link body as its modal damping sees it: ``modes`` (how many) and ``damping`` (modes x modes)."""

    modes: int
    damping: ca.SX


def input_matrix(rows: JointRows) -> ca.SX:
    """B (n x joints) with generalized force B tau: the motor rows of ``rows``, transposed."""
    return ca.horzcat(*[row.T for row in rows.motors])


def dissipation(rows: JointRows, bodies: list[DampedBody], P: ParameterSymbols, qd: ca.SX) -> ca.SX:
    """Dissipative generalized forces, as they enter h (M qdd + h = B u): modal damping of the link
    ``bodies``, joint friction on the motor ``rows`` and spring damping, with the parameter symbols ``P``,
    at the rates ``qd``."""
    h = ca.SX(qd.numel(), 1)
    for E, body in zip(rows.selections, bodies):
        if body.modes:
            h += ca.mtimes(E.T, ca.mtimes(body.damping, ca.mtimes(E, qd)))
    for j, row in enumerate(rows.motors):
        pre = f"joint[{j + 1}]"
        rate = ca.mtimes(row, qd)
        torque = P[f"{pre}.viscous_friction"] * rate + P[f"{pre}.coulomb_friction"] * ca.tanh(
            rate / P[f"{pre}.coulomb_velocity"]
        )
        h += row.T * torque
    for j, row in rows.springs.items():
        h += row.T * (P[f"joint[{j + 1}].spring_damping"] * ca.mtimes(row, qd))
    return h


def spring_forces(rows: JointRows, P: ParameterSymbols, q: ca.SX) -> ca.SX:
    """Generalized forces of the flexible joints' springs at ``q``, as they enter h (spring ``rows``,
    stiffnesses from the parameter symbols ``P``)."""
    h = ca.SX(q.numel(), 1)
    for j, row in rows.springs.items():
        h += row.T * (P[f"joint[{j + 1}].stiffness"] * ca.mtimes(row, q))
    return h


def rotor_inertias(rows: JointRows, P: ParameterSymbols):
    """(reflected inertia G^2 Ir, motor row) of every joint, from the motor
    ``rows`` and the parameter symbols ``P``. The rotor's
    kinetic energy is taken from its own spin only (paper 004 assumption VI,
    Spong's reduced model): 1/2 G^2 Ir (dm_j/dt)^2."""
    return [
        (P[f"joint[{j + 1}].gear_ratio"] ** 2 * P[f"joint[{j + 1}].rotor_inertia"], row)
        for j, row in enumerate(rows.motors)
    ]


def with_joint_structure(K: ca.SX, D: ca.SX, rows: JointRows, P: ParameterSymbols) -> tuple[ca.SX, ca.SX]:
    """The structural stiffness ``K`` and damping ``D`` plus the joints' share: each flexible joint's spring
    and spring damping on its spring row, each motor's viscous friction on its motor row (the constant
    ``rows`` of the chain), with the parameter symbols ``P``."""
    for j, row in rows.springs.items():
        K += P[f"joint[{j + 1}].stiffness"] * ca.mtimes(row.T, row)
        D += P[f"joint[{j + 1}].spring_damping"] * ca.mtimes(row.T, row)
    for j, row in enumerate(rows.motors):
        D += P[f"joint[{j + 1}].viscous_friction"] * ca.mtimes(row.T, row)
    return K, D
