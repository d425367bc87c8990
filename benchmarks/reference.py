"""Reference benchmark: the 10 s pd_circle reference, its time and its accuracy.

Times the closed-loop reference of yu_chen_2dof in pd_circle (10 000 samples
at 1 kHz) with the compiled one-step DOP853 (``flexfmu.harness.running.reference``),
median of repeats once its library is compiled (the compile, once per model
and law, is reported apart), and its error against a run at a 100 times
tighter tolerance (rtol 1e-12, atol 1e-14), per compared output. With
``--cvodes`` it also times the former reference, CVODES restarted at every
sample (minutes). Target: 3 s or less on a 2-core machine.

With ``--delta`` it measures the stiff arm instead (issue 21): the whole
``delta_pick_place`` reference of kuo_delta by DOP853 (the reference before
the stiff integrator) and by ROS34PW2 (the one the Delta gets now), each the
median of repeats with its library cached, ROS34PW2's difference from DOP853
per compared output, and ``flexfmu crosscheck kuo_delta --scenario
delta_pick_place`` in full (every run, comparisons, plots) with either
reference, its FMUs built beforehand (caches warm; the builds are timed
apart). With ``--cold`` it also compiles both reference libraries into an
empty cache (a minute or two each). Target: the cross-check in 60 s or less.

Usage: python benchmarks/reference.py [--repeats 3] [--cvodes] [--json benchmarks/results/reference.json]
       python benchmarks/reference.py --delta [--cold] [--json benchmarks/results/reference_delta.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from benchmarks.machine import describe  # noqa: E402
from flexfmu import build_model, load_arm  # noqa: E402
from flexfmu.control.scenario import load_scenario  # noqa: E402
from flexfmu.harness.running.reference import reference_run  # noqa: E402

TARGET_S = 3.0
CROSSCHECK_TARGET_S = 60.0


def cvodes_per_sample(model, scenario, controller) -> float:
    """Seconds of the former reference: CVODES (BDF, rtol 1e-10) restarted at every sample."""
    import casadi as ca

    from flexfmu.harness.running.reference import integrator_options, reference_dae

    n, p = len(model.coordinates), model.nominal_parameters
    integrator = ca.integrator("former", "cvodes", reference_dae(model), 0.0, scenario.step,
                               integrator_options(1e-10, 1e-12, "bdf"))
    index = [model.output_names.index(name) for name in controller.inputs]
    began = time.perf_counter()
    x, u = scenario.initial_state(model), np.zeros(len(model.inputs))
    for t in scenario.grid():
        u = controller(t, np.array(model.outputs(x[:n], x[n:], u, p)).ravel()[index])
        x = integrator(x0=x, p=np.concatenate([u, p]))["xf"].full().ravel()
    return time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cvodes", action="store_true")
    parser.add_argument("--delta", action="store_true", help="the stiff Delta robot's reference and crosscheck")
    parser.add_argument("--cold", action="store_true", help="with --delta: time the reference compiles too")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.delta:
        return delta(args.repeats, args.cold, Path(args.json or "benchmarks/results/reference_delta.json"))
    args.json = args.json or "benchmarks/results/reference.json"
    machine = describe()
    import os

    os.environ["FLEXFMU_CACHE"] = tempfile.mkdtemp(prefix="flexfmu-bench-cache-")
    scenario = load_scenario("pd_circle")
    model = build_model(load_arm(scenario.arm))
    controller = scenario.build_controller(model)
    began = time.perf_counter()
    reference_run(model, scenario, controller)
    first = time.perf_counter() - began
    times = []
    for _ in range(args.repeats):
        began = time.perf_counter()
        run = reference_run(model, scenario, controller)
        times.append(time.perf_counter() - began)
    tight = reference_run(model, scenario, controller, rtol=1e-12, atol=1e-14)
    errors = {name: float(np.max(np.abs(run[name] - tight[name]))) for name, _ in scenario.compared(model)}
    tolerances = dict(scenario.compared(model))
    result = {"machine": machine, "scenario": "pd_circle", "samples": len(scenario.grid()),
              "first_run_with_compile_s": first, "median_s": statistics.median(times), "times_s": times,
              "target_s": TARGET_S, "error_vs_100x_tighter": errors, "crosscheck_tolerances": tolerances}
    print(f"pd_circle reference, 10 s at 1 kHz: {result['median_s']:.2f} s (median of {args.repeats}; first run "
          f"with the compile {first:.2f} s); target <= {TARGET_S:g} s: "
          f"{'met' if result['median_s'] <= TARGET_S else 'MISSED'}")
    for name, error in errors.items():
        print(f"  {name}: largest difference from rtol 1e-12 {error:.2e} (cross-check tolerance {tolerances[name]:g})")
    if args.cvodes:
        result["cvodes_restarted_per_sample_s"] = cvodes_per_sample(model, scenario, controller)
        print(f"former reference (CVODES restarted per sample): {result['cvodes_restarted_per_sample_s']:.1f} s")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


def _timed(function):
    """(result, seconds) of ``function()``."""
    began = time.perf_counter()
    result = function()
    return result, time.perf_counter() - began


def _compile_seconds(model, controller, integrator: str) -> float:
    """Seconds to generate and compile the reference library of ``integrator`` for ``model`` and ``controller``'s
    law into an empty cache."""
    import os

    from flexfmu.harness.running.compiled_reference import CompiledReference
    from flexfmu.harness.running.reference_steps import REFERENCE_INTEGRATORS

    previous = os.environ.get("FLEXFMU_CACHE")
    os.environ["FLEXFMU_CACHE"] = tempfile.mkdtemp(prefix="flexfmu-bench-cache-")
    try:
        return _timed(lambda: CompiledReference(model, REFERENCE_INTEGRATORS[integrator], controller))[1]
    finally:
        if previous is None:
            del os.environ["FLEXFMU_CACHE"]
        else:
            os.environ["FLEXFMU_CACHE"] = previous


def _crosscheck_seconds(integrator: str, out: Path) -> tuple[float, dict]:
    """(wall seconds, report entry) of the whole delta_pick_place cross-check with the reference integrated by
    ``integrator``: the crosscheck's reference row is swapped for the length of the call."""
    import dataclasses

    from flexfmu.harness.workflows import crosscheck

    row = crosscheck.RUNS["reference"]

    def forced(case, progress, horizon):
        return reference_run(case.model, case.scenario, case.controller, progress=progress, integrator=integrator)

    crosscheck.RUNS["reference"] = dataclasses.replace(row, execute=forced)
    try:
        case, seconds = _timed(lambda: crosscheck.run_case("kuo_delta", "delta_pick_place", out))
    finally:
        crosscheck.RUNS["reference"] = row
    return seconds, case


