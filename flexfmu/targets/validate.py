"""Check an FMU and report every problem.

FMPy's ``validate_fmu`` (schema, variables, ModelStructure) plus flexfmu's
own checks of what FMPy does not look at: archive paths, files the model
description promises, the binary's exported symbols (all fmi2 functions,
nothing else), the GUID compiled into the binary, and that the shipped
sources build with the shipped CMakeLists.txt.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

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
FMI2_FUNCTIONS = {"fmi2" + name for name in f"{FMI2_COMMON} {FMI2_ME} {FMI2_CS}".split()}
LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}


@dataclass
class Validation:
    """Problems found, and checks that could not run here (with why)."""

    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def validate_fmu(path: str | Path, build_sources: bool = True) -> Validation:
    """Validate the FMU at ``path``; ``build_sources`` also rebuilds it."""
    import fmpy
    from fmpy.validation import validate_fmu as fmpy_validate

    from flexfmu.targets.export import platform_folder

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
        folder, extension = platform_folder()
        identifiers = {i.modelIdentifier for i in (md.coSimulation, md.modelExchange) if i is not None}
        sources = {f for config in md.buildConfigurations for files in config.sourceFileSets
                   for f in files.sourceFiles}
        result.problems += [f"source file sources/{f} is listed but missing" for f in sorted(sources)
                            if f"sources/{f}" not in names]
        with tempfile.TemporaryDirectory(prefix="flexfmu-validate-") as tmp:
            archive.extractall(tmp)
            for identifier in sorted(identifiers):
                binary = Path(tmp) / "binaries" / folder / (identifier + extension)
                if not binary.is_file():
                    result.problems.append(f"binary binaries/{folder}/{identifier}{extension} is missing")
                    continue
                if md.guid.encode() not in binary.read_bytes():
                    result.problems.append(f"the binary does not contain the GUID {md.guid} of the model description")
                _check_symbols(binary, result)
            if build_sources and sources:
                _check_build(Path(tmp) / "sources", sorted(identifiers)[0], result)
    return result


def _clean(name: str) -> bool:
    pure = PurePosixPath(name)
    return not (name.startswith("/") or "\\" in name or ":" in name or ".." in pure.parts)


def _check_symbols(binary: Path, result: Validation) -> None:
    if not shutil.which("nm"):
        result.skipped.append("exported symbols: nm not found")
        return
    done = subprocess.run(["nm", "-D", "--defined-only", str(binary)], capture_output=True, text=True)
    if done.returncode != 0:
        result.problems.append(f"nm cannot read {binary.name}: {done.stderr.strip()}")
        return
    exported = {line.split()[-1] for line in done.stdout.splitlines() if line.strip()}
    missing = sorted(FMI2_FUNCTIONS - exported)
    extra = sorted(exported - FMI2_FUNCTIONS - LINKER_SYMBOLS)
    if missing:
        result.problems.append(f"{binary.name} does not export {', '.join(missing)}")
    if extra:
        result.problems.append(f"{binary.name} exports symbols other than fmi2 functions: {', '.join(extra[:10])}")


def _check_build(sources: Path, identifier: str, result: Validation) -> None:
    """Build the shipped sources as a user would, with the shipped CMakeLists.txt."""
    if not (sources / "CMakeLists.txt").is_file():
        result.problems.append("sources/CMakeLists.txt is missing")
        return
    if not shutil.which("cmake"):
        result.skipped.append("sources build: cmake not found")
        return
    build = sources / "build"
    for command in (["cmake", "-S", str(sources), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
                    ["cmake", "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            result.problems.append(f"the shipped sources do not build: {' '.join(command)}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
            return
    if not any(build.glob(f"{identifier}.*")):
        result.problems.append(f"the shipped sources built no library named {identifier}")
