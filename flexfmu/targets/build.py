"""Compile an FMU's sources into the shared library of one platform.

The flags are the ones the shipped CMakeLists.txt uses: C99, -O2, hidden
visibility so only the fmi functions are exported, and a static compiler
runtime so the binary needs nothing beside it; the platform adds its own
(:mod:`flexfmu.targets.platforms`). flexfmu's own builds also treat
warnings as errors (CasADi's generated files only without
-Wunused-parameter); the shipped CMakeLists.txt does that only when asked
(``-DFLEXFMU_WARNINGS_AS_ERRORS=ON``), so a newer compiler's new warning
does not stop a user's rebuild.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from flexfmu.codegen.native import c_compiler
from flexfmu.errors import FlexfmuError
from flexfmu.targets.platforms import PLATFORMS, host_platform

COMMON = ["-std=c99", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror"]
# CasADi-generated sources (flexfmu.targets.bundle writes them), which need
# -Wno-unused-parameter
GENERATED_SOURCES = ("model_functions.c", "model_directional.c")
# The directional derivatives (forward AD of every template: the largest file, called only when an importer
# asks for derivatives) are compiled without optimisation: gcc's optimisers take time superlinear in a
# function's length, and for a Delta robot optimising this file alone would take most of a minute.
UNOPTIMISED = ("model_directional.c",)


class BuildError(FlexfmuError, RuntimeError):
    """No C compiler, or it failed; the message holds its output."""


def compiler() -> str:
    """The C compiler to use: ``$CC``, else ``cc``, else ``gcc`` on the path; a BuildError if none."""
    cc = c_compiler()
    if not cc:
        raise BuildError("no C compiler found (set CC or install gcc)")
    return cc


def compile_shared_library(sources: Path, c_files: list[str], output: Path, work: Path, platform=None,
                           cc: str | None = None) -> None:
    """Compile ``c_files`` (names in ``sources``) into the shared library
    ``output``, one compiler process per file, all at once (the generated
    files dominate and are independent). The object files go into the
    folder ``work``; a failing compile or link raises a BuildError with the
    compiler's output.

    Parameters
    ----------
    platform : Platform, optional
        Whose flags to use (:data:`flexfmu.targets.platforms.PLATFORMS`); default this machine's.
    cc : str, optional
        The compiler command; default :func:`compiler`.
    """
    platform = platform or PLATFORMS[host_platform()]
    cc = cc or compiler()
    work.mkdir(parents=True, exist_ok=True)
    objects = [str(work / (Path(name).stem + ".o")) for name in c_files]
    commands = [[cc, *COMMON, *platform.compile_flags,
                 *(["-Wno-unused-parameter"] if name in GENERATED_SOURCES else []),
                 *(["-O0"] if name in UNOPTIMISED else []),
                 f"-I{sources}", "-c", str(sources / name), "-o", obj] for name, obj in zip(c_files, objects)]
    running = [(command, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
               for command in commands]
    finished = [(command, process.communicate()[0], process.returncode) for command, process in running]
    failures = [f"{' '.join(command)}\n{log}" for command, log, code in finished if code != 0]
    if failures:
        raise BuildError("\n".join(failures))
    output.parent.mkdir(parents=True, exist_ok=True)
    _run([cc, *platform.link_flags, "-o", str(output), *objects, *platform.libraries])


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{' '.join(command)}\n{done.stdout}{done.stderr}")
