"""The native FMU pipeline that the FMI 2.0 and FMI 3.0 targets share.

Pipeline: the C model bundle (``flexfmu.targets.bundle``) + the version's
glue (``fmi2_glue.c``, ``fmi3_glue.c``) + the version's headers (from FMPy's
installed copy of the standard's headers) + a CMakeLists.txt -> one shared
library per platform (``flexfmu.targets.platforms``) -> modelDescription.xml
-> zip. Everything is written in a temporary folder and the .fmu appears only
when complete: a failed export leaves nothing behind.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable

from flexfmu import __version__
from flexfmu.integrate import STABILITY_LIMITS, stable_step
from flexfmu.targets.build import compile_shared_library
from flexfmu.targets.bundle import c_source, write_bundle
from flexfmu.targets.export import ExportReport, check_output, check_settings, content_guid, write_atomically
from flexfmu.targets.fmi2_xml import Description
from flexfmu.targets.platforms import PLATFORMS, choose_platforms
from flexfmu.targets.variables import fmu_variables, model_structure


@dataclass(frozen=True)
class FmiVersion:
    """What one FMI version adds to the shared pipeline.

    Attributes
    ----------
    version : str
        ``"2"`` or ``"3"`` (names the binaries folders, see :meth:`Platform.folder`).
    target : str
        The target's name in ``flexfmu.targets.TARGETS``.
    glue : str
        The glue's file in ``flexfmu/targets/c``.
    headers : tuple of str
        The standard's headers to ship (copied from FMPy's ``c-code``).
    description : callable
        ``(Description, variables, structure, guid, interface) -> str``: modelDescription.xml.
    extra_files : callable
        ``(Description) -> {path in the FMU: text}``: other files of the version, e.g. FMI 3's
        ``sources/buildDescription.xml``.
    """

    version: str
    target: str
    glue: str
    headers: tuple[str, ...]
    description: Callable[..., str]
    extra_files: Callable[[Description], dict[str, str]]


def export_native(job, fmi: FmiVersion) -> ExportReport:
    """Write ``job.output`` (.fmu) for ``job.model`` with ``job.settings`` as the FMI version ``fmi``.

    Parameters
    ----------
    job : ExportJob
        Model, output and settings (``flexfmu.targets.ExportJob``).
    fmi : FmiVersion
        The version's glue, headers and model description.

    Returns
    -------
    ExportReport
        With the platforms built and the ones skipped (and why).

    Raises
    ------
    ExportError
        For unusable settings or output, or a requested platform without its compiler.
    BuildError
        If compiling fails.
    """
    model, output, settings = job.model, Path(job.output), job.settings
    check_settings(settings)
    check_output(output)
    chosen, skipped = choose_platforms(settings.platforms)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="flexfmu-export-") as tmp:
        root = Path(tmp) / "fmu"
        bundle = write_bundle(model, root / "sources", settings)
        c_files = [fmi.glue, *bundle.c_files]
        _copy_glue(bundle.folder, bundle.identifier, c_files, fmi)
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
        guid = content_guid(fmi.description(info, variables, structure, "", settings.interface),
                            bundle.fingerprint())
        bundle.write_model_data(guid)
        (root / "modelDescription.xml").write_text(
            fmi.description(info, variables, structure, guid, settings.interface))
        for name, text in fmi.extra_files(info).items():
            (root / name).write_text(text)

        compile_start = time.perf_counter()
        for platform, cc in chosen:
            library = root / "binaries" / platform.folder(fmi.version) / (bundle.identifier + platform.extension)
            compile_shared_library(bundle.folder, c_files, library, Path(tmp) / "obj" / platform.name, platform, cc)
        compile_s = time.perf_counter() - compile_start
        write_atomically(root, output)
    return ExportReport(output, fmi.target, guid, bundle.integrator, bundle.internal_step, bundle.omega_max,
                        bundle.codegen_s, compile_s, time.perf_counter() - start,
                        tuple(platform.name for platform, _ in chosen), skipped)


def _copy_glue(sources: Path, identifier: str, c_files: list[str], fmi: FmiVersion) -> None:
    """The glue (ours), the FMI headers (from FMPy's installed copy of the
    standard's headers) and the CMakeLists.txt that rebuilds it all."""
    (sources / fmi.glue).write_text(c_source(fmi.glue))
    folders = " or ".join(f"binaries/{platform.folder(fmi.version)}" for platform in PLATFORMS.values())
    cmake = c_source("CMakeLists.txt.in").replace("@MODEL_IDENTIFIER@", identifier)
    cmake = cmake.replace("@BINARY_FOLDERS@", folders)
    (sources / "CMakeLists.txt").write_text(cmake.replace("@C_FILES@", " ".join(c_files)))
    headers = resources.files("fmpy") / "c-code"
    for name in fmi.headers:
        shutil.copyfile(str(headers / name), sources / name)
