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
from flexfmu.dynamics.delta.bodies import LinkProperties
from flexfmu.dynamics.delta.geometry import rot_y, rot_z
from flexfmu.dynamics.delta.kinematics import (
    Dimensions, chain_frame, forward_kinematics, lower_frame, motor_point, upper_rotation,
)
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


class PlatformThenChains:
    """Indexing of d = [platform (6); chain 1 (m); chain 2 (m); chain 3 (m)] over the layout's ``records``."""

    records: tuple

    @property
    def size(self) -> int:
        return len(self.records)

    @property
    def chain_size(self) -> int:
        """m, the elastic coordinates of one chain."""
        return (self.size - 6) // 3

    def chain_offset(self, chain: int) -> int:
        """Position in d of the first coordinate of ``chain`` (0-based)."""
        return 6 + chain * self.chain_size


@dataclass(frozen=True)
class ElasticLayout(PlatformThenChains):
    """Where each elastic variable sits in d (0-based).

    d = [platform (6); chain 1 (m); chain 2 (m); chain 3 (m)], every chain's block in the same order, so
    ``values`` and ``joints`` give positions within a chain's block (add :meth:`chain_offset`).

    Attributes
    ----------
    approximation : str
    elements : int
        Elements per link.
    records : tuple of Coordinate
        The elastic coordinates in d order (kind ``elastic``; link 0 for the platform, else the chain).
    values : dict
        (link, node, (field, derivative)) -> position of a free nodal value in a chain's block.
    joints : dict
        "B" or "D" -> positions of the joint's rotations about t and z_L in a chain's block.
    """

    approximation: str
    elements: int
    records: tuple[Coordinate, ...]
    values: dict
    joints: dict


    @property
    def node(self) -> NodeLayout:
        return NodeLayout(self.approximation)


def elastic_layout(approximation: str, elements: int) -> ElasticLayout:
    """The :class:`ElasticLayout` for ``elements`` elements of ``approximation`` per link."""
    node = NodeLayout(approximation)
    values, joints, local = {}, {}, []  # local: (name, unit) of one chain's block, with {i} for the chain
    for link, point in zip(LINKS, JOINT_POINTS):
        for k in range(elements + 1):
            for value in node.values:
                fixed = value in JOINT_VALUES and (k == 0 or (link == "lower" and k == elements))
                if not fixed:
                    values[link, k, value] = len(local)
                    local.append((f"{link}[{{i}}].{VALUE_NAMES[value]}[{k}]", VALUE_UNITS[value]))
        joints[point] = (len(local), len(local) + 1)
        local += [(f"{point}[{{i}}].{axis}", "rad") for axis in ("rt", "rz")]
    records = [Coordinate(f"platform.{name}", "elastic", 0, "m" if name[0] == "d" else "rad")
               for name in PLATFORM_NAMES]
    records += [Coordinate(name.format(i=chain), "elastic", chain, unit)
                for chain in (1, 2, 3) for name, unit in local]
    return ElasticLayout(approximation, elements, tuple(records), values, joints)


def paper_size(approximation: str, elements: int) -> int:
    """The paper's number of degrees of freedom: eq. (61), 6 + 3 (12 n - 4), and Table 3, 6 + 3 (20 n + 4)."""
    return 6 + 3 * (12 * elements - 4 if approximation == "linear-cubic" else 20 * elements + 4)


def _translation_rotation(node: NodeLayout, values):
    """(x, r) of a node's value vector: displacement (u, v, w) and section rotation (phi, -w', v')."""
    get = [values[node.index(f, m)] for f, m in JOINT_VALUES]
    return ca.vertcat(*get[:3]), ca.vertcat(get[3], -get[5], get[4])


def _joint_values(x, r) -> dict:
    """The joint-fixed nodal values for a displacement ``x`` and section rotation ``r`` (link frame)."""
    return dict(zip(JOINT_VALUES, (x[0], x[1], x[2], r[0], r[2], -r[1])))


@dataclass(frozen=True)
class ChainFrames:
    """One chain's frames and points at a configuration (base frame): motor A, knee B, platform joint D,
    upper and lower link rotations R_U, R_L, the motor axis t, the lower link's z axis and D - P, the
    platform joint relative to the platform's centre."""

    A: object
    B: object
    D: object
    R_U: object
    R_L: object
    t: object
    z_L: object
    D_offset: object


