"""Tune a scenario's gains with exact gradients, then check them on the FMU.

The cost (``flexfmu.control.cost``) of the sampled closed loop, discretised
as the exported FMU runs it, is minimised with its exact adjoint gradient
(``flexfmu.control.tuning``), by default subject to tracking no worse than
with the scenario's gains, and always over a horizon that covers the
settling after the move, with the law's position gains kept away from zero
and the loop kept stable at rest along the move with at least half the
scenario's gains' margin (the rules of ``flexfmu.control.tuning``). With
several starts (``starts``), each is a task of a campaign on Dask workers,
and each start's tuned gains are run at once through the scenario's
closed-loop FMU (``flexfmu.targets.loop``, the compiled loop, one run for
all three terms): the best start whose FMU run keeps the limits and whose
tuning keeps the margin wins. Then the plant FMU is exported with the same
integrator and step and
both gain sets are run through it, so the report shows what the FMU does
next to what the optimiser predicted, term by term: tracking, vibration and
effort apart, and the peak tracking error. Writes ``tuned.json``,
``report.md``, ``tuning.png`` and ``plant.fmu``; the result passes when the
FMU's cost agrees with the prediction to 1 %, every limit holds on the FMU and
the tuned loop keeps its stability margin.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from flexfmu.control.closed_loop import ClosedLoop
from flexfmu.control.cost import TERMS, CostWeights, cost_terms, weight_vector
from flexfmu.control.laws import LAWS
from flexfmu.control.run_figures import term_figure
from flexfmu.control.tuning import TuningError, gain_bounds, required_decay, tune, tuning_horizon
from flexfmu.dynamics.metadata import JOINT_ANGLE
from flexfmu.harness.reports.envelope import envelope_lines, envelope_summary
from flexfmu.harness.reports.plots import plot_before_after
from flexfmu.harness.reports.tables import write_table
from flexfmu.harness.workflows.verify import fmu_closed_loop
from flexfmu.targets import ExportSettings, export_fmu

BEFORE = "before"  # a limit equal to the term's value with the scenario's gains
DEFAULT_LIMITS = {"tracking": BEFORE}
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
    terms_before: dict
    terms_after: dict
    peak_tracking_error_before: float
    peak_tracking_error_after: float
    limits: dict
    limits_kept: bool
    starts: list
    iterations: int
    evaluations: int
    optimiser_message: str
    tuning_s: float
    integrator: str
    internal_step_s: float
    cost_history: list[float]
    bounds: dict
    decay_before: float
    decay_after: float
    decay_required: float
    horizon_s: float
    envelope: dict | None = None

    @property
    def margin_kept(self) -> bool:
        """Whether the tuned loop decays at least as fast as required at every pose along the move."""
        return self.decay_after >= self.decay_required * (1 - 1e-6)

    @property
    def passed(self) -> bool:
        return self.fmu_vs_prediction_relative <= AGREEMENT and self.limits_kept and self.margin_kept


def tune_on_fmu(model, scenario, names: list[str], out: Path, weights: CostWeights = CostWeights(),
                integrator: str = "rk4", max_iterations: int = 30, progress=None, announce=print,
                limits: dict | None = None, starts: int = 1, campaign=None,
                duration: float | None = None) -> TuneCheck:
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
        Cap on the optimiser's iterations (per start).
    progress : callable, optional
        Called as progress(iteration, total, cost, gains) after every iteration (single start only).
    announce : callable
        Called as announce(text) with what happens next.
    limits : dict, optional
        Upper bounds on the cost's unweighted terms by name (``tracking``, ``vibration``, ``effort``), a
        number or ``"before"`` (the term with the scenario's gains); :data:`DEFAULT_LIMITS` when None,
        none when empty.
    starts : int
        Number of starting points: the scenario's gains, then random ones (each tuned gain times a
        factor drawn log-uniformly from [1/4, 4], seeded), each a campaign task.
    campaign : CampaignSettings, optional
        Where the starts run (a local Dask cluster when None and ``starts`` > 1).
    duration : float, optional
        The tuning horizon, s (the scenario's duration when None); it must cover the move and its settling
        (:func:`flexfmu.control.tuning.tuning_horizon`).

    Returns
    -------
    TuneCheck

    Raises
    ------
    TuningError
        If a name is not a gain of the law, the horizon cuts the settling after the move, or the scenario's gains
        are not stable along it.
    """
    unknown = [name for name in names if name not in scenario.controller_kind.gains]
    if unknown or not names:
        raise TuningError(f"--params: {', '.join(unknown) or 'nothing'} is not a gain of {scenario.controller['kind']}; "
                          f"its gains: {', '.join(scenario.controller_kind.gains)}")
    scenario = tuning_horizon(scenario, duration)
    law = scenario.law(model)
    initial = dict(law.gains)
    gains_box = gain_bounds(initial, names, LAWS[law.kind].position_gains)
    loop = _loop(model, scenario, weights, integrator)
    decay = required_decay(loop, initial)
    announce(f"tuning {', '.join(names)} of {law.kind} on {model.arm.name} / {scenario.name} over "
             f"{scenario.duration:g} s ({len(loop.time)} samples, {integrator} h = {loop.internal_step:.4g} s), "
             f"SLSQP, keeping {', '.join(f'{k} in [{lo:.4g}, {hi:.4g}]' for k, (lo, hi) in gains_box.items())} and "
             f"a decay rate of at least {decay:.3g} 1/s at rest along the move")
    bounds = _limits(loop, initial, DEFAULT_LIMITS if limits is None else limits)
    began = time.perf_counter()
    if starts <= 1:
        result = tune(loop, initial, names, gains_box, max_iterations=max_iterations, progress=progress,
                      limits=bounds, decay=decay)
        terms = loop.terms(list(result.tuned.values()))
        tried = [{"start": initial, "tuned": result.tuned, "cost": result.cost_tuned, "status": "ok", "error": "",
                  "limits_kept": all(terms[term] <= bound * (1 + 1e-6) for term, bound in bounds.items())}]
    else:
        result, tried = _multi_start(model, scenario, names, out, weights, integrator, max_iterations, bounds, starts,
                                     campaign, announce, gains_box, decay)
    tuning_s = time.perf_counter() - began
    start_gains, tuned_gains = list(initial.values()), list(result.tuned.values())
    predicted_before = loop.cost(start_gains)

    out.mkdir(parents=True, exist_ok=True)
    announce("exporting the plant FMU and running both gain sets through it")
    settings = ExportSettings(integrator=integrator, internal_step=loop.internal_step,
                              communication_step=scenario.step, stop_time=scenario.duration)
    fmu = export_fmu(model, out / "plant.fmu", settings).path
    before_cost, before = fmu_closed_loop(fmu, model, scenario, law, start_gains, weights)
    after_cost, after = fmu_closed_loop(fmu, model, scenario, law, tuned_gains, weights)
    reference = scenario.reference(model)
    terms_before, terms_after = (_terms(cost_terms(model, run, reference, scenario.step)) for run in (before, after))
    check = TuneCheck(
        arm=model.arm.name, scenario=scenario.name, law=law.kind, tuned=list(names),
        weights=dataclasses.asdict(weights), gains_before=initial, gains_after=result.tuned,
        predicted_cost_before=predicted_before, predicted_cost_after=result.cost_tuned,
        fmu_cost_before=before_cost, fmu_cost_after=after_cost,
        fmu_vs_prediction_relative=max(abs(before_cost - predicted_before) / predicted_before,
                                       abs(after_cost - result.cost_tuned) / result.cost_tuned),
        terms_before=terms_before, terms_after=terms_after,
        peak_tracking_error_before=_peak_tracking(model, before, reference),
        peak_tracking_error_after=_peak_tracking(model, after, reference),
        limits=bounds, limits_kept=all(terms_after[term] <= bound * (1 + AGREEMENT) for term, bound in bounds.items()),
        starts=tried, iterations=len(result.history) - 1, evaluations=result.evaluations,
        optimiser_message=result.message, tuning_s=tuning_s, integrator=integrator,
        internal_step_s=loop.internal_step, cost_history=result.history, bounds=gains_box,
        decay_before=loop.decay_rate(start_gains), decay_after=loop.decay_rate(tuned_gains), decay_required=decay,
        horizon_s=scenario.duration,
        envelope=envelope_summary(model, {"before": before, "after": after}, scenario.start_values(model)),
    )
    (out / "tuned.json").write_text(json.dumps(asdict(check), indent=2))
    plot_before_after(before, after, model, reference, result.history, out / "tuning.png",
                      f"{model.arm.name} / {scenario.name}: {law.kind} before and after tuning (FMU runs)")
    (out / "report.md").write_text(_report(check))
    return check


