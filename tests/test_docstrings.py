"""Every public function says what it does and what its parameters mean.

As python-control checks its API: each public function and method of the
package (names without a leading underscore, defined in the package, outside
the command-line modules whose only callers are argparse) has a docstring,
and a docstring of a function with parameters names every one of them,
either in a numpydoc ``Parameters`` section or in the text as ``name`` (in
double backquotes). ``self``, ``cls``, ``*args``, ``**kwargs`` are exempt.
There is one test per module; its message lists every definition that falls
short.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import flexfmu

SKIPPED_PACKAGES = ("flexfmu.commands", "flexfmu.targets.pythonfmu_templates")


def public_modules():
    for info in pkgutil.walk_packages(flexfmu.__path__, "flexfmu."):
        name = info.name
        if name.startswith(SKIPPED_PACKAGES) or any(part.startswith("_") for part in name.split(".")):
            continue
        yield importlib.import_module(name)


def public_callables(module) -> list[tuple[str, object]]:
    """(qualified name, object) of the public functions, classes and methods defined in ``module``."""
    found, seen = [], set()
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            items = [(f"{module.__name__}.{name}", obj)]
        elif inspect.isclass(obj):
            items = [(f"{module.__name__}.{name}", obj)]
            items += [(f"{module.__name__}.{name}.{attribute}", member)
                      for attribute, member in vars(obj).items()
                      if not attribute.startswith("_") and inspect.isfunction(member)]
        else:
            continue
        for qualified, item in items:
            if id(item) not in seen:
                seen.add(id(item))
                found.append((qualified, item))
    return found


def undocumented_parameters(function) -> list[str]:
    doc = inspect.getdoc(function) or ""
    names = [p.name for p in inspect.signature(function).parameters.values()
             if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    section = doc.split("Parameters\n----------", 1)[1] if "Parameters\n----------" in doc else ""
    documented = set(re.findall(r"^(\w+)(?:, (\w+))*\s*:", section, flags=re.M))
    listed = {name for group in documented for name in group if name}
    listed |= {name for line in section.splitlines() for name in re.findall(r"^(\w+(?:, \w+)*)\s*:", line)
               for name in name.split(", ")}
    return [name for name in names if name not in listed and f"``{name}``" not in doc]


def problems_of(name: str, item) -> list[str]:
    """What the docstring of ``item`` (called ``name``) lacks: all of it, or the parameters it does not name."""
    if not inspect.getdoc(item):
        return [f"{name} has no docstring"]
    missing = undocumented_parameters(item) if inspect.isfunction(item) else []
    return [f"{name} does not document {', '.join(missing)}"] if missing else []


# module name -> its public callables; modules that define none have nothing to check
CALLABLES = {module.__name__: found for module in public_modules() if (found := public_callables(module))}


def test_the_walk_finds_the_api():
    names = {name for found in CALLABLES.values() for name, _ in found}
    assert {"flexfmu.kinds.load_arm", "flexfmu.kinds.build_model", "flexfmu.targets.export"} <= names


@pytest.mark.parametrize("module", sorted(CALLABLES))
def test_public_callables_are_documented(module):
    """One test per module; its message lists every definition of the module that falls short."""
    problems = [problem for name, item in CALLABLES[module] for problem in problems_of(name, item)]
    assert problems == [], f"{module}: {len(problems)} of {len(CALLABLES[module])} public callables fall short:\n  " \
                           + "\n  ".join(problems)