def chain_frames(C, angle, P, dims: Dimensions) -> ChainFrames:
    """The frames of the chain with frame ``C`` (:func:`~flexfmu.dynamics.delta.kinematics.chain_frame`) for its
    motor angle ``angle`` and the platform centre ``P``."""
    R_L, B, D = lower_frame(C, angle, P, dims)
    return ChainFrames(motor_point(C, dims), B, D, upper_rotation(C, angle), R_L, C[:, 1], R_L[:, 2],
                       C[:, 0] * dims.platform_radius)


def chain_frames_from_angles(C, angle, phi2, phi3, dims: Dimensions) -> ChainFrames:
    """The same frames from the chain's D-H angles (paper 003 eq. 3): motor angle ``angle``, passive angles
    ``phi2`` (about t, at the knee) and ``phi3`` (about z_L); R_L = C Ry(phi1 + phi2) Rz(phi3)."""
    R_U = upper_rotation(C, angle)
    R_L = ca.mtimes([C, rot_y(angle + phi2), rot_z(phi3)])
    A = motor_point(C, dims)
    B = A + dims.upper_length * R_U[:, 0]
    return ChainFrames(A, B, B + dims.lower_length * R_L[:, 0], R_U, R_L, C[:, 1], R_L[:, 2],
                       C[:, 0] * dims.platform_radius)


def chain_nodes(layout: ElasticLayout, f: ChainFrames, platform, local) -> dict:
    """{link: [node value vectors]} of one chain in its link frames, as linear maps of the platform's six
    elastic coordinates ``platform`` and the chain's own ``local`` ones (the paper's S_i, eq. 42), for the
    chain's frames ``f``."""
    node, n = layout.node, layout.elements
    dP, rot = platform[0:3], platform[3:6]
    nodes = {}
    for link in LINKS:
        rows = []
        for k in range(n + 1):
            given = {}
            if link == "upper" and k == 0:
                given = {value: 0 for value in JOINT_VALUES}
            elif link == "lower" and k == 0:
                x_u, r_u = _translation_rotation(node, nodes["upper"][n])
                a, b = (local[j] for j in layout.joints["B"])
                turn = ca.mtimes(f.R_L.T, f.R_U)
                given = _joint_values(ca.mtimes(turn, x_u),
                                      ca.mtimes(turn, r_u) + ca.mtimes(f.R_L.T, a * f.t + b * f.z_L))
            elif link == "lower" and k == n:
                a, b = (local[j] for j in layout.joints["D"])
                x = dP + ca.cross(rot, f.D_offset)
                given = _joint_values(ca.mtimes(f.R_L.T, x), ca.mtimes(f.R_L.T, rot + a * f.t + b * f.z_L))
            rows.append(ca.vertcat(*[given[value] if value in given else local[layout.values[link, k, value]]
                                     for value in node.values]))
        nodes[link] = rows
    return nodes


def link_properties(P, link: str) -> LinkProperties:
    """The parameters of ``link`` (``upper`` or ``lower``) from the parameter lookup ``P`` (name -> value)."""
    return LinkProperties(*(P[f"{link}.{key}"] for key in ("length", "mass_per_length", "torsion_inertia",
                                                           "EA", "EIy", "EIz", "GJ")))


