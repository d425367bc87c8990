"""Tune a scenario's gains with exact gradients, then check them on the FMU.

The cost (``flexfmu.control.cost``) of the sampled closed loop, discretised
as the exported FMU runs it, is minimised by L-BFGS-B with its exact adjoint
gradient (``flexfmu.control.tuning``). Then the plant FMU is exported with the
same integrator and step and both gain sets are run through it, so the report
shows what the FMU does next to what the optimiser predicted. Writes
``tuned.json``, ``report.md``, ``tuning.png`` and ``plant.fmu``; the result
passes when the FMU's cost agrees with the prediction to 1 %.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from flexfmu.control.closed_loop import ClosedLoop
from flexfmu.control.cost import CostWeights
from flexfmu.control.tuning import tune
from flexfmu.harness.plots import plot_before_after
from flexfmu.harness.verify import fmu_closed_loop
from flexfmu.targets import ExportSettings, export_fmu

AGREEMENT = 0.01  # largest relative difference of FMU and optimiser cost


@dataclass(frozen=True)
class TuneCheck:
    """Gains before and after, the optimiser's and the FMU's costs."""

    arm: str
    scenario: str
    law: str
    tuned: list[str]
    weights: dict
    gains_before: dict
    gains_after: dict
    predicted_cost_before: float
    predicted_cost_after: float
    fmu_cost_before: float
    fmu_cost_after: float
    fmu_vs_prediction_relative: float
    iterations: int
    evaluations: int
    optimiser_message: str
    tuning_s: float
    integrator: str
    internal_step_s: float
    cost_history: list[float]

    @property
    def passed(self) -> bool:
        return self.fmu_vs_prediction_relative <= AGREEMENT


def tune_on_fmu(model, scenario, names: list[str], out: Path, weights: CostWeights = CostWeights(),
                integrator: str = "rk4", max_iterations: int = 30, progress=None, announce=print) -> TuneCheck:
    """Tune the gains ``names`` of ``scenario``'s law on ``model``, check both
    gain sets on the exported FMU, write the files into ``out``.

    Parameters
    ----------
    model : Model
    scenario : Scenario
        A closed-loop scenario; its law, reference, grid and initial state define the loop.
    names : list of str
        The gains to tune; the others keep the scenario's values.
    out : Path
        Folder for the files listed in the module docstring (created if needed).
    weights : CostWeights
    integrator : str
        The plant's fixed-step integrator, in the tuning graph and the exported FMU alike.
    max_iterations : int
        Cap on the L-BFGS-B iterations.
    progress : callable, optional
        Called as progress(iteration, total, cost, gains) after every iteration.
    announce : callable
        Called as announce(text) with what happens next.

    Returns
    -------
    TuneCheck
    """
    law = scenario.law(model)
    loop = ClosedLoop(model, law, scenario.reference(model), scenario.grid(), scenario.initial_state(model),
                      weights, integrator)
    announce(f"tuning {', '.join(names)} of {law.kind} on {model.arm.name} / {scenario.name} "
             f"({len(loop.time)} samples, {integrator} h = {loop.internal_step:.4g} s)")
    began = time.perf_counter()
    result = tune(loop, dict(law.gains), names, max_iterations=max_iterations, progress=progress)
    tuning_s = time.perf_counter() - began

    out.mkdir(parents=True, exist_ok=True)
    announce("exporting the plant FMU and running both gain sets through it")
    settings = ExportSettings(integrator=integrator, internal_step=loop.internal_step,
                              communication_step=scenario.step, stop_time=scenario.duration)
    fmu = export_fmu(model, out / "plant.fmu", settings).path
    before_cost, before = fmu_closed_loop(fmu, model, scenario, law, list(result.initial.values()), weights)
    after_cost, after = fmu_closed_loop(fmu, model, scenario, law, list(result.tuned.values()), weights)
    check = TuneCheck(
        arm=model.arm.name, scenario=scenario.name, law=law.kind, tuned=list(names),
        weights=dataclasses.asdict(weights), gains_before=result.initial, gains_after=result.tuned,
        predicted_cost_before=result.cost_initial, predicted_cost_after=result.cost_tuned,
        fmu_cost_before=before_cost, fmu_cost_after=after_cost,
        fmu_vs_prediction_relative=max(abs(before_cost - result.cost_initial) / result.cost_initial,
                                       abs(after_cost - result.cost_tuned) / result.cost_tuned),
        iterations=len(result.history) - 1, evaluations=result.evaluations, optimiser_message=result.message,
        tuning_s=tuning_s, integrator=integrator, internal_step_s=loop.internal_step,
        cost_history=result.history,
    )
    (out / "tuned.json").write_text(json.dumps(asdict(check), indent=2))
    plot_before_after(before, after, model, scenario.reference(model), result.history, out / "tuning.png",
                      f"{model.arm.name} / {scenario.name}: {law.kind} before and after tuning (FMU runs)")
    (out / "report.md").write_text(_report(check))
    return check


def _report(s: TuneCheck) -> str:
    rows = "\n".join(f"| {name} | {s.gains_before[name]:.6g} | {s.gains_after[name]:.6g} |"
                     for name in s.gains_before)
    return f"""# Tuning {s.law} on {s.arm} / {s.scenario}

Tuned: {', '.join(s.tuned)}, L-BFGS-B with the exact adjoint gradient of the
sampled closed loop ({s.integrator}, internal step {s.internal_step_s:.4g} s, as in the FMU);
{s.iterations} iterations, {s.evaluations} cost-and-gradient evaluations, {s.tuning_s:.1f} s.
Optimiser: {s.optimiser_message}.

Cost weights: tracking {s.weights['tracking']}, vibration {s.weights['vibration']},
effort {s.weights['effort']} (see `flexfmu/control/cost.py`).

| gain | before | after |
|---|---|---|
{rows}

| cost J | before | after |
|---|---|---|
| predicted by the optimiser | {s.predicted_cost_before:.6g} | {s.predicted_cost_after:.6g} |
| run through the FMU | {s.fmu_cost_before:.6g} | {s.fmu_cost_after:.6g} |

Largest relative difference between the FMU and the prediction:
{s.fmu_vs_prediction_relative:.2e} (allowed: {AGREEMENT:g}).

![before and after](tuning.png)
"""
