"""The spatial serial chain as a Model's building blocks (the graph of the spatial kind, ``flexfmu.kinds``).

:class:`SpatialChain` holds what both derivations, the outputs and the C
contract share for one arm: the coordinate layout, each link's structure and
mass properties (symbolic in p), the joints' placement, the per-link
template layouts with their constants, the constant rows of motors and
springs, and the symbols q, qd and p. It offers the same methods as the
planar chain (:class:`flexfmu.dynamics.model.ModelGraph`).

Quasi-static deformations and joint springs (:mod:`~flexfmu.dynamics.spatial.quasi_static`)
are left out of those parts; the outputs are those of the full chain
(:class:`ChainParts` with every coordinate), evaluated with the quasi-static
coordinates at their static equilibrium.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import casadi as ca
import numpy as np

from flexfmu.dynamics.forces import input_matrix, with_joint_structure
from flexfmu.dynamics.metadata import TORQUE, Coordinate, Signal
from flexfmu.dynamics.parameters import ParameterSymbols
from flexfmu.dynamics.spatial import bodies as B
from flexfmu.dynamics.spatial.closed_form import closed_form_dynamics
from flexfmu.dynamics.spatial.energy import energies, energy_dynamics
from flexfmu.dynamics.spatial.kinematics import Joint
from flexfmu.dynamics.spatial.layout import chain_rows, coordinate_layout
from flexfmu.dynamics.spatial.outputs import output_expressions
from flexfmu.dynamics.spatial.parameters import spatial_parameters
from flexfmu.dynamics.spatial.quasi_static import (
    QuasiStatic,
    choose,
    condensed_layout,
    equilibrium,
)
from flexfmu.dynamics.spatial.rotations import rotation_vector
from flexfmu.dynamics.spatial.templates import SpatialBodyLayout
from flexfmu.spec.spatial_arm import SpatialArm

DERIVATIONS = {"closed_form": closed_form_dynamics, "energy": energy_dynamics}


def _clean(values) -> tuple[float, ...]:
    """Numbers as plain floats with round-off zeros made exact (so coordinate axes stay sparse)."""
    return tuple(0.0 if abs(x) < 1e-14 else float(x) for x in np.ravel(values))


@dataclass(frozen=True)
class Damped:
    """A link's modal damping as the shared force code reads it (a :class:`flexfmu.dynamics.forces.DampedBody`):
    ``modes`` and the ``damping`` matrix."""

    modes: int
    damping: ca.SX


class ChainParts:
    """What the derivations, the outputs and the articulated-body passes read of a spatial arm: the
    coordinate layout ``coords``, each link's ``structures`` and mass properties ``bodies`` (symbolic in the
    parameter symbols ``P``), the ``joints``' placement, the per-link template ``layouts`` with their
    ``link_indices`` into q and ``constants``, the constant ``rows`` of motors and springs and the
    ``damped_bodies``.

    Built with the deformations and joint springs of ``quasi_static`` (a
    :class:`~flexfmu.dynamics.spatial.quasi_static.QuasiStatic`) left out when ``drop`` (the chain a
    Model moves), or kept without damping (the full chain its outputs are evaluated on); ``sets`` are the
    links' mode sets.
    """

    def __init__(self, arm: SpatialArm, P: ParameterSymbols, sets: list[dict], quasi_static: QuasiStatic, drop: bool):
        self.P = P
        self.coords = coordinate_layout(arm, quasi_static if drop else None)
        self.structures, self.bodies = B.link_bodies(arm, P, sets, quasi_static.deformations, drop)
        rotations = [rotation_vector(link.joint.rotation) for link in arm.links]
        axes = [np.asarray(link.joint.axis) for link in arm.links]
        offsets = [ca.vertcat(*[P[f"joint[{j}].offset.{x}"] for x in "xyz"]) for j in range(1, len(arm.links) + 1)]
        self.joints = [Joint(_clean(a), tuple(map(_clean, R)), offset)
                       for a, R, offset in zip(axes, rotations, offsets)]
        count = len(arm.links)
        self.layouts = [
            SpatialBodyLayout(st, j in self.coords.rotor, _clean(rotations[j].T @ axes[j]),
                       _clean(rotations[j + 1]) if j + 1 < count else None,
                       _clean(axes[j + 1]) if j + 1 < count else None)
            for j, st in enumerate(self.structures)]
        self.link_indices = [[self.coords.theta[j], *([self.coords.rotor[j]] if j in self.coords.rotor else []),
                              *self.coords.modal[j]] for j in range(count)]
        self.constants = [layout.pack(self._joint_constants(j, layout, props, j in quasi_static.joints))
                          for j, (layout, props) in enumerate(zip(self.layouts, self.bodies))]
        self.rows = chain_rows(self.coords, [self._root_row(j) for j in range(count)],
                               [self._tangent_row(j) for j in range(count)])
        self.damped_bodies = [Damped(st.modes, B.modal_stiffness(props, st)[1])
                              for st, props in zip(self.structures, self.bodies)]

    def _joint_constants(self, j: int, layout: SpatialBodyLayout, props: dict, quasi_static: bool) -> dict:
        P, pre = self.P, f"joint[{j + 1}]"
        values = dict(props)
        values["rotor"] = P[f"{pre}.gear_ratio"] ** 2 * P[f"{pre}.rotor_inertia"]
        values["viscous"] = P[f"{pre}.viscous_friction"]
        flexible = layout.flexible_joint
        values["spring_k"] = P[f"{pre}.stiffness"] if flexible else ca.SX(0)
        values["spring_c"] = P[f"{pre}.spring_damping"] if flexible and not quasi_static else ca.SX(0)
        if layout.next_rotation is not None:
            values["offset_next"] = self.joints[j + 1].offset
        return values

    def _modal_row(self, j: int, vector_of) -> ca.SX:
        """The row over link j's modes of the linear function ``vector_of(fd)`` (a scalar)."""
        k = self.structures[j].modes
        fd = ca.SX.sym("fd", k)
        return ca.jacobian(vector_of(fd), fd) if k else ca.SX(1, 0)

    def _root_row(self, j: int) -> ca.SX:
        axis = ca.DM(self.layouts[j].axis)
        return self._modal_row(j, lambda fd: ca.dot(axis, B.root_rotation(self.bodies[j], self.structures[j], fd)))

    def _tangent_row(self, j: int) -> ca.SX:
        if j + 1 == len(self.bodies):
            return ca.SX(1, self.structures[j].modes)
        axis = ca.DM(self.joints[j + 1].axis)
        return self._modal_row(j, lambda fd: ca.dot(axis, B.tip_tangent(self.bodies[j], self.structures[j], fd)))