_LOOPS: dict[str, ClosedLoop] = {}  # a worker's closed loops, by the repr of what defines them


def _cached_loop(arm, scenario, weights: CostWeights, integrator: str) -> ClosedLoop:
    import flexfmu

    key = repr((arm, scenario, weights, integrator))
    if key not in _LOOPS:
        _LOOPS.clear()
        _LOOPS[key] = _loop(flexfmu.build_model(arm), scenario, weights, integrator)
    return _LOOPS[key]


def _loop(model, scenario, weights: CostWeights, integrator: str) -> ClosedLoop:
    return ClosedLoop(model, scenario.law(model), scenario.reference(model), scenario.grid(),
                      scenario.initial_state(model), weights, integrator)


def _limits(loop: ClosedLoop, gains: dict, limits: dict) -> dict:
    """Limits as numbers: ``"before"`` replaced by the term with ``gains``."""
    before = loop.terms(list(gains.values())) if BEFORE in limits.values() else {}
    return {term: float(before[term] if bound == BEFORE else bound) for term, bound in limits.items()}


def _terms(figures: dict) -> dict:
    """cost_terms' figures by term name (tracking, vibration, effort)."""
    return {key.split(" ")[0]: value for key, value in figures.items()}


def _peak_tracking(model, run, reference) -> float:
    theta_d = np.array([reference(t)[0] for t in run.time])
    return float(np.max(np.abs(theta_d - np.column_stack([run[name] for name in model.outputs_of(JOINT_ANGLE)]))))


