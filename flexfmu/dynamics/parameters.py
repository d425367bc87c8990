"""The physical parameters of an arm as one ordered table: what every kind shares.

Every physical quantity of the arm becomes an entry of the parameter vector p
of the graphs, so an FMU can expose it and gradients can reach it. The order
is fixed by the arm's structure (gravity, then link by link, then lumped
masses, then payload, then the limits of the validity envelope), never by
registration order, so names and indices are stable across rebuilds of the
same arm. Geometry (lengths, centres of mass,
positions along a link) is marked fixed: changing it while running would
move bodies discontinuously.

Each kind writes its own table (``flexfmu.dynamics.planar.parameters``,
``spatial.parameters``, ``delta.graph``); here are the parts they share:
a serial chain's joint rows, the envelope's limits and the symbols of p.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics.metadata import Parameter
from flexfmu.spec.ranges import ENVELOPE_LIMIT, RANGES
from flexfmu.spec.arm import Arm, Joint


def joint_parameters(j: int, joint: Joint, spring_damping: bool = True) -> list[Parameter]:
    """The parameters of joint ``j`` (1-based) of a serial chain, planar or spatial: gear, rotor, friction,
    and for a flexible ``joint`` its spring (without its damping unless ``spring_damping``: a quasi-static
    spring does not move)."""
    prefix, field = f"joint[{j}]", f"link[{j}].joint"
    rotor_range = RANGES["flexible_rotor_inertia" if joint.kind == "flexible" else "rotor_inertia"]
    rows = [
        Parameter(f"{prefix}.gear_ratio", joint.gear_ratio, "1", f"gear ratio of joint {j} (motor turns per joint turn)",
                  field=f"{field}.gear_ratio", range=RANGES["gear_ratio"]),
        Parameter(f"{prefix}.rotor_inertia", joint.rotor_inertia, "kg.m2", f"rotor inertia of joint {j} on the motor side",
                  field=f"{field}.rotor_inertia", range=rotor_range),
        Parameter(f"{prefix}.viscous_friction", joint.viscous_friction, "N.m.s/rad", f"viscous friction of joint {j}",
                  field=f"{field}.viscous_friction", range=RANGES["viscous_friction"]),
        Parameter(f"{prefix}.coulomb_friction", joint.coulomb_friction, "N.m", f"Coulomb friction torque of joint {j}",
                  field=f"{field}.coulomb_friction", range=RANGES["coulomb_friction"]),
        Parameter(f"{prefix}.coulomb_velocity", joint.coulomb_velocity, "rad/s", f"rate scale of the tanh-smoothed Coulomb friction of joint {j}",
                  field=f"{field}.coulomb_velocity", range=RANGES["coulomb_velocity"]),
    ]
    if joint.kind == "flexible":
        rows.append(Parameter(f"{prefix}.stiffness", joint.stiffness, "N.m/rad",
                              f"torsional spring stiffness of joint {j}",
                              field=f"{field}.stiffness", range=RANGES["stiffness"]))
        if spring_damping:
            rows.append(Parameter(f"{prefix}.spring_damping", joint.spring_damping, "N.m.s/rad",
                                  f"damping of the torsional spring of joint {j}",
                                  field=f"{field}.spring_damping", range=RANGES["spring_damping"]))
    return rows


LINK_ENVELOPE, JOINT_ENVELOPE = "envelope.link_deflection", "envelope.joint_deflection"


def envelope_parameters(arm: Arm) -> list[Parameter]:
    """The limits of the model's validity envelope, for the flexible links and joints of ``arm``, planar or
    spatial (none if it has neither): an assumed-mode beam is valid for small deflections and a joint spring
    is linear over a small angle. 10 % of the length and 0.1 rad are the defaults (see docs/dynamics.md)."""
    rows = []
    if any(link.kind == "flexible" for link in arm.links):
        rows.append(Parameter(LINK_ENVELOPE, 0.1, "1", "validity envelope: largest tip deflection of a flexible "
                                                       "link relative to its length", range=ENVELOPE_LIMIT))
    if any(link.joint.kind == "flexible" for link in arm.links):
        rows.append(Parameter(JOINT_ENVELOPE, 0.1, "rad", "validity envelope: largest spring deflection of a "
                                                          "flexible joint", range=ENVELOPE_LIMIT))
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
