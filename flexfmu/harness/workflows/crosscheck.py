"""Cross-validation of one arm in one scenario, and of every example arm.

The runs are rows of one table, :data:`RUNS`: the reference (the Model's
graph integrated by compiled DOP853, or ROS34PW2 for a stiff arm,
``flexfmu.harness.running.reference``; the report names which),
for a Model whose flexible bodies dropped modes the reference of the
unreduced arm too (compared with the reference alone: the reduction error,
apart from every run's integration error), the
native C FMU (FMI 2.0) by co-simulation and by model exchange (FMPy's CVode),
the same model as an FMI 3.0 FMU in both interfaces, the Python-backed FMU (the graph under the native FMU's fixed-step scheme, on a
short horizon), the closed-loop FMU (the plant and the scenario's controller
compiled together, ``flexfmu.targets.loop``: the compiled loop that sweeps
and tuning starts run, checked here against the Python loop of
``native-cs`` to round-off) and, for closed-loop scenarios, the native FMU
driven by the scenario's controller exported as an FMU. Adding a run is one row: a name,
the fixed-step scheme it integrates (runs of one scheme are compared to
round-off, see ``flexfmu.harness.reports.compare``), a function of the case setup,
and optionally a shorter horizon. FMUs are built once per arm and settings
(``flexfmu.harness.running.fmu_cache``), for this machine only: they run here. Every
pair of runs is compared on the scenario's outputs; the report says which
comparisons pass, and whether and when each run left the model's validity
envelope (``flexfmu.harness.reports.envelope``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

import flexfmu
from flexfmu.control.scenario import Scenario, load_scenario, scenarios_for
from flexfmu.data import arm_names, resolve_arm, resolve_scenario
from flexfmu.harness.reports.compare import REDUCTION, compare_runs
from flexfmu.harness.reports.envelope import envelope_outputs, envelope_summary
from flexfmu.harness.reports.figures import scenario_figures
from flexfmu.harness.reports.plots import plot_scenario
from flexfmu.harness.reports.report import plot_file, plot_runs, write_report
from flexfmu.harness.running import fmu_cache
from flexfmu.harness.running.loop_case import LoopCase
from flexfmu.harness.running.progress import Progress
from flexfmu.harness.running.reference import reference_run
from flexfmu.harness.running.runner import FmuController, run_fmu
from flexfmu.kinds import kind_of

FMU_SCHEME = "fmu-step"  # the native FMU's fixed-step integrator and internal step
PYTHONFMU_HORIZON = 1.0  # s: the Python-backed FMU is slow, and round-off agreement shows within a second
# CVode's relative tolerance in model-exchange runs: this fraction of the smallest tolerance the case compares,
# within these bounds (see CaseSetup.model_exchange_rtol)
ME_RTOL_FRACTION, ME_RTOL_BOUNDS = 1e-4, (1e-10, 1e-8)


def _native_fmu(target: str) -> Callable:
    """The builder of the native FMU of ``target`` (fmi2, fmi3) of a case, for this machine."""
    return lambda case: fmu_cache.native_fmu(case.fmu_arm or case.model.arm, target=target)


def _python_fmu(case) -> Path:
    if case.fmu_arm is not None:
        raise ValueError("a perturbed arm is compared through the native FMU only")
    return fmu_cache.python_fmu(case.arm_file, case.scenario.step)


def _loop_fmu(case) -> Path:
    return fmu_cache.loop_fmu(case.fmu_arm or case.model.arm, case.scenario)


def _controllerfmu_file(case) -> Path:
    if case.scenario_file is None:
        raise ValueError("a scenario given as loaded data (no file) has no controller FMU")
    return fmu_cache.controller_fmu(case.scenario_file)


# FMU kind -> its builder from a case (each cached by content, see flexfmu.harness.running.fmu_cache)
FMU_BUILDERS: dict[str, Callable] = {"native": _native_fmu("fmi2"), "fmi3": _native_fmu("fmi3"),
                                     "python": _python_fmu, "controller": _controllerfmu_file, "loop": _loop_fmu}
PER_ARM = ("native", "fmi3")  # FMU kinds that depend on the arm only, not on the scenario


@dataclass
class CaseSetup:
    """What every run of one case shares: the Model, scenario, controller, sample grid, start values,
    recorded outputs, and the FMUs: shipped ones (``shipped``, by kind, as FmuFile) or built on first
    use from the cache (:data:`FMU_BUILDERS`)."""

    arm_file: Path
    scenario_file: Path | None
    scenario: object
    model: object
    controller: object
    fmu_arm: object = None
    shipped: dict = field(default_factory=dict)

    @property
    def scenario_source(self):
        """What sets the scenario up again in another process: its file, or the loaded Scenario when it was
        given as data (e.g. with its motion changed)."""
        return self.scenario_file or self.scenario

    @property
    def grid(self) -> np.ndarray:
        return self.scenario.grid()

    @property
    def reduced(self) -> bool:
        """Whether the case's Model dropped modes of its flexible bodies (then the reduction's error is measured
        against the unreduced arm)."""
        reduction = self.model.reduction
        return reduction is not None and any(not keep for body in reduction.bodies for *_, keep in body.modes)

    @property
    def record(self) -> list[str]:
        """The compared outputs, then the validity envelope's quantities and flag."""
        compared = [name for name, _ in self.scenario.compared(self.model)]
        return list(dict.fromkeys(compared + envelope_outputs(self.model)))

    def fmu(self, kind: str) -> Path:
        """The FMU of ``kind`` (a key of :data:`FMU_BUILDERS`) for this case."""
        if kind in self.shipped:
            return self.shipped[kind].path()
        return FMU_BUILDERS[kind](self)

    def fmu_run(self, kind: str, interface: str, progress, horizon: float | None = None, controller=None):
        """Run the FMU of ``kind`` through ``interface`` up to ``horizon`` s (all of the grid when None)
        under ``controller`` (the scenario's when None), recording the compared outputs and reporting to
        ``progress``."""
        grid = self.grid if horizon is None else self.grid[self.grid <= horizon + 1e-9]
        return run_fmu(self.fmu(kind), self.model, controller or self.controller, grid,
                       self.scenario.start_values(self.model), interface, self.record, progress,
                       self.model_exchange_rtol)

    @property
    def model_exchange_rtol(self) -> float:
        """CVode's relative tolerance for the model-exchange runs: :data:`ME_RTOL_FRACTION` of the smallest
        tolerance the case compares, within :data:`ME_RTOL_BOUNDS`. Its integration error then stays far
        below what the comparisons allow (on the Delta, whose sensitivity is the largest, the error is about
        40 times the relative tolerance), and a stiff arm, whose solver restarts at every sample, is not
        integrated to round-off for nothing: the Delta's pick-and-place at 1e-10 took 13 s, at 1e-8 6.5 s."""
        smallest = min(tolerance for _, tolerance in self.scenario.compared(self.model))
        return float(np.clip(ME_RTOL_FRACTION * smallest, *ME_RTOL_BOUNDS))


