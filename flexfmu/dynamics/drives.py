"""Prescribed joints: which coordinates are states, and what each input drives.

A joint driven by a prescribed motion (``prescribed = true`` in the spec)
has its angle, rate and acceleration as inputs (``theta[j]``,
``der(theta[j])``, ``der(theta[j],2)``) and its torque as an output
(``tau[j]``), as a position-controlled servo or a spin-up rig drives it. Its
coordinate is then not a state: the state is x = [q_s; qd_s] over the other
coordinates (``Model.states``), and the state-space Functions
(``state_derivative``, ``forward_dynamics``, ``outputs``) take the
prescribed motion from u.

With M qdd + h = B tau (tau: every joint's torque, B one column per joint),
the unknowns are the state accelerations qdd_s and the torques tau_p of the
prescribed joints. All n rows give the square system

    [M[:, s]  -B[:, p]] [qdd_s; tau_p] = B[:, t] u_t - h - M[:, p] qdd_p,

t the torque-driven joints, solved numerically (QR). Which input drives what
comes from the input records' groups and links, never from their names.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from flexfmu.dynamics import metadata as md


@dataclass(frozen=True)
class Drives:
    """Positions of the state and prescribed coordinates in q, and of each kind of input in u.

    Attributes
    ----------
    size : int
        Number of coordinates n.
    states : tuple of int
        Indices in q of the state coordinates, in q order.
    prescribed : tuple of int
        Indices in q of the prescribed coordinates, in joint order.
    prescribed_joints : tuple of int
        Their joints' columns of B (0-based joint numbers).
    angles, rates, accelerations : tuple of int
        Positions in u of their prescribed angles, rates and accelerations, in the same order.
    torques : tuple of int
        Positions in u of the torque inputs.
    torque_joints : tuple of int
        Their joints' columns of B.
    """

    size: int
    states: tuple[int, ...]
    prescribed: tuple[int, ...]
    prescribed_joints: tuple[int, ...]
    angles: tuple[int, ...]
    rates: tuple[int, ...]
    accelerations: tuple[int, ...]
    torques: tuple[int, ...]
    torque_joints: tuple[int, ...]

    @classmethod
    def of(cls, layout, inputs) -> Drives:
        """The drives of a model with coordinates ``layout`` (Coordinate records) and inputs ``inputs``
        (Signal records; a joint's inputs carry its number as ``link``)."""
        prescribed = [k for k, c in enumerate(layout) if c.prescribed]
        joints = [layout[k].link for k in prescribed]
        by_group = {group: {s.link: i for i, s in enumerate(inputs) if s.group == group} for group in md.PRESCRIBED}
        torques = [i for i, s in enumerate(inputs) if s.group == md.TORQUE]
        return cls(
            size=len(layout),
            states=tuple(k for k, c in enumerate(layout) if not c.prescribed),
            prescribed=tuple(prescribed),
            prescribed_joints=tuple(j - 1 for j in joints),
            angles=tuple(by_group[md.PRESCRIBED_ANGLE][j] for j in joints),
            rates=tuple(by_group[md.PRESCRIBED_RATE][j] for j in joints),
            accelerations=tuple(by_group[md.PRESCRIBED_ACCELERATION][j] for j in joints),
            torques=tuple(torques),
            torque_joints=tuple(inputs[i].link - 1 for i in torques),
        )

    def merge(self, state_part, prescribed_part):
        """The vector over all coordinates from its ``state_part`` and ``prescribed_part`` (CasADi or
        numpy)."""
        order = list(self.states) + list(self.prescribed)
        back = list(np.argsort(order))
        if isinstance(state_part, np.ndarray):
            return np.concatenate([state_part, prescribed_part])[back]
        return ca.vertcat(state_part, prescribed_part)[back]

    def coordinates(self, q, qd, u):
        """(q, qd) of every coordinate from the state coordinates' ``q``, ``qd`` and the inputs ``u``."""
        if not self.prescribed:
            return q, qd
        return self.merge(q, u[list(self.angles)]), self.merge(qd, u[list(self.rates)])

    def solve(self, M, h, B, u):
        """(qdd of every coordinate, tau of the prescribed joints) from ``M``, ``h``, ``B`` (n x joints)
        and the inputs ``u`` (CasADi expressions), by the square system of the module docstring."""
        states, prescribed = list(self.states), list(self.prescribed)
        torque = ca.mtimes(B[:, list(self.torque_joints)], u[list(self.torques)]) if self.torques else 0
        known = u[list(self.accelerations)]
        A = ca.horzcat(M[:, states], -B[:, list(self.prescribed_joints)])
        solution = ca.solve(A, torque - h - ca.mtimes(M[:, prescribed], known), "qr")
        return self.merge(solution[:len(states)], known), solution[len(states):]
