"""The physical parameters of a spatial arm as one ordered table.

Same rules as the planar table (``flexfmu.dynamics.parameters``): every
physical quantity is an entry of p, in an order fixed by the arm's
structure (gravity, link by link with its joint, lumped masses, payload,
the limits of the validity envelope);
geometry (lengths, offsets, centres of mass, positions) is fixed, the rest
tunable. Inertia tensors enter as their six entries ``.xx .yy .zz .xy .xz
.yz`` (link axes). Joint axes and fixed rotations are structure, like mode
counts: they shape the graphs and are not parameters.
"""

from __future__ import annotations

from flexfmu.dynamics.metadata import Parameter
from flexfmu.dynamics.parameters import envelope_parameters, joint_parameters
from flexfmu.spec.ranges import DAMPING_RATIO, LUMPED_POSITION, RANGES, com_range
from flexfmu.spec.spatial_arm import SpatialArm, SpatialFlexibleLink

TENSOR = (("xx", 0, 0), ("yy", 1, 1), ("zz", 2, 2), ("xy", 0, 1), ("xz", 0, 2), ("yz", 1, 2))
STIFFNESS = {"bending_y": ("EI", "N.m2", "bending stiffness E*I for deflection along y"),
             "bending_z": ("EI", "N.m2", "bending stiffness E*I for deflection along z"),
             "torsion": ("GJ", "N.m2", "torsional stiffness G*J"),
             "axial": ("EA", "N", "axial stiffness E*A")}
COEFFICIENT_UNITS = {"bending_y": "N.s/m", "bending_z": "N.s/m", "torsion": "N.m.s/rad", "axial": "N.s/m"}


def tensor_parameters(prefix: str, tensor, what: str) -> list[Parameter]:
    """The six entries (named ``prefix`` plus .xx ... .yz) of the inertia ``tensor`` (3 x 3) of ``what``."""
    return [Parameter(f"{prefix}.{name}", tensor[r][c], "kg.m2", f"inertia of {what}, {name} entry (link axes)",
                      range=RANGES["tensor_entry"]) for name, r, c in TENSOR]


def _link_parameters(i: int, link, quasi_static: frozenset[str]) -> list[Parameter]:
    pre = f"link[{i}]"
    rows = [Parameter(f"{pre}.length", link.length, "m", f"length of link {i}", tunable=False,
                      range=RANGES["rigid_length" if not isinstance(link, SpatialFlexibleLink) else "length"])]
    if not isinstance(link, SpatialFlexibleLink):
        rows.append(Parameter(f"{pre}.mass", link.mass, "kg", f"mass of link {i}", field=f"{pre}.mass",
                              range=RANGES["mass"]))
        rows += [Parameter(f"{pre}.com.{axis}", value, "m", f"centre of mass of link {i}, {axis} (link axes)",
                           tunable=False, range=com_range(max(link.length, 0.1))) for axis, value in zip("xyz", link.com)]
        return rows + tensor_parameters(f"{pre}.inertia", link.inertia, f"link {i} about its centre of mass")
    rows += [
        Parameter(f"{pre}.mass_per_length", link.mass_per_length, "kg/m", f"mass per unit length of link {i}",
                  field=f"{pre}.mass_per_length", range=RANGES["mass_per_length"]),
        Parameter(f"{pre}.polar_inertia_per_length", link.polar_inertia_per_length, "kg.m",
                  f"polar mass moment of inertia per unit length (rho*Ip) of link {i}",
                  field=f"{pre}.polar_inertia_per_length", range=RANGES["polar_inertia_per_length"]),
    ]
    for deformation in link.deformations:
        kind, modes = deformation.kind, deformation.modes
        key, unit, what = STIFFNESS[kind]
        rows.append(Parameter(f"{pre}.{kind}.{key}", deformation.stiffness, unit, f"{what} of link {i}",
                              field=f"{pre}.{kind}.{key}", range=RANGES[key]))
        if kind in quasi_static:  # a quasi-static deformation does not move: no damping
            continue
        if modes.damping_kind == "ratio":
            name, unit, what, allowed = "damping_ratio", "1", "modal damping ratio", DAMPING_RATIO
        else:
            name, unit, what = "damping_coefficient", COEFFICIENT_UNITS[kind], "modal damping coefficient"
            allowed = RANGES["damping_coefficient"]
        rows += [Parameter(f"{pre}.{kind}.{name}[{k}]", value, unit, f"{what} of {kind} mode {k} of link {i}",
                           field=f"{pre}.{kind}.modes.{name}[{k}]", range=allowed)
                 for k, value in enumerate(modes.damping, start=1)]
    return rows


def spatial_parameters(arm: SpatialArm, quasi_static) -> list[Parameter]:
    """Return the ordered parameter table of ``arm`` with nominal values, without the damping of the
    deformations and joint springs that are ``quasi_static`` (a ``quasi_static.QuasiStatic``)."""
    rows = [Parameter(f"gravity.{axis}", value, "m/s2", f"gravity along the base {axis} axis",
                      field=f"gravity[{k}]", range=RANGES["gravity"])
            for k, (axis, value) in enumerate(zip("xyz", arm.gravity), start=1)]
    for j, link in enumerate(arm.links, start=1):
        rows += _link_parameters(j, link, quasi_static.kinds(j - 1))
        rows += joint_parameters(j, link.joint, spring_damping=j - 1 not in quasi_static.joints)
        parent = f"distal frame of link {j - 1}" if j > 1 else "base frame"
        rows += [Parameter(f"joint[{j}].offset.{axis}", value, "m", f"position of joint {j} in the {parent}, {axis}",
                           tunable=False, range=RANGES["offset"])
                 for axis, value in zip("xyz", link.joint.offset)]
    for k, lumped in enumerate(arm.lumped_masses, start=1):
        pre = f"lumped_mass[{k}]"
        rows += [
            Parameter(f"{pre}.position", lumped.position, "1", f"position x/L of lumped mass {k} on link {lumped.link}",
                      tunable=False, range=LUMPED_POSITION),
            Parameter(f"{pre}.mass", lumped.mass, "kg", f"mass of lumped mass {k}", field=f"{pre}.mass",
                      range=RANGES["added_mass"]),
        ]
        rows += tensor_parameters(f"{pre}.inertia", lumped.inertia, f"lumped mass {k}")
    rows.append(Parameter("payload.mass", arm.payload.mass, "kg", "payload mass at the tip of the last link",
                          field="payload.mass", range=RANGES["added_mass"]))
    rows += tensor_parameters("payload.inertia", arm.payload.inertia, "the payload about the tip")
    return rows + envelope_parameters(arm)