def case_setup(arm_path, scenario_name, duration: float | None = None, fmu_arm=None,
               shipped: dict | None = None) -> CaseSetup:
    """The :class:`CaseSetup` of the scenario ``scenario_name`` (name, file or loaded Scenario) on the arm
    ``arm_path`` (file or example name), its duration overridden by ``duration`` (s) when given; ``fmu_arm``
    and ``shipped`` as for CaseSetup. The scenario is checked against the arm's Model here, before anything
    runs (ScenarioError naming every problem)."""
    loaded = isinstance(scenario_name, Scenario)
    scenario = scenario_name if loaded else load_scenario(scenario_name)
    if duration is not None:
        scenario = scenario.with_duration(duration)
    arm_file = resolve_arm(arm_path)
    model = flexfmu.build_model(flexfmu.load_arm(arm_file))
    scenario.check(model)
    return CaseSetup(arm_file, None if loaded else resolve_scenario(scenario_name), scenario, model,
                     scenario.build_controller(model), fmu_arm, dict(shipped or {}))


@dataclass(frozen=True)
class Run:
    """One way of running a case.

    Attributes
    ----------
    name : str
        The run's label in reports.
    scheme : str or None
        The fixed-step scheme it integrates (runs of one scheme must agree to round-off); None for
        variable-step runs.
    execute : callable
        (CaseSetup, progress, horizon) -> Result.
    needs : tuple of str
        The FMU kinds it runs (keys of :data:`FMU_BUILDERS`), built before it is timed.
    horizon : float or None
        Run only this many seconds (None: the scenario's duration).
    applies : callable or None
        CaseSetup -> whether the run belongs to the case (None: always).
    compared_with : tuple of str or None
        The only runs it is compared with (None: every run), and the bound of those comparisons
        (``bound``).
    bound : str or None
        The kind of bound of its comparisons with ``compared_with`` (``flexfmu.harness.reports.compare``).
    """

    name: str
    scheme: str | None
    execute: Callable
    needs: tuple = ()
    horizon: float | None = None
    applies: Callable | None = None
    compared_with: tuple | None = None
    bound: str | None = None


