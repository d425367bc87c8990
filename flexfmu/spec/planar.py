"""The planar arm's specification: ``[[link]]``, ``[[lumped_mass]]``, ``[payload]``.

This module is the executable form of ``docs/spec.md`` for planar arms (the
default ``kind``); it reads nested dicts and lists (parsed TOML) into an
:class:`~flexfmu.spec.arm.Arm` with the generic checks of
:mod:`flexfmu.spec.checks`, collecting every problem before it raises.
"""

from __future__ import annotations

from collections.abc import Mapping

from flexfmu.spec.arm import (
    JOINT_KINDS,
    Arm,
    FlexibleLink,
    Joint,
    LumpedMass,
    Modes,
    Payload,
    RigidLink,
)
from flexfmu.spec.checks import (
    LUMPED_KEYS, MODE_KEYS, PAYLOAD_KEYS,
    REQUIRED, arm_name_and_description, as_number, boolean, check_keys, integer, is_number, link_kind, number,
    plural, show, string, sub_table, table_array, type_name, vector,
)
from flexfmu.spec.errors import SpecError
from flexfmu.spec.families import FAMILIES, FRAMES, MAX_MODES
from flexfmu.spec.ranges import DAMPING_RATIO, MAX_COORDINATES, MAX_LINKS, MAX_LUMPED_MASSES, RANGES, SIZES
from flexfmu.spec.shapes import shape_problem, shape_set_problem

_TOP_KEYS = ("kind", "name", "description", "gravity", "link", "lumped_mass", "payload")
_LINK_COMMON = ("kind", "length", "mass", "joint")
_RIGID_ONLY = ("com", "inertia")
_FLEXIBLE_ONLY = ("mass_per_length", "EI", "E", "I", "modes", "geometric_stiffening")
_JOINT_COMMON = ("kind", "rotor_inertia", "gear_ratio", "viscous_friction",
                 "coulomb_friction", "coulomb_velocity", "prescribed")
_FLEXIBLE_JOINT_ONLY = ("stiffness", "spring_damping")


def planar_arm_from_dict(data: Mapping, source: str = "<dict>") -> Arm:
    """Validate a specification given as nested dicts and lists.

    Parameters
    ----------
    data : Mapping
        The specification, shaped like the parsed TOML (arrays of tables are
        lists of dicts).
    source : str, optional
        Where ``data`` came from; used as the header of the error message.

    Returns
    -------
    Arm
        The validated arm.

    Raises
    ------
    SpecError
        Listing every problem found.
    """
    problems: list[str] = []
    if not isinstance(data, Mapping):
        raise SpecError([f"the specification must be a table, got {show(data)}"], source)
    check_keys(problems, data, "", _TOP_KEYS)
    name, description = arm_name_and_description(problems, data)
    gravity = _gravity(problems, data)

    link_tables = table_array(problems, data, "link", required=True)
    _size(problems, "link", link_tables, "links", MAX_LINKS)
    links = [_link(problems, table, f"link[{i}]")
             for i, table in enumerate(link_tables or [], start=1) if table is not None]
    link_count = len(link_tables) if link_tables else None
    lumped_tables = table_array(problems, data, "lumped_mass")
    _size(problems, "lumped_mass", lumped_tables, "lumped masses", MAX_LUMPED_MASSES)
    lumped = [_lumped_mass(problems, table, f"lumped_mass[{i}]", link_count)
              for i, table in enumerate(lumped_tables or [], start=1) if table is not None]
    payload_table = sub_table(problems, data, "payload", "")
    payload = None
    if payload_table is not None:
        check_keys(problems, payload_table, "payload", PAYLOAD_KEYS)
        payload = Payload(mass=_ranged(problems, payload_table, "mass", "payload", "added_mass", 0.0),
                          inertia=_ranged(problems, payload_table, "inertia", "payload", "added_inertia", 0.0))
    _coordinate_count(problems, links)

    if len(links) == len(link_tables or []):
        _check_prescribed(problems, links)
    if problems:
        raise SpecError(problems, source)
    return Arm(name=name, links=tuple(links), description=description,
               lumped_masses=tuple(lumped), payload=payload, gravity=gravity)


def _ranged(problems, table, key, path, kind, default=REQUIRED, missing=""):
    """The number at ``table[key]`` checked against the physical range of its ``kind``, ``RANGES[kind]``
    (:mod:`flexfmu.spec.ranges`); ``problems``, ``table``, ``key``, ``path``, ``default`` and ``missing`` as for
    :func:`flexfmu.spec.checks.number`."""
    allowed = RANGES[kind]
    return number(problems, table, key, path, default, missing=missing, unit=allowed.unit, **allowed.bounds)


