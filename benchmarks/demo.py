"""Demo benchmark: wall time of ``flexfmu demo``, cold (empty FMU cache) and warm.

Runs the ``flexfmu`` executable given (this checkout's by default) as a
subprocess, once with an empty cache (every FMU and reference library
built, as on a fresh clone) and once more with that cache; ``--compare
EXE`` runs another flexfmu (e.g. a checkout of an older version) in the
same way right after, so both are timed on the same machine in one run.
Target: 30 s or less on a 2-core machine. Besides wall time it records the
CPU seconds the demo and its worker processes used: on a shared, loaded
machine wall time measures the neighbours too, while CPU seconds over the
cores the demo uses bound what an idle machine takes.

Usage: python benchmarks/demo.py [--compare OTHER/.venv/bin/flexfmu] [--json benchmarks/results/demo.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import describe  # noqa: E402

HERE = Path(__file__).resolve().parent
TARGET_S = 30.0


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_demo(executable: str, cache: str, out: Path) -> tuple[float, float, bool]:
    """(wall seconds, CPU seconds, passed) of one ``executable demo --out out`` with the FMU cache
    folder ``cache``; the CPU seconds include the Dask workers and compilers it started."""
    env = dict(os.environ, FLEXFMU_CACHE=cache)
    cpu, began = _children_cpu_s(), time.perf_counter()
    done = subprocess.run([executable, "demo", "--out", str(out)], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - began
    return wall, _children_cpu_s() - cpu, done.returncode == 0 and "PASS" in done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--executable", default=str(HERE.parent / ".venv" / "bin" / "flexfmu"))
    parser.add_argument("--compare", default=None, metavar="EXE")
    parser.add_argument("--json", default="benchmarks/results/demo.json")
    args = parser.parse_args()
    machine = describe()
    results = {}
    with tempfile.TemporaryDirectory(prefix="flexfmu-bench-demo-") as tmp:
        for label, executable in (("this", args.executable), ("compared", args.compare)):
            if executable is None:
                continue
            cache = tempfile.mkdtemp(dir=tmp)
            cold, cold_cpu, cold_ok = time_demo(executable, cache, Path(tmp) / f"{label}-cold")
            warm, warm_cpu, warm_ok = time_demo(executable, cache, Path(tmp) / f"{label}-warm")
            results[label] = {"executable": executable, "cold_s": cold, "warm_s": warm, "cold_cpu_s": cold_cpu,
                              "warm_cpu_s": warm_cpu, "passed": cold_ok and warm_ok}
            print(f"{label} ({executable}): cold {cold:.1f} s ({cold_cpu:.1f} CPU s), warm {warm:.1f} s "
                  f"({warm_cpu:.1f} CPU s), {'PASS' if cold_ok and warm_ok else 'FAIL'}", flush=True)
    print(f"target <= {TARGET_S:g} s (cold): {'met' if results['this']['cold_s'] <= TARGET_S else 'MISSED'}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "target_s": TARGET_S, "runs": results}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
