"""Example arms and scenarios shipped with flexfmu, found by name.

The files are package data (``flexfmu/data/arms/*.toml`` and
``flexfmu/data/scenarios/*.toml``), so an installed flexfmu finds them
wherever it runs; the source tree also shows them as ``fmus/arms`` and
``harness/scenarios``. A name such as ``yu_chen_2dof`` stands for the example
file of that name; anything that is an existing file is used as a path.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from flexfmu.errors import InputError

__all__ = ["ARMS", "SCENARIOS", "arm_names", "scenario_names", "resolve_arm", "resolve_scenario"]

ARMS = "arms"
SCENARIOS = "scenarios"


def _folder(kind: str) -> Path:
    return Path(str(resources.files("flexfmu.data") / kind))


def _names(kind: str) -> list[str]:
    return sorted(path.stem for path in _folder(kind).glob("*.toml"))


def arm_names() -> list[str]:
    """Names of the example arms, sorted."""
    return _names(ARMS)


def scenario_names() -> list[str]:
    """Names of the shipped scenarios, sorted."""
    return _names(SCENARIOS)


def _resolve(text: str | Path, kind: str, what: str) -> Path:
    """An existing file at ``text``, or the example named ``text``."""
    path = Path(text)
    if path.is_file():
        return path
    if path.is_dir():
        raise InputError(f"{what} {str(text)!r} is a folder, not a TOML file")
    example = _folder(kind) / f"{path.name}.toml"
    if path.name == str(text) and not path.suffix and example.is_file():
        return example
    known = ", ".join(_names(kind))
    raise InputError(f"{what} {str(text)!r}: no such file, and no example of that name (examples: {known})")


def resolve_arm(text: str | Path) -> Path:
    """The arm file ``text`` names: a path, or an example arm's name.

    Raises
    ------
    InputError
        If ``text`` is a folder, or neither a file nor an example name.
    """
    return _resolve(text, ARMS, "arm")


def resolve_scenario(text: str | Path) -> Path:
    """The scenario file ``text`` names: a path, or a shipped scenario's name.

    Raises
    ------
    InputError
        If ``text`` is a folder, or neither a file nor a scenario name.
    """
    return _resolve(text, SCENARIOS, "scenario")
