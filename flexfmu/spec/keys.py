"""Declared keys: what a table of a file (or a set of settings) may hold, checked the same way everywhere.

The rows of flexfmu's tables (scenario references, motion profiles,
control laws, planners) and the scenario file itself declare the keys their
table takes as :class:`Key` records: the name, the type, whether it is
required or its default, the range, the unit and one line of help.
:func:`read_keys` checks a table against them with the spec's checks
(:mod:`flexfmu.spec.checks`: unknown keys with "did you mean", missing
required keys, types and ranges, every problem named by its field path) and
returns the values, so a checker, a message or a page of docs can treat
every row alike. A key whose length depends on the arm (``per_joint``: one
entry per torque-driven joint) is checked against the arm by
:func:`joint_count_problems` once the arm's Model is known.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from flexfmu.spec.checks import (
    REQUIRED,
    as_number,
    boolean,
    bounds_text,
    check_keys,
    integer,
    join,
    look_up,
    number,
    plural,
    show,
    string,
    type_name,
)


@dataclass(frozen=True)
class Key:
    """One key of a table.

    Attributes
    ----------
    name : str
        The key as written in the file.
    type : str
        One of :data:`TYPES`: ``number``, ``integer``, ``vector`` (``size`` numbers), ``numbers`` (a list of
        one or more numbers), ``string`` (one of ``choices`` when given), ``boolean``, ``strings`` (a list of
        one or more non-empty strings), ``table`` (a table of numbers by name, each within the bounds),
        ``schedule`` (a list of ``[time, [numbers]]`` pairs, the times >= 0 and increasing).
    help : str
        What it means, one line.
    unit : str
        Its unit ("" for none).
    required : bool
        Whether a table must give it; otherwise ``default`` stands in.
    default :
        The value of an optional key that is absent.
    size : int, optional
        The length of a ``vector``.
    gt, ge, lt, le : float, optional
        Bounds of a number, of an integer (``ge``, ``le``) and of each entry of a ``vector``, ``numbers`` or
        ``table``.
    choices : tuple of str, optional
        The values a ``string`` may take.
    increasing : bool
        Whether the entries of a ``vector`` or ``numbers`` must strictly increase.
    per_joint : bool
        Whether a ``numbers`` list (or each row of a ``schedule``) holds one entry per torque-driven joint of
        the arm, checked by :func:`joint_count_problems`.
    """

    name: str
    type: str
    help: str = ""
    unit: str = ""
    required: bool = True
    default: object = None
    size: int | None = None
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    choices: tuple[str, ...] | None = None
    increasing: bool = False
    per_joint: bool = False

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"key {self.name!r}: type must be one of {', '.join(TYPES)}, got {self.type!r}")
        if self.type == "vector" and not self.size:
            raise ValueError(f"key {self.name!r}: a vector needs its size")

    @property
    def bounds(self) -> dict:
        """The bounds given, as keyword arguments of :func:`flexfmu.spec.checks.as_number`."""
        return {name: value for name, value in (("gt", self.gt), ("ge", self.ge), ("lt", self.lt), ("le", self.le))
                if value is not None}

    def read(self, problems: list[str], table: Mapping, path: str):
        """The checked value of this key in ``table`` (the table at ``path``), its default when absent, or None
        after appending to ``problems`` what is wrong with it."""
        default = REQUIRED if self.required else self.default
        return TYPES[self.type](self, problems, table, path, default)

    def describe(self) -> str:
        """One line for messages and docs: type, unit, range, required or default, help."""
        kind = f"{self.size} numbers" if self.type == "vector" else self.type
        if self.per_joint:
            kind += " (one per joint)"
        if self.increasing:
            kind += ", increasing"
        if self.choices:
            kind += " (" + ", ".join(map(repr, self.choices)) + ")"
        if self.bounds:
            kind += " " + bounds_text(**self.bounds)
        if self.unit and self.unit != "1":
            kind += f" {self.unit}"
        need = "required" if self.required else f"default {self.default!r}"
        return f"{self.name}: {kind}, {need}" + (f"; {self.help}" if self.help else "")


def _number(key: Key, problems, table, path, default):
    return number(problems, table, key.name, path, default, unit=key.unit, **key.bounds)


def _integer(key: Key, problems, table, path, default):
    return integer(problems, table, key.name, path, int(key.ge or 0), None if key.le is None else int(key.le), default)


def _entries(key: Key, problems, value, where):
    """The entries of the list ``value`` (at ``where``) as a tuple of floats within the bounds of ``key``, and
    increasing when it says so; None after appending what is wrong to ``problems``."""
    items = [as_number(problems, item, f"{where}[{i}]", unit=key.unit, **key.bounds)
             for i, item in enumerate(value, start=1)]
    if None in items:
        return None
    if key.increasing and not all(a < b for a, b in itertools.pairwise(items)):
        problems.append(f"{where} must increase from entry to entry, got {show(items)}")
        return None
    return tuple(items)


def _vector(key: Key, problems, table, path, default):
    found, value = look_up(problems, table, key.name, path, default)
    if not found:
        return value
    where = join(path, key.name)
    if not isinstance(value, (list, tuple)) or len(value) != key.size:
        got = plural(len(value), "item") if isinstance(value, (list, tuple)) else type_name(value)
        problems.append(f"{where} must be a list of {key.size} numbers, got {show(value)} ({got})")
        return None
    return _entries(key, problems, value, where)


def _numbers(key: Key, problems, table, path, default):
    found, value = look_up(problems, table, key.name, path, default)
    if not found:
        return value
    where = join(path, key.name)
    if not isinstance(value, (list, tuple)) or not value:
        problems.append(f"{where} must be a list of one or more numbers, got {show(value)} ({type_name(value)})")
        return None
    return _entries(key, problems, value, where)


def _strings(key: Key, problems, table, path, default):
    found, value = look_up(problems, table, key.name, path, default)
    if not found:
        return value
    where = join(path, key.name)
    if not isinstance(value, (list, tuple)) or not value:
        problems.append(f"{where} must be a list of one or more strings, got {show(value)} ({type_name(value)})")
        return None
    bad = [f"{where}[{i}] must be a non-empty string, got {show(item)} ({type_name(item)})"
           for i, item in enumerate(value, start=1) if not isinstance(item, str) or not item.strip()]
    problems += bad
    return None if bad else tuple(value)


def _table(key: Key, problems, table, path, default):
    found, value = look_up(problems, table, key.name, path, default)
    if not found:
        return value
    where = join(path, key.name)
    if not isinstance(value, Mapping):
        problems.append(f"{where} must be a table of numbers by name, got {show(value)} ({type_name(value)})")
        return None
    items = {name: as_number(problems, item, f"{where}.{name}", unit=key.unit, **key.bounds)
             for name, item in value.items()}
    return None if None in items.values() else items


def _schedule(key: Key, problems, table, path, default):
    found, value = look_up(problems, table, key.name, path, default)
    if not found:
        return value
    where = join(path, key.name)
    if not isinstance(value, (list, tuple)) or not value:
        problems.append(f"{where} must be a list of one or more [time, [values]] pairs, got {show(value)} "
                        f"({type_name(value)})")
        return None
    rows = []
    for i, row in enumerate(value, start=1):
        if not isinstance(row, (list, tuple)) or len(row) != 2 or not isinstance(row[1], (list, tuple)):
            problems.append(f"{where}[{i}] must be a pair [time, [values]], got {show(row)}")
            rows.append(None)
            continue
        time = as_number(problems, row[0], f"{where}[{i}][1]", ge=0, unit="s")
        values = [as_number(problems, item, f"{where}[{i}][2][{k}]", unit=key.unit, **key.bounds)
                  for k, item in enumerate(row[1], start=1)]
        rows.append(None if time is None or None in values else (time, tuple(values)))
    if None in rows:
        return None
    if any(a[0] >= b[0] for a, b in itertools.pairwise(rows)):
        problems.append(f"{where}: the times must increase from pair to pair, got {[row[0] for row in rows]}")
        return None
    return tuple(rows)


def _string(key: Key, problems, table, path, default):
    return string(problems, table, key.name, path, default, key.choices)


def _boolean(key: Key, problems, table, path, default):
    return boolean(problems, table, key.name, path, default)


# key type -> its reader (key, problems, table, path, default) -> value
TYPES = {"number": _number, "integer": _integer, "vector": _vector, "numbers": _numbers, "string": _string,
         "boolean": _boolean, "strings": _strings, "table": _table, "schedule": _schedule}


def read_keys(problems: list[str], table: Mapping, path: str, keys: tuple[Key, ...],
              others: tuple[str, ...] = ()) -> dict:
    """{name: checked value} of every key of ``keys`` in ``table``, the table at ``path`` (defaults for absent
    optional keys); what is wrong goes to ``problems``: keys neither declared nor in ``others`` (keys the
    caller reads itself, such as ``kind``), with a spelling hint, missing required keys, wrong types and
    values out of range. A value that is wrong is None in the result.

    Parameters
    ----------
    problems : list of str
        Appended to.
    table : Mapping
        The table read.
    path : str
        Its field path in messages ("" at the top).
    keys : tuple of Key
        What it may hold.
    others : tuple of str
        Further keys it may hold, checked elsewhere.
    """
    check_keys(problems, table, path, tuple(key.name for key in keys) + tuple(others))
    return {key.name: key.read(problems, table, path) for key in keys}


def joint_count_problems(values: Mapping, path: str, keys: tuple[Key, ...], joints: int, arm: str) -> list[str]:
    """What is wrong with the ``per_joint`` keys of ``keys`` in the checked ``values`` (of the table at ``path``)
    for an arm ``arm`` with ``joints`` torque-driven joints: a list, or a row of a schedule, of another length.
    Values that are None (absent or already wrong) are skipped."""
    problems = []
    for key in keys:
        value = values.get(key.name)
        if not key.per_joint or value is None:
            continue
        rows = [(f"{join(path, key.name)}[{i}][2]", row[1]) for i, row in enumerate(value, start=1)] \
            if key.type == "schedule" else [(join(path, key.name), value)]
        for where, items in rows:
            if len(items) != joints:
                count = f"{len(items)} {'entry' if len(items) == 1 else 'entries'}"
                problems.append(f"{where} has {count}; arm {arm!r} has {plural(joints, 'torque-driven joint')}")
                break
    return problems


def check_row(table: str, name: str, keys: tuple = (), **parts) -> None:
    """Refuse a table row that cannot work, naming the table, the row and the part at fault: each of
    ``parts`` (the row's builders, by name) must be callable and ``keys`` a tuple of :class:`Key` with
    distinct names.

    Parameters
    ----------
    table : str
        The table's name in messages ("REFERENCES").
    name : str
        The row's name.
    keys : tuple of Key
        The keys the row declares.
    **parts :
        The row's builders.

    Raises
    ------
    TypeError
        Naming what is missing or wrong.
    """
    for part, value in parts.items():
        if not callable(value):
            raise TypeError(f"{table} row {name!r}: {part} must be a function or class, got {value!r}")
    if not isinstance(keys, tuple) or not all(isinstance(key, Key) for key in keys):
        raise TypeError(f"{table} row {name!r}: keys must be a tuple of Key, got {keys!r}")
    names = [key.name for key in keys]
    if len(set(names)) != len(names):
        raise TypeError(f"{table} row {name!r}: keys named twice in {names}")
