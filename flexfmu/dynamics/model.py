"""The Model: an arm's dynamics as named casadi.Functions, with metadata, and what it is built from.

This is the contract every arm kind delivers and everything downstream
consumes (docs/architecture.md): integrators, code generation, FMUs, the
harness and tuning read these Functions and the metadata records
(:mod:`flexfmu.dynamics.metadata`), never the arm description or the
derivation, and never by parsing names. A kind provides a
:class:`ModelGraph` (its symbolic building blocks) and compiles its
dynamics for generated C into a :class:`CompiledDynamics`;
:func:`flexfmu.dynamics.build.assemble_model` makes the Model of a graph.

M, h, B and the forward dynamics are built with the Model; the energy, the
outputs, the structure matrices, the Coriolis matrix and the compiled C
contract are built on first use (each costs as much again as M and h, and
many uses never need them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Protocol

import casadi as ca
import numpy as np

from flexfmu.dynamics.drives import Drives
from flexfmu.dynamics.metadata import Coordinate, Parameter, Signal
from flexfmu.dynamics.stages import LinearStages, MassFormStages


@dataclass(frozen=True)
class CompiledDynamics:
    """Functions of the C contract, in terms of pc = [p; c(p)].

    Attributes
    ----------
    constants : (p) -> c
    state_derivative : (x, u, pc) -> dx/dt
    outputs : (x, u, pc) -> y
    directional : (x, u, pc, dx, du) -> (dxdot, dy), forward AD of both
    newton_correction : (q, qd, v0, u, pc, h) -> dw, the simplified Newton
        step (M + h/2 D + h^2/4 K)^-1 M r of the implicit midpoint rule, with
        r = qd - v0 - h/2 qdd(q, qd, u) and D, K the structural damping and
        stiffness (see flexfmu.integrate.implicit_midpoint_step).
    mass_form : (x, u, pc) -> (M, f, K, D), the equations of motion as
        M(q) qdd = f(q, qd, u) with the stiffness K and damping D at q that
        the stiff integrators hold (``Model.stiffness_at``; see
        flexfmu.integrate.rosenbrock_step).
    stages : (x, u, pc, c) -> LinearStages, or None
        A kind's own stage solves of the Rosenbrock-W step at x
        (:mod:`flexfmu.dynamics.stages`) where they are cheaper than a
        factor of the mass form; None: :meth:`linear_stages` factors
        ``mass_form``.

    x, q, qd and v0 hold the state coordinates (``Model.states``).
    """

    constants: ca.Function
    state_derivative: ca.Function
    outputs: ca.Function
    directional: ca.Function
    newton_correction: ca.Function
    mass_form: ca.Function
    stages: Callable[..., LinearStages] | None = None

    @property
    def size(self) -> int:
        """Number of constants c."""
        return self.constants.size1_out(0)

    def linear_stages(self, x, u, pc, c) -> LinearStages:
        """The stage solves of a Rosenbrock-W step at the state ``x`` (inputs ``u``, ``pc`` = [p; c(p)]) with
        ``c`` = gamma h, as MX graphs: the kind's own (``stages``), else by an LDL' factor of the mass form."""
        return (self.stages or partial(MassFormStages, self.mass_form))(x, u, pc, c)



class ArmSpec(Protocol):
    """What the Model reads of an arm's specification (the dataclass of its kind: ``flexfmu.spec.arm.Arm``,
    ``SpatialArm``, ``DeltaArm``): its ``name``, ``kind`` and ``description``."""

    name: str
    kind: str
    description: str


class ModelGraph(Protocol):
    """The symbolic building blocks a Model is made of, one class per arm kind
    (:class:`flexfmu.dynamics.planar.chain.PlanarChain` for planar arms), built from the arm as
    ``graph_class(arm)``.

    Attributes: ``q``, ``qd``, ``p`` (SX symbols), ``parameter_table``,
    ``layout`` (Coordinate records of q, prescribed joint angles marked),
    ``inputs`` (Signal records of u: joint j's torque, or its prescribed
    angle, rate and acceleration, each with ``link`` = j),
    ``joint_torques`` (Signal records of the prescribed joints' torques,
    appended to the outputs); ``METHODS``, the derivations it offers, the
    first being the default. B has one column per joint, joint j's torque in
    column j - 1.
    """

    METHODS: tuple[str, ...]

    def dynamics(self, method: str) -> tuple[ca.SX, ca.SX, ca.SX]:
        """(M, h, B) with M qdd + h = B tau (tau every joint's torque), by the derivation ``method`` (one of
        ``METHODS``)."""

    def energies(self) -> tuple[ca.SX, ca.SX]:
        """Kinetic and potential energy."""

    def outputs(self, qdd: ca.SX) -> tuple[list[Signal], ca.SX]:
        """Output records and y(q, qd, qdd, p), given the symbol ``qdd`` for the accelerations."""

    def structure(self) -> tuple[ca.SX, ca.SX]:
        """Structural stiffness K and damping D, constant in q."""

    def compiled(self, model: Model):
        """The Functions of the C contract (:class:`CompiledDynamics`) for ``model``, the
        Model built on this graph."""

    # optional: start_coordinates() -> array, the q an FMU starts from (the joints' start angles when absent)


@dataclass(frozen=True)
class Model:
    """Dynamics M(q) qdd + h(q, qd) = B(q) tau of one arm, with metadata.

    Attributes
    ----------
    arm : ArmSpec
        The arm's specification, of its kind's dataclass.
    method : str
        The derivation of M and h.
    layout : tuple of Coordinate
        What each entry of q is (kind, link, unit, mode, prescribed).
    parameter_table : list of Parameter
        Every entry of p with its unit, description and whether it is tunable.
    input_table : list of Signal
        The inputs u: joint torques (group ``torque``), and for prescribed
        joints their angle, rate and acceleration (groups
        ``flexfmu.dynamics.metadata.PRESCRIBED``).
    mass_matrix, bias, input_matrix : casadi.Function
        M(q, p), h(q, qd, p) and B(q, p) over every coordinate, B with one
        column per joint (u = tau when no joint is prescribed).
    forward_dynamics, state_derivative : casadi.Function
        (q, qd, u, p) -> qdd and (x = [q; qd], u, p) -> dx/dt over the
        state coordinates (:attr:`states`: every coordinate but the angles
        of prescribed joints, which come from u).
    motion : casadi.Function
        (q, qd, u, p) of the state coordinates -> (q, qd, qdd) of every
        coordinate and tau of the prescribed joints (empty without them):
        ``flexfmu.dynamics.drives``.

    The energy, outputs, structure matrices, Coriolis matrix and compiled C
    contract are properties built on first use.
    """

    arm: ArmSpec
    method: str
    layout: tuple[Coordinate, ...]
    parameter_table: list[Parameter]
    input_table: list[Signal]
    mass_matrix: ca.Function
    bias: ca.Function
    input_matrix: ca.Function
    forward_dynamics: ca.Function
    state_derivative: ca.Function
    motion: ca.Function
    _graph: ModelGraph = field(repr=False, compare=False)

    # ------------------------------------------------------------ names and data

    def graph_for(self, arm) -> ModelGraph:
        """The graph of this Model's kind built for ``arm``, a variant of its arm (the same arm with another
        physics switch, say): what an analysis that needs other physics than the Model's own builds on. The
        Model's own graph for its own arm."""
        return self._graph if arm == self.arm else type(self._graph)(arm)

    @property
    def coordinates(self) -> list[str]:
        """Names of q in order (``theta[1]``, ``alpha[1]``, ``f[1,1]``, ...)."""
        return [c.name for c in self.layout]

    @property
    def inputs(self) -> list[str]:
        """Names of u in order."""
        return [s.name for s in self.input_table]

    @property
    def parameters(self) -> dict[str, float]:
        """Ordered ``{name: nominal value}``; p follows this order."""
        return {row.name: row.value for row in self.parameter_table}

    @property
    def nominal_parameters(self) -> np.ndarray:
        """p at the arm's nominal values."""
        return np.array([row.value for row in self.parameter_table])

    def parameter_vector(self, overrides: dict[str, float] | None = None) -> np.ndarray:
        """p at nominal values with the entries named in ``overrides`` replaced."""
        p = self.nominal_parameters
        index = {name: k for k, name in enumerate(self.parameters)}
        for name, value in (overrides or {}).items():
            if name not in index:
                raise KeyError(f"unknown parameter {name!r}")
            p[index[name]] = value
        return p

    @property
    def start_coordinates(self) -> np.ndarray:
        """q at the arm's start pose (the FMU's start values, before the static equilibrium settles the rest):
        a serial arm's joints and their rotors at the joints' ``start_angle`` (springs relaxed) and its modes
        zero, the home position's motor angles and undeformed links for a Delta robot."""
        start = getattr(self._graph, "start_coordinates", None)
        if start is not None:
            return np.asarray(start(), float)
        return np.array([self.arm.links[c.link - 1].joint.start_angle if c.kind in ("joint", "rotor") else 0.0
                         for c in self.layout])

    @property
    def reduction(self):
        """How the arm's flexible bodies were reduced (:class:`flexfmu.dynamics.metadata.ReductionSummary`), or
        None for an arm whose flexible links are not finite-element bodies."""
        return getattr(self._graph, "reduction", None)

    @cached_property
    def _holding(self) -> tuple[np.ndarray, np.ndarray]:
        from flexfmu.dynamics.equilibrium import holding_equilibrium

        return holding_equilibrium(self)

    @property
    def start_state(self) -> np.ndarray:
        """x = [q0; 0] over the state coordinates: the arm at rest at its start pose, its joints at their start
        angles and everything else (modes, rotors, elastic coordinates) at the static equilibrium there
        (:mod:`flexfmu.dynamics.equilibrium`): where the FMU, the reference and a scenario start."""
        q0 = self._holding[0][list(self.drives.states)]
        return np.concatenate([q0, np.zeros(len(q0))])

    @property
    def quasi_static(self) -> tuple[Coordinate, ...]:
        """The coordinates left out of q because they follow their static equilibrium (a spatial link's
        torsion or stretch, a joint spring; docs/spatial.md): not states, reported in the outputs. Empty for
        most arms."""
        return tuple(getattr(self._graph, "quasi_static_layout", ()))

    @property
    def start_inputs(self) -> np.ndarray:
        """u that holds the arm at rest in :attr:`start_state`: the joints' holding torques, and the prescribed
        joints' start angles with zero rate and acceleration (the FMU's input start values)."""
        q, tau = self._holding
        drives = self.drives
        u = np.zeros(len(self.input_table))
        u[list(drives.torques)] = tau[list(drives.torque_joints)]
        u[list(drives.angles)] = q[list(drives.prescribed)]
        return u

    def coordinates_of(self, kind: str) -> list[int]:
        """Indices into q of the coordinates of ``kind`` (joint, rotor, modal, elastic)."""
        return [k for k, c in enumerate(self.layout) if c.kind == kind]

    @cached_property
    def drives(self) -> Drives:
        """Where the state and prescribed coordinates sit in q and each kind of input in u."""
        return Drives.of(self.layout, self.input_table)

    @property
    def state_layout(self) -> tuple[Coordinate, ...]:
        """The coordinates that are states (all but the angles of prescribed joints), in q order."""
        return tuple(c for c in self.layout if not c.prescribed)

    @property
    def states(self) -> list[str]:
        """Names of the state coordinates; x = [q; qd] over these."""
        return [c.name for c in self.state_layout]

    def inputs_of(self, group: str) -> list[str]:
        """Names of the inputs in ``group`` (``torque`` or one of flexfmu.dynamics.metadata.PRESCRIBED)."""
        return [s.name for s in self.input_table if s.group == group]

    @property
    def output_table(self) -> list[Signal]:
        """The outputs y, in order, with units and groups: the kinematic outputs, then the torques of
        prescribed joints."""
        return self._output_graph[0] + list(self._graph.joint_torques)

    @property
    def output_names(self) -> list[str]:
        return [s.name for s in self.output_table]

    @property
    def output_units(self) -> list[str]:
        return [s.unit for s in self.output_table]

    def outputs_of(self, group: str) -> list[str]:
        """Names of the outputs in ``group`` (see flexfmu.dynamics.metadata), in link order."""
        return [s.name for s in self.output_table if s.group == group]

    # ------------------------------------------------------ functions on demand

    @cached_property
    def energy(self) -> ca.Function:
        """(q, qd, p) -> [kinetic; potential] (gravity, bending, joint springs)."""
        g = self._graph
        T, V = g.energies()
        return ca.Function("energy", [g.q, g.qd, g.p], [ca.vertcat(T, V)], ["q", "qd", "p"], ["E"])

    @cached_property
    def _output_graph(self) -> tuple[list[Signal], ca.Function]:
        g = self._graph
        qdd = ca.SX.sym("qdd", len(self.layout))
        signals, y = g.outputs(qdd)
        function = ca.Function("kinematic_outputs", [g.q, g.qd, qdd, g.p], [y], ["q", "qd", "qdd", "p"], ["y"])
        return signals, function

    @property
    def kinematic_outputs(self) -> ca.Function:
        """(q, qd, qdd, p) -> y over every coordinate: the outputs given the accelerations, all but the
        torques of prescribed joints (the last outputs, which need the dynamics)."""
        return self._output_graph[1]

    @cached_property
    def outputs(self) -> ca.Function:
        """(q, qd, u, p) -> y, q and qd of the state coordinates; accelerations (and prescribed joints'
        torques) come from the forward dynamics."""
        n, nu, npar = len(self.state_layout), len(self.input_table), len(self.parameter_table)
        q, qd, u, p = ca.MX.sym("q", n), ca.MX.sym("qd", n), ca.MX.sym("u", nu), ca.MX.sym("p", npar)
        if self.drives.prescribed:
            q_all, qd_all, qdd, torques = self.motion(q, qd, u, p)
            y = ca.vertcat(self.kinematic_outputs(q_all, qd_all, qdd, p), torques)
        else:
            y = self.kinematic_outputs(q, qd, self.forward_dynamics(q, qd, u, p), p)
        return ca.Function("outputs", [q, qd, u, p], [y], ["q", "qd", "u", "p"], ["y"])

    @cached_property
    def structure_matrices(self) -> ca.Function:
        """p -> (K, D): structural stiffness (bending, joint springs) and
        damping (modal, spring, viscous friction), constant in q. These are
        the terms that make arms stiff; implicit integrators use them."""
        K, D = self._graph.structure()
        return ca.Function("structure_matrices", [self._graph.p], [K, D], ["p"], ["K", "D"])

    @cached_property
    def stiffness_at(self) -> ca.Function:
        """(q, p) -> (K, D): the stiff part of the dynamics' Jacobian at q that the stiff integrators' iteration
        matrices hold (flexfmu.integrate): the structure matrices of a serial chain (constant in q), the pose's
        elastic stiffness and damping of a Delta robot (its graph's ``pose_structure``)."""
        g = self._graph
        pose = getattr(g, "pose_structure", None)
        K, D = pose() if pose else g.structure()
        return ca.Function("stiffness_at", [g.q, g.p], [K, D], ["q", "p"], ["K", "D"])

    @cached_property
    def coriolis(self) -> ca.Function:
        """C(q, qd, p) from the Christoffel symbols of M (paper 002 Theorem 1):
        C = 1/2 (dM/dt + J - J'), J = d(M qd)/dq, so dM/dt - 2C = J' - J."""
        q, qd, p = self._graph.q, self._graph.qd, self._graph.p
        M = self.mass_matrix(q, p)
        J = ca.jacobian(ca.mtimes(M, qd), q)
        C = 0.5 * (ca.jtimes(M, q, qd) + J - J.T)
        return ca.Function("coriolis", [q, qd, p], [C], ["q", "qd", "p"], ["C"])

    @cached_property
    def compiled(self):
        """The Functions of the C contract (:class:`CompiledDynamics`):
        O(N) articulated-body passes with parameter-only constants hoisted."""
        return self._graph.compiled(self)
