"""Reference benchmark: the 10 s pd_circle reference, its time and its accuracy.

Times the closed-loop reference of yu_chen_2dof in pd_circle (10 000 samples
at 1 kHz) with the compiled one-step DOP853 (``flexfmu.harness.running.reference``),
median of repeats once its library is compiled (the compile, once per model
and law, is reported apart), and its error against a run at a 100 times
tighter tolerance (rtol 1e-12, atol 1e-14), per compared output. With
``--cvodes`` it also times the former reference, CVODES restarted at every
sample (minutes). Target: 3 s or less on a 2-core machine.

Usage: python benchmarks/reference.py [--repeats 3] [--cvodes] [--json benchmarks/results/reference.json]
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
    parser.add_argument("--json", default="benchmarks/results/reference.json")
    args = parser.parse_args()
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


if __name__ == "__main__":
    sys.exit(main())
