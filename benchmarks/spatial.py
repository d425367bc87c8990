"""Spatial-arm benchmark: model build, export and one 1 ms fmi2DoStep from C.

For spatial chains of N = 1..7 flexible links (each bending in both planes
with one mode per plane, two bending modes, plus one torsion mode; joints
turning about z, y, z, y, ... with rigid gears; gravity) and for the
Canadarm2 example arm, it prints a table and writes JSON
(benchmarks/results/spatial.json):
- build: build_model (M, h, B, forward dynamics), the first build in this
  process (cold: the per-link templates are made) and the median of
  repeated builds (warm);
- export: codegen, compile and total seconds of one FMU export (RK4 at the
  default internal step, the linux64 binary only: the win64 cross-build an
  export adds where MinGW-w64 is installed is not part of the target);
- ns per fmi2DoStep of 1 ms (median of repeats, from a C driver that loads
  the binary) and per call of the generated right-hand side.
Targets (issue 12): Canadarm2 builds in < 100 ms, exports in < 15 s and
steps 1 ms in < 30 us at its default internal step.

Usage: python benchmarks/spatial.py [--max-links 7] [--count 2000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fmu import compile_driver, measure  # noqa: E402
from benchmarks.machine import describe  # noqa: E402
from flexfmu import arm_from_dict, build_model, load_arm  # noqa: E402
from flexfmu.targets import ExportSettings  # noqa: E402

HERE = Path(__file__).resolve().parent
TARGETS = {"canadarm2 build ms": 100.0, "canadarm2 export s": 15.0, "canadarm2 dostep ns": 30000.0}


def spatial_chain(links: int):
    """A spatial chain of ``links`` flexible aluminium tubes (0.5 m) on joints about z, y, z, ..."""
    return arm_from_dict(spatial_chain_table(links))


def spatial_chain_table(links: int) -> dict:
    """The arm file of :func:`spatial_chain` as parsed TOML."""
    link = {
        "kind": "flexible", "length": 0.5, "mass_per_length": 0.6, "polar_inertia_per_length": 2e-4,
        "bending_y": {"EI": 60.0, "modes": {"family": "clamped-free", "count": 1, "damping_ratio": 0.01}},
        "bending_z": {"EI": 60.0, "modes": {"family": "clamped-free", "count": 1, "damping_ratio": 0.01}},
        "torsion": {"GJ": 45.0, "modes": {"count": 1, "damping_ratio": 0.01}},
    }
    chain = [dict(link, joint={"axis": [0.0, 0.0, 1.0] if k % 2 == 0 else [0.0, 1.0, 0.0],
                               "rotor_inertia": 1e-4, "gear_ratio": 50.0}) for k in range(links)]
    return {"kind": "spatial", "name": f"spatial{links}", "gravity": [0.0, 0.0, -9.81], "link": chain,
            "payload": {"mass": 0.2}}


def build_times(arm, repeats: int) -> tuple[float, float]:
    """(first build, median of ``repeats`` further builds) in ms."""
    start = time.perf_counter()
    build_model(arm)
    cold = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        build_model(arm)
        times.append(time.perf_counter() - start)
    return 1e3 * cold, 1e3 * statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-links", type=int, default=7)
    parser.add_argument("--count", type=int, default=2000, help="doSteps per repeat")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default="benchmarks/results/spatial.json")
    args = parser.parse_args()
    machine = describe()
    cases = [("canadarm2_5link", load_arm("canadarm2_5link"))]
    cases += [(f"spatial{n}", spatial_chain(n)) for n in range(1, args.max_links + 1)]
    header = (f"{'arm':<17}{'states':>7}{'cold ms':>9}{'build ms':>9}{'sub/ms':>7}{'codegen s':>10}{'compile s':>10}"
              f"{'export s':>9}{'doStep us':>10}{'rhs us':>8}")
    print(header)
    rows = []
    with tempfile.TemporaryDirectory(prefix="flexfmu-bench-") as tmp:
        work = Path(tmp)
        dostep = work / "time_dostep"
        compile_driver(HERE / "c" / "time_dostep.c", dostep, f"-I{resources.files('flexfmu.targets') / 'c'}")
        for label, arm in cases:
            cold, warm = build_times(arm, args.repeats)
            settings = ExportSettings(integrator="rk4", platforms=("linux64",))
            row = measure(build_model(arm), label, settings, work, args.count, args.repeats, dostep)
            row.update(build_cold_ms=cold, build_ms_median=warm)
            rows.append(row)
            print(f"{label:<17}{row['states']:>7}{cold:>9.0f}{warm:>9.1f}{row['substeps_per_ms']:>7}"
                  f"{row['codegen_s']:>10.2f}{row['compile_s']:>10.2f}{row['export_total_s']:>9.2f}"
                  f"{row['dostep_ns_median'] / 1e3:>10.2f}{row['rhs_ns_median'] / 1e3:>8.2f}", flush=True)
    arm = rows[0]
    measured = {"canadarm2 build ms": arm["build_ms_median"], "canadarm2 export s": arm["export_total_s"],
                "canadarm2 dostep ns": arm["dostep_ns_median"]}
    for key, value in measured.items():
        print(f"target {key} < {TARGETS[key]:g}: {value:.4g} {'met' if value < TARGETS[key] else 'MISSED'}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "rows": rows, "targets": TARGETS, "measured": measured},
                              indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