def _derived(problems, value, kind, formula):
    """``value`` (computed from other fields, written as ``formula``) checked against ``RANGES[kind]``;
    None, with a problem appended to ``problems``, if it is out of range."""
    allowed = RANGES[kind]
    if value is None or allowed.low <= value <= allowed.high:
        return value
    problems.append(f"{formula} = {value:g} {allowed.unit} must be {allowed.text()} (the range of {kind})")
    return None


def _size(problems, key, entries, what, limit):
    """At most ``limit`` ``entries`` in the array of tables ``key`` (``what`` names them in the message)."""
    if entries and len(entries) > limit:
        problems.append(f"{key} has {len(entries)} entries; at most {limit} {what} are supported "
                        f"({SIZES[what][1]})")


def _coordinate_count(problems, links):
    """The Model's size: one angle per joint, a rotor angle per flexible joint and the modes of every
    link of ``links``; more than :data:`MAX_COORDINATES` is refused up front (building would take minutes)."""
    if None in links or any(getattr(link, "modes", 0) is None for link in links):
        return
    count = sum(1 + (link.joint is not None and link.joint.kind == "flexible")
                + (link.modes.count or 0 if link.kind == "flexible" else 0) for link in links)
    if count > MAX_COORDINATES:
        problems.append(f"link: the arm has {count} coordinates (joint angles, rotor angles and modes); at most "
                        f"{MAX_COORDINATES} are supported ({SIZES['coordinates'][1]})")


def _gravity(problems, data):
    """The gravity vector, each component within its range."""
    gravity = vector(problems, data, "gravity", "", 2, (0.0, 0.0))
    if gravity is None:
        return None
    allowed = RANGES["gravity"]
    bad = [f"gravity[{k}] must be {allowed.text()} {allowed.unit}, got {show(g)}"
           for k, g in enumerate(gravity, start=1) if not allowed.low <= g <= allowed.high]
    problems += bad
    return None if bad else gravity


def _com(problems, table, path, length):
    """The rigid link's centre of mass: within ten link lengths of the joint, each component."""
    default = (length / 2, 0.0) if length is not None else None
    com = vector(problems, table, "com", path, 2, default)
    if com is None or length is None:
        return com
    limit = RANGES["com"].high * length
    bad = [f"{path}.com[{k}] must be within {RANGES['com'].high:g} link lengths of the joint "
           f"(|value| <= {limit:g} m), got {show(c)}" for k, c in enumerate(com, start=1) if abs(c) > limit]
    problems += bad
    return None if bad else com


def _link(problems, table, path):
    """One ``[[link]]`` table -> RigidLink / FlexibleLink (None if unusable)."""
    kind = link_kind(problems, table, path, _LINK_COMMON, _RIGID_ONLY, _FLEXIBLE_ONLY)
    length = _ranged(problems, table, "length", path, "length")
    if kind == "rigid":
        mass = _ranged(problems, table, "mass", path, "mass")
        com = _com(problems, table, path, length)
        inertia_default = mass * length**2 / 12 if None not in (mass, length) else None
        inertia = _ranged(problems, table, "inertia", path, "inertia", inertia_default)
        return RigidLink(length=length, mass=mass, com=com, inertia=inertia,
                         joint=_joint(problems, table, path))
    if kind == "flexible":
        mass_per_length = _mass_per_length(problems, table, path, length)
        bending_stiffness = _bending_stiffness(problems, table, path)
        modes = _modes(problems, table, path)
        return FlexibleLink(length=length, mass_per_length=mass_per_length,
                            EI=bending_stiffness, modes=modes,
                            joint=_joint(problems, table, path),
                            geometric_stiffening=boolean(problems, table, "geometric_stiffening", path, True))
    _joint(problems, table, path)  # still report its problems
    return None


def _link_frame(link):
    """The frame of a link's modes (None for a rigid link or unusable modes)."""
    if not isinstance(link, FlexibleLink) or link.modes is None or link.modes.family is None:
        return None
    return FAMILIES[link.modes.family].frame or link.modes.frame


