"""The Delta robot's elastic coordinates and its energies (paper 003 sections 3-4).

Global elastic variables (the paper's delta, eq. 42): the platform's small
displacement and rotation (6, base frame), then per chain

* the upper link's nodal values, node 0 (at the motor A_i, clamped) without
  the values a clamp fixes (u, v, w, phi, v', w'; eq. 57), nodes 1..n whole;
* the two rotations of the Hooke joint at the knee B_i, about the motor axis
  t_i and about the lower link's z axis z_L;
* the lower link's nodal values except those the joints fix at its nodes 0 and n;
* the two rotations of the Hooke joint at D_i, about t_i and z_L.

Each link's nodal values are in its own frame (x along the link), so a
chain's lower link at the knee is given by the upper link's tip (its
displacement x and section rotation r = (phi, -w', v'), turned into the lower
link's frame) plus the joint rotations: x_L0 = R_L' R_U x_U, r_L0 = R_L' (R_U r_U
+ a_B t + b_B z_L); at D_i, x_Ln = R_L' (dP + rot x (D - P)), r_Ln = R_L' (rot +
a_D t + b_D z_L). This is the paper's transformation S_i (eq. 42, 57-60) for
two Hooke joints per chain, written as an explicit smooth map of the motor
angles: 12 n - 2 variables per chain with ``linear-cubic`` elements, 20 n + 6
with ``cubic-quintic`` (the paper's D carries no joint rotation: 12 n - 4 and
20 n + 4, see docs/delta.md).

Energies, with the elastic displacements superimposed on the rigid motion
(q = [theta; d]), evaluated exactly (Gauss rules exact for the polynomials):

* kinetic: 1/2 int rho A |dp/dt|^2 + 1/2 int rho Ip (omega_x + dphi/dt)^2 over every link
  (p = o + R (s e_x + N delta), eq. 18-19), the platform as a rigid body with
  its small rotation, and the motors' rotors;
* potential: gravity (eq. 30), strain (eq. 27) and, with ``axial_load``, the
  work of the links' axial forces on the bending slopes, 1/2 int P (v'^2 + w'^2)
  (eq. 34, section 3.4), with P(x) the static axial force of the rigid robot
  under gravity at the current pose (the load from the next body plus the
  link's own weight; the inertial part of eq. 35 is left out, see docs/delta.md).

The functions take the motor angles and elastic coordinates as CasADi
symbols (the Model) or the angles as numbers (frequency analysis at a pose).
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from flexfmu.dynamics.delta.geometry import chain_rotation
from flexfmu.dynamics.delta.kinematics import Dimensions, forward_kinematics, lower_frame, upper_rotation
from flexfmu.dynamics.metadata import Coordinate
from flexfmu.modes.elements import (
    JOINT_VALUES, NodeLayout, element_integrals, field_shapes, gauss_rule, points_for,
)

LINKS = ("upper", "lower")
PLATFORM_NAMES = ("dx", "dy", "dz", "rx", "ry", "rz")
VALUE_NAMES = {("u", 0): "u", ("u", 1): "du", ("phi", 0): "phi", ("phi", 1): "dphi", ("v", 0): "v",
               ("v", 1): "dv", ("v", 2): "ddv", ("w", 0): "w", ("w", 1): "dw", ("w", 2): "ddw"}
VALUE_UNITS = {("u", 0): "m", ("u", 1): "1", ("phi", 0): "rad", ("phi", 1): "rad/m", ("v", 0): "m",
               ("v", 1): "1", ("v", 2): "1/m", ("w", 0): "m", ("w", 1): "1", ("w", 2): "1/m"}
JOINT_POINTS = ("B", "D")


@dataclass(frozen=True)
class ElasticLayout:
    """Where each elastic variable sits in d (0-based positions).

    Attributes
    ----------
    approximation : str
    elements : int
        Elements per link.
    records : tuple of Coordinate
        The elastic coordinates in d order (kind ``elastic``; link 0 for the platform, else the chain).
    values : dict
        (chain, link, node, (field, derivative)) -> position of a free nodal value.
    joints : dict
        (chain, "B" or "D") -> positions of the joint's rotations about t and z_L.
    """

    approximation: str
    elements: int
    records: tuple[Coordinate, ...]
    values: dict
    joints: dict

    @property
    def size(self) -> int:
        return len(self.records)

    @property
    def node(self) -> NodeLayout:
        return NodeLayout(self.approximation)


def elastic_layout(approximation: str, elements: int) -> ElasticLayout:
    """The :class:`ElasticLayout` for ``elements`` elements of ``approximation`` per link."""
    node = NodeLayout(approximation)
    records = [Coordinate(f"platform.{name}", "elastic", 0, "m" if name[0] == "d" else "rad")
               for name in PLATFORM_NAMES]
    values, joints = {}, {}

    def add(name, unit, chain):
        records.append(Coordinate(name, "elastic", chain + 1, unit))
        return len(records) - 1

    for chain in range(3):
        for link, point in zip(LINKS, JOINT_POINTS):
            for k in range(elements + 1):
                for value in node.values:
                    fixed = value in JOINT_VALUES and (k == 0 or (link == "lower" and k == elements))
                    if not fixed:
                        values[chain, link, k, value] = add(f"{link}[{chain + 1}].{VALUE_NAMES[value]}[{k}]",
                                                            VALUE_UNITS[value], chain)
            joints[chain, point] = tuple(add(f"{point}[{chain + 1}].{axis}", "rad", chain) for axis in ("rt", "rz"))
    return ElasticLayout(approximation, elements, tuple(records), values, joints)


def paper_size(approximation: str, elements: int) -> int:
    """The paper's number of degrees of freedom: eq. (61), 6 + 3 (12 n - 4), and Table 3, 6 + 3 (20 n + 4)."""
    return 6 + 3 * (12 * elements - 4 if approximation == "linear-cubic" else 20 * elements + 4)


