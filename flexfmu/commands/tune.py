"""``flexfmu tune ARM.toml --scenario NAME --params kp,kd [--cost FILE] [--out DIR]``.

Tunes the named gains of the scenario's control law for ARM: the cost
(``flexfmu.control.cost``; weights from ``--cost``) of the sampled closed
loop, discretised as the exported FMU runs it, is minimised by L-BFGS-B
with its exact adjoint gradient. Then the plant FMU is exported with the same
integrator and step and both gain sets are run through it, so the report
shows what the FMU does, next to what the optimiser predicted. Writes
``tuned.json``, ``report.md``, ``tuning.png`` and ``plant.fmu`` into DIR;
exits 1 when the FMU's cost differs from the prediction by more than 1 %.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

AGREEMENT = 0.01  # largest relative difference of FMU and optimiser cost


def add_parser(sub) -> None:
    parser = sub.add_parser("tune", help="tune controller gains with exact gradients, checked on the FMU")
    parser.add_argument("arm", help="arm specification (TOML)")
    parser.add_argument("--scenario", required=True, help="closed-loop scenario (harness/scenarios/NAME.toml or a path)")
    parser.add_argument("--params", required=True, help="comma-separated gains to tune, e.g. kp,kd")
    parser.add_argument("--cost", default=None, help="TOML file with [weights] tracking, vibration, effort")
    parser.add_argument("--out", default="out/tune", help="output directory (default: %(default)s)")
    parser.add_argument("--max-iterations", type=int, default=30, help="L-BFGS-B iterations (default: %(default)s)")
    parser.add_argument("--duration", type=float, default=None, help="shorten the scenario to this many seconds")
    parser.add_argument("--integrator", choices=("rk4", "implicit"), default="rk4",
                        help="the FMU's integrator, which the tuning discretisation follows (default: %(default)s)")
    parser.set_defaults(run=run)


def run(args) -> int:
    from flexfmu import build_model, load_arm
    from flexfmu.control.closed_loop import ClosedLoop
    from flexfmu.control.cost import CostError, CostWeights, load_cost
    from flexfmu.control.laws import ControlLawError
    from flexfmu.control.tuning import TuningError, tune
    from flexfmu.fmu.export import ExportSettings, export_fmu
    from harness.cosim import grid_of, initial_state
    from harness.plots import plot_before_after
    from harness.scenario import ScenarioError, load_scenario
    from harness.verify import fmu_closed_loop

    try:
        scenario = load_scenario(args.scenario)
        if scenario.controller["kind"] == "held":
            raise ScenarioError(f"{scenario.name} is open loop (controller kind 'held'): nothing to tune")
        if args.duration is not None:
            if not args.duration > 0:
                raise ScenarioError(f"--duration must be > 0, got {args.duration!r}")
            scenario = dataclasses.replace(scenario, duration=args.duration)
        weights = load_cost(args.cost) if args.cost else CostWeights()
        model = build_model(load_arm(args.arm))
        law = scenario.law(model)
        names = [name.strip() for name in args.params.split(",") if name.strip()]
        loop = ClosedLoop(model, law, scenario.reference(model), grid_of(scenario), initial_state(model, scenario),
                          weights, args.integrator)

        def progress(iteration, total, cost, gains):
            shown = " ".join(f"{name}={value:.5g}" for name, value in gains.items())
            print(f"  iteration {iteration:3d}/{total}  J = {cost:.6g}  {shown}", flush=True)

        print(f"tuning {', '.join(names)} of {law.kind} on {model.arm.name} / {scenario.name} "
              f"({len(loop.time)} samples, {args.integrator} h = {loop.internal_step:.4g} s)", flush=True)
        began = time.perf_counter()
        result = tune(loop, dict(law.gains), names, max_iterations=args.max_iterations, progress=progress)
        tuning_s = time.perf_counter() - began
    except (ScenarioError, CostError, ControlLawError, TuningError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print("exporting the plant FMU and running both gain sets through it", flush=True)
    settings = ExportSettings(integrator=args.integrator, internal_step=loop.internal_step,
                              communication_step=scenario.step, stop_time=scenario.duration)
    fmu = export_fmu(model, out / "plant.fmu", settings).path
    before_cost, before = fmu_closed_loop(fmu, model, scenario, law, list(result.initial.values()), weights)
    after_cost, after = fmu_closed_loop(fmu, model, scenario, law, list(result.tuned.values()), weights)
    mismatch = max(abs(before_cost - result.cost_initial) / result.cost_initial,
                   abs(after_cost - result.cost_tuned) / result.cost_tuned)
    summary = {
        "arm": model.arm.name, "scenario": scenario.name, "law": law.kind, "tuned": names,
        "weights": dataclasses.asdict(weights), "gains_before": result.initial, "gains_after": result.tuned,
        "predicted_cost_before": result.cost_initial, "predicted_cost_after": result.cost_tuned,
        "fmu_cost_before": before_cost, "fmu_cost_after": after_cost,
        "fmu_vs_prediction_relative": mismatch, "iterations": len(result.history) - 1,
        "evaluations": result.evaluations, "optimiser_message": result.message, "tuning_s": tuning_s,
        "integrator": args.integrator, "internal_step_s": loop.internal_step, "cost_history": result.history,
    }
    (out / "tuned.json").write_text(json.dumps(summary, indent=2))
    plot_before_after(before, after, model, scenario.reference(model), result.history, out / "tuning.png",
                      f"{model.arm.name} / {scenario.name}: {law.kind} before and after tuning (FMU runs)")
    (out / "report.md").write_text(_report(summary))
    passed = mismatch <= AGREEMENT
    print(f"cost {before_cost:.6g} -> {after_cost:.6g} on the FMU (optimiser: {result.cost_initial:.6g} -> "
          f"{result.cost_tuned:.6g}, largest difference {mismatch:.2e} relative)")
    print(f"{'PASS' if passed else 'FAIL'}: tuned gains {json.dumps(result.tuned)}; report in {out}/report.md")
    return 0 if passed else 1


def _report(s: dict) -> str:
    rows = "\n".join(f"| {name} | {s['gains_before'][name]:.6g} | {s['gains_after'][name]:.6g} |"
                     for name in s["gains_before"])
    return f"""# Tuning {s['law']} on {s['arm']} / {s['scenario']}

Tuned: {', '.join(s['tuned'])}, L-BFGS-B with the exact adjoint gradient of the
sampled closed loop ({s['integrator']}, internal step {s['internal_step_s']:.4g} s, as in the FMU);
{s['iterations']} iterations, {s['evaluations']} cost-and-gradient evaluations, {s['tuning_s']:.1f} s.
Optimiser: {s['optimiser_message']}.

Cost weights: tracking {s['weights']['tracking']}, vibration {s['weights']['vibration']},
effort {s['weights']['effort']} (see `flexfmu/control/cost.py`).

| gain | before | after |
|---|---|---|
{rows}

| cost J | before | after |
|---|---|---|
| predicted by the optimiser | {s['predicted_cost_before']:.6g} | {s['predicted_cost_after']:.6g} |
| run through the FMU | {s['fmu_cost_before']:.6g} | {s['fmu_cost_after']:.6g} |

Largest relative difference between the FMU and the prediction:
{s["fmu_vs_prediction_relative"]:.2e} (allowed: {AGREEMENT:g}).

![before and after](tuning.png)
"""
