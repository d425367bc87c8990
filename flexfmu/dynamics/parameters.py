"""The physical parameters of an arm as one ordered table.

Every physical quantity of the arm becomes an entry of the parameter vector p
of the graphs, so an FMU can expose it and gradients can reach it. The order
is fixed by the arm's structure (gravity, then link by link, then lumped
masses, then payload, then the limits of the validity envelope), never by
registration order, so names and indices are stable across rebuilds of the
same arm. Geometry (lengths, centres of mass,
positions along a link) is marked fixed: changing it while running would
move bodies discontinuously.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics.metadata import Parameter
from flexfmu.spec.arm import Arm, FlexibleLink, Joint


def _joint_parameters(j: int, joint: Joint) -> list[Parameter]:
    prefix = f"joint[{j}]"
    rows = [
        Parameter(f"{prefix}.gear_ratio", joint.gear_ratio, "1", f"gear ratio of joint {j} (motor turns per joint turn)"),
        Parameter(f"{prefix}.rotor_inertia", joint.rotor_inertia, "kg.m2", f"rotor inertia of joint {j} on the motor side"),
        Parameter(f"{prefix}.viscous_friction", joint.viscous_friction, "N.m.s/rad", f"viscous friction of joint {j}"),
        Parameter(f"{prefix}.coulomb_friction", joint.coulomb_friction, "N.m", f"Coulomb friction torque of joint {j}"),
        Parameter(f"{prefix}.coulomb_velocity", joint.coulomb_velocity, "rad/s", f"rate scale of the tanh-smoothed Coulomb friction of joint {j}"),
    ]
    if joint.kind == "flexible":
        rows += [
            Parameter(f"{prefix}.stiffness", joint.stiffness, "N.m/rad", f"torsional spring stiffness of joint {j}"),
            Parameter(f"{prefix}.spring_damping", joint.spring_damping, "N.m.s/rad", f"damping of the torsional spring of joint {j}"),
        ]
    return rows


def _link_parameters(i: int, link) -> list[Parameter]:
    prefix = f"link[{i}]"
    rows = [Parameter(f"{prefix}.length", link.length, "m", f"length of link {i}", tunable=False)]
    if isinstance(link, FlexibleLink):
        rows += [
            Parameter(f"{prefix}.mass_per_length", link.mass_per_length, "kg/m", f"mass per unit length of link {i}"),
            Parameter(f"{prefix}.EI", link.EI, "N.m2", f"bending stiffness E*I of link {i}"),
        ]
        if link.modes.damping_kind == "ratio":
            name, unit, what = "damping_ratio", "1", "modal damping ratio"
        else:
            name, unit, what = "damping_coefficient", "N.s/m", "modal damping coefficient"
        rows += [
            Parameter(f"{prefix}.{name}[{k}]", d, unit, f"{what} of mode {k} of link {i}")
            for k, d in enumerate(link.modes.damping, start=1)
        ]
    else:
        rows += [
            Parameter(f"{prefix}.mass", link.mass, "kg", f"mass of link {i}"),
            Parameter(f"{prefix}.com.x", link.com[0], "m", f"centre of mass of link {i}, along the link",
                      tunable=False),
            Parameter(f"{prefix}.com.y", link.com[1], "m", f"centre of mass of link {i}, across the link",
                      tunable=False),
            Parameter(f"{prefix}.inertia", link.inertia, "kg.m2", f"rotary inertia of link {i} about its centre of mass"),
        ]
    return rows


def arm_parameters(arm: Arm) -> list[Parameter]:
    """Return the ordered parameter table of ``arm`` with nominal values."""
    rows = [
        Parameter("gravity.x", arm.gravity[0], "m/s2", "gravity along the base x axis"),
        Parameter("gravity.y", arm.gravity[1], "m/s2", "gravity along the base y axis"),
    ]
    for i, link in enumerate(arm.links, start=1):
        rows += _link_parameters(i, link)
        rows += _joint_parameters(i, link.joint)
    for k, lumped in enumerate(arm.lumped_masses, start=1):
        prefix = f"lumped_mass[{k}]"
        rows += [
            Parameter(f"{prefix}.position", lumped.position, "1",
                      f"position x/L of lumped mass {k} on link {lumped.link}", tunable=False),
            Parameter(f"{prefix}.mass", lumped.mass, "kg", f"mass of lumped mass {k}"),
            Parameter(f"{prefix}.inertia", lumped.inertia, "kg.m2", f"rotary inertia of lumped mass {k}"),
        ]
    rows += [
        Parameter("payload.mass", arm.payload.mass, "kg", "payload mass at the tip of the last link"),
        Parameter("payload.inertia", arm.payload.inertia, "kg.m2", "payload rotary inertia"),
    ]
    return rows + envelope_parameters(arm)


LINK_ENVELOPE, JOINT_ENVELOPE = "envelope.link_deflection", "envelope.joint_deflection"


def envelope_parameters(arm: Arm) -> list[Parameter]:
    """The limits of the model's validity envelope, for the flexible links and joints of ``arm``, planar or
    spatial (none if it has neither): an assumed-mode beam is valid for small deflections and a joint spring
    is linear over a small angle. 10 % of the length and 0.1 rad are the defaults (see docs/dynamics.md)."""
    rows = []
    if any(link.kind == "flexible" for link in arm.links):
        rows.append(Parameter(LINK_ENVELOPE, 0.1, "1", "validity envelope: largest tip deflection of a flexible "
                                                       "link relative to its length"))
    if any(link.joint.kind == "flexible" for link in arm.links):
        rows.append(Parameter(JOINT_ENVELOPE, 0.1, "rad", "validity envelope: largest spring deflection of a "
                                                          "flexible joint"))
    return rows


class ParameterSymbols:
    """The symbolic parameter vector p and a lookup of its entries by name."""

    def __init__(self, table: list[Parameter]):
        self.table = table
        self.vector = ca.SX.sym("p", len(table))
        # split once: indexing an SX from Python costs tens of microseconds
        entries = ca.vertsplit(self.vector)
        self._entries = {row.name: entries[k] for k, row in enumerate(table)}

    def __getitem__(self, name: str) -> ca.SX:
        return self._entries[name]
