"""The parts of a serial arm's file that planar and spatial arms read alike.

A joint (``[link.joint]``: spring, rotor, gear, friction, prescribed), a
flexible link's mass (total or per length) and its modes (``family``,
``count``, damping, a ``user`` family's shapes and frame), numbers checked
against their physical range (:mod:`flexfmu.spec.ranges`) and the size of
an array of tables: written once here, so both kinds check them alike
(:mod:`flexfmu.spec.planar`, :mod:`flexfmu.spec.spatial`). Each function
appends every problem it finds to ``problems`` and returns the checked
value, or None if it is unusable, as :mod:`flexfmu.spec.checks` does.
"""

from __future__ import annotations

from flexfmu.spec.arm import FRAMES, JOINT_KINDS, Joint, Modes
from flexfmu.spec.checks import (
    MODE_KEYS,
    REQUIRED,
    as_number,
    boolean,
    check_keys,
    integer,
    is_number,
    number,
    plural,
    show,
    string,
    sub_table,
    type_name,
)
from flexfmu.spec.ranges import DAMPING_RATIO, MAX_MODES, RANGES, SIZES
from flexfmu.spec.shapes import shape_problem, shape_set_problem

JOINT_COMMON = ("kind", "rotor_inertia", "gear_ratio", "viscous_friction",
                "coulomb_friction", "coulomb_velocity", "prescribed", "start_angle")
FLEXIBLE_JOINT_ONLY = ("stiffness", "spring_damping")


def ranged(problems, table, key, path, kind, default=REQUIRED, missing=""):
    """The number at ``table[key]`` checked against the physical range of its ``kind``, ``RANGES[kind]``
    (:mod:`flexfmu.spec.ranges`); ``problems``, ``table``, ``key``, ``path``, ``default`` and ``missing`` as for
    :func:`flexfmu.spec.checks.number`."""
    allowed = RANGES[kind]
    return number(problems, table, key, path, default, missing=missing, unit=allowed.unit, **allowed.bounds)


def derived(problems, value, kind, formula):
    """``value`` (computed from other fields, written as ``formula``) checked against the range of its
    ``kind``, ``RANGES[kind]``; None, with a problem appended to ``problems``, if it is out of range."""
    allowed = RANGES[kind]
    if value is None or allowed.low <= value <= allowed.high:
        return value
    problems.append(f"{formula} = {value:g} {allowed.unit} must be {allowed.text()} (the range of {kind})")
    return None


def size(problems, key, entries, what, limit):
    """At most ``limit`` ``entries`` in the array of tables ``key`` (``what`` names them in the message, a
    key of :data:`flexfmu.spec.ranges.SIZES`); problems go to ``problems``."""
    if entries and len(entries) > limit:
        problems.append(f"{key} has {len(entries)} entries; at most {limit} {what} are supported "
                        f"({SIZES[what][1]})")


def mass_per_length(problems, table, path, length):
    """Exactly one of ``mass`` (total, over the ``length``) or ``mass_per_length`` in the link ``table`` at
    ``path``; problems go to ``problems``."""
    if "mass" in table and "mass_per_length" in table:
        problems.append(f"{path}.mass and {path}.mass_per_length are both given "
                        f"({show(table['mass'])} and {show(table['mass_per_length'])}); give one")
        return None
    if "mass" in table:
        mass = ranged(problems, table, "mass", path, "mass")
        per_length = mass / length if None not in (mass, length) else None
        return derived(problems, per_length, "mass_per_length", f"{path}.mass / {path}.length")
    return ranged(problems, table, "mass_per_length", path, "mass_per_length",
                  missing=f" (or give the total {path}.mass)")


def joint(problems, link_table, link_path):
    """The optional ``[link.joint]`` table of ``link_table`` at ``link_path`` (absent -> a rigid joint);
    problems go to ``problems``."""
    table = sub_table(problems, link_table, "joint", link_path)
    if table is None:
        return None
    path = f"{link_path}.joint"
    kind = string(problems, table, "kind", path, "rigid", JOINT_KINDS)
    if kind == "rigid":
        check_keys(problems, table, path, JOINT_COMMON,
                    {key: 'is only allowed for a flexible joint (kind = "flexible")'
                     for key in FLEXIBLE_JOINT_ONLY})
    else:
        check_keys(problems, table, path, JOINT_COMMON + FLEXIBLE_JOINT_ONLY)
    if kind == "flexible":
        stiffness = ranged(problems, table, "stiffness", path, "stiffness",
                           missing=" for a flexible joint (must be > 0)")
        spring_damping = ranged(problems, table, "spring_damping", path, "spring_damping", 0.0)
        rotor_inertia = ranged(problems, table, "rotor_inertia", path, "flexible_rotor_inertia",
                               missing=" for a flexible joint (must be > 0)")
    else:
        stiffness = spring_damping = 0.0
        rotor_inertia = ranged(problems, table, "rotor_inertia", path, "rotor_inertia", 0.0)
    prescribed = boolean(problems, table, "prescribed", path, False)
    start_angle = ranged(problems, table, "start_angle", path, "start_angle", 0.0)
    if prescribed and start_angle:
        problems.append(f"{path}.start_angle must be 0 on a prescribed joint (its motion starts it), got "
                        f"{show(table['start_angle'])}")
        start_angle = None
    return Joint(
        kind=kind,
        prescribed=prescribed,
        stiffness=stiffness,
        spring_damping=spring_damping,
        rotor_inertia=rotor_inertia,
        gear_ratio=ranged(problems, table, "gear_ratio", path, "gear_ratio", 1.0),
        viscous_friction=ranged(problems, table, "viscous_friction", path, "viscous_friction", 0.0),
        coulomb_friction=ranged(problems, table, "coulomb_friction", path, "coulomb_friction", 0.0),
        coulomb_velocity=ranged(problems, table, "coulomb_velocity", path, "coulomb_velocity", 0.01),
        start_angle=start_angle,
    )


def modes(problems, link_table, link_path, families):
    """The ``[link.modes]`` table of a flexible link (``link_table`` at ``link_path``), its family one of
    ``families`` (:data:`flexfmu.modes.families.FAMILIES`: name -> row with ``keys``), with that family's
    own keys; problems go to ``problems``."""
    table = sub_table(problems, link_table, "modes", link_path, required=True)
    if table is None:
        return None
    path = f"{link_path}.modes"
    family = string(problems, table, "family", path, REQUIRED, tuple(families))
    owner = {key: name for name, fam in families.items() for key in fam.keys}
    own = families[family].keys if family else tuple(owner)
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
        tip_mass = ranged(problems, table, "tip_mass", path, "added_mass", None)
        tip_inertia = ranged(problems, table, "tip_inertia", path, "added_inertia", None)
    damping_kind, per_mode = damping(problems, table, path, count)
    return Modes(family=family, count=count, damping_kind=damping_kind, damping=per_mode,
                 shapes=shapes or (), tip_mass=tip_mass, tip_inertia=tip_inertia, frame=frame)


def damping(problems, table, path, count):
    """(kind, one value per mode) of the mode ``table`` at ``path``: at most one of ``damping_ratio`` /
    ``damping_coefficient``, a number (same for every mode) or a list of ``count`` numbers; problems go to
    ``problems``."""
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