class SpatialChain(ChainParts):
    """Symbolic building blocks of a spatial arm (see the module docstring): its :class:`ChainParts` without
    the quasi-static deformations and joint springs (``quasi_static``, chosen by
    :func:`~flexfmu.dynamics.spatial.quasi_static.choose`), and the symbols q, qd and p."""

    METHODS = tuple(DERIVATIONS)

    def __init__(self, arm: SpatialArm):
        sets = B.link_mode_sets(arm)
        self.quasi_static = choose(arm, sets)
        self.parameter_table = spatial_parameters(arm, self.quasi_static)
        super().__init__(arm, ParameterSymbols(self.parameter_table), sets, self.quasi_static, drop=True)
        self._arm, self._sets = arm, sets
        self.layout = self.coords.records
        n = self.coords.size
        self.q, self.qd, self.p = ca.SX.sym("q", n), ca.SX.sym("qd", n), self.P.vector
        self.inputs = [Signal(f"tau[{j}]", "N.m", TORQUE, f"torque of joint {j} (joint side of the gear)", j)
                       for j in range(1, len(arm.links) + 1)]
        self.joint_torques: list[Signal] = []  # outputs of prescribed joints: every spatial joint is torque-driven

    @cached_property
    def full(self) -> ChainParts:
        """The chain with every coordinate, the quasi-static ones included (itself when there are none)."""
        if not self.quasi_static:
            return self
        return ChainParts(self._arm, self.P, self._sets, self.quasi_static, drop=False)

    @property
    def quasi_static_layout(self) -> tuple[Coordinate, ...]:
        """The coordinates left out of q because they are quasi-static (Model.quasi_static)."""
        return condensed_layout(self.full.coords.records, self.layout)

    def dynamics(self, method: str) -> tuple[ca.SX, ca.SX, ca.SX]:
        """(M, h, B) with M qdd + h = B u, by the derivation ``method`` (a key of :data:`DERIVATIONS`)."""
        M, h = DERIVATIONS[method](self, self.q, self.qd)
        return M, h, input_matrix(self.rows)

    def energies(self) -> tuple[ca.SX, ca.SX]:
        """Kinetic and potential energy (gravity, elastic, joint springs)."""
        return energies(self, self.q, self.qd)

    def outputs(self, qdd: ca.SX) -> tuple[list[Signal], ca.SX]:
        """The output records and y(q, qd, qdd, p), given the symbol ``qdd`` for the accelerations: those of
        the full chain, evaluated with the quasi-static coordinates at their static equilibrium."""
        if not self.quasi_static:
            return output_expressions(self, self.q, self.qd, qdd)
        q, qd, qdd_full = (ca.SX.sym(name, self.full.coords.size) for name in ("q", "qd", "qdd"))
        signals, y = output_expressions(self.full, q, qd, qdd_full)
        full = ca.Function("full_outputs", [q, qd, qdd_full, self.p], [y])
        return signals, full(*equilibrium(self.full, self, self.q, self.qd, qdd), self.p)

    def structure(self) -> tuple[ca.SX, ca.SX]:
        """Structural stiffness K and damping D (modes, joint springs; modal, spring and viscous friction
        damping), constant in q."""
        n, P = self.coords.size, self.P
        K, D = ca.SX(n, n), ca.SX(n, n)
        for E, st, props in zip(self.rows.selections, self.structures, self.bodies):
            if st.modes:
                K_link, D_link = B.modal_stiffness(props, st)
                K += ca.mtimes([E.T, K_link, E])
                D += ca.mtimes([E.T, D_link, E])
        return with_joint_structure(K, D, self.rows, P)

    def compiled(self, model):
        """The Functions of the C contract (articulated-body passes) for ``model``, the Model built on this
        chain."""
        from flexfmu.dynamics.spatial.compiled import compiled_dynamics

        return compiled_dynamics(self, model)
