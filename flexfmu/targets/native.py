"""The native FMU pipeline that the FMI 2.0 and FMI 3.0 targets share.

Pipeline: the C model bundle (``flexfmu.targets.bundle``) + the version's
glue (``fmi2_glue.c``, ``fmi3_glue.c``) + the version's headers (from FMPy's
installed copy of the standard's headers) + a CMakeLists.txt -> one shared
library per platform (``flexfmu.targets.platforms``) -> modelDescription.xml
-> zip. Everything is written in a temporary folder and the .fmu appears only
when complete: a failed export leaves nothing behind. What is packaged is a
:class:`NativeSource`: an arm's Model (:func:`model_source`), or a closed
loop of plant and controller (``flexfmu.targets.loop``).
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable

from flexfmu import __version__
from flexfmu.codegen.native import STRAIGHT_LINE_FLAGS
from flexfmu.integrate import STABILITY_LIMITS, stable_step
from flexfmu.targets.build import Library, LibraryBuild
from flexfmu.errors import ExportError
from flexfmu.targets.bundle import C_FILES, INSTANCE_FILES, ModelBundle, c_source, write_bundle, write_instance_code
from flexfmu.targets.export import (ExportReport, check_output, check_settings, content_guid, model_identifier,
                                    write_atomically)
from flexfmu.targets.fmi2_xml import Description
from flexfmu.targets.platforms import PLATFORMS, choose_platforms, host_platform
from flexfmu.targets.timing import time_steps
from flexfmu.targets.variables import Structure, Variable, fmu_variables, model_structure


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


@dataclass(frozen=True)
class NativeSource:
    """What a native FMU is made of, besides its FMI version.

    Attributes
    ----------
    name, description : str
        The model's name and description in the model description.
    write : callable
        (folder, settings) -> the ModelBundle written into ``folder``.
    variables : callable
        () -> the Variables, in value-reference order.
    structure : callable
        (variables) -> the Structure.
    interface : str or None
        The interface it offers (``cs``), None for what the settings ask.
    """

    name: str
    description: str
    write: Callable[[Path, object], ModelBundle]
    variables: Callable[[], list[Variable]]
    structure: Callable[[list[Variable]], Structure]
    interface: str | None = None


def model_source(model) -> NativeSource:
    """The NativeSource of an arm's ``model``: its compiled dynamics in both interfaces."""
    return NativeSource(model.arm.name, model.arm.description or model.arm.name,
                        lambda folder, settings: write_bundle(model, folder, settings),
                        lambda: fmu_variables(model), lambda variables: model_structure(model, variables))


