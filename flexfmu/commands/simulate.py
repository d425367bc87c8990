"""``flexfmu simulate ARM.toml --out DIR``: a reference run with plot and summary.

Releases the arm from an initial pose with zero joint torque (or constant
torques given with ``--torque``) and integrates the Model with CVODES at tight
tolerance. Writes ``trajectory.csv``, ``simulation.png``, ``summary.json`` and
``summary.md`` into DIR.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path


def add_parser(sub) -> None:
    parser = sub.add_parser("simulate", help="simulate an arm and write a plot and a summary")
    parser.add_argument("arm", help="arm specification (TOML)")
    parser.add_argument("--out", default="out/simulate", help="output directory (default: %(default)s)")
    parser.add_argument("--duration", type=float, default=5.0, help="simulated time in s (default: %(default)s)")
    parser.add_argument("--step", type=float, default=1e-3, help="output interval in s (default: %(default)s)")
    parser.add_argument(
        "--initial", default="",
        help="initial coordinates, e.g. 'theta[1]=45deg,theta[2]=-45deg' (SI units, or a deg suffix)",
    )
    parser.add_argument("--torque", default="", help="constant joint torques in N m, e.g. 'tau[1]=0.2'")
    parser.set_defaults(run=run)


def parse_assignments(text: str, names: list[str], what: str) -> dict[str, float]:
    """Parse 'name=value,...' with an optional 'deg' suffix; name the bad part."""
    values = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in names:
            raise SystemExit(f"error: {what} {item!r}: expected NAME=VALUE with NAME one of {', '.join(names)}")
        value = value.strip()
        scale = math.pi / 180 if value.endswith("deg") else 1.0
        try:
            values[name] = float(value.removesuffix("deg")) * scale
        except ValueError:
            raise SystemExit(f"error: {what} {item!r}: {value!r} is not a number") from None
    return values


def run(args) -> int:
    import numpy as np

    from flexfmu import build_model, load_arm
    from harness.plots import plot_simulation
    from harness.reference import simulate_reference

    model = build_model(load_arm(args.arm))
    n = len(model.coordinates)
    initial = parse_assignments(args.initial, model.coordinates, "--initial")
    torque = parse_assignments(args.torque, model.inputs, "--torque")
    x0 = np.zeros(2 * n)
    for name, value in initial.items():
        x0[model.coordinates.index(name)] = value
    u = np.array([torque.get(name, 0.0) for name in model.inputs])

    start = time.perf_counter()
    result = simulate_reference(model, args.duration, args.step, x0=x0, inputs=lambda t: u)
    wall = time.perf_counter() - start

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result.to_csv(out / "trajectory.csv")
    plot_simulation(result, model, out / "simulation.png")
    p = model.nominal_parameters
    energy = model.energy.map(len(result.time))(result.values[:, :n].T, result.values[:, n:2 * n].T, p).full()
    total = energy.sum(axis=0)
    summary = {
        "arm": model.arm.name,
        "duration_s": args.duration,
        "output_step_s": args.step,
        "initial": initial,
        "torque": dict(zip(model.inputs, u.tolist())),
        "wall_time_s": wall,
        "energy_start_J": float(total[0]),
        "energy_end_J": float(total[-1]),
        "final_tip": [float(result["tip.x"][-1]), float(result["tip.y"][-1])],
        "max_abs_deflection_m": {
            name: float(np.max(np.abs(result[name]))) for name in model.output_names if name.endswith(".deflection")
        },
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    lines = [f"# Simulation of {model.arm.name}", "", model.arm.description, "", "| quantity | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in summary.items() if k != "arm"]
    lines += ["", "![simulation](simulation.png)", ""]
    (out / "summary.md").write_text("\n".join(lines))
    print(f"simulated {model.arm.name} for {args.duration} s in {wall:.2f} s; wrote {out}/summary.md")
    return 0
