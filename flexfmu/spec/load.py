"""Read an arm specification (TOML or a plain dict) into an :class:`Arm`.

Why a hand-written validator: the format is small, and the user gets far more
from a message such as ``link[2].length must be > 0, got -0.4`` than from a
schema library's traceback. Every check appends to one list of problems and
the loader raises a single :class:`SpecError` at the end, so a file with five
mistakes reports all five at once. The format itself is described in
``docs/spec.md``; this module is its executable form.

Paths in messages are 1-based everywhere (``link[1]``, ``gravity[2]``,
``link[2].modes.shapes[1]``), matching how links are numbered in the arm.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

from flexfmu.data import resolve_arm
from flexfmu.errors import InputError
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
from flexfmu.spec.errors import SpecError
from flexfmu.spec.families import FAMILIES, FRAMES, MAX_MODES
from flexfmu.spec.shapes import shape_problem

__all__ = ["load_arm", "arm_from_dict"]

_REQUIRED = object()  # default meaning "this key must be present"

_TOP_KEYS = ("name", "description", "gravity", "link", "lumped_mass", "payload")
_LINK_KINDS = ("rigid", "flexible")
_LINK_COMMON = ("kind", "length", "mass", "joint")
_RIGID_ONLY = ("com", "inertia")
_FLEXIBLE_ONLY = ("mass_per_length", "EI", "E", "I", "modes")
_MODES_COMMON = ("family", "count", "damping_ratio", "damping_coefficient")
_JOINT_COMMON = ("kind", "rotor_inertia", "gear_ratio", "viscous_friction",
                 "coulomb_friction", "coulomb_velocity")
_FLEXIBLE_JOINT_ONLY = ("stiffness", "spring_damping")
_LUMPED_KEYS = ("link", "position", "mass", "inertia")
_PAYLOAD_KEYS = ("mass", "inertia")


# ----------------------------------------------------------------- entry points


def load_arm(path: str | Path) -> Arm:
    """Load and validate the arm specification in a TOML file.

    Parameters
    ----------
    path : str or pathlib.Path
        The TOML file, or the name of an example arm (``"yu_chen_2dof"``,
        see :func:`flexfmu.data.arm_names`).

    Returns
    -------
    Arm
        The validated arm, with defaults filled in and derived quantities
        (``mass_per_length``, ``EI``, per-mode damping) computed.

    Raises
    ------
    SpecError
        If the file is not valid TOML (the message names the line) or the
        specification has problems (all of them are listed).
    InputError
        If the file does not exist, is a folder or cannot be read.
    """
    path = resolve_arm(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"arm {str(path)!r} cannot be read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SpecError([f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})"],
                        str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError([_toml_problem(str(exc))], str(path)) from None
    return arm_from_dict(data, source=str(path))


def arm_from_dict(data: Mapping, source: str = "<dict>") -> Arm:
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
        raise SpecError([f"the specification must be a table, got {_show(data)}"], source)
    _check_keys(problems, data, "", _TOP_KEYS)
    name = _string(problems, data, "name", "", _REQUIRED)
    if name is not None and not name.strip():
        problems.append("name must not be empty")
    description = _string(problems, data, "description", "", "")
    gravity = _vector(problems, data, "gravity", "", 2, (0.0, 0.0))

    link_tables = _tables(problems, data, "link", required=True)
    links = [_link(problems, table, f"link[{i}]")
             for i, table in enumerate(link_tables or [], start=1) if table is not None]
    link_count = len(link_tables) if link_tables else None
    lumped = [_lumped_mass(problems, table, f"lumped_mass[{i}]", link_count)
              for i, table in enumerate(_tables(problems, data, "lumped_mass") or [], start=1)
              if table is not None]
    payload_table = _table(problems, data, "payload", "")
    payload = None
    if payload_table is not None:
        _check_keys(problems, payload_table, "payload", _PAYLOAD_KEYS)
        payload = Payload(mass=_number(problems, payload_table, "mass", "payload", 0.0, ge=0),
                          inertia=_number(problems, payload_table, "inertia", "payload", 0.0, ge=0))

    if problems:
        raise SpecError(problems, source)
    return Arm(name=name, links=tuple(links), description=description,
               lumped_masses=tuple(lumped), payload=payload, gravity=gravity)


def _toml_problem(message: str) -> str:
    """Turn tomllib's "<what> (at line L, column C)" into "line L, ...: <what>"."""
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", message)
    if found is None:
        return f"invalid TOML: {message}"
    what = message[: found.start()]
    return f"invalid TOML at line {found.group(1)}, column {found.group(2)}: {what}"


