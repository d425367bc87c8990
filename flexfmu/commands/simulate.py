"""``flexfmu simulate ARM --out DIR``: a reference run with plot and summary.

Releases the arm from an initial pose (its start pose, undeformed, with the
coordinates ``--initial`` names) with zero joint torque (or constant torques
given with ``--torque``) and integrates the Model with CVODES at tight
tolerance; prescribed joints are held at their start angles (a scenario's
``[motion]`` drives them: ``flexfmu crosscheck``). Writes ``trajectory.csv``, ``simulation.png``, ``summary.json`` and
``summary.md`` into DIR; both summaries, and the console when it is left, say whether the run stayed in the
model's validity envelope.
"""

from __future__ import annotations

import json
import time

from flexfmu.commands._common import DeprecatedFlag, add_arm, add_out, parse_assignments, positive


def add_parser(sub) -> None:
    parser = sub.add_parser("simulate", help="simulate an arm and write a plot and a summary")
    add_arm(parser)
    add_out(parser, "out/simulate")
    parser.add_argument("--duration", type=float, default=5.0, help="simulated time in s (default: %(default)s)")
    parser.add_argument("--output-interval", type=float, default=1e-3,
                        help="time between output samples in s; inputs are held over each (default: %(default)s)")
    parser.add_argument("--step", type=float, dest="output_interval", action=DeprecatedFlag,
                        new="--output-interval")
    parser.add_argument(
        "--initial", default="",
        help="initial coordinates, e.g. 'theta[1]=45deg,theta[2]=-45deg' (SI units, or a deg suffix)",
    )
    parser.add_argument("--torque", default="", help="constant joint torques in N m, e.g. 'tau[1]=0.2'")
    parser.set_defaults(run=run)


def run(args) -> int:
    import numpy as np

    from flexfmu import build_model, load_arm
    from flexfmu.dynamics.metadata import DEFLECTION, TIP_POSITION, TORQUE
    from flexfmu.harness.reports.envelope import envelope_console, envelope_lines, envelope_summary
    from flexfmu.harness.reports.plots import plot_simulation
    from flexfmu.harness.running.reference import simulate_reference

    duration, interval = positive("--duration", args.duration), positive("--output-interval", args.output_interval)
    model = build_model(load_arm(args.arm))
    n = len(model.states)
    initial = parse_assignments(args.initial, model.states, "--initial")
    torque = parse_assignments(args.torque, model.inputs_of(TORQUE), "--torque")
    pose, drives = model.start_coordinates, model.drives
    x0 = np.concatenate([pose[list(drives.states)], np.zeros(n)])
    for name, value in initial.items():
        x0[model.states.index(name)] = value
    u = np.array([torque.get(name, 0.0) for name in model.inputs])
    u[list(drives.angles)] = pose[list(drives.prescribed)]

    start = time.perf_counter()
    result = simulate_reference(model, duration, interval, x0=x0, inputs=lambda t: u)
    wall = time.perf_counter() - start

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    result.to_csv(out / "trajectory.csv")
    plot_simulation(result, model, out / "simulation.png")
    p = model.nominal_parameters
    count, inputs = len(result.time), result.values[:, 2 * n:2 * n + len(model.inputs)].T
    q_all, qd_all, _, _ = model.motion.map(count)(result.values[:, :n].T, result.values[:, n:2 * n].T, inputs, p)
    energy = model.energy.map(count)(q_all, qd_all, p).full()
    total = energy.sum(axis=0)
    summary = {
        "arm": model.arm.name,
        "duration_s": duration,
        "output_interval_s": interval,
        "initial": initial,
        "torque": {name: torque.get(name, 0.0) for name in model.inputs_of(TORQUE)},
        "wall_time_s": wall,
        "energy_start_J": float(total[0]),
        "energy_end_J": float(total[-1]),
        "final_tip": [float(result[name][-1]) for name in model.outputs_of(TIP_POSITION)],
        "max_abs_deflection_m": {name: float(np.max(np.abs(result[name]))) for name in model.outputs_of(DEFLECTION)},
    }
    envelope = envelope_summary(model, {"the simulation": result})
    (out / "summary.json").write_text(json.dumps(summary | {"envelope": envelope}, indent=2))
    lines = [f"# Simulation of {model.arm.name}", "", model.arm.description, "", *envelope_lines(envelope),
             "| quantity | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in summary.items() if k != "arm"]
    lines += ["", "![simulation](simulation.png)", ""]
    (out / "summary.md").write_text("\n".join(lines))
    print(f"simulated {model.arm.name} for {duration} s in {wall:.2f} s; wrote {out}/summary.md")
    for line in envelope_console(envelope, indent=""):
        print(line)
    return 0
