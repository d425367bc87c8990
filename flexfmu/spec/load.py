"""Read an arm specification (TOML or a plain dict) into plain dataclasses.

Why a hand-written validator: the format is small, and the user gets far more
from a message such as ``link[2].length must be > 0, got -0.4`` than from a
schema library's traceback. Every check appends to one list of problems and
the loader raises a single :class:`SpecError` at the end, so a file with five
mistakes reports all five at once. The format itself is described in
``docs/spec.md``.

A file's top-level ``kind`` says what it describes; each kind has its own
loader (``planar``, the default, is :mod:`flexfmu.spec.planar`). The
table of kinds sits above this layer (``flexfmu.kinds``, which also knows
each kind's dynamics and planner), so the functions here take the loaders
as an argument: :func:`read_arm_file` reads a file, :func:`load_by_kind`
picks and calls the loader of its ``kind``. Paths in messages are 1-based
everywhere (``link[1]``, ``gravity[2]``, ``link[2].modes.shapes[1]``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path

from flexfmu.data import resolve_arm
from flexfmu.errors import InputError
from flexfmu.spec.checks import show, string
from flexfmu.spec.errors import SpecError

DEFAULT_KIND = "planar"  # the kind of a file that names none


def read_arm_file(path: str | Path) -> tuple[dict, str]:
    """Read the TOML file of an arm specification at ``path`` (a file, or an example arm's name: see
    :func:`flexfmu.data.resolve_arm`): (its parsed table, where it came from).

    Raises
    ------
    SpecError
        If the file is not UTF-8 or not valid TOML (the message names the line).
    InputError
        If the file does not exist, is a folder or cannot be read.
    """
    path = resolve_arm(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"arm {str(path)!r} cannot be read: {exc.strerror or exc}") from None
    try:
        return tomllib.loads(raw.decode("utf-8")), str(path)
    except UnicodeDecodeError as exc:
        raise SpecError([f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})"],
                        str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError([_toml_problem(str(exc))], str(path)) from None


def load_by_kind(data: Mapping, source: str, loaders: Mapping[str, Callable]):
    """Validate a specification given as nested dicts and lists with the loader of its ``kind``.

    Parameters
    ----------
    data : Mapping
        The specification, shaped like the parsed TOML (arrays of tables are
        lists of dicts); its ``kind`` (default :data:`DEFAULT_KIND`) picks the loader.
    source : str
        Where ``data`` came from; used as the header of the error message.
    loaders : Mapping
        kind -> loader(body, source) -> arm, ``body`` being ``data`` without its ``kind``.

    Returns
    -------
    Arm
        The validated arm, of the kind's own dataclass.

    Raises
    ------
    SpecError
        Listing every problem found.
    """
    if not isinstance(data, Mapping):
        raise SpecError([f"the specification must be a table, got {show(data)}"], source)
    problems: list[str] = []
    kind = string(problems, data, "kind", "", DEFAULT_KIND, tuple(loaders))
    if problems:
        raise SpecError(problems, source)
    body = {key: value for key, value in data.items() if key != "kind"}
    return loaders[kind](body, source)


def _toml_problem(message: str) -> str:
    """Turn tomllib's "<what> (at line L, column C)" into "line L, ...: <what>"."""
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", message)
    if found is None:
        return f"invalid TOML: {message}"
    what = message[: found.start()]
    return f"invalid TOML at line {found.group(1)}, column {found.group(2)}: {what}"