def _reference(case: CaseSetup, progress, horizon):
    return reference_run(case.model, case.scenario, case.controller, progress=progress)


def _full_reference(case: CaseSetup, progress, horizon):
    """The reference of the unreduced arm, on the reduced Model's outputs (the scenario's controller built for
    the full Model)."""
    full = flexfmu.build_model(kind_of(case.model.arm).unreduced(case.model.arm))
    return reference_run(full, case.scenario, case.scenario.build_controller(full), progress=progress)


def _native(interface: str, kind: str = "native"):
    return lambda case, progress, horizon: case.fmu_run(kind, interface, progress, horizon)


def _python(case: CaseSetup, progress, horizon):
    return case.fmu_run("python", "cs", progress, horizon)


def _loop(case: CaseSetup, progress, horizon):
    loop = LoopCase.of(case.model, case.scenario, case.fmu("loop"))
    result = (loop if horizon is None else loop.shortened(horizon)).trajectory({}, case.record)
    if progress:  # optional, as for the other runs (a cross-check counts runs, not samples)
        progress(len(result.time), len(result.time))
    return result


def _controller_fmu(case: CaseSetup, progress, horizon):
    with FmuController(case.fmu("controller"), case.controller.inputs, case.controller.outputs) as controller:
        return case.fmu_run("native", "cs", progress, horizon, controller)


RUNS: dict[str, Run] = {run.name: run for run in (
    Run("reference", None, _reference),
    Run("full-reference", None, _full_reference, applies=lambda case: case.reduced,
        compared_with=("reference",), bound=REDUCTION),
    Run("native-cs", FMU_SCHEME, _native("cs"), ("native",)),
    Run("native-me", None, _native("me"), ("native",)),
    Run("fmi3-cs", FMU_SCHEME, _native("cs", "fmi3"), ("fmi3",)),
    Run("fmi3-me", None, _native("me", "fmi3"), ("fmi3",)),
    Run("pythonfmu-cs", FMU_SCHEME, _python, ("python",), horizon=PYTHONFMU_HORIZON),
    Run("loop-fmu", FMU_SCHEME, _loop, ("loop",)),
    Run("controller-fmu", FMU_SCHEME, _controller_fmu, ("native", "controller"),
        applies=lambda case: not case.controller.open_loop),
)}


def execute_run(case: CaseSetup, name: str) -> tuple:
    """(Result, seconds) of the run ``name`` of :data:`RUNS` on ``case``, or (error message, None) if it
    raised; the FMUs it needs are built (or taken from the cache) before the clock starts."""
    run = RUNS[name]
    try:
        for kind in run.needs:
            case.fmu(kind)
        horizon = None if run.horizon is None or run.horizon >= case.scenario.duration else run.horizon
        began = time.perf_counter()
        result = run.execute(case, None, horizon)
        return result, time.perf_counter() - began
    except Exception as error:  # recorded in the report; the other runs go on
        return f"{type(error).__name__}: {error}", None


def case_runs(case: CaseSetup, runs=tuple(RUNS)) -> list[str]:
    """The runs of ``runs`` that apply to ``case``, the reference first."""
    return [name for name in ["reference", *(r for r in runs if r != "reference")]
            if RUNS[name].applies is None or RUNS[name].applies(case)]


def run_case(arm_path, scenario_name, out: Path, duration: float | None = None,
             fmu_arm=None, runs=tuple(RUNS)) -> dict:
    """Run ``scenario_name`` on the arm and compare every pair of runs.

    Parameters
    ----------
    arm_path : str or Path
        The arm file, or the name of an example arm.
    scenario_name : str, Path or Scenario
        A scenario name or file (see :func:`flexfmu.control.scenario.load_scenario`), or a loaded one.
    out : Path
        Folder for the plots.
    duration : float, optional
        Overrides the scenario's duration, s.
    fmu_arm : Arm, optional
        Exports the FMUs from another arm than the reference uses: how tests
        show that the comparison catches a wrong FMU.
    runs : iterable of str
        Which runs of :data:`RUNS` to make (the reference always runs).

    Returns
    -------
    dict
        The case's entry of the report (see :func:`assemble_case`).
    """
    case = case_setup(arm_path, scenario_name, duration, fmu_arm)
    count = RunCount(len(case_runs(case, runs)))
    entry = run_setup(case, out, runs, count)
    count.finish()
    return entry