def start_points(gains: dict, names: list[str], count: int, seed: int = 0) -> list[dict]:
    """``count`` starting gain sets: ``gains`` itself, then each of ``names`` times a factor drawn
    log-uniformly from [1/4, 4] with the random ``seed``."""
    rng = np.random.default_rng(seed)
    points = [dict(gains)]
    for _ in range(count - 1):
        points.append(dict(gains) | {name: float(gains[name] * 4.0 ** rng.uniform(-1, 1)) for name in names})
    return points


@dataclass(frozen=True)
class StartSetup:
    """What every start of a multi-start tuning shares (sent to each worker once): the tuning's settings,
    and the closed-loop FMU (an FmuFile) with its LoopCase that checks each start's tuned gains."""

    arm: object
    scenario: object
    names: tuple
    weights: CostWeights
    integrator: str
    max_iterations: int
    limits: tuple  # (term, bound) pairs
    bounds: tuple  # (gain, (low, high)) pairs
    decay: float  # the slowest decay rate to keep, 1/s
    case: object
    fmu: object


def tune_start(point: dict, setup: StartSetup) -> dict:
    """Tune from the gains ``point`` on a worker and run the tuned gains through the closed-loop FMU; returns the
    tuned gains (``tuned.NAME``), the predicted cost, the FMU's cost (``fmu cost``) and terms, and whether the
    limits hold on the FMU and the tuning kept the stability margin.

    Parameters
    ----------
    point : dict
        Every gain of the law, by name: the start.
    setup : StartSetup
    """
    loop = _cached_loop(setup.arm, setup.scenario, setup.weights, setup.integrator)
    limits = dict(setup.limits)
    result = tune(loop, point, list(setup.names), dict(setup.bounds), max_iterations=setup.max_iterations,
                  limits=limits, decay=setup.decay)
    run = setup.case.at(setup.fmu.path()).run({f"controller.{name}": value for name, value in result.tuned.items()})
    terms = {term: run.outputs[term_figure(term)] for term in TERMS}
    kept = all(terms[term] <= bound * (1 + 1e-6) for term, bound in limits.items()) and \
        result.decay_tuned >= setup.decay * (1 - 1e-6)
    return ({f"tuned.{name}": value for name, value in result.tuned.items()}
            | {"cost": result.cost_tuned, "fmu cost": float(weight_vector(setup.weights) @ list(terms.values())),
               "limits_kept": kept, "iterations": len(result.history) - 1}
            | {f"{term}": value for term, value in terms.items()})


