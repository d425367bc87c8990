"""Pick-and-place planning on the Delta robot (paper 003's inverted U, scenario delta_pick_place): plans with
the default settings of ``flexfmu plan kuo_delta``, checks the plan and the septic baseline on the FMU, and
writes the figures (residual vibration of both, their ratio, the planner's steps and time, each step's time
(the first includes building the loop, and compiling it on a machine's first run), peak motor accelerations
and torques, the largest bend of the path) to benchmarks/results/delta_plan.json with the
machine and the date, and the plot to docs/delta_plan.png.

Usage: python benchmarks/delta_plan.py
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import describe  # noqa: E402
from flexfmu import build_model, load_arm  # noqa: E402
from flexfmu.control.scenario import load_scenario  # noqa: E402
from flexfmu.harness.workflows.pick_place_check import pick_place_on_fmu  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    model = build_model(load_arm("kuo_delta"))
    out = Path(tempfile.mkdtemp(prefix="flexfmu-delta-plan-"))
    stamps = []
    began = time.perf_counter()
    check = pick_place_on_fmu(model, load_scenario("delta_pick_place"), out,
                              progress=lambda done, total, residual: stamps.append(time.perf_counter()))
    wall = time.perf_counter() - began
    steps = np.diff(stamps).tolist()
    result = {"machine": describe(), "wall_s": wall, "step_s": steps, "median_step_s": float(np.median(steps)),
              **dataclasses.asdict(check)}
    target = ROOT / "benchmarks" / "results" / "delta_plan.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    shutil.copyfile(out / "plan.png", ROOT / "docs" / "delta_plan.png")
    print(f"residual vibration on the FMU: plan {1e3 * check.residual_plan_m:.4f} mm, baseline "
          f"{1e3 * check.residual_baseline_m:.4f} mm, {check.reduction:.3g} x; planner {check.plan_s:.1f} s, its "
          f"steps {', '.join(f'{t:.2f}' for t in steps)} s (median {np.median(steps):.2f} s); {wall:.1f} s in all; "
          f"wrote {target}")
    shutil.rmtree(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
