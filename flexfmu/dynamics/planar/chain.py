"""The planar serial chain as a Model's building blocks.

:class:`PlanarChain` holds what both derivations, the outputs and the C
contract share for one arm: the coordinate layout, the link bodies
(mass properties symbolic in p), the constant Jacobian rows and the
symbols q, qd and p. :func:`flexfmu.dynamics.build.assemble_model` asks it for
M and h; the Model asks it lazily for energies, outputs, structure matrices
and the compiled (articulated-body) dynamics.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics import metadata as md
from flexfmu.dynamics.forces import input_matrix, with_joint_structure
from flexfmu.dynamics.metadata import Signal
from flexfmu.dynamics.parameters import ParameterSymbols
from flexfmu.dynamics.planar.bodies import coordinate_layout, link_bodies, link_mode_sets
from flexfmu.dynamics.planar.closed_form import closed_form_dynamics
from flexfmu.dynamics.planar.energy import energies, energy_dynamics
from flexfmu.dynamics.planar.frames import chain_rows
from flexfmu.dynamics.planar.outputs import output_expressions
from flexfmu.dynamics.planar.parameters import arm_parameters
from flexfmu.spec.arm import Arm

DERIVATIONS = {"closed_form": closed_form_dynamics, "energy": energy_dynamics}


def joint_signals(arm: Arm) -> tuple[list[Signal], list[Signal]]:
    """The inputs u of ``arm`` joint by joint (a torque, or a prescribed joint's angle, rate and
    acceleration), and the outputs of the prescribed joints' torques."""
    inputs, torques = [], []
    for j, link in enumerate(arm.links, start=1):
        torque = f"tau[{j}]"
        if not link.joint.prescribed:
            inputs.append(Signal(torque, "N.m", md.TORQUE, f"torque of joint {j} (joint side of the gear)", j))
            continue
        inputs += [
            Signal(f"theta[{j}]", "rad", md.PRESCRIBED_ANGLE, f"prescribed angle of joint {j}", j),
            Signal(f"der(theta[{j}])", "rad/s", md.PRESCRIBED_RATE, f"prescribed rate of joint {j}", j),
            Signal(f"der(theta[{j}],2)", "rad/s2", md.PRESCRIBED_ACCELERATION,
                   f"prescribed acceleration of joint {j}", j),
        ]
        torques.append(Signal(torque, "N.m", md.JOINT_TORQUE,
                              f"torque joint {j} applies to follow its prescribed motion (joint side of the gear)", j))
    return inputs, torques


class PlanarChain:
    """Symbolic building blocks of a planar arm (see the module docstring)."""

    METHODS = tuple(DERIVATIONS)

    def __init__(self, arm: Arm):
        self.parameter_table = arm_parameters(arm)
        self.P = ParameterSymbols(self.parameter_table)
        self.coords = coordinate_layout(arm)
        self.bodies = link_bodies(arm, self.P, link_mode_sets(arm))
        self.rows = chain_rows(self.coords, self.bodies)
        self.layout = self.coords.records
        n = self.coords.size
        self.q, self.qd, self.p = ca.SX.sym("q", n), ca.SX.sym("qd", n), self.P.vector
        self.inputs, self.joint_torques = joint_signals(arm)

    def dynamics(self, method: str) -> tuple[ca.SX, ca.SX, ca.SX]:
        """(M, h, B) with M qdd + h = B u, by the derivation ``method`` (a key of :data:`DERIVATIONS`)."""
        M, h = DERIVATIONS[method](self.coords, self.rows, self.bodies, self.P, self.q, self.qd)
        return M, h, input_matrix(self.rows)

    def energies(self) -> tuple[ca.SX, ca.SX]:
        """Kinetic and potential energy (gravity, bending, joint springs)."""
        return energies(self.coords, self.rows, self.bodies, self.P, self.q, self.qd)

    def outputs(self, qdd: ca.SX) -> tuple[list[Signal], ca.SX]:
        """The output records and y(q, qd, qdd, p), given the symbol ``qdd`` for the accelerations."""
        return output_expressions(self.coords, self.rows, self.bodies, self.P, self.q, self.qd, qdd)

    def structure(self) -> tuple[ca.SX, ca.SX]:
        """Structural stiffness K and damping D (bending, joint springs;
        modal, spring and viscous friction damping), constant in q."""
        n, P = self.coords.size, self.P
        K, D = ca.SX(n, n), ca.SX(n, n)
        for E, body in zip(self.rows.selections, self.bodies):
            if body.modes:
                K += ca.mtimes([E.T, body.stiffness, E])
                D += ca.mtimes([E.T, body.damping, E])
        return with_joint_structure(K, D, self.rows, P)

    def compiled(self, model):
        """The Functions of the C contract (articulated-body passes) for ``model``, the Model built on this
        chain."""
        from flexfmu.dynamics.planar.compiled import compiled_dynamics

        return compiled_dynamics(self, model)
