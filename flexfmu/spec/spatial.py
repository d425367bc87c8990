"""The spatial arm's specification (``kind = "spatial"``).

The executable form of the spatial section of ``docs/spec.md``: reads
nested dicts and lists (parsed TOML) into a
:class:`~flexfmu.spec.spatial_arm.SpatialArm`, collecting every problem
before it raises. The keys shared with planar arms (a joint's spring, rotor,
gear and friction; a mode family's count and damping) are read by
:mod:`flexfmu.spec.serial`, so both kinds check them alike; every number lies in
its physical range (``flexfmu.spec.ranges``: the planar ranges for the shared
keys, the spatial rows for the rest).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from flexfmu.spec import serial
from flexfmu.spec.arm import Modes
from flexfmu.spec.checks import (
    LUMPED_KEYS, MODE_KEYS, PAYLOAD_KEYS,
    REQUIRED, arm_name_and_description, as_number, boolean, check_keys, integer, join, link_kind, look_up, number,
    show, string, sub_table, table_array, type_name, vector,
)
from flexfmu.spec.errors import SpecError
from flexfmu.spec.ranges import MAX_COORDINATES, MAX_LINKS, MAX_LUMPED_MASSES, MAX_MODES, RANGES, SIZES
from flexfmu.spec.spatial_arm import (
    CONDENSABLE, ROD_FAMILIES, ZERO3, ZERO33, Deformation, SpatialArm, SpatialFlexibleLink, SpatialJoint,
    SpatialLumpedMass, SpatialPayload, SpatialRigidLink,
)

_TOP_KEYS = ("name", "description", "gravity", "link", "lumped_mass", "payload")
_LINK_COMMON = ("kind", "length", "mass", "joint")
_RIGID_ONLY = ("com", "inertia")
_FLEXIBLE_ONLY = ("mass_per_length", "polar_inertia_per_length", "geometric_stiffening",
                  "bending_y", "bending_z", "torsion", "axial")
_PLACEMENT = ("axis", "offset", "rotation")
_SPATIAL_JOINT = _PLACEMENT + ("quasi_static",)
# deformation -> its stiffness key
_STIFFNESS = {"bending_y": "EI", "bending_z": "EI", "torsion": "GJ", "axial": "EA"}


def spatial_arm_from_dict(data: Mapping, source: str = "<dict>", *, families: Mapping) -> SpatialArm:
    """Validate a spatial arm specification given as nested dicts and lists.

    Parameters
    ----------
    data : Mapping
        The specification without its ``kind``, shaped like the parsed TOML.
    source : str, optional
        Where ``data`` came from; used as the header of the error message.
    families : Mapping
        The mode families a bending deformation may name (:data:`flexfmu.modes.families.FAMILIES`), handed
        down by the spatial kind (``flexfmu.kinds``).

    Returns
    -------
    SpatialArm

    Raises
    ------
    SpecError
        Listing every problem found.
    """
    problems: list[str] = []
    check_keys(problems, data, "", _TOP_KEYS)
    name, description = arm_name_and_description(problems, data)
    gravity = _in_range(problems, vector(problems, data, "gravity", "", 3, ZERO3), "gravity", "gravity")

    link_tables = table_array(problems, data, "link", required=True)
    serial.size(problems, "link", link_tables, "links", MAX_LINKS)
    links = [_link(problems, table, f"link[{i}]", families)
             for i, table in enumerate(link_tables or [], start=1) if table is not None]
    link_count = len(link_tables) if link_tables else None
    lumped_tables = table_array(problems, data, "lumped_mass")
    serial.size(problems, "lumped_mass", lumped_tables, "lumped masses", MAX_LUMPED_MASSES)
    lumped = [_lumped_mass(problems, table, f"lumped_mass[{i}]", link_count)
              for i, table in enumerate(lumped_tables or [], start=1) if table is not None]
    payload = None
    payload_table = sub_table(problems, data, "payload", "")
    if payload_table is not None:
        check_keys(problems, payload_table, "payload", PAYLOAD_KEYS)
        payload = SpatialPayload(mass=serial.ranged(problems, payload_table, "mass", "payload", "added_mass", 0.0),
                                 inertia=inertia_tensor(problems, payload_table, "inertia", "payload", ZERO33))
    _coordinate_count(problems, links)
    if problems:
        raise SpecError(problems, source)
    return SpatialArm(name=name, links=tuple(links), description=description, lumped_masses=tuple(lumped),
                      payload=payload, gravity=gravity)


def _in_range(problems, values, path, kind):
    """``values`` (a checked vector at ``path``, or None) with each component in ``RANGES[kind]``; None, with a
    problem per bad component appended to ``problems``, if any is out of range."""
    if values is None:
        return None
    allowed = RANGES[kind]
    bad = [f"{path}[{k}] must be {allowed.text()} {allowed.unit}, got {show(v)}"
           for k, v in enumerate(values, start=1) if not allowed.low <= v <= allowed.high]
    problems += bad
    return None if bad else values


def _coordinate_count(problems, links):
    """The Model's size: one angle per joint, a rotor angle per flexible joint and every mode of ``links``;
    more than :data:`~flexfmu.spec.ranges.MAX_COORDINATES` is refused up front (``problems`` gets why)."""
    if None in links or any(link.joint is None or None in [d.modes.count for d in getattr(link, "deformations", ())]
                            for link in links):
        return
    count = sum(1 + (link.joint.kind == "flexible") + sum(d.modes.count for d in getattr(link, "deformations", ()))
                for link in links)
    if count > MAX_COORDINATES:
        problems.append(f"link: the arm has {count} coordinates (joint angles, rotor angles and modes); at most "
                        f"{MAX_COORDINATES} are supported ({SIZES['coordinates'][1]})")


def inertia_tensor(problems, table, key, path, default=REQUIRED):
    """Checked inertia tensor at ``table[key]``: 3 rows of 3 numbers, each in its range, symmetric, positive
    semidefinite and
    obeying the triangle inequalities of a physical body (each diagonal entry at most the sum of the other
    two); returned as a tuple of row tuples (``default`` when absent, None when unusable).

    Parameters
    ----------
    problems, table, key, path : common
        The problem list appended to, the table read, the key checked in it and the table's path in messages.
    default : optional
        Returned when the key is absent; :data:`~flexfmu.spec.checks.REQUIRED` makes its absence a problem.
    """
    where = join(path, key)
    found, value = look_up(problems, table, key, path, default)
    if not found:
        return value
    if not (isinstance(value, (list, tuple)) and len(value) == 3
            and all(isinstance(row, (list, tuple)) and len(row) == 3 for row in value)):
        problems.append(f"{where} must be 3 rows of 3 numbers (kg m^2), got {show(value)} ({type_name(value)})")
        return None
    allowed = RANGES["tensor_entry"]
    rows = [[as_number(problems, x, f"{where}[{i}][{j}]", unit=allowed.unit, **allowed.bounds)
             for j, x in enumerate(row, start=1)] for i, row in enumerate(value, start=1)]
    if any(None in row for row in rows):
        return None
    scale = max(abs(x) for row in rows for x in row) or 1.0
    if any(abs(rows[i][j] - rows[j][i]) > 1e-12 * scale for i in range(3) for j in range(i)):
        problems.append(f"{where} must be symmetric, got {show(value)}")
        return None
    d = [rows[i][i] for i in range(3)]
    minors = [rows[0][0] * rows[1][1] - rows[0][1] ** 2, rows[0][0] * rows[2][2] - rows[0][2] ** 2,
              rows[1][1] * rows[2][2] - rows[1][2] ** 2, _determinant(rows)]
    tolerance = 1e-12 * scale * scale
    if min(d) < 0 or min(minors[:3]) < -tolerance or minors[3] < -tolerance * scale:
        problems.append(f"{where} must be positive semidefinite, got {show(value)}")
        return None
    if any(d[i] > d[(i + 1) % 3] + d[(i + 2) % 3] + 1e-12 * scale for i in range(3)):
        problems.append(f"{where}: each diagonal entry must be at most the sum of the other two "
                        f"(a physical body), got {show(value)}")
        return None
    return tuple(tuple(row) for row in rows)


def _determinant(m) -> float:
    return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))


def _link(problems, table, path, families):
    """One ``[[link]]`` table -> SpatialRigidLink / SpatialFlexibleLink (None if unusable)."""
    kind = link_kind(problems, table, path, _LINK_COMMON, _RIGID_ONLY, _FLEXIBLE_ONLY)
    joint = _spatial_joint(problems, table, path)
    if kind == "rigid":
        length = serial.ranged(problems, table, "length", path, "rigid_length")
        mass = serial.ranged(problems, table, "mass", path, "mass")
        com = _com(problems, table, path, length)
        rod = mass * length**2 / 12 if None not in (mass, length) else None
        inertia_default = ((0.0, 0.0, 0.0), (0.0, rod, 0.0), (0.0, 0.0, rod)) if rod is not None else None
        inertia = inertia_tensor(problems, table, "inertia", path, inertia_default)
        return SpatialRigidLink(length=length, mass=mass, com=com, inertia=inertia, joint=joint)
    if kind == "flexible":
        length = serial.ranged(problems, table, "length", path, "length")
        mass_per_length = serial.mass_per_length(problems, table, path, length)
        polar = serial.ranged(problems, table, "polar_inertia_per_length", path, "polar_inertia_per_length", 0.0)
        stiffening = boolean(problems, table, "geometric_stiffening", path, True)
        deformations = tuple(d for d in (_deformation(problems, table, path, kind, families) for kind in _STIFFNESS)
                             if d)
        present = [key for key in _STIFFNESS if key in table]
        if not present:
            problems.append(f"{path} must model at least one deformation ([{path}.bending_y], bending_z, "
                            f"torsion or axial)")
        if "torsion" in table and polar == 0.0:
            problems.append(f"{path}.polar_inertia_per_length must be > 0 for a link with torsion modes, got 0")
        return SpatialFlexibleLink(length=length, mass_per_length=mass_per_length, polar_inertia_per_length=polar,
                                   deformations=deformations, geometric_stiffening=stiffening, joint=joint)
    return None


def _com(problems, table, path, length):
    """The rigid link's centre of mass (default: mid-length on its axis), each component within ten link lengths
    of the joint (ten times 0.1 m for shorter links, which may have length 0)."""
    com = vector(problems, table, "com", path, 3, (length / 2, 0.0, 0.0) if length is not None else None)
    if com is None or length is None:
        return com
    limit = RANGES["com"].high * max(length, 0.1)
    bad = [f"{path}.com[{k}] must be within {RANGES['com'].high:g} link lengths of the joint "
           f"(|value| <= {limit:g} m), got {show(c)}" for k, c in enumerate(com, start=1) if abs(c) > limit]
    problems += bad
    return None if bad else com


def _deformation(problems, link_table, link_path, kind, families):
    """The ``[link.<kind>]`` table of a flexible link, None if absent or unusable."""
    if kind not in link_table:
        return None
    table = sub_table(problems, link_table, kind, link_path)
    if table is None:
        return None
    path = f"{link_path}.{kind}"
    key = _STIFFNESS[kind]
    if kind in CONDENSABLE:
        check_keys(problems, table, path, (key, "modes", "quasi_static"))
        quasi_static = boolean(problems, table, "quasi_static", path, None)
    else:
        check_keys(problems, table, path, (key, "modes"),
                   {"quasi_static": "is only allowed for torsion and axial: bending carries the link's motion"})
        quasi_static = None
    stiffness = serial.ranged(problems, table, key, path, "EI" if kind.startswith("bending") else key)
    if kind.startswith("bending"):
        modes = serial.modes(problems, table, path, families)
    else:
        modes = _rod_modes(problems, table, path)
    if None in (stiffness, modes):
        return None
    return Deformation(kind, stiffness, modes, quasi_static)


def _rod_modes(problems, deformation_table, path):
    """The ``modes`` table of torsion or axial stretch: fixed-free rod modes."""
    table = sub_table(problems, deformation_table, "modes", path, required=True)
    if table is None:
        return None
    path = f"{path}.modes"
    check_keys(problems, table, path, MODE_KEYS)
    family = string(problems, table, "family", path, ROD_FAMILIES[0], ROD_FAMILIES)
    count = integer(problems, table, "count", path, 1, MAX_MODES)
    damping_kind, damping = serial.damping(problems, table, path, count)
    if None in (family, count, damping):
        return None
    return Modes(family=family, count=count, damping_kind=damping_kind, damping=damping)


def _spatial_joint(problems, link_table, link_path):
    """The optional ``[link.joint]`` table: the planar joint's keys plus axis, offset, rotation and (flexible
    joints) quasi_static."""
    table = sub_table(problems, link_table, "joint", link_path)
    if table is None:
        return None
    path = f"{link_path}.joint"
    joint = serial.joint(problems, {"joint": {k: v for k, v in table.items() if k not in _SPATIAL_JOINT}}, link_path)
    quasi_static = boolean(problems, table, "quasi_static", path, False)
    if quasi_static and getattr(joint, "kind", None) == "rigid":
        problems.append(f'{path}.quasi_static is only allowed for a flexible joint (kind = "flexible"): a rigid '
                        f"joint has no spring to deflect")
        quasi_static = None
    axis = _in_range(problems, vector(problems, table, "axis", path, 3, (0.0, 0.0, 1.0)), f"{path}.axis", "axis")
    if axis is not None:
        norm = math.sqrt(sum(a * a for a in axis))
        if norm == 0.0:
            problems.append(f"{path}.axis must not be zero, got {show(table.get('axis'))}")
            axis = None
        else:
            axis = tuple(a / norm for a in axis)
    offset = _in_range(problems, vector(problems, table, "offset", path, 3, ZERO3), f"{path}.offset", "offset")
    rotation = _in_range(problems, vector(problems, table, "rotation", path, 3, ZERO3), f"{path}.rotation",
                         "rotation")
    if getattr(joint, "prescribed", False):
        problems.append(f"{path}.prescribed: prescribed (motion-driven) joints are supported on planar arms only; "
                        f"a spatial joint is driven by its torque")
        return None
    if None in (joint, axis, offset, rotation, quasi_static):
        return None
    return SpatialJoint(**vars(joint), axis=axis, offset=offset, rotation=rotation, quasi_static=quasi_static)


def _lumped_mass(problems, table, path, link_count):
    """One ``[[lumped_mass]]`` table."""
    check_keys(problems, table, path, LUMPED_KEYS)
    return SpatialLumpedMass(
        link=integer(problems, table, "link", path, 1, link_count),
        position=number(problems, table, "position", path, ge=0, le=1),
        mass=serial.ranged(problems, table, "mass", path, "added_mass"),
        inertia=inertia_tensor(problems, table, "inertia", path, ZERO33),
    )