# -------------------------------------------------------------- generic checks
# Each helper appends its problems to ``problems`` and returns the checked
# value, the default if the key is absent, or None if the value is unusable.


def _show(value) -> str:
    """Render a bad value for a message: repr, shortened if long."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_name(value) -> str:
    return {dict: "table", list: "list", str: "string", bool: "boolean"}.get(
        type(value), type(value).__name__)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_keys(problems, table, path, allowed, elsewhere=None) -> None:
    """Reject keys not in ``allowed``; ``elsewhere`` maps keys that are valid
    in another variant (kind, family) to the reason they are not valid here."""
    elsewhere = elsewhere or {}
    for key in table:
        if key in allowed:
            continue
        where = _join(path, str(key))
        if key in elsewhere:
            problems.append(f"{where} {elsewhere[key]}")
            continue
        close = difflib.get_close_matches(str(key), allowed, n=1)
        hint = f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(allowed)
        problems.append(f"{where} is not a known key; {hint}")


def _bounds(gt=None, ge=None, lt=None, le=None) -> str:
    if ge is not None and le is not None:
        return f"in [{ge:g}, {le:g}]"
    parts = [f"{op} {bound:g}" for op, bound in ((">", gt), (">=", ge), ("<", lt), ("<=", le))
             if bound is not None]
    return " and ".join(parts)


def _as_number(problems, value, where, *, gt=None, ge=None, lt=None, le=None):
    """Check one value is a finite number within the bounds; return a float."""
    if not _is_number(value):
        problems.append(f"{where} must be a number, got {_show(value)} ({_type_name(value)})")
        return None
    x = float(value)
    if not math.isfinite(x):
        problems.append(f"{where} must be finite, got {_show(value)}")
        return None
    if ((gt is not None and not x > gt) or (ge is not None and not x >= ge)
            or (lt is not None and not x < lt) or (le is not None and not x <= le)):
        problems.append(f"{where} must be {_bounds(gt, ge, lt, le)}, got {_show(value)}")
        return None
    return x


def _number(problems, table, key, path, default=_REQUIRED, *, missing="", **bounds):
    """Checked float at ``table[key]``; ``missing`` completes "is required"."""
    if key not in table:
        if default is _REQUIRED:
            problems.append(f"{_join(path, key)} is required{missing}")
            return None
        return default
    return _as_number(problems, table[key], _join(path, key), **bounds)


def _integer(problems, table, key, path, low, high=None, default=_REQUIRED):
    """Checked int in ``low..high`` (``high`` None means unbounded)."""
    where = _join(path, key)
    if key not in table:
        if default is _REQUIRED:
            problems.append(f"{where} is required")
            return None
        return default
    value = table[key]
    limits = f"{low}..{high}" if high is not None else f">= {low}"
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        problems.append(f"{where} must be an integer {limits}, "
                        f"got {_show(value)} ({_type_name(value)})")
        return None
    if value < low or (high is not None and value > high):
        problems.append(f"{where} must be an integer {limits}, got {_show(value)}")
        return None
    return int(value)


def _string(problems, table, key, path, default=_REQUIRED, choices=None):
    """Checked str, optionally one of ``choices`` (with a spelling hint)."""
    where = _join(path, key)
    if key not in table:
        if default is _REQUIRED:
            what = " (one of " + ", ".join(map(repr, choices)) + ")" if choices else ""
            problems.append(f"{where} is required{what}")
            return None
        return default
    value = table[key]
    if not isinstance(value, str):
        problems.append(f"{where} must be a string, got {_show(value)} ({_type_name(value)})")
        return None
    if choices is not None and value not in choices:
        close = difflib.get_close_matches(value, choices, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        problems.append(f"{where} must be one of {', '.join(map(repr, choices))}, "
                        f"got {value!r}{hint}")
        return None
    return value


def _vector(problems, table, key, path, size, default=_REQUIRED):
    """Checked list of exactly ``size`` finite numbers, as a tuple of floats."""
    where = _join(path, key)
    if key not in table:
        if default is _REQUIRED:
            problems.append(f"{where} is required")
            return None
        return default
    value = table[key]
    if not isinstance(value, (list, tuple)) or len(value) != size:
        got = _count(len(value), "item") if isinstance(value, (list, tuple)) else _type_name(value)
        problems.append(f"{where} must be a list of {size} numbers, got {_show(value)} ({got})")
        return None
    items = [_as_number(problems, item, f"{where}[{i}]") for i, item in enumerate(value, start=1)]
    return None if None in items else tuple(items)


def _table(problems, table, key, path, required=False):
    """Sub-table at ``key``: {} if absent and optional, None if unusable."""
    where = _join(path, key)
    if key not in table:
        if required:
            problems.append(f"{where} is required (a [{where}] table)")
            return None
        return {}
    value = table[key]
    if not isinstance(value, Mapping):
        problems.append(f"{where} must be a table, got {_show(value)} ({_type_name(value)})")
        return None
    return value


def _tables(problems, table, key, required=False):
    """Array of tables at ``key``: a list with None for unusable entries,
    [] if absent and optional, None if the array itself is unusable."""
    if key not in table:
        if required:
            problems.append(f"{key} is required (at least one [[{key}]] table)")
            return None
        return []
    value = table[key]
    if not isinstance(value, (list, tuple)):
        problems.append(f"{key} must be an array of tables ([[{key}]]), got {_show(value)}")
        return None
    if required and not value:
        problems.append(f"{key} must have at least one entry ([[{key}]]), got []")
        return None
    entries = []
    for i, item in enumerate(value, start=1):
        if not isinstance(item, Mapping):
            problems.append(f"{key}[{i}] must be a table, got {_show(item)} ({_type_name(item)})")
            item = None
        entries.append(item)
    return entries


# --------------------------------------------------------------------- pieces


def _other_kind_keys(keys, kind, other):
    """Map keys valid only on ``other`` links to why a ``kind`` link rejects them."""
    return {key: f"is not a known key for a {kind} link; only {other} links take it"
            for key in keys}


def _link(problems, table, path):
    """One ``[[link]]`` table -> RigidLink / FlexibleLink (None if unusable)."""
    kind = _string(problems, table, "kind", path, _REQUIRED, _LINK_KINDS)
    if kind == "rigid":
        _check_keys(problems, table, path, _LINK_COMMON + _RIGID_ONLY,
                    _other_kind_keys(_FLEXIBLE_ONLY, "rigid", "flexible"))
    elif kind == "flexible":
        _check_keys(problems, table, path, _LINK_COMMON + _FLEXIBLE_ONLY,
                    _other_kind_keys(_RIGID_ONLY, "flexible", "rigid"))
    else:
        _check_keys(problems, table, path, _LINK_COMMON + _RIGID_ONLY + _FLEXIBLE_ONLY)
    length = _number(problems, table, "length", path, gt=0)
    if kind == "rigid":
        mass = _number(problems, table, "mass", path, gt=0)
        com_default = (length / 2, 0.0) if length is not None else None
        com = _vector(problems, table, "com", path, 2, com_default)
        inertia_default = mass * length**2 / 12 if None not in (mass, length) else None
        inertia = _number(problems, table, "inertia", path, inertia_default, ge=0)
        return RigidLink(length=length, mass=mass, com=com, inertia=inertia,
                         joint=_joint(problems, table, path))
    if kind == "flexible":
        mass_per_length = _mass_per_length(problems, table, path, length)
        bending_stiffness = _bending_stiffness(problems, table, path)
        modes = _modes(problems, table, path)
        return FlexibleLink(length=length, mass_per_length=mass_per_length,
                            EI=bending_stiffness, modes=modes,
                            joint=_joint(problems, table, path))
    _joint(problems, table, path)  # still report its problems
    return None


def _mass_per_length(problems, table, path, length):
    """Exactly one of ``mass`` (total) or ``mass_per_length``."""
    if "mass" in table and "mass_per_length" in table:
        problems.append(f"{path}.mass and {path}.mass_per_length are both given "
                        f"({_show(table['mass'])} and {_show(table['mass_per_length'])}); give one")
        return None
    if "mass" in table:
        mass = _number(problems, table, "mass", path, gt=0)
        return mass / length if None not in (mass, length) else None
    return _number(problems, table, "mass_per_length", path, gt=0,
                   missing=f" (or give the total {path}.mass)")


def _bending_stiffness(problems, table, path):
    """Exactly one of ``EI`` or both ``E`` and ``I``."""
    given = [key for key in ("E", "I") if key in table]
    if "EI" in table and given:
        problems.append(f"{path}.EI and {path}.{' and '.join(given)} are both given; "
                        f"give EI or both E and I")
        return None
    if "EI" in table or not given:
        return _number(problems, table, "EI", path, gt=0,
                       missing=f" (or give both {path}.E and {path}.I)")
    e_mod = _number(problems, table, "E", path, gt=0, missing=" together with I (or give EI)")
    area = _number(problems, table, "I", path, gt=0, missing=" together with E (or give EI)")
    return e_mod * area if None not in (e_mod, area) else None


def _modes(problems, link_table, link_path):
    """The ``[link.modes]`` table of a flexible link."""
    table = _table(problems, link_table, "modes", link_path, required=True)
    if table is None:
        return None
    path = f"{link_path}.modes"
    family = _string(problems, table, "family", path, _REQUIRED, tuple(FAMILIES))
    owner = {key: name for name, fam in FAMILIES.items() for key in fam.keys}
    own = FAMILIES[family].keys if family else tuple(owner)
    elsewhere = {key: f'is only allowed for family "{name}"' for key, name in owner.items()}
    _check_keys(problems, table, path, _MODES_COMMON + own, elsewhere)

    shapes, frame = (), None
    if family == "user":
        frame = _string(problems, table, "frame", path, _REQUIRED, FRAMES)
        shapes = _shapes(problems, table, path, frame)
        count = _integer(problems, table, "count", path, 1, MAX_MODES,
                         len(shapes) if shapes else None)
        if shapes and count is not None and count != len(shapes):
            problems.append(f"{path}.count must equal the number of shapes ({len(shapes)}), "
                            f"got {count}")
            count = None
    else:
        count = _integer(problems, table, "count", path, 1, MAX_MODES)
    tip_mass = tip_inertia = None
    if "tip_mass" in own and family:
        tip_mass = _number(problems, table, "tip_mass", path, None, ge=0)
        tip_inertia = _number(problems, table, "tip_inertia", path, None, ge=0)
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
        key, kind, bounds = "damping_coefficient", "coefficient", {"ge": 0}
    elif "damping_ratio" in table:
        key, kind, bounds = "damping_ratio", "ratio", {"ge": 0, "lt": 1}
    else:
        return "ratio", (0.0,) * count if count is not None else None
    where, value = f"{path}.{key}", table[key]
    if isinstance(value, (list, tuple)):
        if count is not None and len(value) != count:
            problems.append(f"{where} must have {count} values (one per mode), "
                            f"got {_show(value)} ({_count(len(value), 'value')})")
            return kind, None
        items = [_as_number(problems, item, f"{where}[{i}]", **bounds)
                 for i, item in enumerate(value, start=1)]
        return kind, None if None in items else tuple(items)
    if not _is_number(value):
        problems.append(f"{where} must be a number or a list of one number per mode, "
                        f"got {_show(value)} ({_type_name(value)})")
        return kind, None
    single = _as_number(problems, value, where, **bounds)
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
                        f"got {_show(value)}")
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
    return None if bad else tuple(value)


def _joint(problems, link_table, link_path):
    """The optional ``[link.joint]`` table (absent -> a rigid joint)."""
    table = _table(problems, link_table, "joint", link_path)
    if table is None:
        return None
    path = f"{link_path}.joint"
    kind = _string(problems, table, "kind", path, "rigid", JOINT_KINDS)
    if kind == "rigid":
        _check_keys(problems, table, path, _JOINT_COMMON,
                    {key: 'is only allowed for a flexible joint (kind = "flexible")'
                     for key in _FLEXIBLE_JOINT_ONLY})
    else:
        _check_keys(problems, table, path, _JOINT_COMMON + _FLEXIBLE_JOINT_ONLY)
    if kind == "flexible":
        stiffness = _number(problems, table, "stiffness", path, gt=0,
                            missing=" for a flexible joint (must be > 0)")
        spring_damping = _number(problems, table, "spring_damping", path, 0.0, ge=0)
        rotor_inertia = _number(problems, table, "rotor_inertia", path, gt=0,
                                missing=" for a flexible joint (must be > 0)")
    else:
        stiffness = spring_damping = 0.0
        rotor_inertia = _number(problems, table, "rotor_inertia", path, 0.0, ge=0)
    return Joint(
        kind=kind,
        stiffness=stiffness,
        spring_damping=spring_damping,
        rotor_inertia=rotor_inertia,
        gear_ratio=_number(problems, table, "gear_ratio", path, 1.0, gt=0),
        viscous_friction=_number(problems, table, "viscous_friction", path, 0.0, ge=0),
        coulomb_friction=_number(problems, table, "coulomb_friction", path, 0.0, ge=0),
        coulomb_velocity=_number(problems, table, "coulomb_velocity", path, 0.01, gt=0),
    )


def _lumped_mass(problems, table, path, link_count):
    """One ``[[lumped_mass]]`` table."""
    _check_keys(problems, table, path, _LUMPED_KEYS)
    return LumpedMass(
        link=_integer(problems, table, "link", path, 1, link_count),
        position=_number(problems, table, "position", path, ge=0, le=1),
        mass=_number(problems, table, "mass", path, ge=0),
        inertia=_number(problems, table, "inertia", path, 0.0, ge=0),
    )
