"""Cross-validation of one arm in one scenario, and of every example arm.

Runs: the CasADi reference (CVODES, rtol 1e-10), the native C FMU (FMI 2.0)
through co-simulation and through model exchange (FMPy's CVode), the same
model as an FMI 3.0 FMU in both interfaces, the Python-backed FMU
(co-simulation) and, for closed-loop scenarios, the native FMU driven by the
scenario's controller exported as an FMU. Every pair is compared on the
scenario's outputs; the report says which comparisons pass, and whether and
when each run left the model's validity envelope. The FMUs are built for this
machine only: they run here.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import flexfmu
from flexfmu.control.scenario import load_scenario, scenarios_for
from flexfmu.data import arm_names, resolve_arm
from flexfmu.harness.compare import compare_runs
from flexfmu.harness.envelope import envelope_outputs, envelope_summary
from flexfmu.harness.progress import Progress
from flexfmu.harness.reference import reference_run
from flexfmu.harness.report import plot_file, plot_runs, write_report
from flexfmu.harness.runner import FmuController, run_fmu
from flexfmu.targets import ExportSettings, export
from flexfmu.targets.platforms import host_platform
from flexfmu.targets.pythonfmu import export_controller_fmu, export_pythonfmu

RUNS = ("reference", "native-cs", "native-me", "fmi3-cs", "fmi3-me", "pythonfmu-cs", "controller-fmu")
# run -> (FMU target, interface) of the native runs
NATIVE_RUNS = {"native-cs": ("fmi2", "cs"), "native-me": ("fmi2", "me"), "fmi3-cs": ("fmi3", "cs"),
               "fmi3-me": ("fmi3", "me")}


def run_case(arm_path, scenario_name: str, out: Path, duration: float | None = None,
             fmu_arm=None, runs=RUNS) -> dict:
    """Run ``scenario_name`` on the arm and compare every pair of runs.

    Parameters
    ----------
    arm_path : str or Path
        The arm file, or the name of an example arm.
    scenario_name : str
        A scenario name or file (see :func:`flexfmu.control.scenario.load_scenario`).
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
        The case's entry of the report: arm, scenario, seconds per run, comparisons, the validity envelope
        (:func:`flexfmu.harness.envelope.envelope_summary`, None for a rigid arm) and plot file.
    """
    scenario = load_scenario(scenario_name)
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
    record = list(dict.fromkeys([name for name, _ in compared] + envelope_outputs(model)))
    results, seconds = {}, {}

    def timed(name, action):
        began = time.perf_counter()
        results[name] = action(Progress(f"{label}: {name}"))
        seconds[name] = time.perf_counter() - began

    timed("reference", lambda pr: reference_run(model, scenario, controller, progress=pr))
    native = {"fmi2": fmus / f"{arm.name}.fmu", "fmi3": fmus / f"{arm.name}_fmi3.fmu"}
    here = ExportSettings(platforms=(host_platform(),))
    targets = {NATIVE_RUNS[name][0] for name in runs if name in NATIVE_RUNS}
    for target in sorted(targets | ({"fmi2"} if "controller-fmu" in runs else set())):
        export(fmu_model, native[target], here, target)
    for name, (target, interface) in NATIVE_RUNS.items():
        if name in runs:
            timed(name, lambda pr, f=native[target], i=interface: run_fmu(f, model, controller, grid, start, i,
                                                                          record, pr))
    if "pythonfmu-cs" in runs:
        if fmu_arm is not None:
            raise ValueError("a perturbed arm is compared through the native FMU only")
        python_fmu = export_pythonfmu(arm_file, fmus / f"{arm.name}_python.fmu", communication_step=scenario.step)
        timed("pythonfmu-cs", lambda pr: run_fmu(python_fmu, model, controller, grid, start, "cs", record, pr))
    if "controller-fmu" in runs and not controller.open_loop:
        controller_path = export_controller_fmu(scenario.name, fmus / f"{scenario.name}_controller.fmu")
        with FmuController(controller_path, controller.inputs, controller.outputs) as fmu_controller:
            timed("controller-fmu",
                  lambda pr: run_fmu(native["fmi2"], model, fmu_controller, grid, start, "cs", record, pr))

    comparisons = compare_runs(results, compared)
    plot = plot_file(arm.name, scenario.name)
    plot_runs(results, [name for name, _ in compared], "reference", out / plot, f"{label}: {scenario.description}")
    return {"arm": arm.name, "scenario": scenario.name, "description": scenario.description,
            "runs": seconds, "comparisons": [c.as_dict() for c in comparisons],
            "envelope": envelope_summary(model, results, start), "plot": plot}


def crosscheck(cases: list[tuple[Path, str]], out: Path, duration: float | None = None, runs=RUNS) -> dict:
    """Run every (arm file, scenario) case of ``cases`` with the ``runs`` of :data:`RUNS` and write the report
    into ``out``; ``duration``, when given, overrides every scenario's duration (s). Returns the report as a
    dict."""
    start = time.perf_counter()
    results = [run_case(arm_path, scenario, out, duration, runs=runs) for arm_path, scenario in cases]
    return write_report(out, results, time.perf_counter() - start)


def all_cases() -> list[tuple[Path, str]]:
    """Every example arm with the scenarios written for it."""
    return [(resolve_arm(name), scenario) for name in arm_names() for scenario in scenarios_for(name)]
