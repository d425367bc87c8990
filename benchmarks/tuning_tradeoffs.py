"""The trade-off table of docs/control.md: what tuning quintic_ct's kp and kd does to tracking, vibration and
effort, under the tuning rules (the move and its settling in the cost, position feedback kept, the loop's
stability margin kept; ``flexfmu.control.tuning``).

Each row tunes the full 4 s scenario with one set of weights and limits, as ``flexfmu tune`` does (the
optimiser's figures; ``flexfmu tune`` reproduces them on the FMU, ``tests/test_control.py``), and reports
the unweighted terms, the peak joint tracking error and the slowest decay rate at rest along the move.
Prints the Markdown table and writes benchmarks/results/tuning_tradeoffs.json.

Usage: python benchmarks/tuning_tradeoffs.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import describe  # noqa: E402
from flexfmu import build_model, load_arm  # noqa: E402
from flexfmu.control.closed_loop import ClosedLoop  # noqa: E402
from flexfmu.control.cost import CostWeights  # noqa: E402
from flexfmu.control.laws import LAWS  # noqa: E402
from flexfmu.control.scenario import load_scenario  # noqa: E402
from flexfmu.control.tuning import gain_bounds, required_decay, tune  # noqa: E402

SCENARIO, NAMES = "quintic_ct", ["kp", "kd"]
ROWS = (("1, 100, 0.001 (former default)", CostWeights(1.0, 100.0, 1e-3), False),
        ("100, 100, 0.001 (default)", CostWeights(), False),
        ("100, 100, 0.001 (default)", CostWeights(), True))


def figures(loop: ClosedLoop, gains: list[float]) -> dict:
    """The unweighted terms, the peak joint tracking error and the slowest decay rate of ``loop`` at ``gains``."""
    run = loop.run(gains)
    joints = loop.model.coordinates_of("joint")
    error = np.abs(loop.references[:len(joints)].T - run.states[:, joints])
    return loop.terms(gains) | {"peak tracking error": float(error.max()), "decay rate": loop.decay_rate(gains)}


def main() -> int:
    scenario = load_scenario(SCENARIO)
    model = build_model(load_arm(scenario.arm_path))
    scenario.check(model)
    law = scenario.law(model)
    start = dict(law.gains)
    bounds = gain_bounds(start, NAMES, LAWS[law.kind].position_gains)
    results = []
    baseline = None
    for label, weights, limited in (("scenario's gains", CostWeights(), None), *ROWS):
        loop = ClosedLoop(model, law, scenario.reference(model), scenario.grid(), scenario.initial_state(model),
                          weights)
        decay = required_decay(loop, start)
        began = time.perf_counter()
        if limited is None:
            gains = dict(start)
        else:
            limits = {"tracking": loop.terms(list(start.values()))["tracking"]} if limited else {}
            gains = tune(loop, start, NAMES, bounds, limits=limits, decay=decay).tuned
        row = {"weights": label, "limit": "tracking <= before (default)" if limited else "none" if limited is False
               else "", "gains": gains, "seconds": time.perf_counter() - began, "required decay rate": decay,
               **figures(loop, list(gains.values()))}
        baseline = baseline or row
        results.append(row)
        print(json.dumps(row), flush=True)

    def change(row, key):
        return "" if row is baseline else f" ({100 * (row[key] / baseline[key] - 1):+.0f} %)"

    print("\n| weights (tracking, vibration, effort) | limit | kp, kd | tracking [rad^2 s] | vibration [m^2 s] | "
          "effort [(N m)^2 s] | peak tracking error [rad] | slowest decay at rest [1/s] |")
    print("|---|---|---|---|---|---|---|---|")
    for row in results:
        print(f"| {row['weights']} | {row['limit']} | {row['gains']['kp']:.3g}, {row['gains']['kd']:.3g} | "
              f"{row['tracking']:.4g}{change(row, 'tracking')} | {row['vibration']:.4g}{change(row, 'vibration')} | "
              f"{row['effort']:.4g}{change(row, 'effort')} | {row['peak tracking error']:.3g} | "
              f"{row['decay rate']:.3g} |")
    out = Path(__file__).resolve().parent / "results" / "tuning_tradeoffs.json"
    out.write_text(json.dumps({"machine": describe(), "scenario": SCENARIO, "bounds": bounds, "rows": results},
                              indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
