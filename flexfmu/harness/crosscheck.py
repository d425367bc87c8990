"""Cross-validation of one arm in one scenario, and of every example arm.

Runs: the CasADi reference (CVODES, rtol 1e-10), the native C FMU through
co-simulation and through model exchange (FMPy's CVode), the Python-backed
FMU (co-simulation) and, for closed-loop scenarios, the native FMU driven by
the scenario's controller exported as an FMU. Every pair is compared on the
scenario's outputs; the report says which comparisons pass.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import flexfmu
from flexfmu.control.scenario import Scenario, load_scenario, scenarios_for
from flexfmu.data import arm_names, resolve_arm
from flexfmu.harness.compare import compare_runs
from flexfmu.harness.progress import Progress
from flexfmu.harness.reference import reference_run
from flexfmu.harness.report import plot_file, plot_runs, write_report
from flexfmu.harness.runner import FmuController, run_fmu
from flexfmu.targets import export_fmu
from flexfmu.targets.pythonfmu import export_controller_fmu, export_pythonfmu

RUNS = ("reference", "native-cs", "native-me", "pythonfmu-cs", "controller-fmu")


def run_case(arm_path, scenario_name, out: Path, duration: float | None = None,
             fmu_arm=None, runs=RUNS) -> dict:
    """Run ``scenario_name`` on the arm and compare every pair of runs.

    Parameters
    ----------
    arm_path : str or Path
        The arm file, or the name of an example arm.
    scenario_name : str, Path or Scenario
        A scenario name or file (see :func:`flexfmu.control.scenario.load_scenario`), or a loaded one.
    out : Path
        Folder for the FMUs (in ``out/fmus``) and the plot.
    duration : float, optional
        Overrides the scenario's duration, s.
    fmu_arm : Arm, optional
        Exports the FMUs from another arm than the reference uses: how tests
        show that the comparison catches a wrong FMU.
    runs : iterable of str
        Which of :data:`RUNS` to make (the reference always runs).

    Returns
    -------
    dict
        The case's entry of the report: arm, scenario, seconds per run, comparisons and plot file.
    """
    scenario = scenario_name if isinstance(scenario_name, Scenario) else load_scenario(scenario_name)
    if duration is not None:
        scenario = dataclasses.replace(scenario, duration=duration)
    arm_file = resolve_arm(arm_path)
    arm = flexfmu.load_arm(arm_file)
    model = flexfmu.build_model(arm)
    compared = scenario.compared(model)
    controller = scenario.build_controller(model)
    fmu_model = model if fmu_arm is None else flexfmu.build_model(fmu_arm)
    fmus = out / "fmus"
    fmus.mkdir(parents=True, exist_ok=True)
    label = f"{arm.name}/{scenario.name}"
    grid, start = scenario.grid(), scenario.initial
    record = [name for name, _ in compared]
    results, seconds = {}, {}

    def timed(name, action):
        began = time.perf_counter()
        results[name] = action(Progress(f"{label}: {name}"))
        seconds[name] = time.perf_counter() - began

    timed("reference", lambda pr: reference_run(model, scenario, controller, progress=pr))
    native = fmus / f"{arm.name}.fmu"
    if {"native-cs", "native-me", "controller-fmu"} & set(runs):
        export_fmu(fmu_model, native)
    for name, interface in (("native-cs", "cs"), ("native-me", "me")):
        if name in runs:
            timed(name, lambda pr, i=interface: run_fmu(native, model, controller, grid, start, i, record, pr))
    if "pythonfmu-cs" in runs:
        if fmu_arm is not None:
            raise ValueError("a perturbed arm is compared through the native FMU only")
        python_fmu = export_pythonfmu(arm_file, fmus / f"{arm.name}_python.fmu", communication_step=scenario.step)
        timed("pythonfmu-cs", lambda pr: run_fmu(python_fmu, model, controller, grid, start, "cs", record, pr))
    if "controller-fmu" in runs and not controller.open_loop:
        controller_path = export_controller_fmu(scenario.name, fmus / f"{scenario.name}_controller.fmu")
        with FmuController(controller_path, controller.inputs, controller.outputs) as fmu_controller:
            timed("controller-fmu",
                  lambda pr: run_fmu(native, model, fmu_controller, grid, start, "cs", record, pr))

    comparisons = compare_runs(results, compared)
    plot = plot_file(arm.name, scenario.name)
    plot_runs(results, record, "reference", out / plot, f"{label}: {scenario.description}")
    return {"arm": arm.name, "scenario": scenario.name, "description": scenario.description,
            "runs": seconds, "comparisons": [c.as_dict() for c in comparisons], "plot": plot}


def crosscheck(cases: list[tuple[Path, str]], out: Path, duration: float | None = None) -> dict:
    """Run every (arm file, scenario) case of ``cases`` and write the report into ``out``; ``duration``, when
    given, overrides every scenario's duration (s). Returns the report as a dict."""
    start = time.perf_counter()
    results = [run_case(arm_path, scenario, out, duration) for arm_path, scenario in cases]
    return write_report(out, results, time.perf_counter() - start)


def all_cases() -> list[tuple[Path, str]]:
    """Every example arm with the scenarios written for it."""
    return [(resolve_arm(name), scenario) for name in arm_names() for scenario in scenarios_for(name)]
