"""casadi.Function -> C sources. Knows no robots and no FMI.

The generated file holds every Function given, each with its work-size
query, no static mutable state (work arrays are the caller's), and no
exported symbols (``with_export`` off: the FMU exports only its fmi2
functions). CasADi's output triggers -Wunused-parameter, so its translation
unit is compiled with -Wno-unused-parameter; everything else with -Werror.
"""

from __future__ import annotations

from pathlib import Path

import casadi as ca

OPTIONS = {"with_header": True, "casadi_int": "int", "casadi_real": "double", "with_export": False, "verbose": False}


def generate_c(functions: list[ca.Function], directory: Path, basename: str = "model_functions") -> list[Path]:
    """Write the C code of ``functions`` (casadi.Function objects, in that order) as ``basename``.c and
    ``basename``.h into ``directory`` (created if needed); return both paths."""
    directory.mkdir(parents=True, exist_ok=True)
    generator = ca.CodeGenerator(f"{basename}.c", OPTIONS)
    for function in functions:
        generator.add(function)
    generator.generate(f"{directory}/")
    return [directory / f"{basename}.c", directory / f"{basename}.h"]
