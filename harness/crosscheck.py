"""Cross-validation of one arm in one scenario, and of every example arm.

Runs: the CasADi reference (CVODES, rtol 1e-10), the native C FMU through
co-simulation and through model exchange (FMPy's CVode), the Python-backed
FMU (co-simulation) and, for closed-loop scenarios, the native FMU driven by
the scenario's controller exported as an FMU. Every pair is compared on the
scenario's outputs; the report says which comparisons pass.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import flexfmu
from flexfmu.fmu.export import export_fmu
from flexfmu.fmu.pythonfmu_backend import export_controller_fmu, export_pythonfmu
from harness.compare import compare_runs
from harness.cosim import FmuController, cosimulation_run, model_exchange_run, reference_run
from harness.report import plot_file, plot_runs, write_report
from harness.scenario import ARMS_DIR, load_scenario, scenario_names

RUNS = ("reference", "native-cs", "native-me", "pythonfmu-cs", "controller-fmu")


class Progress:
    """A one-line progress display on stderr for long runs."""

    def __init__(self, label: str):
        self.label, self.last = label, -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 * done // total
        if percent != self.last:
            self.last = percent
            bar = "#" * (percent // 4)
            print(f"\r  {self.label:<40} [{bar:<25}] {percent:3d}%", end="", file=sys.stderr, flush=True)
            if done == total:
                print(file=sys.stderr)


def scenarios_for(arm_name: str) -> list[str]:
    return [name for name in scenario_names() if load_scenario(name).arm == arm_name]


def run_case(arm_path, scenario_name: str, out: Path, duration: float | None = None,
             fmu_arm=None, runs=RUNS) -> dict:
    """Run ``scenario_name`` on the arm and compare every pair of runs.

    ``fmu_arm`` (an Arm) exports the FMUs from another arm than the reference
    uses: how tests show that the comparison catches a wrong FMU.
    """
    scenario = load_scenario(scenario_name)
    if duration is not None:
        scenario = dataclasses.replace(scenario, duration=duration)
    arm = flexfmu.load_arm(arm_path)
    model = flexfmu.build_model(arm)
    fmu_arm = fmu_arm or arm
    fmu_model = model if fmu_arm is arm else flexfmu.build_model(fmu_arm)
    controller = scenario.build_controller(model)
    fmus = out / "fmus"
    fmus.mkdir(parents=True, exist_ok=True)
    label = f"{arm.name}/{scenario.name}"
    results, seconds = {}, {}

    def timed(name, action):
        start = time.perf_counter()
        results[name] = action(Progress(f"{label}: {name}"))
        seconds[name] = time.perf_counter() - start

    timed("reference", lambda pr: reference_run(model, scenario, controller, progress=pr))
    native = fmus / f"{arm.name}.fmu"
    if {"native-cs", "native-me", "controller-fmu"} & set(runs):
        export_fmu(fmu_model, native)
    if "native-cs" in runs:
        timed("native-cs", lambda pr: cosimulation_run(native, model, scenario, controller, progress=pr))
    if "native-me" in runs:
        timed("native-me", lambda pr: model_exchange_run(native, model, scenario, controller, progress=pr))
    if "pythonfmu-cs" in runs:
        python_fmu = fmus / f"{arm.name}_python.fmu"
        arm_file = Path(arm_path)
        if fmu_arm is not arm:
            raise ValueError("a perturbed arm is compared through the native FMU only")
        export_pythonfmu(arm_file, python_fmu, communication_step=scenario.step)
        timed("pythonfmu-cs", lambda pr: cosimulation_run(python_fmu, model, scenario, controller, progress=pr))
    if "controller-fmu" in runs and not controller.open_loop:
        controller_path = fmus / f"{scenario.name}_controller.fmu"
        export_controller_fmu(scenario.name, controller_path)
        fmu_controller = FmuController(controller_path, controller.inputs, controller.outputs)
        timed("controller-fmu", lambda pr: cosimulation_run(native, model, scenario, fmu_controller, progress=pr))
        fmu_controller.close()

    comparisons = compare_runs(results, scenario.outputs, scenario.tolerance)
    plot = plot_file(arm.name, scenario.name)
    plot_runs(results, scenario.outputs, "reference", out / plot, f"{label}: {scenario.description}")
    return {"arm": arm.name, "scenario": scenario.name, "description": scenario.description,
            "runs": seconds, "comparisons": [c.as_dict() for c in comparisons], "plot": plot}


def crosscheck(cases: list[tuple[Path, str]], out: Path, duration: float | None = None) -> dict:
    """Run every (arm file, scenario) case and write the report into ``out``."""
    start = time.perf_counter()
    results = [run_case(arm_path, scenario, out, duration) for arm_path, scenario in cases]
    return write_report(out, results, time.perf_counter() - start)


def all_cases() -> list[tuple[Path, str]]:
    """Every example arm with the scenarios written for it."""
    return [(path, name) for path in sorted(ARMS_DIR.glob("*.toml")) for name in scenarios_for(path.stem)]
