"""Read an arm specification (TOML or a plain dict) into plain dataclasses.

Why a hand-written validator: the format is small, and the user gets far more
from a message such as ``link[2].length must be > 0, got -0.4`` than from a
schema library's traceback. Every check appends to one list of problems and
the loader raises a single :class:`SpecError` at the end, so a file with five
mistakes reports all five at once. The format itself is described in
``docs/spec.md``.

A file's top-level ``kind`` says what it describes; each kind has its own
loader module, named in :data:`ARM_KINDS` (``planar``, the default, is
:mod:`flexfmu.spec.planar`). Paths in messages are 1-based everywhere
(``link[1]``, ``gravity[2]``, ``link[2].modes.shapes[1]``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path

from flexfmu.data import resolve_arm
from flexfmu.errors import InputError
from flexfmu.spec.checks import show, string
from flexfmu.spec.errors import SpecError

__all__ = ["ARM_KINDS", "load_arm", "arm_from_dict"]

# kind -> "module:function" reading a dict of that kind (imported on first use)
ARM_KINDS = {"planar": "flexfmu.spec.planar:planar_arm_from_dict",
             "spatial": "flexfmu.spec.spatial:spatial_arm_from_dict",
             "delta": "flexfmu.spec.delta:delta_arm_from_dict"}
DEFAULT_KIND = "planar"


def load_arm(path: str | Path):
    """Load and validate the arm specification in a TOML file.

    Parameters
    ----------
    path : str or pathlib.Path
        The TOML file, or the name of an example arm (``"yu_chen_2dof"``,
        see :func:`flexfmu.data.arm_names`).

    Returns
    -------
    Arm
        The validated arm (of the file's ``kind``), with defaults filled in
        and derived quantities (``mass_per_length``, ``EI``, per-mode
        damping) computed.

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


def arm_from_dict(data: Mapping, source: str = "<dict>"):
    """Validate a specification given as nested dicts and lists.

    Parameters
    ----------
    data : Mapping
        The specification, shaped like the parsed TOML (arrays of tables are
        lists of dicts); its ``kind`` (default ``planar``) picks the loader.
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
    if not isinstance(data, Mapping):
        raise SpecError([f"the specification must be a table, got {show(data)}"], source)
    problems: list[str] = []
    kind = string(problems, data, "kind", "", DEFAULT_KIND, tuple(ARM_KINDS))
    if problems:
        raise SpecError(problems, source)
    module, function = ARM_KINDS[kind].split(":")
    body = {key: value for key, value in data.items() if key != "kind"}
    return getattr(import_module(module), function)(body, source)


def _toml_problem(message: str) -> str:
    """Turn tomllib's "<what> (at line L, column C)" into "line L, ...: <what>"."""
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", message)
    if found is None:
        return f"invalid TOML: {message}"
    what = message[: found.start()]
    return f"invalid TOML at line {found.group(1)}, column {found.group(2)}: {what}"
