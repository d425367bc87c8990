"""Delta robot benchmark (paper 003): Model build, FMU export and one 1 ms fmi2DoStep from C for 1, 2 and 4
elements per link, and the time of a frequency analysis at one pose.

For each element count (``linear-cubic`` elements, the example arm kuo_delta otherwise) it prints and
writes to JSON (benchmarks/results/delta.json, with the machine and the date):
- the Model's build time (Lagrange's equations by automatic differentiation);
- export time (codegen, compile, total) of the native FMU at its default RK4 step;
- ns per fmi2DoStep of 1 ms (median of repeats, from the C driver of benchmarks/fmu.py) and the internal
  RK4 steps per call (set by the axial modes, about 17,000 rad/s with one element);
- seconds per frequency analysis at P = (0.1, 0, 0.5) m (static equilibrium under gravity, then the
  generalised eigenproblem; median of repeats).
The machine is shared and noisy: medians from one run.

Usage: python benchmarks/delta.py [--elements 1 2 4] [--count 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fmu import HERE, compile_driver, measure  # noqa: E402
from benchmarks.machine import describe  # noqa: E402
from flexfmu import build_model, load_arm  # noqa: E402
from flexfmu.dynamics.delta.frequencies import natural_frequencies  # noqa: E402
from flexfmu.targets import ExportSettings  # noqa: E402

POSE = (0.1, 0.0, 0.5)


def with_elements(arm, count: int):
    """``arm`` with ``count`` elements per link."""
    return dataclasses.replace(arm, elements=dataclasses.replace(arm.elements, count=count))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--count", type=int, default=200, help="doSteps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default="benchmarks/results/delta.json")
    args = parser.parse_args()
    base = load_arm("kuo_delta")
    rows = []
    print(f"{'elements':>8}{'coords':>7}{'build s':>9}{'export s':>9}{'sub/ms':>7}{'doStep us':>11}{'modes s':>9}")
    with tempfile.TemporaryDirectory(prefix="flexfmu-bench-") as tmp:
        work = Path(tmp)
        dostep = work / "time_dostep"
        compile_driver(HERE / "c" / "time_dostep.c", dostep, f"-I{resources.files('flexfmu.targets') / 'c'}")
        for count in args.elements:
            arm = with_elements(base, count)
            start = time.perf_counter()
            model = build_model(arm)
            build_s = time.perf_counter() - start
            row = measure(model, f"kuo_delta_n{count}", ExportSettings(integrator="rk4"), work, args.count,
                          args.repeats, dostep)
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                natural_frequencies(arm, POSE)
                times.append(time.perf_counter() - start)
            row.update(elements=count, coordinates=len(model.coordinates), build_s=build_s,
                       frequency_analysis_s_median=statistics.median(times))
            rows.append(row)
            print(f"{count:>8}{row['coordinates']:>7}{build_s:>9.2f}{row['export_total_s']:>9.2f}"
                  f"{row['substeps_per_ms']:>7}{row['dostep_ns_median'] / 1e3:>11.1f}"
                  f"{row['frequency_analysis_s_median']:>9.3f}", flush=True)
            out = Path(args.json)  # after every row: the larger models take minutes
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"machine": describe(), "rows": rows}, indent=2) + "\n")
            print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