def _multi_start(model, scenario, names, out, weights, integrator, max_iterations, limits, starts, campaign,
                 announce, bounds, decay):
    """The best of ``starts`` tunings (lowest cost among those keeping the limits), as a TuningResult,
    and every start's row."""
    from flexfmu.control.tuning import TuningResult
    from flexfmu.harness.campaigns.campaign import CampaignSettings, FmuFile, run_campaign
    from flexfmu.harness.running.fmu_cache import loop_fmu
    from flexfmu.harness.running.loop_case import LoopCase
    from flexfmu.targets.platforms import host_platform

    law = scenario.law(model)
    points = start_points(dict(law.gains), names, starts)
    step = _loop(model, scenario, weights, integrator).internal_step
    fmu = loop_fmu(model.arm, scenario, ExportSettings(integrator=integrator, internal_step=step,
                                                       platforms=(host_platform(),)))
    announce(f"{starts} starts as a campaign, each checked on the closed-loop FMU (table in {out / 'starts'})")
    setup = StartSetup(model.arm, scenario, tuple(names), weights, integrator, max_iterations,
                       tuple(limits.items()), tuple(bounds.items()), decay,
                       LoopCase.of(model, scenario, fmu, integrator, step), FmuFile.of(fmu))
    rows = run_campaign(points, tune_start, out / "starts", campaign or CampaignSettings(), "tuning starts", (setup,),
                        batch=1)
    write_table(rows, out / "starts" / "results.csv")
    good = [row for row in rows if row["status"] == "ok" and row["limits_kept"]] or \
        [row for row in rows if row["status"] == "ok"]
    if not good:
        raise TuningError(f"every one of the {starts} starts failed; the first: {rows[0]['error']}")
    best = min(good, key=lambda row: row["fmu cost"])
    tried = [{"start": {name: row[name] for name in law.gains}, "tuned": {name: row.get(f"tuned.{name}") for name in
                                                                          law.gains},
              "cost": row.get("cost"), "fmu_cost": row.get("fmu cost"), "limits_kept": row.get("limits_kept"),
              "status": row["status"], "error": row["error"]} for row in rows]
    tuned = {name: best[f"tuned.{name}"] for name in law.gains}
    return TuningResult(list(names), {name: best[name] for name in law.gains}, tuned, float("nan"), best["cost"],
                        f"best of {starts} starts", [best["cost"]], 0), tried


def _report(s: TuneCheck) -> str:
    rows = "\n".join(f"| {name} | {s.gains_before[name]:.6g} | {s.gains_after[name]:.6g} |"
                     for name in s.gains_before)
    units = {"tracking": "rad^2 s", "vibration": "m^2 s", "effort": "(N m)^2 s"}
    terms = "\n".join(
        f"| {term} [{units[term]}] | {s.terms_before[term]:.4g} | {s.terms_after[term]:.4g} | "
        f"{100 * (s.terms_after[term] / s.terms_before[term] - 1):+.1f} % | "
        f"{'<= ' + format(s.limits[term], '.4g') if term in s.limits else ''} |" for term in units)
    limits = ", ".join(f"{term} <= {bound:.4g}" for term, bound in s.limits.items()) or "none"
    bounds = ", ".join(f"{name} in [{low:.4g}, {high:.4g}]" for name, (low, high) in s.bounds.items())
    worse = [term for term in units if s.terms_after[term] > s.terms_before[term] * (1 + AGREEMENT)]
    warning = (f"\n**Worse after tuning: {', '.join(worse)}.** Bound it with `--limit TERM=before` if that "
               f"matters.\n" if worse else "")
    envelope = "\n".join(envelope_lines(s.envelope))
    return f"""# Tuning {s.law} on {s.arm} / {s.scenario}

Tuned: {', '.join(s.tuned)}, with the exact adjoint gradient of the sampled
closed loop ({s.integrator}, internal step {s.internal_step_s:.4g} s, as in the FMU);
{s.iterations} iterations, {s.evaluations} cost-and-gradient evaluations, {len(s.starts)} start(s),
{s.tuning_s:.1f} s. Optimiser: {s.optimiser_message}.

Cost weights: tracking {s.weights['tracking']}, vibration {s.weights['vibration']},
effort {s.weights['effort']} (see `flexfmu/control/cost.py`), over {s.horizon_s:g} s: the move and the
settling after it. Limits: {limits} ({'kept' if s.limits_kept else '**not kept**'} on the FMU).

Rules that keep the tuning honest (`flexfmu/control/tuning.py`): gains within {bounds} (position
feedback kept), and the sampled loop, linearised at rest at poses along the move, decaying at least
half as fast as with the scenario's gains: slowest decay rate {s.decay_before:.3g} 1/s before,
{s.decay_after:.3g} 1/s after, required {s.decay_required:.3g} 1/s
({'kept' if s.margin_kept else '**not kept**'}).

| gain | before | after |
|---|---|---|
{rows}

What the FMU does with each gain set (cost terms unweighted):

| term | before | after | change | limit |
|---|---|---|---|---|
{terms}
| peak joint tracking error [rad] | {s.peak_tracking_error_before:.4g} | {s.peak_tracking_error_after:.4g} | {100 * (s.peak_tracking_error_after / s.peak_tracking_error_before - 1):+.1f} % | |
{warning}
| cost J | before | after |
|---|---|---|
| predicted by the optimiser | {s.predicted_cost_before:.6g} | {s.predicted_cost_after:.6g} |
| run through the FMU | {s.fmu_cost_before:.6g} | {s.fmu_cost_after:.6g} |

Largest relative difference between the FMU and the prediction:
{s.fmu_vs_prediction_relative:.2e} (allowed: {AGREEMENT:g}).

{envelope}![before and after](tuning.png)
"""
