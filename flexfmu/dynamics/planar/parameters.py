"""The parameter table of a planar arm: gravity, link by link, lumped masses, payload, envelope limits.

The order and the fixed (geometry) entries follow :mod:`flexfmu.dynamics.parameters`.
"""

from __future__ import annotations

from flexfmu.dynamics.metadata import Parameter
from flexfmu.dynamics.parameters import envelope_parameters, joint_parameters
from flexfmu.spec.arm import Arm, FlexibleLink
from flexfmu.spec.ranges import DAMPING_RATIO, LUMPED_POSITION, RANGES, com_range


def _link_parameters(i: int, link) -> list[Parameter]:
    prefix = f"link[{i}]"
    rows = [Parameter(f"{prefix}.length", link.length, "m", f"length of link {i}", tunable=False, range=RANGES["length"])]
    if isinstance(link, FlexibleLink):
        rows += [
            Parameter(f"{prefix}.mass_per_length", link.mass_per_length, "kg/m", f"mass per unit length of link {i}",
                      field=f"{prefix}.mass_per_length", range=RANGES["mass_per_length"]),
            Parameter(f"{prefix}.EI", link.EI, "N.m2", f"bending stiffness E*I of link {i}", field=f"{prefix}.EI",
                      range=RANGES["EI"]),
        ]
        if link.modes.damping_kind == "ratio":
            name, unit, what, allowed = "damping_ratio", "1", "modal damping ratio", DAMPING_RATIO
        else:
            name, unit, what = "damping_coefficient", "N.s/m", "modal damping coefficient"
            allowed = RANGES["damping_coefficient"]
        rows += [
            Parameter(f"{prefix}.{name}[{k}]", d, unit, f"{what} of mode {k} of link {i}",
                      field=f"{prefix}.modes.{name}[{k}]", range=allowed)
            for k, d in enumerate(link.modes.damping, start=1)
        ]
    else:
        rows += [
            Parameter(f"{prefix}.mass", link.mass, "kg", f"mass of link {i}", field=f"{prefix}.mass",
                      range=RANGES["mass"]),
            Parameter(f"{prefix}.com.x", link.com[0], "m", f"centre of mass of link {i}, along the link",
                      tunable=False, range=com_range(link.length)),
            Parameter(f"{prefix}.com.y", link.com[1], "m", f"centre of mass of link {i}, across the link",
                      tunable=False, range=com_range(link.length)),
            Parameter(f"{prefix}.inertia", link.inertia, "kg.m2", f"rotary inertia of link {i} about its centre of mass",
                      field=f"{prefix}.inertia", range=RANGES["inertia"]),
        ]
    return rows


def arm_parameters(arm: Arm) -> list[Parameter]:
    """Return the ordered parameter table of ``arm`` with nominal values."""
    rows = [
        Parameter("gravity.x", arm.gravity[0], "m/s2", "gravity along the base x axis", field="gravity[1]",
                  range=RANGES["gravity"]),
        Parameter("gravity.y", arm.gravity[1], "m/s2", "gravity along the base y axis", field="gravity[2]",
                  range=RANGES["gravity"]),
    ]
    for i, link in enumerate(arm.links, start=1):
        rows += _link_parameters(i, link)
        rows += joint_parameters(i, link.joint)
    for k, lumped in enumerate(arm.lumped_masses, start=1):
        prefix = f"lumped_mass[{k}]"
        rows += [
            Parameter(f"{prefix}.position", lumped.position, "1",
                      f"position x/L of lumped mass {k} on link {lumped.link}", tunable=False, range=LUMPED_POSITION),
            Parameter(f"{prefix}.mass", lumped.mass, "kg", f"mass of lumped mass {k}", field=f"{prefix}.mass",
                      range=RANGES["added_mass"]),
            Parameter(f"{prefix}.inertia", lumped.inertia, "kg.m2", f"rotary inertia of lumped mass {k}",
                      field=f"{prefix}.inertia", range=RANGES["added_inertia"]),
        ]
    rows += [
        Parameter("payload.mass", arm.payload.mass, "kg", "payload mass at the tip of the last link",
                  field="payload.mass", range=RANGES["added_mass"]),
        Parameter("payload.inertia", arm.payload.inertia, "kg.m2", "payload rotary inertia", field="payload.inertia",
                  range=RANGES["added_inertia"]),
    ]
    return rows + envelope_parameters(arm)
