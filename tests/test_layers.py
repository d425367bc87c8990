"""The package's layers point one way, and structure is not read from names.

Every import in every module of ``flexfmu`` (deferred ones inside functions
too) is read from the source and checked against the layer order of
docs/architecture.md: a module may import its own layer and the ones below,
never one above, and never the top-level ``harness``, ``benchmarks`` or
``tests`` folders.

The tests run per room (a top-level subpackage or module of ``flexfmu``, on
one floor); a failure lists every offending module of the room.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "flexfmu"

# lowest first; a module may import layers at its own floor or below
LAYERS = {
    "errors": 0, "codegen": 0, "data": 0,
    "spec": 1,
    "modes": 2,
    "dynamics": 3,
    "integrate": 4,
    "control": 5,
    "kinds": 6,
    "targets": 7,
    "harness": 8,
    "commands": 9, "cli": 9,
}
OUTSIDE = ("harness", "benchmarks", "tests")


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" or p.parent != PACKAGE)


def layer_of(module: str) -> int | None:
    """The floor of ``flexfmu.<part>...``; None for the package facade."""
    parts = module.split(".")
    return LAYERS[parts[1]] if len(parts) > 1 else None


def imported(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def room_of(path: Path) -> str:
    """The top-level subpackage or module of ``flexfmu`` that ``path`` belongs to (its room, on one floor)."""
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def rooms(exclude: str | None = None) -> dict[str, list[Path]]:
    """Room name -> its modules, without the room ``exclude``."""
    found: dict[str, list[Path]] = {}
    for path in modules():
        if room_of(path) != exclude:
            found.setdefault(room_of(path), []).append(path)
    return found


def upward_imports(path: Path) -> list[str]:
    """What is wrong with the imports of the module at ``path``: each import of a higher floor or of a
    folder outside the package, named with the module."""
    here = layer_of(module_name(path))
    wrong = []
    for name in imported(path):
        top = name.split(".")[0]
        if top in OUTSIDE:
            wrong.append(f"{module_name(path)} imports {name}: the package must not import {top}/")
        elif top == "flexfmu" and name != "flexfmu" and here is not None:
            there = layer_of(name)
            if there is not None and there > here:
                wrong.append(f"{module_name(path)} (floor {here}) imports {name} (floor {there})")
    return wrong


@pytest.mark.parametrize("room", sorted(rooms()))
def test_imports_point_down(room):
    """One test per room; its message lists every import that points up or out of the package."""
    wrong = [problem for path in rooms()[room] for problem in upward_imports(path)]
    assert wrong == [], "\n".join(wrong)


def test_every_subpackage_has_a_floor():
    tops = {module_name(p).split(".")[1] for p in modules() if len(module_name(p).split(".")) > 1}
    assert tops <= set(LAYERS), f"no floor for {sorted(tops - set(LAYERS))}"


# Coordinate and output names are written in flexfmu/dynamics; everywhere else
# reads the Model's metadata. A literal such as "theta[" or ".deflection"
# outside dynamics would mean structure is parsed from names again.
NAME_FRAGMENTS = ("theta[", "alpha[", "f[", ".deflection", ".angle", ".rate", "mode[", "tip.")


def code_strings(path: Path):
    """String constants of a module that are not docstrings or prose (help
    texts and messages hold spaces; names and patterns do not)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                and not any(c.isspace() for c in node.value)):
            yield node.value


@pytest.mark.parametrize("room", sorted(rooms(exclude="dynamics")))
def test_no_structure_read_from_names(room):
    """One test per room; its message lists every module that spells names, with the strings."""
    found = {}
    for path in rooms()[room]:
        strings = sorted({s for s in code_strings(path) for fragment in NAME_FRAGMENTS if fragment in s})
        if strings:
            found[module_name(path)] = strings
    assert found == {}, f"modules spell coordinate or output names: {found}"


def test_no_module_imports_another_modules_private_names():
    """What a module keeps private (a leading underscore) stays in it: names shared by several modules are
    public in one of them. A private module (``_common``) serves its own package only."""
    found = []
    for path in modules():
        package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else module_name(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("flexfmu"):
                private = [alias.name for alias in node.names if alias.name.startswith("_")
                           and not alias.name.startswith("__")]
                found += [f"{module_name(path)} imports {node.module}.{name}" for name in private]
                owner, _, last = node.module.rpartition(".")
                if last.startswith("_") and owner != package:
                    found.append(f"{module_name(path)} imports the private module {node.module}")
    assert found == []


# the harness's rooms, lowest first: a harness module imports its own room and the ones below
HARNESS_ROOMS = {"running": 0, "reports": 1, "campaigns": 2, "reproductions": 3, "workflows": 4}


def test_the_harness_rooms_point_one_way():
    upward = []
    for path in PACKAGE.joinpath("harness").rglob("*.py"):
        parts = module_name(path).split(".")
        if len(parts) < 3:
            continue
        here = HARNESS_ROOMS[parts[2]]
        for name in imported(path):
            there = name.split(".")
            if there[:2] == ["flexfmu", "harness"] and len(there) > 2 and HARNESS_ROOMS[there[2]] > here:
                upward.append(f"{module_name(path)} imports {name}")
    assert upward == []
