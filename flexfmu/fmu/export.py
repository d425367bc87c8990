"""Export a Model as an FMI 2.0 FMU with native C binaries.

Pipeline: Model -> step/derivatives/outputs/directional casadi.Functions ->
C (codegen) + model_data.c + the generic glue -> compiled library ->
modelDescription.xml -> zip. Everything is written in a temporary folder and
the .fmu appears only when complete: a failed export leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import casadi as ca

from flexfmu import __version__
from flexfmu.codegen import generate_c
from flexfmu.dynamics.compiled import CompiledDynamics, compiled_dynamics
from flexfmu.fmu.build import GENERATED_SOURCES, compile_shared_library
from flexfmu.fmu.description import Description, Structure, model_description_xml
from flexfmu.fmu.model_data import model_data_c
from flexfmu.fmu.variables import VR_ACCELERATION, VR_INPUT, VR_OUTPUT, VR_STATE, fmu_variables
from flexfmu.integrate import INTEGRATORS, default_internal_step, highest_frequency, is_multiple, step_function

INTERFACES = ("cs", "me", "both")
GLUE_FILES = ("fmi2_glue.c", "ffmu_model.h")
FMI_HEADERS = ("fmi2Functions.h", "fmi2FunctionTypes.h", "fmi2TypesPlatform.h")
C_FILES = ("fmi2_glue.c", "model_data.c", *GENERATED_SOURCES)


class ExportError(ValueError):
    """Export settings that cannot make a valid FMU."""


@dataclass(frozen=True)
class ExportSettings:
    """How to export. ``internal_step`` None picks it from the arm's highest
    linearised frequency (see flexfmu.integrate.default_internal_step)."""

    integrator: str = "rk4"
    internal_step: float | None = None
    communication_step: float = 1e-3
    stop_time: float = 5.0
    interface: str = "both"


@dataclass(frozen=True)
class ExportReport:
    path: Path
    guid: str
    integrator: str
    internal_step: float
    omega_max: float
    codegen_s: float
    compile_s: float
    total_s: float


def platform_folder() -> tuple[str, str]:
    """(binaries/ folder, library extension) of this machine, FMI 2 names."""
    if sys.platform.startswith("win"):
        return "win64", ".dll"
    if sys.platform == "darwin":
        return "darwin64", ".dylib"
    return "linux64", ".so"


def model_identifier(name: str) -> str:
    """A C identifier from the arm's name."""
    ident = re.sub(r"\W", "_", name)
    return ident if re.match(r"[A-Za-z_]", ident) else "_" + ident


def check_settings(settings: ExportSettings) -> None:
    problems = []
    if settings.integrator not in INTEGRATORS:
        problems.append(f"integrator must be one of {', '.join(INTEGRATORS)}, got {settings.integrator!r}")
    if settings.interface not in INTERFACES:
        problems.append(f"interface must be one of {', '.join(INTERFACES)}, got {settings.interface!r}")
    for name in ("communication_step", "stop_time"):
        if not getattr(settings, name) > 0:
            problems.append(f"{name} must be > 0, got {getattr(settings, name)!r}")
    if settings.internal_step is not None and not settings.internal_step > 0:
        problems.append(f"internal step must be > 0, got {settings.internal_step!r}")
    if problems:
        raise ExportError("; ".join(problems))


def fmu_functions(dynamics: CompiledDynamics, integrator: str) -> tuple[list[ca.Function], list[ca.Function]]:
    """The five Functions of the C contract (ffmu_model.h), as two groups
    for two translation units that compile in parallel: the simulation
    functions, and the directional derivatives."""
    return [
        rename(dynamics.constants, "ffmu_constants"),
        step_function(dynamics, integrator, name="ffmu_step"),
        rename(dynamics.state_derivative, "ffmu_derivatives"),
        rename(dynamics.outputs, "ffmu_outputs"),
    ], [rename(dynamics.directional, "ffmu_directional")]


def rename(function: ca.Function, name: str) -> ca.Function:
    """``function`` under the C name ``name`` (a call of it)."""
    symbols = function.mx_in()
    return ca.Function(name, symbols, function.call(symbols))


