"""The Python-backed targets: co-simulation FMUs built with PythonFMU.

Two FMUs, both FMI 2.0 co-simulation, both desktop cross-checks rather
than deployment targets (the importer needs Python with flexfmu and casadi):

* :func:`export_pythonfmu`: the plant, the Model's CasADi graph integrated
  in Python by the native FMU's fixed-step scheme and internal step; a
  second implementation of the native FMU's discrete system (the graph's
  closed-form M, h and B instead of the generated articulated-body passes)
  with the same variable names, so the two must agree to round-off.
* :func:`export_controller_fmu`: a scenario's controller, so closed
  loops can run between FMUs in any master.

How: the slave script (``flexfmu/targets/pythonfmu_templates``), a JSON file of
settings and the arm (and scenario) TOML files are put in a build folder and
handed to ``pythonfmu.builder.FmuBuilder.build_FMU(script, dest=...,
project_files=[...])``, which instantiates the slave once to write the
modelDescription.xml and zips everything with PythonFMU's generic binary.
As with the native exporter, the .fmu appears only when complete.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

from flexfmu import __version__
from flexfmu.data import resolve_arm
from flexfmu.targets.export import (
    ExportError, ExportReport, ExportSettings, check_output, check_settings, model_identifier, stepping,
)
from flexfmu.targets.pythonfmu_templates.description import CONFIG_FILE

PLANT_SCRIPT = "flexfmu_plant.py"
CONTROLLER_SCRIPT = "flexfmu_controller.py"
DESKTOP_NOTE = "Python-backed desktop cross-check; needs Python with flexfmu and casadi; not for real-time targets"


def export(job) -> ExportReport:
    """The ``pythonfmu`` target: :func:`export_pythonfmu` of ``job.arm_file`` to ``job.output`` with the
    integrator, steps and stop time of ``job.settings``; ``job`` is a :class:`flexfmu.targets.ExportJob`,
    whose arm file must be given (ExportError otherwise)."""
    if job.arm_file is None:
        raise ExportError("the pythonfmu target embeds the arm's TOML file; give the arm as a file")
    start = time.perf_counter()
    settings = job.settings
    path = export_pythonfmu(job.arm_file, job.output, settings.communication_step, settings.stop_time,
                            settings.integrator, settings.internal_step)
    steps = stepping(job.model, settings)
    return ExportReport(path, "pythonfmu", integrator=steps.integrator, internal_step=steps.h,
                        omega_max=steps.omega_max, total_s=time.perf_counter() - start)


def export_pythonfmu(arm_path: str | Path, output: str | Path, communication_step: float = 1e-3,
                     stop_time: float = 5.0, integrator: str | None = None, step: float | None = None) -> Path:
    """Write a PythonFMU co-simulation FMU of the arm in ``arm_path``.

    Parameters
    ----------
    arm_path : str or Path
        Arm specification (TOML) or an example arm's name; embedded in the
        FMU, which builds the Model from it when instantiated.
    output : str or Path
        The .fmu to write.
    communication_step, stop_time : float
        DefaultExperiment step size and stop time (s).
    integrator : str or None
        The fixed-step scheme (``flexfmu.integrate.INTEGRATORS``), as ``flexfmu export --integrator``; None
        picks the native FMU's default.
    step : float, optional
        The internal step, s; None picks the native FMU's default for ``communication_step``. Every
        communication step must be a whole multiple of it.

    Returns
    -------
    Path
        ``output``.

    Raises
    ------
    InputError, SpecError
        If the arm file is missing or invalid.
    ExportError
        If a setting is out of range or PythonFMU cannot build the FMU.
    """
    import flexfmu

    settings = ExportSettings(integrator=integrator, internal_step=step, communication_step=communication_step,
                              stop_time=stop_time)
    check_settings(settings)
    arm_path = resolve_arm(arm_path)
    arm = flexfmu.load_arm(arm_path)
    steps = stepping(flexfmu.build_model(arm), settings)
    config = {
        "arm": "arm.toml",
        "model_identifier": model_identifier(arm.name) + "_python",
        "description": f"{arm.description or arm.name}. {DESKTOP_NOTE} "
                       f"({steps.integrator}, internal step {steps.h:.6g} s, as the native FMU).",
        "communication_step": float(communication_step), "stop_time": float(stop_time),
        "integrator": steps.integrator, "internal_step": steps.h, "generator": f"flexfmu {__version__}",
    }
    return _build(PLANT_SCRIPT, config, {"arm.toml": arm_path}, Path(output))


def export_controller_fmu(scenario_name: str | Path, output: str | Path) -> Path:
    """Write a PythonFMU co-simulation FMU of a scenario's controller.

    Parameters
    ----------
    scenario_name : str or Path
        Name of a shipped scenario or path of a scenario TOML; it and its
        arm are embedded, and the controller is built from them
        (``Scenario.build_controller``) when the FMU is instantiated.
    output : str or Path
        The .fmu to write.

    Returns
    -------
    Path
        ``output``.

    Raises
    ------
    ScenarioError
        If the scenario cannot be loaded.
    ExportError
        If PythonFMU cannot build the FMU.
    """
    from flexfmu.control.scenario import load_scenario
    from flexfmu.data import resolve_scenario

    scenario = load_scenario(scenario_name)
    scenario_file = resolve_scenario(scenario_name)
    config = {
        "scenario": "scenario.toml", "arm": "arm.toml",
        "model_identifier": model_identifier(scenario.name) + "_controller",
        "description": f"Controller of scenario {scenario.name} ({scenario.controller['kind']}), sample and hold "
                       f"without delay. {DESKTOP_NOTE}.",
        "generator": f"flexfmu {__version__}",
    }
    files = {"scenario.toml": scenario_file, "arm.toml": scenario.arm_path}
    return _build(CONTROLLER_SCRIPT, config, files, Path(output))


def _build(script: str, config: dict, files: dict[str, Path], output: Path) -> Path:
    """Build in a temporary folder with PythonFMU, then move the .fmu to ``output``."""
    check_output(output)
    with tempfile.TemporaryDirectory(prefix="flexfmu-pythonfmu-") as tmp:
        source = Path(tmp) / "source"
        source.mkdir()
        template = resources.files("flexfmu.targets.pythonfmu_templates") / script
        (source / script).write_text(template.read_text())
        (source / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n")
        project = [source / CONFIG_FILE]
        for name, path in files.items():
            shutil.copyfile(path, source / name)
            project.append(source / name)
        built = Path(tmp) / "fmu" / f"{config['model_identifier']}.fmu"
        try:
            _run_builder(source / script, built, project)
        except Exception as error:  # the slave's own error, raised while PythonFMU instantiates it
            raise ExportError(f"PythonFMU could not build the FMU: {type(error).__name__}: {error}") from error
        output.parent.mkdir(parents=True, exist_ok=True)
        partial = output.with_name(output.name + ".part")
        try:
            shutil.copyfile(built, partial)
            os.replace(partial, output)
        finally:
            partial.unlink(missing_ok=True)
    return output


def _run_builder(script: Path, fmu: Path, project_files: list[Path]) -> None:
    """``FmuBuilder.build_FMU`` without its side effects on this process.

    PythonFMU imports the script as a top-level module from a folder it puts
    on ``sys.path`` and leaves both behind; a stale module of the same name
    would then shadow the script of the next build (or the one an FMU
    instance in this process imports from its resources), so both are undone.
    The builder itself must be the installed one: a Python-backed FMU run in
    this process puts the copy of ``pythonfmu`` in its resources (without
    the binaries the builder packs) first on ``sys.path``.
    """
    module = script.stem
    saved_path = list(sys.path)
    sys.modules.pop(module, None)
    try:
        _installed_builder().build_FMU(script, dest=fmu, project_files=project_files)
    finally:
        sys.path[:] = saved_path
        sys.modules.pop(module, None)


def _installed_builder():
    """``pythonfmu.builder.FmuBuilder`` of the installed distribution, re-imported if another copy of
    ``pythonfmu`` was imported first."""
    from importlib import import_module, metadata

    installed = Path(metadata.distribution("pythonfmu").locate_file("pythonfmu")).resolve()
    loaded = sys.modules.get("pythonfmu")
    if loaded is not None and Path(loaded.__file__).resolve().parent != installed:
        for name in [name for name in sys.modules if name == "pythonfmu" or name.startswith("pythonfmu.")]:
            del sys.modules[name]
    sys.path.insert(0, str(installed.parent))
    try:
        return import_module("pythonfmu.builder").FmuBuilder
    finally:
        sys.path.remove(str(installed.parent))
