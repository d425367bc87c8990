"""casadi.Functions compiled to C on this machine and loaded back: the optimiser's code, compiled like the FMU's.

CasADi evaluates a Function in its virtual machine, one instruction at a
time; the same Function generated as C and compiled runs about ten times
faster. :func:`native_functions` generates the C of a group of Functions
into one file (shared dependencies written once), compiles it into a shared
library named by the hash of its source in the cache
(:mod:`flexfmu.codegen.cache`), so a rebuilt graph gets a new library and an
unchanged one is compiled once per machine, and loads each Function back by
name. It is compiled for this processor (-O2 -march=native: the vector
units and fused multiply-adds take a gradient's reverse sweep from about
three forward runs to about two, benchmarks/gradient.py), so the host's name
and machine are part of the hash: a cache shared between hosts never hands
one the other's library. Large straight-line Functions (an identification's
per-step sensitivities) may ask for ``-O1``: gcc's higher levels take
minutes on them for little gain. With gcc, three of -O2's passes are left out
(:data:`STRAIGHT_LINE_FLAGS`), here and in the FMU's build.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import casadi as ca

from flexfmu.codegen.cache import cached_file, content_hash
from flexfmu.errors import FlexfmuError

FLAGS = ("-march=native", "-fPIC", "-shared")
# gcc passes that cost compile time on CasADi's long straight-line functions and buy nothing there: the second
# instruction scheduling (an out-of-order processor reorders anyway), partial redundancy elimination and global
# common subexpression elimination (an SX Function's common subexpressions are already shared). On the Delta
# robot's FMU code they take 11 % of gcc's time at -O2 and the step runs the same instructions without them
# (valgrind: 56.6 against 57.2 million for 200 steps); the planner's libraries compile 11 to 20 % faster.
STRAIGHT_LINE_FLAGS = ("-fno-schedule-insns2", "-fno-tree-pre", "-fno-gcse")


class CompileError(FlexfmuError, RuntimeError):
    """The C compiler failed on generated code; the message holds its output."""


def c_compiler() -> str | None:
    """The C compiler to use: ``$CC``, else ``cc``, else ``gcc`` on the path; None if there is none."""
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


@functools.lru_cache(maxsize=None)
def compiler_version(cc: str) -> str:
    """The ``--version`` text of the C compiler ``cc`` (empty if it does not run)."""
    try:
        return subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return ""


def straight_line_flags(cc: str) -> tuple[str, ...]:
    """:data:`STRAIGHT_LINE_FLAGS` when ``cc`` is gcc (MinGW-w64's too); none for another compiler (clang,
    also installed as ``cc`` or ``gcc`` on a Mac, does not know them)."""
    version = compiler_version(cc)
    return STRAIGHT_LINE_FLAGS if "Free Software Foundation" in version and "clang" not in version else ()


def native_functions(functions: list[ca.Function], name: str, optimisation: str = "-O2") -> list[ca.Function]:
    """``functions`` compiled together into the cached library ``name``-<hash>.so and loaded back.

    Parameters
    ----------
    functions : list of casadi.Function
        Functions with distinct names; CasADi must be able to generate their C (SX, or MX of SX calls).
    name : str
        The library's name before its content hash.
    optimisation : str
        gcc's optimisation flag (``-O1`` for very large graphs, whose ``-O2`` build takes minutes).

    Returns
    -------
    list of casadi.Function
        The compiled Functions, in the order given, each called like its original (same inputs and
        outputs); they have no derivatives.

    Raises
    ------
    CompileError
        If there is no C compiler or it fails.
    """
    cc = c_compiler()
    if cc is None:
        raise CompileError("no C compiler found (set CC or install gcc)")
    flags = (optimisation, *FLAGS, *straight_line_flags(cc))
    with tempfile.TemporaryDirectory() as work:
        generator = ca.CodeGenerator(f"{name}.c", {"with_header": False, "verbose": False})
        for function in functions:
            generator.add(function)
        generator.generate(f"{work}/")
        source = Path(work) / f"{name}.c"
        text = source.read_text()

        def build(output: Path) -> None:
            done = subprocess.run([cc, *flags, "-o", str(output), str(source), "-lm"], check=False, capture_output=True,
                                  text=True)
            if done.returncode != 0:
                raise CompileError(f"{cc} failed on the generated {name}.c:\n{done.stderr[-2000:]}")

        digest = content_hash(text, " ".join(flags), platform.node(), platform.machine())
        library = cached_file(f"{name}-{digest}.so", build)
    return [ca.external(function.name(), str(library)) for function in functions]


def native_libraries(groups: dict[str, list[ca.Function]], optimisation: str = "-O2") -> dict[str, list[ca.Function]]:
    """Each group of ``groups`` (library name -> Functions) compiled by :func:`native_functions` into its own
    library at gcc's ``optimisation`` level, the compilers running side by side, one per core: a large graph
    split into a few libraries builds in about the time of its largest part instead of the sum of them."""
    with ThreadPoolExecutor(max_workers=min(len(groups), os.cpu_count() or 1)) as pool:
        built = {name: pool.submit(native_functions, functions, name, optimisation)
                 for name, functions in groups.items()}
    return {name: future.result() for name, future in built.items()}
