"""The native FMI 2.0 target: one FMU with co-simulation and model exchange.

Pipeline: the C model bundle (``flexfmu.targets.bundle``) + ``fmi2_glue.c``
+ the FMI 2 headers (from FMPy's installed copy of the standard's headers) +
a CMakeLists.txt -> compiled library -> modelDescription.xml -> zip.
Everything is written in a temporary folder and the .fmu appears only when
complete: a failed export leaves nothing behind.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from importlib import resources
from pathlib import Path

from flexfmu import __version__
from flexfmu.integrate import STABILITY_LIMITS, stable_step
from flexfmu.targets.build import compile_shared_library
from flexfmu.targets.bundle import c_source, write_bundle
from flexfmu.targets.export import (
    ExportReport, check_output, check_settings, content_guid, platform_folder, write_atomically,
)
from flexfmu.targets.fmi2_xml import Description, model_description_xml
from flexfmu.targets.variables import fmu_variables, model_structure

GLUE = "fmi2_glue.c"
FMI_HEADERS = ("fmi2Functions.h", "fmi2FunctionTypes.h", "fmi2TypesPlatform.h")


def export(job) -> ExportReport:
    """Write ``job.output`` (.fmu) for ``job.model`` with ``job.settings``; ``job`` is a
    :class:`flexfmu.targets.ExportJob`. Returns the ExportReport; raises ExportError for unusable
    settings or output and BuildError if compiling fails."""
    model, output, settings = job.model, Path(job.output), job.settings
    check_settings(settings)
    check_output(output)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="flexfmu-export-") as tmp:
        root = Path(tmp) / "fmu"
        bundle = write_bundle(model, root / "sources", settings)
        c_files = [GLUE, *bundle.c_files]
        _copy_glue(bundle.folder, bundle.identifier, c_files)
        variables = fmu_variables(model)
        info = Description(
            model_name=model.arm.name, model_identifier=bundle.identifier,
            description=model.arm.description or model.arm.name,
            generation_tool=f"flexfmu {__version__}", stop_time=settings.stop_time,
            communication_step=settings.communication_step, integrator=bundle.integrator,
            internal_step=bundle.internal_step, source_files=c_files, omega_max=bundle.omega_max,
            stability_limit=STABILITY_LIMITS[bundle.integrator],
            unstable_step_allowed=bundle.internal_step > stable_step(bundle.omega_max, bundle.integrator),
        )
        structure = model_structure(model, variables)
        guid = content_guid(model_description_xml(info, variables, structure, "", settings.interface),
                            bundle.fingerprint())
        bundle.write_model_data(guid)
        (root / "modelDescription.xml").write_text(
            model_description_xml(info, variables, structure, guid, settings.interface))

        compile_start = time.perf_counter()
        folder, extension = platform_folder()
        library = root / "binaries" / folder / (bundle.identifier + extension)
        compile_shared_library(bundle.folder, c_files, library, Path(tmp) / "obj")
        compile_s = time.perf_counter() - compile_start
        write_atomically(root, output)
    return ExportReport(output, "fmi2", guid, bundle.integrator, bundle.internal_step, bundle.omega_max,
                        bundle.codegen_s, compile_s, time.perf_counter() - start)


def _copy_glue(sources: Path, identifier: str, c_files: list[str]) -> None:
    """The FMI 2 glue (ours), the FMI headers (from FMPy's installed copy of
    the standard's headers) and the CMakeLists.txt that rebuilds it all."""
    (sources / GLUE).write_text(c_source(GLUE))
    cmake = c_source("CMakeLists.txt.in").replace("@MODEL_IDENTIFIER@", identifier)
    (sources / "CMakeLists.txt").write_text(cmake.replace("@C_FILES@", " ".join(c_files)))
    headers = resources.files("fmpy") / "c-code"
    for name in FMI_HEADERS:
        shutil.copyfile(str(headers / name), sources / name)