def _check_prescribed(problems, links):
    """A prescribed joint drives the coordinate theta[j] itself, so its torque
    must act on theta[j] alone: on a rigid joint between links whose frames
    are tangent at that joint (a rigid or tangent-framed link j, and a rigid
    or tangent-framed link j-1). A chord frame turns the joint's torque into
    modal forces too (paper 000 eq. 29-32). An arm whose joints are all
    prescribed needs a flexible link: otherwise nothing is left to simulate."""
    if links and all(isinstance(link, RigidLink) and link.joint is not None and link.joint.prescribed
                     for link in links):
        problems.append("link: every joint is prescribed and every link rigid, so the arm has no state left to "
                        "simulate; make a joint torque-driven (prescribed = false) or a link flexible")
    for j, link in enumerate(links, start=1):
        joint = link.joint if link is not None else None
        if joint is None or not joint.prescribed:
            continue
        where = f"link[{j}].joint.prescribed"
        if joint.kind != "rigid":
            problems.append(f"{where} is only allowed for a rigid joint (kind = \"rigid\"); joint {j} is "
                            f"{joint.kind} (prescribing a rotor angle is not supported)")
            continue
        chord = [i for i in (j - 1, j) if i >= 1 and _link_frame(links[i - 1]) == "chord"]
        if chord:
            problems.append(f"{where} needs tangent frames at joint {j}, but link {chord[0]} has chord-framed "
                            f"modes ({links[chord[0] - 1].modes.family}), whose slope at the joint the torque "
                            f"also drives; use a clamped family (tangent frame) there")


def _mass_per_length(problems, table, path, length):
    """Exactly one of ``mass`` (total) or ``mass_per_length``."""
    if "mass" in table and "mass_per_length" in table:
        problems.append(f"{path}.mass and {path}.mass_per_length are both given "
                        f"({show(table['mass'])} and {show(table['mass_per_length'])}); give one")
        return None
    if "mass" in table:
        mass = _ranged(problems, table, "mass", path, "mass")
        per_length = mass / length if None not in (mass, length) else None
        return _derived(problems, per_length, "mass_per_length", f"{path}.mass / {path}.length")
    return _ranged(problems, table, "mass_per_length", path, "mass_per_length",
                  missing=f" (or give the total {path}.mass)")


def _bending_stiffness(problems, table, path):
    """Exactly one of ``EI`` or both ``E`` and ``I``."""
    given = [key for key in ("E", "I") if key in table]
    if "EI" in table and given:
        problems.append(f"{path}.EI and {path}.{' and '.join(given)} are both given; "
                        f"give EI or both E and I")
        return None
    if "EI" in table or not given:
        return _ranged(problems, table, "EI", path, "EI", missing=f" (or give both {path}.E and {path}.I)")
    e_mod = _ranged(problems, table, "E", path, "E", missing=" together with I (or give EI)")
    area = _ranged(problems, table, "I", path, "I", missing=" together with E (or give EI)")
    product = e_mod * area if None not in (e_mod, area) else None
    return _derived(problems, product, "EI", f"{path}.E * {path}.I")


def _modes(problems, link_table, link_path):
    """The ``[link.modes]`` table of a flexible link."""
    table = sub_table(problems, link_table, "modes", link_path, required=True)
    if table is None:
        return None
    path = f"{link_path}.modes"
    family = string(problems, table, "family", path, REQUIRED, tuple(FAMILIES))
    owner = {key: name for name, fam in FAMILIES.items() for key in fam.keys}
    own = FAMILIES[family].keys if family else tuple(owner)
    elsewhere = {key: f'is only allowed for family "{name}"' for key, name in owner.items()}
    check_keys(problems, table, path, MODE_KEYS + own, elsewhere)

    shapes, frame = (), None
    if family == "user":
        frame = string(problems, table, "frame", path, REQUIRED, FRAMES)
        shapes = _shapes(problems, table, path, frame)
        count = integer(problems, table, "count", path, 1, MAX_MODES,
                         len(shapes) if shapes else None)
        if shapes and count is not None and count != len(shapes):
            problems.append(f"{path}.count must equal the number of shapes ({len(shapes)}), "
                            f"got {count}")
            count = None
    else:
        count = integer(problems, table, "count", path, 1, MAX_MODES)
    tip_mass = tip_inertia = None
    if "tip_mass" in own and family:
        tip_mass = _ranged(problems, table, "tip_mass", path, "added_mass", None)
        tip_inertia = _ranged(problems, table, "tip_inertia", path, "added_inertia", None)
    damping_kind, damping = _damping(problems, table, path, count)
    return Modes(family=family, count=count, damping_kind=damping_kind, damping=damping,
                 shapes=shapes or (), tip_mass=tip_mass, tip_inertia=tip_inertia, frame=frame)


