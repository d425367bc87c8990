"""The generic checks of the spec loaders: one problem list, field paths in messages.

Each check reads one key of a table, appends every problem it finds to
``problems`` (a message naming the field path and the value at fault) and
returns the checked value, the default if the key is absent, or None if the
value is unusable, so a loader reports all of a file's problems at once.
Paths are 1-based (``link[2].length``). The loaders of each arm kind
(``flexfmu.spec.planar``, ...) are written with these.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Mapping

REQUIRED = object()  # default meaning "this key must be present"
MODE_KEYS = ("family", "count", "damping_ratio", "damping_coefficient")  # a mode table's keys, planar and spatial
LUMPED_KEYS = ("link", "position", "mass", "inertia")  # a [[lumped]] table's keys
PAYLOAD_KEYS = ("mass", "inertia")  # the [payload] table's keys


def show(value) -> str:
    """Render the bad ``value`` for a message: repr, shortened if long."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def type_name(value) -> str:
    """The TOML word for the type of ``value`` (table, list, string, boolean), else the Python type's name."""
    return {dict: "table", list: "list", str: "string", bool: "boolean"}.get(
        type(value), type(value).__name__)


def plural(n: int, noun: str) -> str:
    """``n`` and ``noun``, the noun with an ``s`` unless ``n`` is 1 ("1 item", "3 items")."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def join(path: str, key: str) -> str:
    """The field path of ``key`` in the table at ``path`` (the key alone at the top level)."""
    return f"{path}.{key}" if path else key


def look_up(problems, table, key, path, default, hint: str = "") -> tuple[bool, object]:
    """(True, ``table[key]``) when ``key`` is present in ``table``; else (False, what the validator returns):
    ``default``, or None after recording "<``path``.key> is required``hint``" in ``problems`` when ``default``
    is :data:`REQUIRED`."""
    if key in table:
        return True, table[key]
    if default is REQUIRED:
        problems.append(f"{join(path, key)} is required{hint}")
        return False, None
    return False, default


def is_number(value) -> bool:
    """Whether ``value`` is a real number; booleans are not, although Python counts them as ints."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_keys(problems, table, path, allowed, elsewhere=None) -> None:
    """Reject keys of ``table`` not in ``allowed``; ``elsewhere`` maps keys that are valid
    in another variant (kind, family) to the reason they are not valid here.
    Each unknown key is a problem appended to ``problems``, named by its field
    path under ``path``, with a spelling hint when one is close."""
    elsewhere = elsewhere or {}
    for key in table:
        if key in allowed:
            continue
        where = join(path, str(key))
        if key in elsewhere:
            problems.append(f"{where} {elsewhere[key]}")
            continue
        close = difflib.get_close_matches(str(key), allowed, n=1)
        hint = f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(allowed)
        problems.append(f"{where} is not a known key; {hint}")


def bounds_text(gt=None, ge=None, lt=None, le=None) -> str:
    """The bounds as message text ("> 0", "in [0, 1]", "in (0, 100]"): ``gt``, ``ge``, ``lt``, ``le`` as for
    :func:`as_number`."""
    low, high = (gt, "(") if gt is not None else (ge, "["), (lt, ")") if lt is not None else (le, "]")
    if low[0] is not None and high[0] is not None:
        return f"in {low[1]}{low[0]:g}, {high[0]:g}{high[1]}"
    parts = [f"{op} {bound:g}" for op, bound in ((">", gt), (">=", ge), ("<", lt), ("<=", le))
             if bound is not None]
    return " and ".join(parts)