class RobotEnergies:
    """Kinetic and potential energy of the flexible Delta robot, chain by chain: what every description of
    the links shares (the platform, the motors' rotors, the static axial forces, the sum over the chains).

    A chain's energies depend on its motor angle, the platform centre P, the platform's six elastic
    coordinates and the chain's own: the same function serves the three chains (given their frame C), the
    Model (P = P(theta), all symbolic) and the frequency analysis (angles as numbers). Subclasses give one
    chain's energies, :meth:`chain_kinetic` and :meth:`chain_potential`, from their description of the links:
    :class:`ElementEnergies` from the finite elements' Gauss points,
    :class:`flexfmu.dynamics.delta.body_energies.BodyEnergies` from the links' flexible-body invariants.

    Parameters
    ----------
    layout
        Where the elastic coordinates sit in d (``size``, ``chain_size``).
    P : mapping
        Parameter name -> value or symbol (the table of :func:`flexfmu.dynamics.delta.graph.delta_parameters`).
    axial_load : bool
        Whether the axial forces' geometric stiffness enters (section 3.4).
    """

    def __init__(self, layout, P, axial_load: bool):
        self.layout, self.P, self.axial_load = layout, P, axial_load
        self.dims = Dimensions(P["base.radius"], P["platform.radius"], P["upper.length"], P["lower.length"])
        self.links = {link: link_properties(P, link) for link in LINKS}
        self.gravity = ca.vertcat(*(P[f"gravity.{axis}"] for axis in "xyz"))

    def chain_kinetic(self, f: ChainFrames, platform, local, z, z_dot):
        """Kinetic energy of one chain's two links (its frames ``f``, the platform's and the chain's elastic
        coordinates ``platform`` and ``local``); ``z`` and ``z_dot`` are the symbols these depend on and
        their rates (for the time derivatives)."""
        raise NotImplementedError

    def chain_potential(self, f: ChainFrames, platform, local, tension):
        """(gravity, strain, axial) potential energies of one chain's links (arguments as for
        :meth:`chain_kinetic`); ``tension`` is the lower link's static axial force f of :meth:`tensions`
        (unused without ``axial_load``), and ``axial`` is then 1/2 int N(s) (v'^2 + w'^2) ds (eq. 34) with
        the links' static axial forces N (:meth:`axial_forces`)."""
        raise NotImplementedError

    def axial_forces(self, f: ChainFrames, tension) -> dict:
        """{link: (axial force at s = 0, its change per metre)} of one chain under gravity, the lower link
        carrying ``tension`` along x_L plus half its weight at each end, the upper link that load at its tip
        plus its own weight."""
        lower, upper, g = self.links["lower"], self.links["upper"], self.gravity
        x_L, x_U = f.R_L[:, 0], f.R_U[:, 0]
        along_lower = ca.dot(g, x_L) * lower.mass_per_length
        at_knee = tension * x_L + 0.5 * lower.mass_per_length * lower.length * g
        along_upper = ca.dot(g, x_U) * upper.mass_per_length
        return {"lower": (tension + along_lower * lower.length / 2, -along_lower),
                "upper": (ca.dot(at_knee, x_U) + along_upper * upper.length, -along_upper)}

    def tensions(self, theta, P):
        """Static axial forces f_i (N, tension positive) of the three lower links of the rigid robot under
        gravity with the platform at ``P``: the lower links pass no bending moment (Hooke joints), so they
        carry f_i along x_L,i plus half their weight at each end, and the platform's balance
        sum_i f_i x_L,i = (m_P + 3 m_2 / 2) g gives the f_i (paper 003's P_r at rest)."""
        lower = self.links["lower"]
        m2 = lower.mass_per_length * lower.length
        directions = ca.horzcat(*(lower_frame(chain_frame(i), theta[i], P, self.dims)[0][:, 0] for i in range(3)))
        return ca.solve(directions, (self.P["platform.mass"] + 1.5 * m2) * self.gravity)

    # ------------------------------------------------------------------ platform and motors

    def platform_kinetic(self, P_rate, platform_rate):
        """Kinetic energy of the platform: velocity ``P_rate`` of its rigid centre plus the elastic rates
        ``platform_rate`` (3 translations, 3 small rotations)."""
        inertia = ca.vertcat(*(self.P[f"platform.inertia.{axis}"] for axis in "xyz"))
        return (0.5 * self.P["platform.mass"] * ca.sumsqr(P_rate + platform_rate[0:3])
                + 0.5 * ca.dot(inertia, platform_rate[3:6] ** 2))

    def platform_gravity(self, P, platform):
        """Gravity potential of the platform at the rigid centre ``P`` displaced by ``platform``."""
        return -self.P["platform.mass"] * ca.dot(self.gravity, P + platform[0:3])

    def rotor_kinetic(self, theta_rate):
        """Kinetic energy of the three motors' rotors, gear ratio^2 rotor inertia each."""
        return 0.5 * self.P["motor.gear_ratio"] ** 2 * self.P["motor.rotor_inertia"] * ca.sumsqr(theta_rate)

    # ------------------------------------------------------------------ the whole robot

    def split(self, d):
        """(platform, [chain blocks]) of the elastic vector ``d``."""
        m = self.layout.chain_size
        return d[0:6], [d[6 + i * m:6 + (i + 1) * m] for i in range(3)]

    def posed_chains(self, theta, d):
        """(P, platform, [(frames, local)]) at (``theta``, ``d``): the rigid robot's platform centre, the
        platform's six elastic coordinates and, per chain, its :class:`ChainFrames` with its own elastic
        coordinates: what every whole-robot sum over the chains starts from."""
        P = forward_kinematics(theta, self.dims)
        platform, chains = self.split(d)
        return P, platform, [(chain_frames(chain_frame(i), theta[i], P, self.dims), local)
                             for i, local in enumerate(chains)]

    def kinetic(self, theta, d, theta_dot, d_dot, q, q_dot):
        """Kinetic energy of the robot at (``theta``, ``d``) with rates (``theta_dot``, ``d_dot``); ``q`` and
        ``q_dot`` are the symbols the configuration depends on and their rates."""
        P, platform, chains = self.posed_chains(theta, d)
        total = self.platform_kinetic(ca.jtimes(P, q, q_dot), d_dot[0:6]) + self.rotor_kinetic(theta_dot)
        for frames, local in chains:
            total += self.chain_kinetic(frames, platform, local, q, q_dot)
        return total

    def potential(self, theta, d, tensions=None):
        """(gravity, strain, axial) potential energies of the robot at (``theta``, ``d``), the axial load's
        with the lower links' static ``tensions`` (3, N; None: :meth:`tensions` at the pose)."""
        P, platform, chains = self.posed_chains(theta, d)
        if tensions is None:
            tensions = self.tensions(theta, P) if self.axial_load else [0, 0, 0]
        gravity, strain, axial = self.platform_gravity(P, platform), 0, 0
        for i, (frames, local) in enumerate(chains):
            parts = self.chain_potential(frames, platform, local, tensions[i])
            gravity, strain, axial = gravity + parts[0], strain + parts[1], axial + parts[2]
        return gravity, strain, axial