def _damping(problems, table, path, count):
    """At most one of ``damping_ratio`` / ``damping_coefficient``, a number
    (same for every mode) or a list of ``count`` numbers."""
    if "damping_ratio" in table and "damping_coefficient" in table:
        problems.append(f"{path}.damping_ratio and {path}.damping_coefficient are both given; "
                        f"give at most one")
        return "ratio", None
    if "damping_coefficient" in table:
        allowed = RANGES["damping_coefficient"]
        key, kind, bounds = "damping_coefficient", "coefficient", {**allowed.bounds, "unit": allowed.unit}
    elif "damping_ratio" in table:
        key, kind, bounds = "damping_ratio", "ratio", {"ge": DAMPING_RATIO.low, "lt": DAMPING_RATIO.high}
    else:
        return "ratio", (0.0,) * count if count is not None else None
    where, value = f"{path}.{key}", table[key]
    if isinstance(value, (list, tuple)):
        if count is not None and len(value) != count:
            problems.append(f"{where} must have {count} values (one per mode), "
                            f"got {show(value)} ({plural(len(value), 'value')})")
            return kind, None
        items = [as_number(problems, item, f"{where}[{i}]", **bounds)
                 for i, item in enumerate(value, start=1)]
        return kind, None if None in items else tuple(items)
    if not is_number(value):
        problems.append(f"{where} must be a number or a list of one number per mode, "
                        f"got {show(value)} ({type_name(value)})")
        return kind, None
    single = as_number(problems, value, where, **bounds)
    if single is None or count is None:
        return kind, None
    return kind, (single,) * count


def _shapes(problems, table, path, frame):
    """The ``shapes`` of a user family: 1..20 valid expressions in xi."""
    where = f"{path}.shapes"
    if "shapes" not in table:
        problems.append(f'{where} is required for family "user" (a list of expressions in xi)')
        return None
    value = table["shapes"]
    if not isinstance(value, (list, tuple)) or not all(isinstance(s, str) for s in value):
        problems.append(f"{where} must be a list of strings (expressions in xi), "
                        f"got {show(value)}")
        return None
    if not 1 <= len(value) <= MAX_MODES:
        problems.append(f"{where} must hold 1..{MAX_MODES} shapes, got {len(value)}")
        return None
    bad = False
    for i, text in enumerate(value, start=1):
        reason = shape_problem(text, frame)
        if reason is not None:
            problems.append(f"{where}[{i}] = {text!r} {reason}")
            bad = True
    if bad:
        return None
    dependent = shape_set_problem(value)
    if dependent is not None:
        problems.append(f"{where}: {dependent}")
        return None
    return tuple(value)


def _joint(problems, link_table, link_path):
    """The optional ``[link.joint]`` table (absent -> a rigid joint)."""
    table = sub_table(problems, link_table, "joint", link_path)
    if table is None:
        return None
    path = f"{link_path}.joint"
    kind = string(problems, table, "kind", path, "rigid", JOINT_KINDS)
    if kind == "rigid":
        check_keys(problems, table, path, _JOINT_COMMON,
                    {key: 'is only allowed for a flexible joint (kind = "flexible")'
                     for key in _FLEXIBLE_JOINT_ONLY})
    else:
        check_keys(problems, table, path, _JOINT_COMMON + _FLEXIBLE_JOINT_ONLY)
    if kind == "flexible":
        stiffness = _ranged(problems, table, "stiffness", path, "stiffness",
                           missing=" for a flexible joint (must be > 0)")
        spring_damping = _ranged(problems, table, "spring_damping", path, "spring_damping", 0.0)
        rotor_inertia = _ranged(problems, table, "rotor_inertia", path, "flexible_rotor_inertia",
                               missing=" for a flexible joint (must be > 0)")
    else:
        stiffness = spring_damping = 0.0
        rotor_inertia = _ranged(problems, table, "rotor_inertia", path, "rotor_inertia", 0.0)
    return Joint(
        kind=kind,
        prescribed=boolean(problems, table, "prescribed", path, False),
        stiffness=stiffness,
        spring_damping=spring_damping,
        rotor_inertia=rotor_inertia,
        gear_ratio=_ranged(problems, table, "gear_ratio", path, "gear_ratio", 1.0),
        viscous_friction=_ranged(problems, table, "viscous_friction", path, "viscous_friction", 0.0),
        coulomb_friction=_ranged(problems, table, "coulomb_friction", path, "coulomb_friction", 0.0),
        coulomb_velocity=_ranged(problems, table, "coulomb_velocity", path, "coulomb_velocity", 0.01),
    )


def _lumped_mass(problems, table, path, link_count):
    """One ``[[lumped_mass]]`` table."""
    check_keys(problems, table, path, LUMPED_KEYS)
    return LumpedMass(
        link=integer(problems, table, "link", path, 1, link_count),
        position=number(problems, table, "position", path, ge=0, le=1),
        mass=_ranged(problems, table, "mass", path, "added_mass"),
        inertia=_ranged(problems, table, "inertia", path, "added_inertia", 0.0),
    )
