"""The Delta robot's energies from its links as flexible bodies (full or Craig-Bampton bases).

Each link is a :class:`flexfmu.dynamics.delta.bodies.FlexibleLink` over the
basis of :mod:`flexfmu.dynamics.delta.reduction`, its coordinates
xi = [boundary values; interior coordinates]. Per chain the elastic
coordinates are

* the upper link's boundary values at the knee B (its tip's joint values:
  u, v, w, phi, v', w' in the upper link's frame) and its interior
  coordinates;
* the two rotations of the Hooke joint at B (about t and z_L);
* the lower link's interior coordinates;
* the two rotations of the Hooke joint at D.

The lower link's boundary values follow from the joints, as the element
model's (:func:`flexfmu.dynamics.delta.assembly.chain_nodes`): at B the
upper link's tip turned into the lower link's frame plus the Hooke
rotations, at D the platform's displacement and rotation. Without
reduction the coordinates are the element model's, in its order, and the
energies equal :class:`~flexfmu.dynamics.delta.assembly.ElementEnergies`
to round-off; with it, every chain's inner nodal values are replaced by its
links' fixed-interface modes.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from flexfmu.dynamics.delta.assembly import LINKS, ChainFrames, PlatformThenChains, RobotEnergies
from flexfmu.dynamics.delta.bodies import FlexibleLink, link_invariants
from flexfmu.dynamics.delta.reduction import VALUE_NAMES, VALUE_UNITS, LinkBasis
from flexfmu.dynamics.metadata import Coordinate
from flexfmu.modes.elements import JOINT_VALUES, NodeLayout

PLATFORM_NAMES = ("dx", "dy", "dz", "rx", "ry", "rz")


@dataclass(frozen=True)
class ChainLayout(PlatformThenChains):
    """Where each elastic coordinate sits in d = [platform (6); chain 1 (m); chain 2 (m); chain 3 (m)].

    Attributes
    ----------
    records : tuple of Coordinate
        The elastic coordinates in d order (kind ``elastic``; link 0 for the platform, else the chain).
    upper_boundary : tuple of int
        Positions in a chain's block of the upper link's joint values at B, in
        :data:`~flexfmu.modes.elements.JOINT_VALUES` order.
    upper_interior, lower_interior : tuple of int
        Positions of the links' interior coordinates, in their bases' order.
    joints : dict
        "B" or "D" -> positions of the joint's rotations about t and z_L.
    """

    records: tuple[Coordinate, ...]
    upper_boundary: tuple[int, ...]
    upper_interior: tuple[int, ...]
    lower_interior: tuple[int, ...]
    joints: dict



def chain_layout(bases: dict[str, LinkBasis], approximation: str, elements: int) -> ChainLayout:
    """The :class:`ChainLayout` of the links' ``bases`` (``upper``, ``lower``). Without reduction the upper
    link's coordinates are its nodal values in node order (the element model's order); with it, its boundary
    values come first, then its modes."""
    node = NodeLayout(approximation)
    upper = bases["upper"]
    local, boundary = [], {}  # local: (name, unit) of one chain's block, with {i} for the chain
    tip = {value: f"upper[{{i}}].{VALUE_NAMES[value]}[{elements}]" for _, value in upper.boundary}
    interior = iter(upper.interior)
    upper_interior = []
    if upper.modes:  # reduced: boundary values, then the modes
        order = [("boundary", value) for value in node.values if value in tip]
        order += [("interior", None)] * len(upper.interior)
    else:  # the nodal values in node order (the clamp at A removed), the boundary ones where they fall
        order = [("boundary" if k == elements and value in tip else "interior", value)
                 for k in range(elements + 1) for value in node.values if not (k == 0 and value in JOINT_VALUES)]
    for what, value in order:
        if what == "boundary":
            boundary[value] = len(local)
            local.append((tip[value], VALUE_UNITS[value]))
        else:
            upper_interior.append(len(local))
            local.append(next(interior))
    joints = {"B": (len(local), len(local) + 1)}
    local += [(f"B[{{i}}].{axis}", "rad") for axis in ("rt", "rz")]
    lower_interior = tuple(range(len(local), len(local) + len(bases["lower"].interior)))
    local += list(bases["lower"].interior)
    joints["D"] = (len(local), len(local) + 1)
    local += [(f"D[{{i}}].{axis}", "rad") for axis in ("rt", "rz")]
    records = [Coordinate(f"platform.{name}", "elastic", 0, "m" if name[0] == "d" else "rad")
               for name in PLATFORM_NAMES]
    records += [Coordinate(name.format(i=chain), "elastic", chain, unit)
                for chain in (1, 2, 3) for name, unit in local]
    return ChainLayout(tuple(records), tuple(boundary[value] for value in JOINT_VALUES), tuple(upper_interior),
                       lower_interior, joints)


def _joint_vector(x, r):
    """The joint values (u, v, w, phi, v', w') of a displacement ``x`` and section rotation ``r`` (link
    frame)."""
    return ca.vertcat(x[0], x[1], x[2], r[0], r[2], -r[1])


class BodyEnergies(RobotEnergies):
    """The Delta robot's energies with every link a flexible body (see the module docstring).

    Parameters
    ----------
    layout : ChainLayout
    bases : dict
        ``upper`` and ``lower`` -> :class:`~flexfmu.dynamics.delta.reduction.LinkBasis`.
    lengths : dict
        ``upper`` and ``lower`` -> link length (m, a number: the invariants are numbers).
    approximation : str
    elements : int
    P : mapping
        Parameter name -> value or symbol.
    axial_load : bool
    """

    def __init__(self, layout: ChainLayout, bases: dict, lengths: dict, approximation: str, elements: int, P,
                 axial_load: bool):
        super().__init__(layout, P, axial_load)
        self.bodies = {}
        for link in LINKS:
            invariants = link_invariants(approximation, elements, lengths[link], bases[link].psi)
            self.bodies[link] = FlexibleLink(invariants, self.links[link])

    def link_coordinates(self, f: ChainFrames, platform, local) -> dict:
        """{link: xi} of one chain: the upper link's coordinates from ``local``, the lower link's boundary
        values from the joints (its frames ``f``, the platform's elastic coordinates ``platform``)."""
        lay = self.layout
        tip = [local[k] for k in lay.upper_boundary]
        x_u, r_u = ca.vertcat(*tip[0:3]), ca.vertcat(tip[3], -tip[5], tip[4])
        turn = ca.mtimes(f.R_L.T, f.R_U)
        a, b = (local[k] for k in lay.joints["B"])
        at_knee = _joint_vector(ca.mtimes(turn, x_u), ca.mtimes(turn, r_u) + ca.mtimes(f.R_L.T, a * f.t + b * f.z_L))
        dP, rot = platform[0:3], platform[3:6]
        a, b = (local[k] for k in lay.joints["D"])
        at_platform = _joint_vector(ca.mtimes(f.R_L.T, dP + ca.cross(rot, f.D_offset)),
                                    ca.mtimes(f.R_L.T, rot + a * f.t + b * f.z_L))
        return {"upper": ca.vertcat(*tip, *(local[k] for k in lay.upper_interior)),
                "lower": ca.vertcat(at_knee, at_platform, *(local[k] for k in lay.lower_interior))}

    @staticmethod
    def link_frame(f: ChainFrames, link: str):
        """(origin, rotation) of ``link`` in the chain's frames ``f`` (base frame): A and R_U, or B and R_L."""
        return (f.A, f.R_U) if link == "upper" else (f.B, f.R_L)

    def chain_kinetic(self, f: ChainFrames, platform, local, z, z_dot):
        """Kinetic energy of one chain's two links (see :meth:`RobotEnergies.chain_kinetic`)."""
        coordinates = self.link_coordinates(f, platform, local)
        total = 0
        for link in LINKS:
            origin, R = self.link_frame(f, link)
            xi = coordinates[link]
            a = ca.mtimes(R.T, ca.jtimes(origin, z, z_dot))
            W = ca.mtimes(R.T, ca.jtimes(R, z, z_dot))
            omega = ca.vertcat(W[2, 1], W[0, 2], W[1, 0])
            total += self.bodies[link].kinetic(a, omega, xi, ca.jtimes(xi, z, z_dot))
        return total

    def chain_dissipation(self, f: ChainFrames, platform, local, z, z_dot, alpha, beta):
        """Rayleigh dissipation 1/2 sum xi_rate' (alpha M_xi + beta K_xi) xi_rate of one chain's links
        (arguments as for :meth:`chain_kinetic`), xi_rate the total rate of each link's coordinates along
        ``z_dot``: the rate of its deformation in its own frame, whatever moves it (its own coordinates, or
        the motors turning a deformed neighbour's tip into its frame). Taken over every coordinate, not only
        the elastic ones, it is the same whatever coordinates describe the links (full nodal values or a
        Craig-Bampton basis)."""
        coordinates = self.link_coordinates(f, platform, local)
        total = 0
        for link in LINKS:
            rate = ca.jtimes(coordinates[link], z, z_dot)
            total += 0.5 * ca.bilin(self.bodies[link].damping(alpha, beta), rate, rate)
        return total

    def dissipation(self, theta, d, theta_dot, d_dot, q, q_dot, alpha, beta):
        """Rayleigh dissipation of the robot at (``theta``, ``d``) with rates (``theta_dot``, ``d_dot``) (``q``,
        ``q_dot`` as for :meth:`kinetic`): every link's (:meth:`chain_dissipation`) and alpha times the
        kinetic energy of the platform's elastic motion."""
        _, platform, chains = self.posed_chains(theta, d)
        total = alpha * self.platform_kinetic(ca.DM.zeros(3), d_dot[0:6])
        for frames, local in chains:
            total += self.chain_dissipation(frames, platform, local, q, q_dot, alpha, beta)
        return total

    def chain_stiffness(self, f: ChainFrames, platform, local, tension, variables):
        """The Gauss-Newton stiffness of one chain's links in ``variables`` (the symbols its configuration
        depends on): sum over its links of L' (K_xi + N0 G0 + N1 G1) L with L = dxi/d``variables``, the strain
        and axial-load energies' Hessian without the terms of the second derivatives of xi (those carry the
        links' forces times the curvature of their frames, small beside the stiffness itself). What the stiff
        integrators hold: positive semidefinite, and the same whatever coordinates the chain is written in."""
        coordinates = self.link_coordinates(f, platform, local)
        forces = self.axial_forces(f, tension) if self.axial_load else {}
        total = 0
        for link in LINKS:
            body, L = self.bodies[link], ca.jacobian(coordinates[link], variables)
            stiffness = body.stiffness() + (body.geometric_stiffness(*forces[link]) if self.axial_load else 0)
            total += ca.mtimes([L.T, stiffness, L])
        return total

    def chain_potential(self, f: ChainFrames, platform, local, tension):
        """(gravity, strain, axial) potential energies of one chain's links (see
        :meth:`RobotEnergies.chain_potential`)."""
        coordinates = self.link_coordinates(f, platform, local)
        forces = self.axial_forces(f, tension) if self.axial_load else {}
        gravity, strain, axial = 0, 0, 0
        for link in LINKS:
            origin, R = self.link_frame(f, link)
            body, xi = self.bodies[link], coordinates[link]
            gravity += body.gravity(origin, R, self.gravity, xi)
            strain += body.strain(xi)
            if self.axial_load:
                axial += body.axial(xi, *forces[link])
        return gravity, strain, axial