def run_setup(case: CaseSetup, out: Path, runs=tuple(RUNS), progress=None) -> dict:
    """The report entry of the set-up ``case``: its runs of ``runs`` made here, compared and plotted into
    ``out``; ``progress``, when given, is told as each run starts (``progress.step(what)``)."""
    outcomes = {}
    for name in case_runs(case, runs):
        if progress is not None:
            progress.step(f"{case.model.arm.name}/{case.scenario.name}: {name}")
        outcomes[name] = execute_run(case, name)
    return assemble_case(case, outcomes, out)


class RunCount:
    """A cross-check's progress in runs, shown from the start: ``step(what)`` as each run starts."""

    def __init__(self, total: int):
        self.bar, self.total, self.done = Progress("crosscheck", unit="run"), total, -1

    def step(self, what: str = "") -> None:
        """One more run started (the previous one done); ``what`` names it."""
        self.done += 1
        if self.done == 0:
            self.bar.begin(self.total, what)
        else:
            self.bar(self.done, self.total, what)

    def finish(self) -> None:
        """Every run done."""
        self.bar(self.total, self.total)


def assemble_case(case: CaseSetup, outcomes: dict, out: Path) -> dict:
    """Compare, plot and summarise the runs of one case.

    Parameters
    ----------
    case : CaseSetup
    outcomes : dict
        {run name: (Result, seconds) or (error message, None)}, as :func:`execute_run` returns.
    out : Path
        Folder for the plots.

    Returns
    -------
    dict
        arm, scenario, description, seconds and horizon per run, the reference's integrator (None when the
        reference failed), errors of runs that failed,
        comparisons, the validity envelope (:func:`flexfmu.harness.reports.envelope.envelope_summary`, None for a
        rigid arm), the reference's figures (tracking, torques) and the plot files (None when the reference
        run failed: then nothing is plotted).
    """
    model, scenario = case.model, case.scenario
    results = {name: result for name, (result, seconds) in outcomes.items() if seconds is not None}
    errors = {name: message for name, (message, seconds) in outcomes.items() if seconds is None}
    out.mkdir(parents=True, exist_ok=True)
    units = dict(zip(model.output_names, model.output_units))
    comparisons = compare_runs(results, scenario.compared(model), {name: RUNS[name].scheme for name in results},
                               units, {signal.name: signal.group for signal in model.output_table},
                               {name: (RUNS[name].compared_with, RUNS[name].bound) for name in results
                                if RUNS[name].compared_with is not None})
    label = f"{model.arm.name}/{scenario.name}"
    entry = {"arm": model.arm.name, "scenario": scenario.name, "description": scenario.description,
             "runs": {name: outcomes[name][1] for name in results},
             "reference_integrator": results["reference"].method if "reference" in results else None,
             "horizons": {name: float(result.time[-1]) for name, result in results.items()},
             "errors": errors, "comparisons": [c.as_dict() for c in comparisons],
             "envelope": envelope_summary(model, results, scenario.start_values(model)), "figures": {},
             "plot": None, "scenario_plot": None}
    if "reference" in results:
        entry |= {"plot": plot_file(model.arm.name, scenario.name),
                  "scenario_plot": plot_file(model.arm.name, scenario.name, "scenario")}
        compared = [name for name, _ in scenario.compared(model)]
        plot_runs(results, compared, "reference", out / entry["plot"], f"{label}: {scenario.description}", units)
        reference = None if case.controller.open_loop else scenario.reference(model)
        plot_scenario(results["reference"], model, reference, out / entry["scenario_plot"],
                      f"{label}: the reference run", case.controller.open_loop)
        entry["figures"] = scenario_figures(results["reference"], model, reference)
    return entry


