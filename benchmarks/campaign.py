"""Campaign benchmark: points per second of a 200-point sweep on 1 and 2 Dask workers.

The sweep: yu_chen_2dof in pd_circle shortened to 2 s (2000 samples through
the co-simulation FMU per point), payload.mass over 20 values times kp over
10. Each run starts its own LocalCluster (included in the wall time, as a
user's command pays it) and a fresh campaign folder; the FMU is built once
beforehand (cached). The figure is the ratio of the two rates: on a machine
with two idle cores, close to 2.

Usage: python benchmarks/campaign.py [--workers 1 2] [--duration 2] [--json benchmarks/results/campaign.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import describe  # noqa: E402
from flexfmu import load_arm  # noqa: E402
from flexfmu.data import resolve_arm, resolve_scenario  # noqa: E402
from flexfmu.harness.campaigns.campaign import CampaignSettings  # noqa: E402
from flexfmu.harness.running.fmu_cache import native_fmu  # noqa: E402
from flexfmu.harness.workflows.sweep import grid_points, run_sweep  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--json", default="benchmarks/results/campaign.json")
    args = parser.parse_args()
    machine = describe()
    points = grid_points([("payload.mass", [0.05 * k for k in range(20)]), ("kp", [50.0 + 15.0 * k for k in range(10)])])
    native_fmu(load_arm("yu_chen_2dof"))
    runs = []
    for workers in args.workers:
        with tempfile.TemporaryDirectory(prefix="flexfmu-bench-campaign-") as tmp:
            began = time.perf_counter()
            rows = run_sweep(resolve_arm("yu_chen_2dof"), resolve_scenario("pd_circle"), points, Path(tmp),
                             CampaignSettings(workers=workers), args.duration)
            wall = time.perf_counter() - began
        ok = sum(row["status"] == "ok" for row in rows)
        runs.append({"workers": workers, "points": len(points), "ok": ok, "wall_s": wall,
                     "points_per_s": len(points) / wall})
        print(f"{workers} worker(s): {len(points)} points ({ok} ok) in {wall:.1f} s, {len(points) / wall:.2f} points/s",
              flush=True)
    ratio = runs[-1]["points_per_s"] / runs[0]["points_per_s"]
    print(f"ratio {args.workers[-1]} / {args.workers[0]} workers: {ratio:.2f}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "sweep": {"arm": "yu_chen_2dof", "scenario": "pd_circle",
                                                             "duration_s": args.duration, "points": len(points)},
                               "runs": runs, "ratio": ratio}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
