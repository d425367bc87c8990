"""FMU benchmark: export time and cost of one 1 ms fmi2DoStep, measured from C.

For N = 1..10 flexible links (two pinned-pinned modes each, vertical plane)
and for the example arms, with both integrators at their default internal
step and RK4 also at an internal step of 1 ms (one RK4 step per doStep, the
fastest setting, which the accuracy rule h w_max <= 0.3 does not choose for
these arms), it prints a table and writes JSON (benchmarks/results/fmu.json):
- export time: codegen, compile, total (one export each);
- ns per fmi2DoStep of 1 ms (median of repeats, from a C driver that loads
  the binary: no Python in the loop), and the internal steps per call;
- ns per call of the generated right-hand side (C, linked to the sources);
- for yu_chen_2dof: the pythonfmu FMU and the native FMU timed through FMPy,
  and CasADi's own export_fmu (see benchmarks/others.py).
Targets (issue 3), for one RK4 step per 1 ms call (``--step 1e-3``, the
setting a real-time target that needs the time would choose): the two-link
arm (yu_chen_2dof) <= 2 us, 10 links <= 30 us; export of 10 links <= 10 s.
Calls at the default, more accurate internal step (several RK4 steps per
call) are reported without a target; docs/veristand.md quotes both from
benchmarks/results/fmu.json, which also records the machine and the date.

Usage: python benchmarks/fmu.py [--max-links 10] [--count 2000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.derivation import chain  # noqa: E402
from benchmarks.machine import describe  # noqa: E402
from benchmarks.others import casadi_export_fmu_row, time_fmpy_dostep  # noqa: E402
from flexfmu import build_model, load_arm  # noqa: E402
from flexfmu.targets.build import GENERATED_SOURCES  # noqa: E402
from flexfmu.targets import ExportSettings, export_fmu  # noqa: E402
from flexfmu.targets.pythonfmu import export_pythonfmu  # noqa: E402

HERE = Path(__file__).resolve().parent
ARMS = HERE.parent / "fmus" / "arms"
# targets for one RK4 step per 1 ms call (issue 3)
TARGETS = {"yu_chen_2dof rk4 ns": 2000.0, "chain10 rk4 ns": 30000.0, "chain10 export s": 10.0}


def compile_driver(source: Path, output: Path, *extra: str) -> None:
    headers = resources.files("fmpy") / "c-code"
    subprocess.run(["cc", "-O2", "-std=c99", f"-I{headers}", *extra, str(source), "-o", str(output), "-ldl", "-lm"],
                   check=True)


def fmu_path(work: Path, label: str, settings: ExportSettings) -> Path:
    """Where :func:`measure` writes the FMU of ``label`` exported with ``settings``."""
    return work / f"{label}_{settings.integrator}_{settings.internal_step}.fmu"


def time_dostep(dostep: Path, library: Path, guid: str, count: int, repeats: int, inputs: int) -> tuple[float, float]:
    """(median, minimum) ns per 1 ms fmi2DoStep of the FMU binary ``library`` over ``repeats`` runs of ``count``
    steps, by the C driver ``dostep`` (time_dostep.c) setting ``inputs`` torques."""
    out = subprocess.run([str(dostep), str(library), guid, "1e-3", str(count), str(repeats), str(inputs)],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def measure(model, label: str, settings: ExportSettings, work: Path, count: int, repeats: int, dostep: Path) -> dict:
    fmu = fmu_path(work, label, settings)
    report = export_fmu(model, fmu, settings)
    unzipped = fmu.with_suffix("")
    with zipfile.ZipFile(fmu) as archive:
        archive.extractall(unzipped)
    library = unzipped / "binaries" / "linux64" / f"{model.arm.name}.so"
    out = time_dostep(dostep, library, report.guid, count, repeats, len(model.inputs))
    rhs_binary = unzipped / "time_rhs"
    sources = unzipped / "sources"
    compile_driver(HERE / "c" / "time_rhs.c", rhs_binary, f"-I{sources}", str(sources / "model_functions.c"))
    rhs = subprocess.run([str(rhs_binary), "20000", str(repeats)], capture_output=True, text=True,
                         check=True).stdout.split()
    return {
        "arm": label, "integrator": report.integrator, "states": 2 * len(model.coordinates),
        "internal_step_s": report.internal_step, "substeps_per_ms": round(1e-3 / report.internal_step),
        "omega_max_rad_s": report.omega_max, "codegen_s": report.codegen_s, "compile_s": report.compile_s,
        "export_total_s": report.total_s, "dostep_ns_median": out[0], "dostep_ns_min": out[1],
        "rhs_ns_median": float(rhs[0]),
        "sources_kb": sum((sources / name).stat().st_size for name in GENERATED_SOURCES) / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-links", type=int, default=10)
    parser.add_argument("--count", type=int, default=2000, help="doSteps per repeat")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default="benchmarks/results/fmu.json")
    args = parser.parse_args()
    machine = describe()
    rows = []
    header = (f"{'arm':<22}{'integ':<9}{'states':>6}{'sub/ms':>7}{'C kB':>7}{'codegen s':>10}{'compile s':>10}"
              f"{'export s':>9}{'doStep us':>10}{'rhs us':>8}")
    print(header)
    with tempfile.TemporaryDirectory(prefix="flexfmu-bench-") as tmp:
        work = Path(tmp)
        dostep = work / "time_dostep"
        compile_driver(HERE / "c" / "time_dostep.c", dostep, f"-I{resources.files('flexfmu.targets') / 'c'}")
        cases = [(name, build_model(load_arm(ARMS / f"{name}.toml"))) for name in ("yu_chen_2dof", "subudhi_morris_2link")]
        cases += [(f"chain{n}", build_model(chain(n))) for n in range(1, args.max_links + 1)]
        for label, model in cases:
            variants = [ExportSettings(integrator="rk4"), ExportSettings(integrator="rk4", internal_step=1e-3),
                        ExportSettings(integrator="implicit")]
            for settings in variants:
                row = measure(model, label, settings, work, args.count, args.repeats, dostep)
                rows.append(row)
                print(f"{label:<22}{settings.integrator:<9}{row['states']:>6}{row['substeps_per_ms']:>7}{row['sources_kb']:>7.0f}"
                      f"{row['codegen_s']:>10.2f}{row['compile_s']:>10.2f}{row['export_total_s']:>9.2f}"
                      f"{row['dostep_ns_median'] / 1e3:>10.2f}{row['rhs_ns_median'] / 1e3:>8.2f}", flush=True)
    others = {}
    with tempfile.TemporaryDirectory(prefix="flexfmu-bench-") as tmp:
        work = Path(tmp)
        model = build_model(load_arm(ARMS / "yu_chen_2dof.toml"))
        export_fmu(model, work / "native.fmu")
        export_pythonfmu(ARMS / "yu_chen_2dof.toml", work / "python.fmu")
        others["fmpy_native_dostep_ns"] = time_fmpy_dostep(work / "native.fmu", 2000, args.repeats)
        others["fmpy_pythonfmu_dostep_ns"] = time_fmpy_dostep(work / "python.fmu", 100, 3)
        others["casadi_export_fmu"] = casadi_export_fmu_row(model, work)
    print(f"yu_chen_2dof through FMPy: native doStep {others['fmpy_native_dostep_ns'] / 1e3:.1f} us, "
          f"pythonfmu doStep {others['fmpy_pythonfmu_dostep_ns'] / 1e3:.1f} us")
    print(f"CasADi export_fmu: {json.dumps(others['casadi_export_fmu'])[:400]}")
    verdicts = {}
    for r in rows:
        if r["integrator"] != "rk4" or r["arm"] not in ("yu_chen_2dof", "chain10"):
            continue
        if r["substeps_per_ms"] != 1:
            print(f"{r['arm']} at its default step ({r['substeps_per_ms']} RK4 steps per call, no target): "
                  f"{r['dostep_ns_median'] / 1e3:.2f} us")
            continue
        verdicts[f"{r['arm']} rk4 ns (one 1 ms RK4 step)"] = (TARGETS[f"{r['arm']} rk4 ns"], r["dostep_ns_median"])
        if r["arm"] == "chain10":
            verdicts["chain10 export s"] = (TARGETS["chain10 export s"], r["export_total_s"])
    for key, (target, value) in verdicts.items():
        print(f"target {key} <= {target:g}: {value:.4g} {'met' if value <= target else 'MISSED'}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    measured = {key: value for key, (_, value) in verdicts.items()}
    out.write_text(json.dumps({"machine": machine, "rows": rows, "others": others, "targets": TARGETS,
                               "measured": measured}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