def _translation_rotation(node: NodeLayout, values):
    """(x, r) of a node's value vector: displacement (u, v, w) and section rotation (phi, -w', v')."""
    get = [values[node.index(f, m)] for f, m in JOINT_VALUES]
    return ca.vertcat(*get[:3]), ca.vertcat(get[3], -get[5], get[4])


def _joint_values(node: NodeLayout, x, r) -> dict:
    """The joint-fixed nodal values for a displacement ``x`` and section rotation ``r`` (link frame)."""
    return dict(zip(JOINT_VALUES, (x[0], x[1], x[2], r[0], r[2], -r[1])))


@dataclass(frozen=True)
class ChainFrames:
    """One chain's frames and points at a configuration (base frame): motor A, knee B, platform joint D,
    upper and lower link rotations R_U, R_L, the motor axis t and the lower link's z axis."""

    A: object
    B: object
    D: object
    R_U: object
    R_L: object
    t: object
    z_L: object


def chain_frames(theta, P, dims: Dimensions) -> list[ChainFrames]:
    """The three chains' frames for motor angles ``theta`` and the platform centre ``P``."""
    frames = []
    for i in range(3):
        R_L, B, D = lower_frame(i, theta[i], P, dims)
        A = ca.DM(chain_rotation(i)[:, 0]) * dims.base_radius
        frames.append(ChainFrames(A, B, D, upper_rotation(i, theta[i]), R_L, ca.DM(chain_rotation(i)[:, 1]),
                                  R_L[:, 2]))
    return frames


def link_nodes(layout: ElasticLayout, frames: list[ChainFrames], P, d) -> dict:
    """{(chain, link): [node value vectors]} in the link frames, as linear maps of the elastic coordinates
    ``d`` (the paper's S_i, eq. 42), for the chains' ``frames`` and the platform centre ``P``."""
    node, n = layout.node, layout.elements
    dP, rot = d[0:3], d[3:6]
    nodes = {}
    for chain, f in enumerate(frames):
        for link in LINKS:
            rows = []
            for k in range(n + 1):
                given = {}
                if link == "upper" and k == 0:
                    given = {value: 0 for value in JOINT_VALUES}
                elif link == "lower" and k == 0:
                    x_u, r_u = _translation_rotation(node, nodes[chain, "upper"][n])
                    a, b = (d[j] for j in layout.joints[chain, "B"])
                    turn = ca.mtimes(f.R_L.T, f.R_U)
                    given = _joint_values(node, ca.mtimes(turn, x_u),
                                          ca.mtimes(turn, r_u) + ca.mtimes(f.R_L.T, a * f.t + b * f.z_L))
                elif link == "lower" and k == n:
                    a, b = (d[j] for j in layout.joints[chain, "D"])
                    x = dP + ca.cross(rot, f.D - P)
                    given = _joint_values(node, ca.mtimes(f.R_L.T, x), ca.mtimes(f.R_L.T, rot + a * f.t + b * f.z_L))
                rows.append(ca.vertcat(*[given[value] if value in given else d[layout.values[chain, link, k, value]]
                                         for value in node.values]))
            nodes[chain, link] = rows
    return nodes