def model_structure(model, variables) -> Structure:
    """Dependencies of derivatives and outputs from the Jacobian sparsity."""
    n, nu = len(model.coordinates), len(model.inputs)
    index = {v.vr: k + 1 for k, v in enumerate(variables)}
    state_index = [index[VR_STATE + k] for k in range(2 * n)]
    input_index = [index[VR_INPUT + k] for k in range(nu)]
    known = state_index + input_index
    x, u, p = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("p", len(model.parameters))
    f = ca.Function("f", [ca.vertcat(x, u), p], [model.state_derivative(x, u, p), model.outputs(x[:n], x[n:], u, p)])

    def rows(out: int):
        pattern = f.jac_sparsity(out, 0)
        return [[known[c] for c in pattern.T.row()[pattern.T.colind()[r]:pattern.T.colind()[r + 1]]]
                for r in range(pattern.size1())]

    derivative_vars = [index[VR_STATE + n + k] for k in range(n)] + [index[VR_ACCELERATION + k] for k in range(n)]
    output_vars = [index[VR_OUTPUT + k] for k in range(len(model.output_names))]
    accelerations = derivative_vars[n:]
    return Structure(
        derivatives=list(zip(derivative_vars, rows(0))),
        outputs=list(zip(output_vars, rows(1))),
        initial_unknowns=sorted(output_vars + accelerations),
    )


def content_guid(*texts: str) -> str:
    """A GUID derived from the FMU's content: same arm and settings, same GUID."""
    digest = hashlib.sha256("\0".join(texts).encode()).digest()
    return "{" + str(uuid.UUID(bytes=digest[:16])) + "}"


def export_fmu(model, output: str | Path, settings: ExportSettings = ExportSettings()) -> ExportReport:
    """Write ``output`` (.fmu) for ``model``; return what was decided and how long it took."""
    check_settings(settings)
    start = time.perf_counter()
    output = Path(output)
    omega_max = highest_frequency(model)
    h = settings.internal_step or default_internal_step(omega_max, settings.integrator, settings.communication_step)
    if not is_multiple(settings.communication_step, h):
        raise ExportError(
            f"the communication step {settings.communication_step!r} s must be an integer multiple "
            f"of the internal step {h!r} s"
        )
    identifier = model_identifier(model.arm.name)
    folder, extension = platform_folder()
    with tempfile.TemporaryDirectory(prefix="flexfmu-export-") as tmp:
        root = Path(tmp) / "fmu"
        sources = root / "sources"
        dynamics = compiled_dynamics(model)
        for name, group in zip(GENERATED_SOURCES, fmu_functions(dynamics, settings.integrator)):
            generate_c(group, sources, Path(name).stem)
        codegen_s = time.perf_counter() - start
        _copy_static_sources(sources, identifier)

        variables = fmu_variables(model)
        info = Description(
            model_name=model.arm.name, model_identifier=identifier,
            description=model.arm.description or model.arm.name,
            generation_tool=f"flexfmu {__version__}", stop_time=settings.stop_time,
            communication_step=settings.communication_step, integrator=settings.integrator,
            internal_step=h, source_files=list(C_FILES),
        )
        structure = model_structure(model, variables)
        functions_c = "".join((sources / name).read_text() for name in GENERATED_SOURCES)
        guid = content_guid(
            model_description_xml(info, variables, structure, ""),
            model_data_c(model, "", settings.integrator, h, dynamics.size), functions_c,
        )
        (sources / "model_data.c").write_text(model_data_c(model, guid, settings.integrator, h, dynamics.size))
        xml = model_description_xml(info, variables, structure, guid)
        if settings.interface != "both":
            xml = _drop_interface(xml, "ModelExchange" if settings.interface == "cs" else "CoSimulation")
        (root / "modelDescription.xml").write_text(xml)

        compile_start = time.perf_counter()
        library = root / "binaries" / folder / (identifier + extension)
        compile_shared_library(sources, list(C_FILES), library, Path(tmp) / "obj")
        compile_s = time.perf_counter() - compile_start

        output.parent.mkdir(parents=True, exist_ok=True)
        partial = output.with_name(output.name + ".part")
        try:
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(root.rglob("*")):
                    if path.is_file():
                        archive.write(path, path.relative_to(root).as_posix())
            os.replace(partial, output)
        finally:
            partial.unlink(missing_ok=True)
    return ExportReport(output, guid, settings.integrator, h, omega_max, codegen_s, compile_s,
                        time.perf_counter() - start)


def _copy_static_sources(sources: Path, identifier: str) -> None:
    """The glue and contract (ours, packaged), the FMI headers (from FMPy's
    installed copy of the standard's headers) and the CMakeLists.txt."""
    here = resources.files("flexfmu.fmu") / "c"
    for name in GLUE_FILES:
        (sources / name).write_text((here / name).read_text())
    cmake = (here / "CMakeLists.txt.in").read_text().replace("@MODEL_IDENTIFIER@", identifier)
    (sources / "CMakeLists.txt").write_text(cmake)
    headers = resources.files("fmpy") / "c-code"
    for name in FMI_HEADERS:
        shutil.copyfile(str(headers / name), sources / name)


def _drop_interface(xml: str, element: str) -> str:
    return re.sub(rf"\s*<{element} .*?</{element}>", "", xml, count=1, flags=re.S)