class ElementEnergies(RobotEnergies):
    """The Delta robot's energies with each chain's links evaluated element by element at Gauss points (the
    reference description: the frequency analysis of the full model, and the check of every other). The
    element integrals are numbers on the unit element; nodal derivatives are scaled by the (symbolic)
    element length, so the link lengths stay parameters.

    Parameters
    ----------
    layout : ElasticLayout
    P : mapping
        Parameter name -> value or symbol.
    axial_load : bool
        Whether the axial forces' geometric stiffness enters (section 3.4).
    """

    def __init__(self, layout: ElasticLayout, P, axial_load: bool):
        super().__init__(layout, P, axial_load)
        approx = layout.approximation
        xi, w = gauss_rule(points_for(approx, 2), 1.0)
        self.rule = (xi, w, field_shapes(approx, 1.0, xi, 0), field_shapes(approx, 1.0, xi, 1))
        self.unit = element_integrals(approx, 1.0)
        self.elements = layout.elements

    def _scaled(self, values, length):
        """Node values of the unit element for an element of ``length``: derivative m scales by length^m."""
        scale = [length ** m for _, m in self.layout.node.values] * 2
        return ca.vertcat(*[values[k] * scale[k] for k in range(values.shape[0])])

    def _elements(self, nodes):
        """Each element's value vector (first node, then second node)."""
        return [ca.vertcat(nodes[e], nodes[e + 1]) for e in range(self.elements)]

    def _links(self, f: ChainFrames, nodes):
        """(link, properties, origin, rotation, element length, element value vectors) of a chain's two links."""
        for link in LINKS:
            props = self.links[link]
            origin, rotation = (f.A, f.R_U) if link == "upper" else (f.B, f.R_L)
            yield link, props, origin, rotation, props.length / self.elements, self._elements(nodes[link])

    # ------------------------------------------------------------------ one chain

    def _kinetic_points(self, f: ChainFrames, platform, local, z, z_dot):
        """Yield ("point", mass weight, velocity) of every Gauss point of one chain's links and ("twist",
        rotary weight, section spin rate) for their torsion, as expressions in ``z`` and ``z_dot``."""
        nodes = chain_nodes(self.layout, f, platform, local)
        xi, w, N, _ = self.rule
        for _, props, o, R, l, elements in self._links(f, nodes):
            o_dot, R_dot = ca.jtimes(o, z, z_dot), ca.jtimes(R, z, z_dot)
            spin = ca.mtimes(R.T, R_dot)[2, 1]  # omega_x, the link's rotation rate about its axis
            for e, values in enumerate(elements):
                scaled = self._scaled(values, l)
                rates = ca.jtimes(scaled, z, z_dot)
                for g in range(len(xi)):
                    shape = [ca.DM(N[field][:, g]) for field in ("u", "v", "w", "phi")]
                    local_position = ca.vertcat(*[ca.dot(n, scaled) for n in shape[:3]])
                    local_rate = ca.vertcat(*[ca.dot(n, rates) for n in shape[:3]])
                    r = local_position + ca.vertcat((e + xi[g]) * l, 0, 0)
                    velocity = o_dot + ca.mtimes(R_dot, r) + ca.mtimes(R, local_rate)
                    yield ("point", w[g] * l * props.mass_per_length, velocity)
                    yield ("twist", w[g] * l * props.torsion_inertia, spin + ca.dot(shape[3], rates))

    def chain_kinetic(self, f: ChainFrames, platform, local, z, z_dot):
        """Kinetic energy of one chain's two links (its frames ``f``, the platform's and the chain's elastic
        coordinates ``platform`` and ``local``); ``z`` and ``z_dot`` are the symbols these depend on and
        their rates (for the time derivatives)."""
        total = 0
        for kind, weight, rate in self._kinetic_points(f, platform, local, z, z_dot):
            total += 0.5 * weight * (ca.sumsqr(rate) if kind == "point" else rate**2)
        return total

    def chain_potential(self, f: ChainFrames, platform, local, tension):
        """(gravity, strain, axial) potential energies of one chain's links (arguments as for
        :meth:`chain_kinetic`); ``tension`` is the lower link's static axial force f of :meth:`tensions`
        (unused without ``axial_load``), and ``axial`` is then 1/2 int N(s) (v'^2 + w'^2) ds (eq. 34) with
        the links' static axial forces N."""
        nodes = chain_nodes(self.layout, f, platform, local)
        g, unit = self.gravity, self.unit
        xi, w, _, N1 = self.rule
        forces = self.axial_forces(f, tension)
        gravity, strain, axial = 0, 0, 0
        for link, props, o, R, l, elements in self._links(f, nodes):
            g_local = ca.mtimes(R.T, g)
            for e, values in enumerate(elements):
                scaled = self._scaled(values, l)
                # int over the element of p(s) = o + R ((s0 + x) e_x + N delta)
                centre = o * l + ca.mtimes(R, ca.vertcat((e + 0.5) * l * l, 0, 0))
                gravity -= props.mass_per_length * (ca.dot(g, centre)
                                                    + l * ca.dot(g_local, ca.mtimes(ca.DM(unit.first_moment), scaled)))
                strain += 0.5 * (props.EA / l * ca.bilin(ca.DM(unit.axial), scaled, scaled)
                                 + props.EIz / l**3 * ca.bilin(ca.DM(unit.bending_v), scaled, scaled)
                                 + props.EIy / l**3 * ca.bilin(ca.DM(unit.bending_w), scaled, scaled)
                                 + props.GJ / l * ca.bilin(ca.DM(unit.torsion), scaled, scaled))
                if self.axial_load:
                    root, slope = forces[link]
                    for k in range(len(xi)):
                        dv, dw = (ca.dot(ca.DM(N1[field][:, k]), scaled) / l for field in ("v", "w"))
                        axial += 0.5 * w[k] * l * (root + slope * (e + xi[k]) * l) * (dv**2 + dw**2)
        return gravity, strain, axial