def as_number(problems, value, where, *, gt=None, ge=None, lt=None, le=None, unit=""):
    """Check one value is a finite number within the bounds; return a float (None if it is not).

    Parameters
    ----------
    problems : list of str
        Where a problem is appended.
    value :
        The value to check.
    where : str
        Its field path in messages.
    gt, ge, lt, le : float, optional
        Bounds: value > gt, >= ge, < lt, <= le (None: no bound).
    unit : str
        The unit shown after the bounds in a message ("" or "1" for none).
    """
    if not is_number(value):
        problems.append(f"{where} must be a number, got {show(value)} ({type_name(value)})")
        return None
    try:
        x = float(value)
    except OverflowError:  # an integer beyond the range of a double
        x = math.inf if value > 0 else -math.inf
    if not math.isfinite(x):
        problems.append(f"{where} must be finite, got {show(value)}")
        return None
    if ((gt is not None and not x > gt) or (ge is not None and not x >= ge)
            or (lt is not None and not x < lt) or (le is not None and not x <= le)):
        shown = f" {unit}" if unit not in ("", "1") else ""
        problems.append(f"{where} must be {bounds_text(gt, ge, lt, le)}{shown}, got {show(value)}")
        return None
    return x


def number(problems, table, key, path, default=REQUIRED, *, missing="", **bounds):
    """Checked float at ``table[key]``; ``missing`` completes "is required".

    Parameters
    ----------
    problems, table, key, path : common
        The problem list appended to, the table read, the key checked in it and the table's path in messages.
    default : optional
        Returned when the key is absent; :data:`REQUIRED` (the default) makes its absence a problem.
    missing : str
        Appended to the "is required" message.
    **bounds :
        ``gt``, ``ge``, ``lt``, ``le`` and ``unit`` as for :func:`as_number`.
    """
    found, value = look_up(problems, table, key, path, default, missing)
    if not found:
        return value
    return as_number(problems, value, join(path, key), **bounds)


def integer(problems, table, key, path, low, high=None, default=REQUIRED):
    """Checked int in ``low..high`` (``high`` None means unbounded).

    Parameters
    ----------
    problems, table, key, path : common
        The problem list appended to, the table read, the key checked in it and the table's path in messages.
    low, high : int
        Smallest and largest allowed value.
    default : optional
        Returned when the key is absent; :data:`REQUIRED` (the default) makes its absence a problem.
    """
    where = join(path, key)
    found, value = look_up(problems, table, key, path, default)
    if not found:
        return value
    limits = f"{low}..{high}" if high is not None else f">= {low}"
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        problems.append(f"{where} must be an integer {limits}, "
                        f"got {show(value)} ({type_name(value)})")
        return None
    if value < low or (high is not None and value > high):
        problems.append(f"{where} must be an integer {limits}, got {show(value)}")
        return None
    return int(value)