def export_native(job, fmi: FmiVersion, source: NativeSource | None = None) -> ExportReport:
    """Write ``job.output`` (.fmu) for ``job.model`` with ``job.settings`` as the FMI version ``fmi``.

    Parameters
    ----------
    job : ExportJob
        Model, output and settings (``flexfmu.targets.ExportJob``).
    fmi : FmiVersion
        The version's glue, headers and model description.
    source : NativeSource, optional
        What to package (the Model of ``job`` when None).

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
    output, settings = Path(job.output), job.settings
    source = source or model_source(job.model)
    interface = source.interface or settings.interface
    check_settings(settings)
    check_output(output)
    chosen, skipped = choose_platforms(settings.platforms)
    if settings.realtime_budget is not None and host_platform() not in {platform.name for platform, _ in chosen}:
        raise ExportError(f"--realtime-budget times the step on this machine, which needs its binary "
                          f"({host_platform()}) among the platforms built")
    start = time.perf_counter()
    identifier, c_files = model_identifier(source.name), [fmi.glue, *C_FILES]
    with tempfile.TemporaryDirectory(prefix="flexfmu-export-") as tmp:
        root = Path(tmp) / "fmu"
        folder = root / "sources"
        libraries = [Library(folder, tuple(c_files), root / "binaries" / platform.folder(fmi.version)
                             / (identifier + platform.extension), Path(tmp) / "obj" / platform.name, platform, cc)
                     for platform, cc in chosen]
        with LibraryBuild(libraries) as build:
            # the runtime and FMI glue (the same for every arm) compile while the model's code is generated
            write_instance_code(folder)
            _copy_glue(folder, identifier, c_files, fmi)
            runtime = [fmi.glue, *(name for name in C_FILES if name in INSTANCE_FILES)]
            build.compile(runtime)
            bundle = source.write(folder, settings)
            variables = source.variables()
            info = Description(
                model_name=source.name, model_identifier=identifier, description=source.description,
                generation_tool=f"flexfmu {__version__}", stop_time=settings.stop_time,
                communication_step=settings.communication_step, integrator=bundle.integrator,
                internal_step=bundle.internal_step, source_files=c_files, omega_max=bundle.omega_max,
                stability_limit=STABILITY_LIMITS[bundle.integrator],
                unstable_step_allowed=bundle.internal_step > stable_step(bundle.omega_max, bundle.integrator),
                reduction=job.model.reduction,
            )
            structure = source.structure(variables)
            guid = content_guid(fmi.description(info, variables, structure, "", interface), bundle.fingerprint())
            bundle.write_model_data(guid)
            compile_start = time.perf_counter()
            build.compile([name for name in c_files if name not in runtime])
            (root / "modelDescription.xml").write_text(
                fmi.description(info, variables, structure, guid, interface))
            for name, text in fmi.extra_files(info).items():
                (root / name).write_text(text)
            build.link()
        compile_s = time.perf_counter() - compile_start
        timing = _timed(bundle, chosen, settings, Path(tmp))
        if timing is not None:  # the same description, now with the step's cost
            info = dataclasses.replace(info, timing=timing)
            (root / "modelDescription.xml").write_text(
                fmi.description(info, variables, structure, guid, interface))
        write_atomically(root, output)
    return ExportReport(output, fmi.target, guid, bundle.integrator, bundle.internal_step, bundle.omega_max,
                        bundle.codegen_s, compile_s, time.perf_counter() - start,
                        tuple(platform.name for platform, _ in chosen), skipped, timing)


def _timed(bundle, chosen, settings, work: Path):
    """The StepTiming of the host's binary among ``chosen`` (None when it was not built), held against
    ``settings.realtime_budget``: an ExportError naming what to change when the step costs more."""
    host = host_platform()
    if host not in {platform.name for platform, _ in chosen}:
        return None
    timing = time_steps(bundle.folder, work / "obj" / host, bundle.c_files, settings.communication_step, work)
    budget = settings.realtime_budget
    if budget is not None and timing.budget_fraction() > budget:
        raise ExportError(f"the compiled doStep misses the real-time budget: {timing.text()}, "
                          f"{timing.budget_fraction():.3g} of the communication step against a budget of {budget:g}; "
                          f"{budget_advice(bundle, settings)}")
    return timing


def budget_advice(bundle, settings) -> str:
    """What could bring an export's step within its budget, from what it is made of: the ``bundle``'s
    integrator, internal step and Model, and the ``settings``' communication step."""
    substeps = round(settings.communication_step / bundle.internal_step)
    advice = []
    if bundle.integrator == "rk4" and substeps > 1:
        advice.append(f"--integrator rosenbrock (one linearly implicit step per communication step instead of "
                      f"{substeps} RK4 substeps for the {bundle.omega_max:.0f} rad/s modes)")
    reduction = bundle.model.reduction
    if reduction is not None:
        kept = sum(keep for body in reduction.bodies for _, _, keep in body.modes)
        advice.append(f"a lower elements.cutoff or fewer elements.modes in the arm file ({kept} fixed-interface modes "
                      f"kept)" if kept else "fewer elements per link (elements.count)")
    advice.append(f"a longer --communication-step (now {settings.communication_step:g} s)")
    return "try " + ", or ".join(advice)


def _copy_glue(sources: Path, identifier: str, c_files: list[str], fmi: FmiVersion) -> None:
    """The glue (ours), the FMI headers (from FMPy's installed copy of the
    standard's headers) and the CMakeLists.txt that rebuilds it all."""
    (sources / fmi.glue).write_text(c_source(fmi.glue))
    folders = " or ".join(f"binaries/{platform.folder(fmi.version)}" for platform in PLATFORMS.values())
    cmake = c_source("CMakeLists.txt.in").replace("@MODEL_IDENTIFIER@", identifier)
    cmake = cmake.replace("@BINARY_FOLDERS@", folders)
    cmake = cmake.replace("@STRAIGHT_LINE_FLAGS@", ";".join(STRAIGHT_LINE_FLAGS))
    (sources / "CMakeLists.txt").write_text(cmake.replace("@C_FILES@", " ".join(c_files)))
    headers = resources.files("fmpy") / "c-code"
    for name in fmi.headers:
        shutil.copyfile(str(headers / name), sources / name)
