"""Gradient benchmark: the cost of one exact gradient of a closed-loop cost.

For tuning scenarios of planar arms and a joint-PD move of the spatial
Canadarm2 in orbit (a row whose run is not finite is printed as such and
fails the target) it times, in one run (medians of --repeats):
- one forward closed-loop simulation (the cost J, sampled loop as the FMU
  runs it, compiled to C);
- one cost and gradient by the compiled adjoint sweep of ``ClosedLoop``
  (reverse mode), timed right after the forward run of the same repeat;
- the same gradient by CasADi's generic reverse mode through the
  interpreted run graph (``native=False``), against that loop's own forward run;
- central finite differences over the tuned gains (2 forward runs per gain);
and prints the ratios to the forward run (the gradient's: the median of the
repeats' ratios, which a shared machine's load shifts less than a ratio of
medians). Target (issue 22): gradient at most 3 forward runs on every row.

And the Delta planner's closed loop (``flexfmu plan kuo_delta``: scenario
delta_pick_place, the FMU's Rosenbrock step, 26 coefficients): one forward
run and the exact Jacobian of the planner's residual by the loop's forward
sensitivities (``flexfmu.control.delta_planning``; one group of directions
per core), as forward runs in all and per coefficient, and its largest
difference from central differences. It is a Jacobian, which Gauss-Newton
needs, not a gradient, so it is reported beside the target, not held to it.
Writes benchmarks/results/gradient.json.

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
from flexfmu.control.laws import build_law  # noqa: E402
from flexfmu.control.references import quintic_reference  # noqa: E402
from flexfmu.control.scenario import load_scenario  # noqa: E402

CASES = (("quintic_ct", None), ("quintic_composite", None), ("pd_circle", 4.0))
SPATIAL_ARM = "canadarm2_5link"  # in orbit, joint PD on the motor encoders, a 2 s quintic move of the shoulder and booms
SPATIAL_GOAL = (0.1, 0.1, -0.1, 0.0, 0.0)
SPATIAL_MOVE = 2.0  # s
SPATIAL_GAIN = 1e4  # N.m/rad and N.m.s/rad: stable with 1 ms samples (3e4 is about the limit)
TARGET = 3.0


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


def scenario_loops(name: str, duration: float | None):
    """The scenario's closed loop compiled and interpreted, and its arm's name."""
    scenario = load_scenario(name)
    if duration:
        scenario = dataclasses.replace(scenario, duration=duration)
    model = build_model(load_arm(scenario.arm_path))
    law = scenario.law(model)
    loops = [ClosedLoop(model, law, scenario.reference(model), scenario.grid(), scenario.initial_state(model),
                        native=native) for native in (True, False)]
    return loops, scenario.arm


def spatial_loops():
    """Canadarm2 in orbit (gravity 0, where the real arm works) under joint PD on its motor encoders along a
    quintic move, compiled and interpreted, from rest undeformed; its arm's name and the plant parameters. Held
    out at the zero pose in 1 g its booms sag until the mass matrix of its modal model is no longer positive
    definite, and every law tried from there diverged within 40 ms; in orbit motor PD holds up to gains of
    about 3e4 (1 ms samples against the rotors' reflected inertia), computed torque on the motors does not."""
    model = build_model(load_arm(SPATIAL_ARM))
    p = model.parameter_vector({"gravity.z": 0.0})
    law = build_law(model, "joint_pd", measure="motor", kp=SPATIAL_GAIN, kd=SPATIAL_GAIN)
    reference = quintic_reference((0.0,) * 5, SPATIAL_GOAL, SPATIAL_MOVE)
    time_grid = np.arange(round(1.5 * SPATIAL_MOVE / 1e-3) + 1) * 1e-3
    x0 = np.zeros(2 * len(model.states))
    return [ClosedLoop(model, law, reference, time_grid, x0, native=native) for native in (True, False)], SPATIAL_ARM, p


def bench_case(name: str, loops, arm: str, repeats: int, p=None) -> dict:
    """The row of one closed loop (``loops``: compiled, interpreted) under plant parameters ``p`` (nominal when
    None)."""
    loop, interpreted = loops
    law = loop.law
    gains, pc = law.gain_vector(), loop.parameters_with_constants(p)
    generic = generic_reverse(interpreted)

    def finite_differences():
        for k in range(gains.size):
            e = np.zeros(gains.size)
            e[k] = 1e-4 * gains[k]
            loop.cost(gains + e, p) - loop.cost(gains - e, p)

    forwards, gradients = [], []
    for _ in range(repeats):
        forwards.append(median_time(lambda: loop.cost(gains, p), 1))
        gradients.append(median_time(lambda: loop.cost_and_gradient(gains, p), 1))
    forward, adjoint = statistics.median(forwards), statistics.median(gradients)
    ratio = statistics.median(g / f for f, g in zip(forwards, gradients))
    interpreted_forward = median_time(lambda: interpreted.cost(gains, p), max(1, repeats // 2))
    casadi_reverse = median_time(lambda: generic(loop.x0, loop.references, gains, pc), max(1, repeats // 2))
    fd = median_time(finite_differences, max(1, repeats // 2))
    cost, g1 = loop.cost_and_gradient(gains, p)
    g2 = np.array(generic(loop.x0, loop.references, gains, pc)[1]).ravel()
    finite = bool(np.isfinite(cost) and np.isfinite(g1).all())
    return {"cost": cost if finite else None, "finite": finite,
        "scenario": name, "arm": arm, "law": law.kind, "gains": list(law.gains),
        "samples": len(loop.time), "substeps": int(round(loop.sample_step / loop.internal_step)),
        "forward_s": forward, "adjoint_gradient_s": adjoint, "interpreted_forward_s": interpreted_forward,
        "casadi_reverse_s": casadi_reverse, "central_fd_s": fd, "adjoint_per_forward": ratio,
        "casadi_reverse_per_interpreted_forward": casadi_reverse / interpreted_forward,
        "fd_per_forward": fd / forward, "adjoint_vs_fd": adjoint / fd,
        "adjoint_vs_casadi_relative_difference": float(np.max(np.abs(g1 - g2) / np.abs(g2))),
    }


def delta_planner_row(repeats: int) -> dict:
    """The Delta planner's closed loop: forward run, exact Jacobian, and the Jacobian against central
    differences of the residual."""
    from flexfmu.control.delta_planning import PickPlaceSettings, planner_residual
    from flexfmu.harness.workflows.pick_place_check import moves_of

    model, scenario = build_model(load_arm("kuo_delta")), load_scenario("delta_pick_place")
    moves = moves_of(scenario, model, PickPlaceSettings())
    law = scenario.law(model)
    grid = np.arange(int(round(scenario.duration / scenario.step)) + 1) * scenario.step
    residual = planner_residual(model, moves, law, law.gain_vector(), scenario.initial_state(model), grid,
                                scenario.step)
    loop, x0 = residual.loop, residual.x0
    c = np.zeros(moves.size)
    R = moves.references(c, grid)
    forward = median_time(lambda: loop.run(x0, R), repeats)
    jacobian_s = median_time(lambda: residual.with_jacobian(c), repeats)
    _, jacobian = residual.with_jacobian(c)
    e = 1e-5
    differences = np.column_stack([(residual.values(c + e * d) - residual.values(c - e * d)) / (2 * e)
                                   for d in np.eye(moves.size)])
    return {"scenario": "kuo_delta planner (delta_pick_place)", "coefficients": moves.size, "samples": len(grid),
            "threads": residual.groups, "forward_s": forward, "jacobian_s": jacobian_s,
            "jacobian_per_forward": jacobian_s / forward, "jacobian_per_forward_per_coefficient":
            jacobian_s / forward / moves.size,
            "jacobian_vs_central_differences": float(np.abs(jacobian - differences).max() / np.abs(jacobian).max())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    machine = describe()
    rows = [bench_case(name, *scenario_loops(name, duration), args.repeats) for name, duration in CASES]
    loops, arm, p = spatial_loops()
    rows.append(bench_case(f"{SPATIAL_ARM} quintic in orbit", loops, arm, args.repeats, p))
    print("| scenario | arm | law | gains | samples x substeps | forward s | gradient s | gradient / forward "
          "| interpreted forward s | CasADi reverse / interpreted forward | central FD / forward | gradient / FD |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['scenario']} | {r['arm']} | {r['law']} | {len(r['gains'])} | {r['samples']} x {r['substeps']} "
              f"| {r['forward_s']:.3f} | {r['adjoint_gradient_s']:.3f} | {r['adjoint_per_forward']:.2f} "
              f"| {r['interpreted_forward_s']:.3f} | {r['casadi_reverse_per_interpreted_forward']:.2f} "
              f"| {r['fd_per_forward']:.2f} | {r['adjoint_vs_fd']:.2f} |")
    diverged = [r["scenario"] for r in rows if not r["finite"]]
    for name in diverged:  # its times are those of a run that blew up: no figure of a gradient's cost
        print(f"{name}: the closed loop diverges (its cost is not finite): its row times a run that blew up and "
              f"does not count")
    delta = delta_planner_row(args.repeats)
    print(f"{delta['scenario']}: forward run {delta['forward_s']:.3f} s; exact Jacobian ({delta['coefficients']} "
          f"columns, {delta['threads']} threads) {delta['jacobian_s']:.3f} s = {delta['jacobian_per_forward']:.1f} "
          f"forward runs ({delta['jacobian_per_forward_per_coefficient']:.2f} per coefficient; forward differences: "
          f"1 per coefficient, inexact); against central differences {delta['jacobian_vs_central_differences']:.1e} "
          f"of its largest entry (reported, not held to the gradient target)")
    worst = max((r["adjoint_per_forward"] for r in rows if r["finite"]), default=float("nan"))
    met = worst <= TARGET and not diverged
    print(f"target: gradient <= {TARGET:g} forward runs on every row: {'met' if met else 'MISSED'} (worst finite row "
          f"{worst:.2f}; rows that diverge: {', '.join(diverged) or 'none'})")
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "gradient.json").write_text(json.dumps({"machine": machine, "rows": rows, "delta_planner": delta,
                                                         "target": TARGET}, indent=2) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