@dataclass(frozen=True)
class LinkProperties:
    """One link type's parameters (numbers or symbols): length, rho A, rho Ip, EA, E Iy, E Iz, G J."""

    length: object
    mass_per_length: object
    torsion_inertia: object
    EA: object
    EIy: object
    EIz: object
    GJ: object


def link_properties(P, link: str) -> LinkProperties:
    """The parameters of ``link`` (``upper`` or ``lower``) from the parameter lookup ``P`` (name -> value)."""
    return LinkProperties(*(P[f"{link}.{key}"] for key in ("length", "mass_per_length", "torsion_inertia",
                                                           "EA", "EIy", "EIz", "GJ")))


class DeltaEnergies:
    """Kinetic and potential energy of the flexible Delta robot (see the module docstring).

    Parameters
    ----------
    layout : ElasticLayout
    P : mapping
        Parameter name -> value or symbol (the table of :func:`flexfmu.dynamics.delta.graph.delta_parameters`).
    axial_load : bool
        Whether the axial forces' geometric stiffness enters (section 3.4).

    The element integrals are numbers on the unit element; nodal derivatives are scaled by the
    (symbolic) element length, so the link lengths stay parameters.
    """

    def __init__(self, layout: ElasticLayout, P, axial_load: bool):
        self.layout, self.P, self.axial_load = layout, P, axial_load
        self.dims = Dimensions(P["base.radius"], P["platform.radius"], P["upper.length"], P["lower.length"])
        self.links = {link: link_properties(P, link) for link in LINKS}
        n, approx = layout.elements, layout.approximation
        self.rules = {}
        for link in LINKS:
            # shapes on the unit element scaled by the symbolic length: x = l xi, d/dx = (1/l) d/dxi
            xi, w = gauss_rule(points_for(approx, 2), 1.0)
            self.rules[link] = {
                "kinetic": (xi, w, field_shapes(approx, 1.0, xi, 0)),
                "geometric": (xi, w, field_shapes(approx, 1.0, xi, 1)),
            }
        self.unit = element_integrals(approx, 1.0)
        self.elements = n

    # ------------------------------------------------------------------ configuration

    def configuration(self, theta, d):
        """(P, frames, nodes): platform centre, chain frames and link node values at (``theta``, ``d``)."""
        P = forward_kinematics(theta, self.dims)
        frames = chain_frames(theta, P, self.dims)
        return P, frames, link_nodes(self.layout, frames, P, d)

    def _scaled(self, values, length):
        """Node values of the unit element for an element of ``length``: derivative m scales by length^m."""
        node = self.layout.node
        scale = [length ** m for _, m in node.values] * 2
        return ca.vertcat(*[values[k] * scale[k] for k in range(values.shape[0])])

    def _elements(self, nodes):
        """Each element's value vector (first node, then second node)."""
        return [ca.vertcat(nodes[e], nodes[e + 1]) for e in range(self.elements)]

    # ------------------------------------------------------------------ energies

    def kinetic(self, theta, d, theta_dot, d_dot, q, q_dot):
        """Kinetic energy at (``theta``, ``d``) with rates (``theta_dot``, ``d_dot``); ``q`` and ``q_dot`` are the
        symbols the configuration depends on (for the time derivatives of frames and nodal values)."""
        P, frames, nodes = self.configuration(theta, d)
        total = 0
        for chain, f in enumerate(frames):
            for link in LINKS:
                props = self.links[link]
                R = f.R_U if link == "upper" else f.R_L
                o = f.A if link == "upper" else f.B
                o_dot, R_dot = ca.jtimes(o, q, q_dot), ca.jtimes(R, q, q_dot)
                spin = ca.mtimes(R.T, R_dot)[2, 1]  # omega_x, the link's rotation rate about its axis
                l = props.length / self.elements
                xi, w, N = self.rules[link]["kinetic"]
                for e, values in enumerate(self._elements(nodes[chain, link])):
                    scaled = self._scaled(values, l)
                    rates = ca.jtimes(scaled, q, q_dot)
                    for g in range(len(xi)):
                        s = (e + xi[g]) * l
                        local = ca.vertcat(*[ca.dot(ca.DM(N[field][:, g]), scaled) for field in ("u", "v", "w")])
                        local_rate = ca.vertcat(*[ca.dot(ca.DM(N[field][:, g]), rates) for field in ("u", "v", "w")])
                        twist = ca.dot(ca.DM(N["phi"][:, g]), rates)
                        r = local + ca.vertcat(s, 0, 0)
                        velocity = o_dot + ca.mtimes(R_dot, r) + ca.mtimes(R, local_rate)
                        total += 0.5 * w[g] * l * (props.mass_per_length * ca.sumsqr(velocity)
                                                   + props.torsion_inertia * (spin + twist) ** 2)
        v_P = ca.jtimes(P, q, q_dot) + d_dot[0:3]
        rot_rate = d_dot[3:6]
        inertia = ca.vertcat(*(self.P[f"platform.inertia.{axis}"] for axis in "xyz"))
        total += 0.5 * self.P["platform.mass"] * ca.sumsqr(v_P) + 0.5 * ca.dot(inertia, rot_rate**2)
        rotor = self.P["motor.gear_ratio"] ** 2 * self.P["motor.rotor_inertia"]
        return total + 0.5 * rotor * ca.sumsqr(theta_dot)

    def axial_forces(self, frames, g):
        """Static axial forces (N, tension positive) of the rigid robot under gravity ``g``, as functions of the
        position s along each link: {(chain, link): (force at s = 0, change per metre)}.

        The lower link i carries f_i along x_L plus half its weight at each end (its Hooke joints pass no
        bending moment), so the platform's balance sum_i f_i x_L,i = (m_P + 3 m_2 / 2) g gives the f_i;
        the upper link carries the lower link's end force and its own weight. This is paper 003's P(x)
        (eq. 35) of the robot at rest: the load P_r from the next body plus the link's own weight.
        """
        lower, upper = self.links["lower"], self.links["upper"]
        m2 = lower.mass_per_length * lower.length
        directions = ca.horzcat(*(f.R_L[:, 0] for f in frames))
        tension = ca.solve(directions, (self.P["platform.mass"] + 1.5 * m2) * g)
        forces = {}
        for chain, f in enumerate(frames):
            x_L, x_U = f.R_L[:, 0], f.R_U[:, 0]
            along_lower = ca.dot(g, x_L) * lower.mass_per_length
            forces[chain, "lower"] = (tension[chain] + along_lower * lower.length / 2, -along_lower)
            at_knee = tension[chain] * x_L + 0.5 * m2 * g
            along_upper = ca.dot(g, x_U) * upper.mass_per_length
            forces[chain, "upper"] = (ca.dot(at_knee, x_U) + along_upper * upper.length, -along_upper)
        return forces

    def potential(self, theta, d):
        """(gravity, strain, axial) potential energies at (``theta``, ``d``).

        ``axial`` (0 without ``axial_load``) is 1/2 int N(s) (v'^2 + w'^2) ds (eq. 34) with N the static axial
        force of :meth:`axial_forces` at the pose ``theta``: the geometric stiffness of the weights' prestress.
        """
        P, frames, nodes = self.configuration(theta, d)
        g = ca.vertcat(*(self.P[f"gravity.{axis}"] for axis in "xyz"))
        gravity = -self.P["platform.mass"] * ca.dot(g, P + d[0:3])
        strain, axial = 0, 0
        unit = self.unit
        forces = self.axial_forces(frames, g) if self.axial_load else None
        for chain, f in enumerate(frames):
            for link in LINKS:
                props = self.links[link]
                R = f.R_U if link == "upper" else f.R_L
                o = f.A if link == "upper" else f.B
                l = props.length / self.elements
                g_local = ca.mtimes(R.T, g)
                for e, values in enumerate(self._elements(nodes[chain, link])):
                    scaled = self._scaled(values, l)
                    # int over the element of p(s) = o + R ((s0 + x) e_x + N delta)
                    centre = o * l + ca.mtimes(R, ca.vertcat((e + 0.5) * l * l, 0, 0))
                    gravity -= props.mass_per_length * (ca.dot(g, centre)
                                                        + l * ca.dot(g_local, ca.mtimes(ca.DM(unit.first_moment), scaled)))
                    strain += 0.5 * (props.EA / l * ca.bilin(ca.DM(unit.axial), scaled, scaled)
                                     + props.EIz / l**3 * ca.bilin(ca.DM(unit.bending_v), scaled, scaled)
                                     + props.EIy / l**3 * ca.bilin(ca.DM(unit.bending_w), scaled, scaled)
                                     + props.GJ / l * ca.bilin(ca.DM(unit.torsion), scaled, scaled))
                    if forces is not None:
                        root, slope = forces[chain, link]
                        xi, w, N1 = self.rules[link]["geometric"]
                        for k in range(len(xi)):
                            dv, dw = (ca.dot(ca.DM(N1[field][:, k]), scaled) / l for field in ("v", "w"))
                            axial += 0.5 * w[k] * l * (root + slope * (e + xi[k]) * l) * (dv**2 + dw**2)
        return gravity, strain, axial
