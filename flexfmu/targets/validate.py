"""Check an FMU (FMI 2.0 or 3.0) and report every problem.

FMPy's ``validate_fmu`` (schema, variables, ModelStructure) plus flexfmu's
own checks of what FMPy does not look at: archive paths, files the model
description promises, every binary the FMU carries (linux64 and win64, or
FMI 3's x86_64-linux and x86_64-windows): built for x86-64, exporting all the
version's functions and nothing else, with the GUID (instantiation token)
compiled in; and that the shipped sources build with the shipped
CMakeLists.txt (warnings as errors, as flexfmu's own builds).

A Python-backed FMU (PythonFMU's, as ``flexfmu export --target pythonfmu``
writes: it has ``resources/slavemodule.txt``) carries PythonFMU's generic
binaries: C++ libraries that read the GUID from modelDescription.xml when
they run and export symbols of their own. For it the binaries are checked
for their platform and architecture and for exporting the FMI functions of
the interfaces its model description declares; the GUID and the
nothing-else checks do not apply and are listed as skipped, with why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath

from flexfmu.targets.binaries import (
    ELF_X86_64, PE_AMD64, BinaryFormatError, elf_exports, elf_machine, pe_machine_and_exports,
)
from flexfmu.targets.platforms import PLATFORMS

PYTHON_BACKED = "resources/slavemodule.txt"  # the file PythonFMU puts in every FMU it writes

FMI2_COMMON = (
    "GetTypesPlatform GetVersion SetDebugLogging Instantiate FreeInstance SetupExperiment "
    "EnterInitializationMode ExitInitializationMode Terminate Reset GetReal GetInteger GetBoolean GetString "
    "SetReal SetInteger SetBoolean SetString GetFMUstate SetFMUstate FreeFMUstate SerializedFMUstateSize "
    "SerializeFMUstate DeSerializeFMUstate GetDirectionalDerivative"
)
FMI2_ME = (
    "EnterEventMode NewDiscreteStates EnterContinuousTimeMode CompletedIntegratorStep SetTime "
    "SetContinuousStates GetDerivatives GetEventIndicators GetContinuousStates GetNominalsOfContinuousStates"
)
FMI2_CS = (
    "SetRealInputDerivatives GetRealOutputDerivatives DoStep CancelStep GetStatus GetRealStatus "
    "GetIntegerStatus GetBooleanStatus GetStringStatus"
)


def fmi2_functions(model_exchange: bool, co_simulation: bool) -> set[str]:
    """The functions an FMI 2.0 binary must export when it has the interfaces ``model_exchange`` and
    ``co_simulation`` (booleans)."""
    names = FMI2_COMMON + (" " + FMI2_ME if model_exchange else "") + (" " + FMI2_CS if co_simulation else "")
    return {"fmi2" + name for name in names.split()}


FMI2_FUNCTIONS = fmi2_functions(model_exchange=True, co_simulation=True)  # what flexfmu's own binaries export


def fmi3_functions() -> set[str]:
    """The functions every FMI 3.0 binary must export: those the standard's fmi3Functions.h declares (FMPy's
    installed copy)."""
    header = (resources.files("fmpy") / "c-code" / "fmi3Functions.h").read_text()
    return set(re.findall(r"^FMI3_Export\s+\w+TYPE\s+(fmi3\w+);", header, flags=re.M))


@dataclass
class Validation:
    """Problems found, and checks that could not run here (with why)."""

    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def validate_fmu(path: str | Path, build_sources: bool = True) -> Validation:
    """Validate the FMU at ``path``; ``build_sources`` also rebuilds it."""
    import fmpy
    from fmpy.validation import validate_fmu as fmpy_validate

    path = Path(path)
    result = Validation()
    if not zipfile.is_zipfile(path):
        result.problems.append(f"{path} is not a ZIP archive")
        return result
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        result.problems += [f"archive path {n!r} is not relative and clean" for n in names if not _clean(n)]
        if "modelDescription.xml" not in names:
            result.problems.append("modelDescription.xml is missing")
            return result
        result.problems += [f"FMPy: {problem}" for problem in fmpy_validate(str(path))]
        try:
            md = fmpy.read_model_description(str(path), validate=False)
        except Exception as error:  # FMPy raises many kinds for a broken XML
            result.problems.append(f"cannot read modelDescription.xml: {error}")
            return result
        version = "3" if md.fmiVersion.startswith("3") else "2"
        identifiers = {i.modelIdentifier for i in (md.coSimulation, md.modelExchange) if i is not None}
        sources = {f for config in md.buildConfigurations for files in config.sourceFileSets
                   for f in files.sourceFiles}
        result.problems += [f"source file sources/{f} is listed but missing" for f in sorted(sources)
                            if f"sources/{f}" not in names]
        python_backed = PYTHON_BACKED in names
        if python_backed:
            result.skipped.append("a Python-backed FMU (PythonFMU): its generic C++ binaries read the GUID from "
                                  "modelDescription.xml when they run and export symbols of their own, so they are "
                                  "checked for platform, architecture and the FMI functions of its interfaces only")
        expected = fmi3_functions() if version == "3" else \
            fmi2_functions(md.modelExchange is not None, md.coSimulation is not None)
        with tempfile.TemporaryDirectory(prefix="flexfmu-validate-") as tmp:
            archive.extractall(tmp)
            _check_binaries(Path(tmp) / "binaries", version, sorted(identifiers), md.guid, expected,
                            not python_backed, result)
            if build_sources and sources:
                _check_build(Path(tmp) / "sources", sorted(identifiers)[0], result)
    return result


def _clean(name: str) -> bool:
    pure = PurePosixPath(name)
    return not (name.startswith("/") or "\\" in name or ":" in name or ".." in pure.parts)


def _check_binaries(binaries: Path, version: str, identifiers: list[str], guid: str, expected: set[str],
                    exact: bool, result: Validation) -> None:
    """Every binary in every platform folder the FMU has (at least one platform): it exports the ``expected``
    functions, and when ``exact`` (a binary of flexfmu's own C) nothing else and has the ``guid`` compiled in."""
    known = {platform.folder(version): platform for platform in PLATFORMS.values()}
    folders = sorted(p for p in binaries.iterdir() if p.is_dir()) if binaries.is_dir() else []
    if not folders:
        result.problems.append("the FMU has no binaries (binaries/ is empty or missing)")
    for folder in folders:
        platform = known.get(folder.name)
        if platform is None:
            result.skipped.append(f"binaries/{folder.name}: flexfmu has no check for this platform")
            continue
        for identifier in identifiers:
            binary = folder / (identifier + platform.extension)
            shown = f"binaries/{folder.name}/{binary.name}"
            if not binary.is_file():
                result.problems.append(f"binary {shown} is missing")
                continue
            if exact and guid.encode() not in binary.read_bytes():
                result.problems.append(f"{shown} does not contain the GUID {guid} of the model description")
            _check_exports(binary, shown, platform.name, expected, exact, result)


def fmi_version_of(functions: set[str]) -> str:
    """The FMI version ("2" or "3") whose functions ``functions`` are."""
    return "3" if any(name.startswith("fmi3") for name in functions) else "2"


def _check_exports(binary: Path, shown: str, platform: str, expected: set[str], exact: bool,
                   result: Validation) -> None:
    """The binary is for x86-64 and exports the ``expected`` functions (the FMI functions of the interfaces its
    model description declares) and, when ``exact``, no symbol but FMI functions of that version (flexfmu's
    binaries hold both interfaces' functions; a co-simulation-only FMU leaves model exchange undeclared)."""
    data = binary.read_bytes()
    try:
        if platform == "win64":
            machine, exported = pe_machine_and_exports(data)
            wrong_machine = machine != PE_AMD64
        elif platform == "linux64":
            wrong_machine = elf_machine(data) != ELF_X86_64
            exported = elf_exports(binary)
        else:
            result.skipped.append(f"{shown}: exported symbols of {platform} binaries are not checked")
            return
    except BinaryFormatError as error:
        result.problems.append(f"{shown} is not a {platform} library: {error}")
        return
    if wrong_machine:
        result.problems.append(f"{shown} is not built for x86-64")
    if exported is None:
        result.skipped.append(f"exported symbols of {shown}: nm not found")
        return
    every_fmi_function = fmi3_functions() if fmi_version_of(expected) == "3" else FMI2_FUNCTIONS
    missing, extra = sorted(expected - exported), sorted(exported - expected - every_fmi_function)
    if missing:
        result.problems.append(f"{shown} does not export {', '.join(missing)}")
    if extra and exact:
        result.problems.append(f"{shown} exports symbols other than the FMI functions: {', '.join(extra[:10])}")


def _check_build(sources: Path, identifier: str, result: Validation) -> None:
    """Build the shipped sources as a user would, with the shipped CMakeLists.txt (and warnings as errors)."""
    if not (sources / "CMakeLists.txt").is_file():
        result.problems.append("sources/CMakeLists.txt is missing")
        return
    if not shutil.which("cmake"):
        result.skipped.append("sources build: cmake not found")
        return
    build = sources / "build"
    for command in (["cmake", "-S", str(sources), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DFLEXFMU_WARNINGS_AS_ERRORS=ON"],
                    ["cmake", "--build", str(build), "--parallel", str(os.cpu_count() or 1)]):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            result.problems.append(f"the shipped sources do not build: {' '.join(command)}\n"
                                   f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
            return
    if not any(build.glob(f"{identifier}.*")):
        result.problems.append(f"the shipped sources built no library named {identifier}")