def crosscheck(cases: list[tuple[Path, str]], out: Path, duration: float | None = None, campaign=None,
               runs=tuple(RUNS)) -> dict:
    """Run every (arm file, scenario) case of ``cases`` and write the report into ``out``.

    Parameters
    ----------
    cases : list of (Path, str or Scenario)
        The arm files with a scenario each (name, file or loaded Scenario).
    out : Path
        The report's folder.
    duration : float, optional
        Overrides every scenario's duration (s).
    campaign : CampaignSettings, optional
        Run the cases as a campaign on Dask workers (``flexfmu.harness.campaigns.campaign``); in this process,
        one after another, when None.
    runs : iterable of str
        Which runs of :data:`RUNS` to make (the reference always runs).

    Returns
    -------
    dict
        The report (as written to report.json).

    Raises
    ------
    ScenarioError
        If a scenario does not fit its arm: every case is set up, and its scenario checked against the arm's
        Model, before anything runs or is written.
    """
    start = time.perf_counter()
    if campaign is None:
        setups = [case_setup(arm_path, scenario, duration) for arm_path, scenario in cases]  # all checked first
        count = RunCount(sum(len(case_runs(case, runs)) for case in setups))
        results = [run_setup(case, out, runs, count) for case in setups]
        count.finish()
    else:
        from flexfmu.harness.campaigns.campaign import dask_client

        with dask_client(campaign) as client:
            results = crosscheck_on(client, cases, out, duration, runs=runs)
    return write_report(out, results, time.perf_counter() - start)


def _remote_run(arm_file, scenario, duration, name: str, shipped: dict) -> tuple:
    """execute_run in a worker: the case set up there (``scenario`` a file or a loaded Scenario), with the
    FMUs shipped to it."""
    return execute_run(case_setup(arm_file, scenario, duration, shipped=shipped), name)


def fmu_file(kind: str, arm_file, scenario, duration):
    """The FMU of ``kind`` (a key of :data:`FMU_BUILDERS`) for the case of ``arm_file`` and ``scenario``
    (file or loaded Scenario; duration ``duration``), as an FmuFile to ship to workers; built in the process
    that runs it, or taken from its cache."""
    from flexfmu.harness.campaigns.campaign import FmuFile

    return FmuFile.of(case_setup(arm_file, scenario, duration).fmu(kind))


def crosscheck_on(client, cases: list[tuple[Path, str]], out: Path, duration: float | None = None,
                  builds: dict | None = None, runs=tuple(RUNS)) -> list[dict]:
    """The report entries of ``cases``, every run of every case a task on the dask ``client``.

    Each FMU is built once, by a task, and shipped to the runs that need it. Runs go longest first
    (model exchange), then the rest; comparisons and plots are made here.

    Parameters
    ----------
    client : dask.distributed.Client
    cases : list of (Path, str or Scenario)
        The arm files with a scenario each (name, file or loaded Scenario).
    out : Path
        The report's folder.
    duration : float, optional
        Overrides every scenario's duration (s).
    builds : dict, optional
        {(kind, arm file, scenario file): future of an FmuFile}: builds already submitted (the demo's
        validation shares its FMU); new builds are added to it.
    runs : iterable of str
        Which runs of :data:`RUNS` to make (the reference always runs).
    """
    builds = {} if builds is None else builds
    setups = [case_setup(arm_file, scenario, duration) for arm_file, scenario in cases]
    futures = []
    for case in setups:
        for name in case_runs(case, runs):
            shipped = {}
            for kind in RUNS[name].needs:
                key = (kind, str(case.arm_file), str(case.scenario_source) if kind not in PER_ARM else "")
                if key not in builds:
                    builds[key] = client.submit(fmu_file, kind, case.arm_file, case.scenario_source, duration,
                                                pure=False, priority=10)
                shipped[kind] = builds[key]
            futures.append(client.submit(_remote_run, case.arm_file, case.scenario_source, duration, name, shipped,
                                         pure=False, priority=5 if name == "native-me" else 0))
    outcomes = iter(_outcomes(futures))
    return [assemble_case(case, {name: next(outcomes) for name in case_runs(case, runs)}, out) for case in setups]


def _outcomes(futures: list) -> list[tuple]:
    """The outcomes of the runs' ``futures`` in their order, counted in runs as they finish."""
    from dask.distributed import as_completed

    bar = Progress("crosscheck", unit="run")
    bar.begin(len(futures))
    done = {}
    for count, future in enumerate(as_completed(futures), start=1):
        done[future.key] = _outcome(future)
        bar(count, len(futures))
    return [done[future.key] for future in futures]


def all_cases() -> list[tuple[Path, str]]:
    """Every example arm with the scenarios written for it."""
    return [(resolve_arm(name), scenario) for name in arm_names() for scenario in scenarios_for(name)]


def _outcome(future) -> tuple:
    """A run's (Result, seconds), or (error message, None) when it or an FMU build it needs failed."""
    try:
        return future.result()
    except Exception as error:  # e.g. the FMU build failed or the worker died
        return f"{type(error).__name__}: {error}", None
