"""casadi.Function -> C sources. Knows no robots and no FMI.

The generated file holds every Function given, each with its work-size
query, no static mutable state (work arrays are the caller's), and no
exported symbols (``with_export`` off: the FMU exports only its fmi2
functions). CasADi's output triggers -Wunused-parameter, so its translation
unit is compiled with -Wno-unused-parameter; everything else with -Werror.

Functions that are large and rarely called (an FMU's directional
derivatives) can be written to the same file unoptimised: the compiler
builds their code without optimisation (a pragma for gcc, clang and MSVC),
which takes a fraction of the time, and the code they share with the other
Functions is written, and compiled, once.
"""

from __future__ import annotations

import re
from pathlib import Path

import casadi as ca

OPTIONS = {"with_header": True, "casadi_int": "int", "casadi_real": "double", "with_export": False, "verbose": False}


# Written before the code of the unoptimised Functions: everything after it in the file is compiled without
# optimisation, whatever the command line asks for
UNOPTIMISED_FROM_HERE = """
/* flexfmu: the code from here on is compiled without optimisation (large and rarely called) */
#if defined(__clang__)
#pragma clang optimize off
#elif defined(__GNUC__)
#pragma GCC optimize ("O0")
#elif defined(_MSC_VER)
#pragma optimize("", off)
#endif

"""


def generate_c(functions: list[ca.Function], directory: Path, basename: str = "model_functions",
               unoptimised: list[ca.Function] = ()) -> list[Path]:
    """Write the C code of ``functions`` and then ``unoptimised`` (casadi.Function objects, in that order) as
    ``basename``.c and ``basename``.h into ``directory`` (created if needed); return both paths. The code that
    only ``unoptimised`` needs is compiled without optimisation (:data:`UNOPTIMISED_FROM_HERE`); what they
    share with ``functions`` is compiled as ``functions`` are."""
    directory.mkdir(parents=True, exist_ok=True)
    generator = ca.CodeGenerator(f"{basename}.c", OPTIONS)
    for function in [*functions, *unoptimised]:
        generator.add(function)
    generator.generate(f"{directory}/")
    source = directory / f"{basename}.c"
    if unoptimised:
        source.write_text(_unoptimised_from(source.read_text(), functions[-1].name()))
    return [source, directory / f"{basename}.h"]


def _unoptimised_from(text: str, last_optimised: str) -> str:
    """``text`` (CasADi's C) with :data:`UNOPTIMISED_FROM_HERE` where the Functions added after
    ``last_optimised`` begin. CasADi writes each Function added as the code of its dependencies not yet written,
    its own, then its entry point ``int name(...)`` and its queries; the next Function's code starts at the
    next ``/* name:(...)->(...) */`` comment after that entry point."""
    entry = re.search(rf"^int {re.escape(last_optimised)}\(", text, re.MULTILINE)
    following = entry and re.compile(r"^/\* \w+:\(", re.MULTILINE).search(text, entry.end())
    if not following:
        raise RuntimeError(f"the generated C does not have the layout flexfmu expects: no Function's code after "
                           f"the entry point of {last_optimised}")
    return text[:following.start()] + UNOPTIMISED_FROM_HERE + text[following.start():]
