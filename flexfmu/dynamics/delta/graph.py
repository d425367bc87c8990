"""The Delta robot as a Model's building blocks (the ModelGraph of kind ``delta``).

Coordinates q = [theta; d]: the three motor angles ``theta[i]`` (kind
``joint``, the paper's phi_1i: rad from the base plane, positive lifting the
upper link towards the base) and the elastic global variables d
(:mod:`flexfmu.dynamics.delta.assembly`, kind ``elastic``). Inputs: the motor
torques ``tau[i]`` on the joint side of the gears, acting on theta[i].

Coupling: one Lagrangian for the whole robot. The elastic displacements are
superimposed on the rigid motion the motor angles define (the paper's
kineto-elasto-dynamics) but, unlike the paper's one-way form, the elastic
motion acts back on the motors: M(q) is the symmetric Hessian of the kinetic
energy in qd, h follows by automatic differentiation (Lagrange's equations),
so energy is conserved without damping and M is positive definite. Frozen
at theta, the elastic equations are the paper's M d'' + C d' + K d = F (eq. 43-44):
the same element matrices, the Coriolis and centrifugal terms of the rotating
frames, the inertial and gravity loads; see docs/delta.md.

Dissipation: viscous friction on the motors and Rayleigh damping
alpha M_xi + beta K_xi on each link's deformation rates (the total rates of
its coordinates in its own frame, M_xi and K_xi its elastic mass and strain
stiffness), plus alpha times the platform's mass and inertia on its elastic
rates. Damping on the rates of the elastic coordinates alone would depend on
which coordinates describe the links: with the motors turning, a deformed
upper link's tip turns in the lower link's frame, a strain rate that full
nodal values and a Craig-Bampton basis share out differently between the
motor angles and the elastic coordinates.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from flexfmu.dynamics import metadata as md
from flexfmu.dynamics.delta.body_energies import BodyEnergies, chain_layout
from flexfmu.dynamics.delta.kinematics import DeltaKinematics, Dimensions, forward_kinematics
from flexfmu.dynamics.delta.reduction import link_bases, reduction_of
from flexfmu.dynamics.metadata import Coordinate, Parameter, Signal
from flexfmu.dynamics.parameters import ParameterSymbols
from flexfmu.modes.elements import check_approximation
from flexfmu.spec.ranges import DELTA_RANGES, RANGES


def _link_rows(link: str, spec) -> list[Parameter]:
    what = "upper link (motor A to knee B)" if link == "upper" else "lower link (knee B to platform joint D)"
    return [
        Parameter(f"{link}.length", spec.length, "m", f"length of the {what}", tunable=False,
                  range=DELTA_RANGES["length"]),
        Parameter(f"{link}.mass_per_length", spec.density * spec.area, "kg/m", f"mass per length rho A of the {what}",
                  range=RANGES["mass_per_length"]),
        Parameter(f"{link}.torsion_inertia", spec.density * spec.Ip, "kg.m",
                  f"rotary inertia of torsion per length rho Ip of the {what}", range=RANGES["polar_inertia_per_length"]),
        Parameter(f"{link}.EA", spec.E * spec.area, "N", f"axial stiffness E A of the {what}", range=RANGES["EA"]),
        Parameter(f"{link}.EIy", spec.E * spec.Iy, "N.m2", f"bending stiffness E Iy (bending along z) of the {what}",
                  range=RANGES["EI"]),
        Parameter(f"{link}.EIz", spec.E * spec.Iz, "N.m2", f"bending stiffness E Iz (bending along y) of the {what}",
                  range=RANGES["EI"]),
        Parameter(f"{link}.GJ", spec.G * spec.J, "N.m2", f"torsional stiffness G J of the {what}", range=RANGES["GJ"]),
    ]


def delta_parameters(arm) -> list[Parameter]:
    """The ordered parameter table of the Delta robot ``arm`` (a :class:`flexfmu.spec.delta.DeltaArm`)."""
    ranges = DELTA_RANGES
    rows = [Parameter(f"gravity.{axis}", value, "m/s2", f"gravity along the base {axis} axis (Z points down)",
                      range=ranges["gravity"]) for axis, value in zip("xyz", arm.gravity)]
    rows += [
        Parameter("base.radius", arm.base_radius, "m", "radius rA of the motor circle", tunable=False,
                  range=ranges["radius"]),
        Parameter("platform.radius", arm.platform_radius, "m", "radius rB of the platform joints' circle",
                  tunable=False, range=ranges["radius"]),
    ]
    rows += _link_rows("upper", arm.upper) + _link_rows("lower", arm.lower)
    rows += [Parameter("platform.mass", arm.platform.mass, "kg", "mass of the platform (end effector)",
                       range=ranges["mass"])]
    rows += [Parameter(f"platform.inertia.{axis}", value, "kg.m2", f"platform inertia about its centre, {axis} axis",
                       range=ranges["inertia"]) for axis, value in zip("xyz", arm.platform.inertia)]
    rows += [
        Parameter("motor.rotor_inertia", arm.motor.rotor_inertia, "kg.m2", "rotor inertia of each motor (motor side)",
                  range=ranges["rotor_inertia"]),
        Parameter("motor.gear_ratio", arm.motor.gear_ratio, "1",
                  "gear ratio of each motor (motor turns per link turn)", range=ranges["gear_ratio"]),
        Parameter("motor.viscous_friction", arm.motor.viscous_friction, "N.m.s/rad",
                  "viscous friction of each motor (joint side)", range=ranges["viscous_friction"]),
        Parameter("damping.alpha", arm.elements.rayleigh[0], "1/s", "Rayleigh damping alpha M of the elastic rates",
                  range=ranges["alpha"]),
        Parameter("damping.beta", arm.elements.rayleigh[1], "s", "Rayleigh damping beta K of the elastic rates",
                  range=ranges["beta"]),
    ]
    return rows


class DeltaGraph:
    """Symbolic building blocks of a Delta robot (see the module docstring).

    Parameters
    ----------
    arm : DeltaArm
    """

    METHODS = ("energy",)

    def __init__(self, arm):
        check_approximation(arm.elements.approximation)
        self.arm = arm
        self.parameter_table = delta_parameters(arm)
        self.P = ParameterSymbols(self.parameter_table)
        settings = arm.elements
        self.bases = link_bases(settings, {row.name: row.value for row in self.parameter_table})
        self.elastic = chain_layout(self.bases, settings.approximation, settings.count)
        joints = tuple(Coordinate(f"theta[{i}]", "joint", i, "rad") for i in (1, 2, 3))
        self.layout = joints + self.elastic.records
        n = len(self.layout)
        self.q, self.qd, self.p = ca.SX.sym("q", n), ca.SX.sym("qd", n), self.P.vector
        self.theta, self.d = self.q[:3], self.q[3:]
        lengths = {link: getattr(arm, link).length for link in ("upper", "lower")}
        self.energy = BodyEnergies(self.elastic, self.bases, lengths, settings.approximation, settings.count, self.P,
                                   settings.axial_load)
        self.inputs = [Signal(f"tau[{i}]", "N.m", md.TORQUE, f"torque of motor {i} (joint side of the gear)", i)
                       for i in (1, 2, 3)]
        self.joint_torques: list[Signal] = []  # outputs of prescribed joints: the motors are torque-driven
        self._terms = None
        self._dynamics = None

    @property
    def dimensions(self) -> Dimensions:
        """The dimensions as symbols of p."""
        return self.energy.dims

    def _lagrangian_terms(self):
        """(T, V_gravity, V_strain, V_axial), built once."""
        if self._terms is None:
            q, qd = self.q, self.qd
            T = self.energy.kinetic(q[:3], q[3:], qd[:3], qd[3:], q, qd)
            self._terms = (T, *self.energy.potential(q[:3], q[3:]))
        return self._terms

    def dynamics(self, method: str) -> tuple[ca.SX, ca.SX, ca.SX]:
        """(M, h, B) with M qdd + h = B u by Lagrange's equations through automatic differentiation
        (``method`` must be ``energy``)."""
        if self._dynamics is not None:
            return self._dynamics
        q, qd = self.q, self.qd
        T, V_gravity, V_strain, V_axial = self._lagrangian_terms()
        M, momentum = ca.hessian(T, qd)
        h = ca.jtimes(momentum, q, qd) - ca.gradient(T, q) + ca.gradient(V_gravity + V_strain + V_axial, q)
        h += ca.gradient(self._dissipation(), qd)
        B = ca.vertcat(ca.SX.eye(3), ca.SX(self.d.numel(), 3))
        self._dynamics = (M, h, B)
        return self._dynamics

    def _dissipation(self) -> ca.SX:
        """Rayleigh's dissipation function R(q, qd), quadratic in qd: the motors' viscous friction and the
        links' and platform's Rayleigh damping
        (:meth:`~flexfmu.dynamics.delta.body_energies.BodyEnergies.dissipation`); dR/dqd is the damping
        force and its Hessian in qd the damping matrix."""
        q, qd, P = self.q, self.qd, self.P
        rayleigh = self.energy.dissipation(q[:3], q[3:], qd[:3], qd[3:], q, qd, P["damping.alpha"],
                                           P["damping.beta"])
        return 0.5 * P["motor.viscous_friction"] * ca.sumsqr(qd[:3]) + rayleigh

    def energies(self) -> tuple[ca.SX, ca.SX]:
        """Kinetic and potential (gravity, strain, axial-load) energy."""
        T, V_gravity, V_strain, V_axial = self._lagrangian_terms()
        return T, V_gravity + V_strain + V_axial

    @property
    def reduction(self) -> md.ReductionSummary:
        """How the links were reduced (:class:`flexfmu.dynamics.metadata.ReductionSummary`)."""
        reduction = reduction_of(self.arm.elements)
        bodies = tuple(md.ReducedBody(f"{link} link", len(basis.boundary),
                                      tuple((m.field, m.frequency, m.kept) for m in basis.modes))
                       for link, basis in self.bases.items())
        return md.ReductionSummary(reduction.method, reduction.describe(), bodies)

    def start_coordinates(self) -> np.ndarray:
        """q at the arm's home position with undeformed links: the FMU's start values."""
        dims = Dimensions(self.arm.base_radius, self.arm.platform_radius, self.arm.upper.length,
                          self.arm.lower.length)
        return np.concatenate([DeltaKinematics(dims).inverse(self.arm.home), np.zeros(self.d.numel())])

    def outputs(self, qdd: ca.SX) -> tuple[list[Signal], ca.SX]:
        """Motor encoders, the platform's position and orientation and its elastic deviation, in y order."""
        q, qd = self.q, self.qd
        rows = []

        def add(name, unit, group, description, expr, link=None):
            rows.append((Signal(name, unit, group, description, link), expr))

        for i in range(3):
            add(f"joint[{i + 1}].angle", "rad", md.JOINT_ANGLE, f"angle of motor {i + 1} (upper link from the base "
                "plane, positive towards the base)", q[i], i + 1)
            add(f"joint[{i + 1}].rate", "rad/s", md.JOINT_RATE, f"rate of motor {i + 1}", qd[i], i + 1)
        rigid = forward_kinematics(q[:3], self.dimensions)
        d = q[3:]
        for k, axis in enumerate("xyz"):
            add(f"platform.{axis}", "m", md.PLATFORM_POSITION, f"platform centre {axis} (base frame, Z down)",
                rigid[k] + d[k])
        for k, (axis, word) in enumerate(zip("xyz", ("roll", "pitch", "yaw"))):
            add(f"platform.{word}", "rad", md.PLATFORM_ORIENTATION,
                f"platform rotation about the base {axis} axis (small angle; the rigid platform does not turn)",
                d[3 + k])
        for k, axis in enumerate("xyz"):
            add(f"deviation.{axis}", "m", md.ELASTIC_DEVIATION,
                f"elastic deviation of the platform centre along {axis} from the rigid robot's", d[k])
        for k, (axis, word) in enumerate(zip("xyz", ("roll", "pitch", "yaw"))):
            add(f"deviation.{word}", "rad", md.ELASTIC_DEVIATION,
                f"elastic rotation of the platform about {axis}", d[3 + k])
        signals, exprs = zip(*rows)
        return list(signals), ca.vertcat(*exprs)

    def structure(self) -> tuple[ca.SX, ca.SX]:
        """Stiffness K and damping D of the elastic coordinates (and the motors' viscous friction) at the
        home pose: the Delta's are pose-dependent, the C contract uses them at the current pose."""
        K, D = self.pose_structure()
        start = ca.DM(self.start_coordinates())
        at_home = ca.Function("at_home", [self.q, self.p], [K, D])
        return at_home(start, self.p)

    def pose_structure(self) -> tuple[ca.SX, ca.SX]:
        """(K(q), D(q)), the stiff part of the dynamics' Jacobian at q that the stiff integrators hold: K the
        Gauss-Newton stiffness of the strain and axial-load energies over every coordinate
        (:meth:`~flexfmu.dynamics.delta.body_energies.BodyEnergies.chain_stiffness` of each chain: the links'
        stiffness, and how the strain of deformed links resists the motor angles); D the motors' friction and
        alpha M_dd + beta K_dd over the elastic coordinates (M_dd, K_dd the elastic blocks of M and K). With the
        motors at rest that is the Hessian of the dissipation function in the rates but for the axial load's
        share in K_dd; the motor rows of the links' damping, of the order of their deformation, are left out.
        The stiff integrators are W-methods: this matrix sets their stability, not their order, and the
        exact Hessian would triple the cost of the iteration matrix in the FMU's step."""
        q, P, energy = self.q, self.P, self.energy
        position, platform, chains = energy.posed_chains(q[:3], q[3:])
        tensions = energy.tensions(q[:3], position) if energy.axial_load else [0, 0, 0]
        K = sum(energy.chain_stiffness(frames, platform, local, tensions[i], q)
                for i, (frames, local) in enumerate(chains))
        M = self.dynamics("energy")[0]
        D = ca.diagcat(P["motor.viscous_friction"] * ca.SX.eye(3),
                       P["damping.alpha"] * M[3:, 3:] + P["damping.beta"] * K[3:, 3:])
        return K, D

    def compiled(self, model):
        """The Functions of the C contract for ``model`` (dense solves of the Delta's small systems)."""
        from flexfmu.dynamics.delta.compiled import delta_compiled

        return delta_compiled(self, model)
