"""Gradient benchmark: the cost of one exact gradient of a closed-loop cost.

For tuning scenarios it times, in one run (medians of --repeats):
- one forward closed-loop simulation (the cost J, sampled loop as the FMU runs it);
- one cost and gradient by the adjoint sweep of ``ClosedLoop`` (reverse mode);
- the same gradient by CasADi's generic reverse mode through the mapaccum;
- central finite differences over the tuned gains (2 forward runs per gain);
and prints the ratios to the forward run. Target (issue 5): gradient at most
5 forward runs. Writes benchmarks/results/gradient.json.

Usage: python benchmarks/gradient.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

import casadi as ca
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import describe  # noqa: E402
from flexfmu import build_model, load_arm  # noqa: E402
from flexfmu.control.closed_loop import ClosedLoop  # noqa: E402
from flexfmu.control.scenario import load_scenario  # noqa: E402

CASES = (("quintic_ct", None), ("quintic_composite", None), ("pd_circle", 4.0))
TARGET = 5.0


def median_time(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def generic_reverse(loop: ClosedLoop) -> ca.Function:
    """dJ/dgains by CasADi's own reverse mode through the run Function."""
    f = loop.run_function
    x0, R, gains, pc = (ca.MX.sym(name, f.size_in(k)) for k, name in enumerate(("x0", "R", "gains", "pc")))
    J = ca.sum2(f(x0, R, gains, pc)[1])
    return ca.Function("generic_gradient", [x0, R, gains, pc], [J, ca.gradient(J, gains)])


def bench_case(name: str, duration: float | None, repeats: int) -> dict:
    scenario = load_scenario(name)
    if duration:
        scenario = dataclasses.replace(scenario, duration=duration)
    model = build_model(load_arm(scenario.arm_path))
    law = scenario.law(model)
    loop = ClosedLoop(model, law, scenario.reference(model), scenario.grid(), scenario.initial_state(model))
    gains, pc = law.gain_vector(), loop.parameters_with_constants()
    generic = generic_reverse(loop)

    def finite_differences():
        for k in range(gains.size):
            e = np.zeros(gains.size)
            e[k] = 1e-4 * gains[k]
            loop.cost(gains + e) - loop.cost(gains - e)

    forward = median_time(lambda: loop.cost(gains), repeats)
    adjoint = median_time(lambda: loop.cost_and_gradient(gains), repeats)
    casadi_reverse = median_time(lambda: generic(loop.x0, loop.references, gains, pc), repeats)
    fd = median_time(finite_differences, max(1, repeats // 2))
    _, g1 = loop.cost_and_gradient(gains)
    g2 = np.array(generic(loop.x0, loop.references, gains, pc)[1]).ravel()
    return {
        "scenario": name, "arm": scenario.arm, "law": law.kind, "gains": list(law.gains),
        "samples": len(loop.time), "substeps": int(round(loop.sample_step / loop.internal_step)),
        "forward_s": forward, "adjoint_gradient_s": adjoint, "casadi_reverse_s": casadi_reverse,
        "central_fd_s": fd, "adjoint_per_forward": adjoint / forward,
        "casadi_reverse_per_forward": casadi_reverse / forward, "fd_per_forward": fd / forward,
        "adjoint_vs_fd": adjoint / fd, "adjoint_vs_casadi_relative_difference":
            float(np.max(np.abs(g1 - g2) / np.abs(g2))),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    machine = describe()
    rows = [bench_case(name, duration, args.repeats) for name, duration in CASES]
    print("| scenario | law | gains | samples x substeps | forward s | gradient s | gradient / forward "
          "| CasADi reverse / forward | central FD / forward | gradient / FD |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['scenario']} | {r['law']} | {len(r['gains'])} | {r['samples']} x {r['substeps']} "
              f"| {r['forward_s']:.3f} | {r['adjoint_gradient_s']:.3f} | {r['adjoint_per_forward']:.2f} "
              f"| {r['casadi_reverse_per_forward']:.2f} | {r['fd_per_forward']:.2f} | {r['adjoint_vs_fd']:.2f} |")
    worst = max(r["adjoint_per_forward"] for r in rows)
    print(f"target: gradient <= {TARGET:g} forward runs: {'met' if worst <= TARGET else 'MISSED'} (worst {worst:.2f})")
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "gradient.json").write_text(json.dumps({"machine": machine, "rows": rows, "target": TARGET}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