def delta(repeats: int, cold: bool, out: Path) -> int:
    """The Delta robot's reference and cross-check, DOP853 (before) against ROS34PW2 (after); see the module
    docstring."""
    from flexfmu.harness.workflows.crosscheck import FMU_BUILDERS, case_setup

    machine = describe()
    scenario = load_scenario("delta_pick_place")
    model = build_model(load_arm(scenario.arm))
    controller = scenario.build_controller(model)
    result = {"machine": machine, "scenario": scenario.name, "samples": len(scenario.grid()), "integrators": {}}
    if cold:
        result["cold_compile_s"] = {name: _compile_seconds(model, controller, name) for name in ("DOP853", "ROS34PW2")}
    setup = case_setup("kuo_delta", scenario.name)
    result["fmu_builds_s"] = _timed(lambda: [setup.fmu(kind) for kind in FMU_BUILDERS])[1]
    runs = {}
    for name in ("DOP853", "ROS34PW2"):
        reference_run(model, scenario, controller, integrator=name)  # compiled or cached before timing
        times = []
        for _ in range(repeats):
            runs[name], seconds = _timed(lambda: reference_run(model, scenario, controller, integrator=name))
            times.append(seconds)
        result["integrators"][name] = {"reference_median_s": statistics.median(times), "times_s": times}
    tolerances = dict(scenario.compared(model))
    result["ros34pw2_minus_dop853"] = {name: float(np.max(np.abs(runs["ROS34PW2"][name] - runs["DOP853"][name])))
                                       for name in tolerances}
    result["crosscheck_tolerances"] = tolerances
    with tempfile.TemporaryDirectory(prefix="flexfmu-bench-crosscheck-") as folder:
        for name in ("DOP853", "ROS34PW2"):
            seconds, case = _crosscheck_seconds(name, Path(folder) / name)
            result["integrators"][name] |= {"crosscheck_wall_s": seconds, "crosscheck_runs_s": case["runs"],
                                            "crosscheck_passed": all(c["passed"] for c in case["comparisons"])
                                            and not case["errors"]}
    result["crosscheck_target_s"] = CROSSCHECK_TARGET_S
    print(f"kuo_delta / delta_pick_place ({result['samples']} samples at 1 kHz; load average "
          f"{machine['load_average_1_5_15_min']}), FMU builds before timing {result['fmu_builds_s']:.1f} s")
    for name, figures in result["integrators"].items():
        print(f"  {name:9s} reference {figures['reference_median_s']:6.2f} s (median of {repeats}), whole crosscheck "
              f"{figures['crosscheck_wall_s']:6.1f} s ({'PASS' if figures['crosscheck_passed'] else 'FAIL'})")
    after = result["integrators"]["ROS34PW2"]["crosscheck_wall_s"]
    print(f"  crosscheck target <= {CROSSCHECK_TARGET_S:g} s: {'met' if after <= CROSSCHECK_TARGET_S else 'MISSED'}")
    for name, compile_s in result.get("cold_compile_s", {}).items():
        print(f"  {name} reference library compiled from nothing in {compile_s:.1f} s")
    for name, difference in result["ros34pw2_minus_dop853"].items():
        print(f"  {name}: ROS34PW2 - DOP853 {difference:.1e} (tolerance {tolerances[name]:g})")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
