"""Write an arm file back with some of its fields changed: how a calibrated arm is saved.

The fields are named by their paths of ``docs/spec.md`` (``link[1].EI``,
``link[2].modes.damping_ratio[1]``, ``link[1].joint.viscous_friction``,
``gravity[2]``), as a Model's parameters record them
(``flexfmu.dynamics.metadata.Parameter.field``). Setting a field removes
the keys that give the same quantity another way (``EI`` replaces ``E`` and
``I``), so the file stays valid; a list field is written whole. The result
is TOML that ``flexfmu.load_arm`` reads back (comments of the original are
not kept; a header says where the file came from).
"""

from __future__ import annotations

import json
import math
import re

from flexfmu.errors import FlexfmuError

# a key that, when written, replaces the keys of the same table that give its quantity another way
ALTERNATIVES = {"EI": ("E", "I"), "mass_per_length": ("mass",), "damping_ratio": ("damping_coefficient",),
                "damping_coefficient": ("damping_ratio",)}
_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class FieldError(FlexfmuError, ValueError):
    """A field path that does not name a number of the arm file; the message names it."""


def _parts(field: str) -> list[tuple[str, int | None]]:
    parts = []
    for text in field.split("."):
        match = _PART.fullmatch(text)
        if not match:
            raise FieldError(f"{field!r} is not a field path (expected names with optional [index])")
        parts.append((match.group(1), int(match.group(2)) - 1 if match.group(2) else None))
    return parts


def with_fields(data: dict, values: dict[str, float]) -> dict:
    """A copy of the arm file's table ``data`` with the fields ``values`` (path -> number) set.

    Every element of a list field must be given (``link[1].modes.damping_ratio[1]`` ... ``[count]``):
    a single number in the file then becomes the list.

    Raises
    ------
    FieldError
        If a path does not lead to a table of ``data`` or a list field is given in part.
    """
    result = json.loads(json.dumps(data))  # a deep copy of plain TOML data
    lists: dict[str, dict[int, float]] = {}
    for field, value in values.items():
        *parents, (key, index) = _parts(field)
        table = _table(result, parents, field)
        if index is None:
            _set(table, key, float(value))
        else:
            lists.setdefault(field.rsplit("[", 1)[0], {})[index] = float(value)
    for field, entries in lists.items():
        if sorted(entries) != list(range(len(entries))):
            raise FieldError(f"{field}: every element must be given, got elements "
                             f"{', '.join(str(k + 1) for k in sorted(entries))}")
        *parents, (key, _) = _parts(field)
        _set(_table(result, parents, field), key, [entries[k] for k in range(len(entries))])
    return result


def _table(data: dict, parents, field: str) -> dict:
    table = data
    for name, index in parents:
        item = table.get(name)
        if index is not None:
            item = item[index] if isinstance(item, list) and index < len(item) else None
        elif item is None:
            item = table[name] = {}
        if not isinstance(item, dict):
            raise FieldError(f"{field}: the arm file has no table {name}{'' if index is None else f'[{index + 1}]'}")
        table = item
    return table


def _set(table: dict, key: str, value) -> None:
    for other in ALTERNATIVES.get(key, ()):
        table.pop(other, None)
    table[key] = value


def to_toml(data: dict, header: str = "") -> str:
    """The arm file's table ``data`` (plain TOML data: tables, arrays of tables, numbers, strings, booleans,
    lists) as TOML text, preceded by ``header`` as comment lines."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    _emit(lines, data, [])
    return "\n".join(lines).strip() + "\n"


def _emit(lines: list[str], table: dict, path: list[str]) -> None:
    plain = {k: v for k, v in table.items() if not _is_table(v) and not _is_table_array(v)}
    lines += [f"{_key(k)} = {_value(v)}" for k, v in plain.items()]
    for key, value in table.items():
        if _is_table(value):
            lines += ["", f"[{'.'.join(map(_key, path + [key]))}]"]
            _emit(lines, value, path + [key])
        elif _is_table_array(value):
            for item in value:
                lines += ["", f"[[{'.'.join(map(_key, path + [key]))}]]"]
                _emit(lines, item, path + [key])


def _is_table(value) -> bool:
    return isinstance(value, dict)


def _is_table_array(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FieldError(f"a number of an arm file must be finite, got {value!r}")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise FieldError(f"cannot write {value!r} ({type(value).__name__}) in an arm file")
