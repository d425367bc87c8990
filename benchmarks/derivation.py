"""Derivation benchmark: time to build the Model for N = 1..10 links.

Prints a table and writes JSON (benchmarks/results/derivation.json). For each
N (two pinned-pinned modes per flexible link, vertical plane) it measures, as
medians of repeated builds in this one process:
- closed_form: build_model (M, h, B, forward dynamics);
- closed_form+: the same plus the lazily built energy and outputs Functions;
- energy: build_model(method="energy");
- sympy: a plain sympy Lagrangian derivation of the same arm (N <= 4);
- paper 000 Table 1 (Mathematica, "proposed method") for N <= 5.
Targets (issue 2): closed_form N = 5 <= 50 ms, N = 10 <= 200 ms.

Usage: python benchmarks/derivation.py [--max-links 10] [--sympy-max 4] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import describe  # noqa: E402
from flexfmu.harness.reproductions.sympy_lagrangian import derive  # noqa: E402
from flexfmu import build_model  # noqa: E402
from flexfmu.spec.arm import Arm, FlexibleLink, Modes  # noqa: E402

PAPER_000_SECONDS = {1: 0.36, 2: 0.92, 3: 4.21, 4: 21.3, 5: 114.6}
TARGETS_MS = {5: 50.0, 10: 200.0}


def chain(links: int, stiffening: bool = True) -> Arm:
    link = FlexibleLink(0.5, 0.5, 5.0, Modes("pinned-pinned", 2, damping=(0.01, 0.01)),
                        geometric_stiffening=stiffening)
    return Arm(name=f"chain{links}", links=(link,) * links, gravity=(0.0, -9.81))


def median_ms(action, repeat: int) -> float:
    action()  # warm up caches (mode templates) once
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def build_all(arm: Arm) -> None:
    model = build_model(arm)
    model.energy, model.outputs  # noqa: B018  (force the lazy Functions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-links", type=int, default=10)
    parser.add_argument("--sympy-max", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", default="benchmarks/results/derivation.json")
    args = parser.parse_args()
    machine = describe()

    rows = []
    print(f"{'N':>3} {'closed_form ms':>15} {'closed_form+ ms':>16} {'energy ms':>10} {'sympy s':>9} {'paper000 s':>11}")
    for links in range(1, args.max_links + 1):
        arm = chain(links)
        row = {
            "links": links,
            "closed_form_ms": median_ms(lambda: build_model(arm), args.repeat),
            "closed_form_all_functions_ms": median_ms(lambda: build_all(arm), args.repeat),
            "energy_ms": median_ms(lambda: build_model(arm, "energy"), args.repeat),
            "sympy_s": None,
            "paper_000_mathematica_s": PAPER_000_SECONDS.get(links),
        }
        if links <= args.sympy_max:
            start = time.perf_counter()
            derive(links, stiffening=True)  # the same arm: chain() has geometric stiffening
            row["sympy_s"] = time.perf_counter() - start
        rows.append(row)
        fmt = lambda v, spec: format(v, spec) if v is not None else "-"  # noqa: E731
        print(
            f"{links:>3} {row['closed_form_ms']:>15.1f} {row['closed_form_all_functions_ms']:>16.1f} "
            f"{row['energy_ms']:>10.1f} {fmt(row['sympy_s'], '>9.2f'):>9} {fmt(row['paper_000_mathematica_s'], '>11.2f'):>11}"
        )
    verdicts = {
        n: rows[n - 1]["closed_form_ms"] <= limit for n, limit in TARGETS_MS.items() if n <= len(rows)
    }
    for n, ok in verdicts.items():
        print(f"target N={n}: closed_form <= {TARGETS_MS[n]:.0f} ms: {'met' if ok else 'MISSED'}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "rows": rows, "targets_ms": TARGETS_MS, "targets_met": verdicts},
                              indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
