"""Compile an FMU's sources into the shared libraries of its platforms.

The flags are the ones the shipped CMakeLists.txt uses: C99, -O2, hidden
visibility so only the fmi functions are exported, and a static compiler
runtime so the binary needs nothing beside it; with gcc, the generated files
leave out three passes that cost time and buy nothing on straight-line code
(:data:`flexfmu.codegen.native.STRAIGHT_LINE_FLAGS`); the platform adds its own
(:mod:`flexfmu.targets.platforms`). flexfmu's own builds also treat
warnings as errors (CasADi's generated files only without
-Wunused-parameter); the shipped CMakeLists.txt does that only when asked
(``-DFLEXFMU_WARNINGS_AS_ERRORS=ON``), so a newer compiler's new warning
does not stop a user's rebuild.

The generated model code is most of the work (a Delta robot's takes about
15 s per platform), so every platform's files are compiled in one pool of
one compiler per core, and every object is kept in flexfmu's content-hashed
cache: an arm re-exported with other parameter values or another step
compiles only its model_data.c, and the runtime and FMI glue, the same for
every arm, compile once per compiler (a test run exports about 90 FMUs:
they cost 135 s of gcc before).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from flexfmu.codegen.cache import cached_file, content_hash
from flexfmu.codegen.native import c_compiler, compiler_version, straight_line_flags
from flexfmu.errors import FlexfmuError
from flexfmu.targets.platforms import Platform

COMMON = ["-std=c99", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror"]
# CasADi-generated sources (flexfmu.targets.bundle writes them), which need
# -Wno-unused-parameter
GENERATED_SOURCES = ("model_functions.c",)


class BuildError(FlexfmuError, RuntimeError):
    """No C compiler, or it failed; the message holds its output."""


def compiler() -> str:
    """The C compiler to use: ``$CC``, else ``cc``, else ``gcc`` on the path; a BuildError if none."""
    cc = c_compiler()
    if not cc:
        raise BuildError("no C compiler found (set CC or install gcc)")
    return cc


@dataclass(frozen=True)
class Library:
    """One shared library to build: the C files ``c_files`` (names in ``sources``) compiled with ``cc`` for
    ``platform`` into objects in ``work``, linked into ``output``."""

    sources: Path
    c_files: tuple[str, ...]
    output: Path
    work: Path
    platform: Platform
    cc: str

    def object_file(self, name: str) -> Path:
        """Where the object of the C file ``name`` goes."""
        return self.work / (Path(name).stem + ".o")

    def flags(self, name: str) -> list[str]:
        """The compiler flags of the C file ``name``."""
        return [*COMMON, *self.platform.compile_flags,
                *(["-Wno-unused-parameter", *straight_line_flags(self.cc)] if name in GENERATED_SOURCES else [])]

    def compile_command(self, name: str, output: Path) -> list[str]:
        """The compiler command that builds the C file ``name`` into ``output``."""
        return [self.cc, *self.flags(name), f"-I{self.sources}", "-c", str(self.sources / name), "-o", str(output)]


class LibraryBuild:
    """The build of ``libraries`` (an FMU's platforms, one sources folder): their objects compiled in one pool
    of at most one compiler per core as their files are ready (:meth:`compile`: an export starts on the
    runtime and FMI glue, the same for every arm, while it generates the model's code), then linked
    (:meth:`link`). Every object comes from the object cache when it is in it (:func:`_cached_object`). Use it
    as a context manager: leaving it waits for the compilers started (and drops the ones not started when
    leaving on an error)."""

    def __init__(self, libraries: list[Library]):
        self.libraries = libraries
        self.pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
        self.started = []
        for library in libraries:
            library.work.mkdir(parents=True, exist_ok=True)

    def __enter__(self) -> LibraryBuild:
        return self

    def __exit__(self, kind, error, trace) -> None:
        self.pool.shutdown(wait=True, cancel_futures=error is not None)

    def compile(self, names) -> None:
        """Start compiling the C files ``names`` (in the sources folder, complete) of every library, largest
        first (two platforms' worth of generated code keeps both cores busy)."""
        units = sorted(((library, name) for library in self.libraries for name in names),
                       key=lambda unit: -(unit[0].sources / unit[1]).stat().st_size)
        self.started += [self.pool.submit(_compile, *unit) for unit in units]

    def link(self) -> None:
        """Wait for every compile, then link each library from the objects of its C files. A failed compile
        or link raises a BuildError with the compiler's output."""
        failures = [failure for failure in (future.result() for future in self.started) if failure]
        if failures:
            raise BuildError("\n".join(failures))
        for library in self.libraries:
            library.output.parent.mkdir(parents=True, exist_ok=True)
            objects = [str(library.object_file(name)) for name in library.c_files]
            _run([library.cc, *library.platform.link_flags, "-o", str(library.output), *objects,
                  *library.platform.libraries])


def _compile(library: Library, name: str) -> str | None:
    """Put the object of one C file of ``library`` in place, from the cache or compiled; None, or the failed
    command and its output."""
    try:
        shutil.copyfile(_cached_object(library, name), library.object_file(name))
    except BuildError as error:
        return str(error)
    return None


def _cached_object(library: Library, name: str) -> Path:
    """The cached object of the C file ``name`` (flexfmu.codegen.cache): named by the hash of the compiler
    (its command and version), the flags, the source text and the headers of the sources folder that it
    includes (:func:`local_includes`; the compiler's identity stands for the system headers). A model
    re-exported with other parameter values, step or platforms changes only model_data.c, and the runtime
    and FMI glue include no generated header."""
    source = library.sources / name
    headers = [part for header in local_includes(library.sources, name)
               for part in (header, (library.sources / header).read_bytes())]
    key = content_hash(*_compiler_identity(library.cc), *library.flags(name), source.read_bytes(), *headers)

    def build(partial: Path) -> None:
        _run(library.compile_command(name, partial))

    return cached_file(f"object-{Path(name).stem}-{library.platform.name}-{key}.o", build)


INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def local_includes(folder: Path, name: str) -> list[str]:
    """The files of ``folder`` that its file ``name`` includes with ``#include "..."``, directly or through
    one another, sorted (a name not in the folder is left to the compiler's search path)."""
    found, pending = set(), [name]
    while pending:
        for included in INCLUDE.findall((folder / pending.pop()).read_text(errors="replace")):
            if included not in found and (folder / included).is_file():
                found.add(included)
                pending.append(included)
    return sorted(found)


def _compiler_identity(cc: str) -> tuple[str, str]:
    """(the compiler's full path, its ``--version`` text): what its objects depend on beside flags and source."""
    return shutil.which(cc) or cc, compiler_version(cc)


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{' '.join(command)}\n{done.stdout}{done.stderr}")