def string(problems, table, key, path, default=REQUIRED, choices=None):
    """Checked str, optionally one of ``choices`` (with a spelling hint).

    Parameters
    ----------
    problems, table, key, path : common
        The problem list appended to, the table read, the key checked in it and the table's path in messages.
    default : optional
        Returned when the key is absent; :data:`REQUIRED` (the default) makes its absence a problem.
    choices : sequence of str, optional
        The allowed values (None: any string).
    """
    where = join(path, key)
    what = " (one of " + ", ".join(map(repr, choices)) + ")" if choices else ""
    found, value = look_up(problems, table, key, path, default, what)
    if not found:
        return value
    if not isinstance(value, str):
        problems.append(f"{where} must be a string, got {show(value)} ({type_name(value)})")
        return None
    if choices is not None and value not in choices:
        close = difflib.get_close_matches(value, choices, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        problems.append(f"{where} must be one of {', '.join(map(repr, choices))}, "
                        f"got {value!r}{hint}")
        return None
    return value


def boolean(problems, table, key, path, default=REQUIRED):
    """Checked bool (TOML ``true`` / ``false``) at ``table[key]``.

    Parameters
    ----------
    problems, table, key, path : common
        The problem list appended to, the table read, the key checked in it and the table's path in messages.
    default : optional
        Returned when the key is absent; :data:`REQUIRED` (the default) makes its absence a problem.
    """
    where = join(path, key)
    found, value = look_up(problems, table, key, path, default, " (true or false)")
    if not found:
        return value
    if not isinstance(value, bool):
        problems.append(f"{where} must be true or false, got {show(value)} ({type_name(value)})")
        return None
    return value


def vector(problems, table, key, path, size, default=REQUIRED):
    """Checked list of exactly ``size`` finite numbers, as a tuple of floats.

    Parameters
    ----------
    problems, table, key, path : common
        The problem list appended to, the table read, the key checked in it and the table's path in messages.
    size : int
        The required length.
    default : optional
        Returned when the key is absent; :data:`REQUIRED` (the default) makes its absence a problem.
    """
    where = join(path, key)
    found, value = look_up(problems, table, key, path, default)
    if not found:
        return value
    if not isinstance(value, (list, tuple)) or len(value) != size:
        got = plural(len(value), "item") if isinstance(value, (list, tuple)) else type_name(value)
        problems.append(f"{where} must be a list of {size} numbers, got {show(value)} ({got})")
        return None
    items = [as_number(problems, item, f"{where}[{i}]") for i, item in enumerate(value, start=1)]
    return None if None in items else tuple(items)


def sub_table(problems, table, key, path, required=False):
    """Sub-table at ``key`` of ``table``: {} if absent and optional, None if unusable.

    Parameters
    ----------
    problems, table, key, path : common
        The problem list appended to, the table read, the key checked in it and the table's path in messages.
    required : bool
        Whether an absent sub-table is a problem.
    """
    where = join(path, key)
    if key not in table:
        if required:
            problems.append(f"{where} is required (a [{where}] table)")
            return None
        return {}
    value = table[key]
    if not isinstance(value, Mapping):
        problems.append(f"{where} must be a table, got {show(value)} ({type_name(value)})")
        return None
    return value


def table_array(problems, table, key, required=False):
    """Array of tables at ``key``: a list with None for unusable entries,
    [] if absent and optional, None if the array itself is unusable.

    Parameters
    ----------
    problems : list of str
        Where problems are appended.
    table : Mapping
        The top-level table read (arrays of tables are top-level, so ``key`` is their path).
    key : str
        The array's key.
    required : bool
        Whether an absent or empty array is a problem.
    """
    if key not in table:
        if required:
            problems.append(f"{key} is required (at least one [[{key}]] table)")
            return None
        return []
    value = table[key]
    if not isinstance(value, (list, tuple)):
        problems.append(f"{key} must be an array of tables ([[{key}]]), got {show(value)}")
        return None
    if required and not value:
        problems.append(f"{key} must have at least one entry ([[{key}]]), got []")
        return None
    entries = []
    for i, item in enumerate(value, start=1):
        if not isinstance(item, Mapping):
            problems.append(f"{key}[{i}] must be a table, got {show(item)} ({type_name(item)})")
            item = None
        entries.append(item)
    return entries


def arm_name_and_description(problems, data) -> tuple:
    """(name, description) of an arm file's top-level table ``data``: a non-empty ``name`` and an optional
    ``description`` (every kind of arm has both).

    Parameters
    ----------
    problems : list of str
        Appended to.
    data : Mapping
        The arm file's top-level table.
    """
    name = string(problems, data, "name", "", REQUIRED)
    if name is not None and not name.strip():
        problems.append("name must not be empty")
    return name, string(problems, data, "description", "", "")


def link_kind(problems, table, path, common, rigid_only, flexible_only):
    """The ``kind`` of a ``[[link]]`` table (``rigid`` or ``flexible``, None if unusable), its keys checked:
    a key of the other kind is named as such ("only flexible links take it").

    Parameters
    ----------
    problems, table, path : common
        The problem list appended to, the link's table and its path in messages.
    common, rigid_only, flexible_only : tuple of str
        The keys every link, only a rigid link and only a flexible link take.
    """
    def other_kind(keys, kind, other):
        return {key: f"is not a known key for a {kind} link; only {other} links take it" for key in keys}

    kind = string(problems, table, "kind", path, REQUIRED, ("rigid", "flexible"))
    if kind == "rigid":
        check_keys(problems, table, path, common + rigid_only, other_kind(flexible_only, "rigid", "flexible"))
    elif kind == "flexible":
        check_keys(problems, table, path, common + flexible_only, other_kind(rigid_only, "flexible", "rigid"))
    else:
        check_keys(problems, table, path, common + rigid_only + flexible_only)
    return kind
