"""Spin-up benchmark (paper 001, Section 4.1): the figures, the divergence without stiffening, EXUDYN side by side.

Prints tables and writes JSON (benchmarks/results/spinup.json):
1. the minimum transverse tip deflection of the stiffened model
   (``flexfmu.harness.reproductions.spinup.spinup_figures``) for 2, 3, 4 and 6 clamped-free
   modes and w0 = 0.6, 2, 3, 4, 6, 8, 10 rad/s, next to EXUDYN's
   geometrically exact ANCF cable model (32 elements, h = 1e-3 s);
2. the same model without geometric stiffening: its minimum, when the tip
   passed 100 m, and for w0 = 3 the growth rate after the ramp against the
   linear analysis, sqrt(w0^2 - omega_1^2);
3. side by side, the 15 s spin-up at w0 = 4: the exported FMU (4 modes,
   driven from C and through FMPy) and EXUDYN refined (more elements, then
   a smaller step) until both agree on the minimum within 0.5 %; wall times
   as medians of --repeats runs, and their ratio.

Usage: python benchmarks/spinup.py [--repeats 3] [--quick] [--json benchmarks/results/spinup.json]
(--quick: w0 = 4 and 10 only, EXUDYN at 16 elements.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib import resources
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.exudyn_spinup import exudyn_spinup  # noqa: E402
from benchmarks.fmu import compile_driver  # noqa: E402
from benchmarks.machine import describe  # noqa: E402
from flexfmu import build_model, load_arm  # noqa: E402
from flexfmu.control.scenario import load_scenario  # noqa: E402
from flexfmu.dynamics.linear import natural_frequencies  # noqa: E402
from flexfmu.harness.reproductions.spinup import (  # noqa: E402
    beam_variant, minimum, spinup_figures, spinup_run, tip_deflection_name,
)
from flexfmu.harness.running.runner import run_fmu  # noqa: E402
from flexfmu.targets import ExportSettings, export_fmu  # noqa: E402

HERE = Path(__file__).resolve().parent
RATES = (0.6, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0)
MODES = (2, 3, 4, 6)
AGREEMENT = 0.005  # relative, on the minimum tip deflection
REFINEMENTS = ((2, 1e-2), (4, 1e-2), (8, 1e-2), (16, 1e-2), (8, 2e-3), (16, 1e-3), (32, 1e-3))


def table(figures: dict, reference: dict) -> list[str]:
    """Rows of the stiffened table: w0, one column per mode count, EXUDYN and the difference of the most
    modes from it."""
    counts = sorted({int(n) for row in figures["minimum_m"].values() for n in row})
    lines = [f"{'w0':>5} " + " ".join(f"{f'N={n}':>10}" for n in counts) + f" {'EXUDYN':>10} {'N max vs':>9}"]
    for w0, row in figures["minimum_m"].items():
        exact = reference.get(w0)
        cells = " ".join(f"{row[str(n)]:>10.5f}" for n in counts)
        diff = f"{100 * (row[str(counts[-1])] / exact - 1):>+8.3f}%" if exact else f"{'-':>9}"
        lines.append(f"{w0:>5} {cells} {exact if exact is None else format(exact, '>10.5f')} {diff}")
    return lines


def growth_rate(w0: float = 3.0, window=(15.5, 17.5)) -> dict:
    """Log-slope of the unstiffened tip deflection after the ramp, against sqrt(w0^2 - omega_1^2)."""
    model = build_model(beam_variant(load_arm("spinup_beam"), 4, False))
    omega_1 = float(natural_frequencies(model, locked=["theta[1]"])[0])
    result = spinup_run(model, w0, duration=window[1], step=1e-2)
    inside = (result.time >= window[0]) & (result.time <= window[1])
    slope = float(np.polyfit(result.time[inside], np.log(np.abs(result[tip_deflection_name(model)][inside])), 1)[0])
    return {"w0": w0, "omega_1": omega_1, "measured_per_s": slope, "analytic_per_s": float(np.sqrt(w0**2 - omega_1**2))}


def fmu_side(repeats: int, work: Path, w0: float = 4.0, duration: float = 15.0, step: float = 1e-2) -> dict:
    """The exported spinup_beam FMU over the spin-up: from C and through FMPy."""
    model = build_model(load_arm("spinup_beam"))
    report = export_fmu(model, work / "spinup_beam.fmu", ExportSettings(communication_step=step))
    folder = work / "unzipped"
    with zipfile.ZipFile(report.path) as archive:
        archive.extractall(folder)
    driver = work / "spinup_fmu"
    compile_driver(HERE / "c" / "spinup_fmu.c", driver, f"-I{resources.files('flexfmu.targets') / 'c'}")
    output_vr = 500_000 + model.output_names.index(tip_deflection_name(model))
    args = [str(driver), str(folder / "binaries" / "linux64" / f"{model.arm.name}.so"), report.guid, str(step),
            str(duration), str(w0), "15", "400000", str(output_vr), str(repeats)]
    lowest, when, c_median, c_min = map(float, subprocess.run(args, capture_output=True, text=True,
                                                              check=True).stdout.split())
    scenario = load_scenario("spinup").with_motion(w0=w0)
    controller = scenario.build_controller(model)
    grid = np.linspace(0.0, duration, int(round(duration / step)) + 1)
    walls = []
    for _ in range(repeats):
        start = time.perf_counter()
        run = run_fmu(report.path, model, controller, grid, record=[tip_deflection_name(model)])
        walls.append(time.perf_counter() - start)
    continuous = minimum(spinup_run(model, w0, duration=duration, step=1e-3), tip_deflection_name(model))[0]
    return {"modes": 4, "communication_step_s": step, "internal_step_s": report.internal_step,
            "export_s": report.total_s, "minimum_m": lowest, "time_of_minimum_s": when,
            "minimum_fmpy_m": float(run[tip_deflection_name(model)].min()), "continuous_profile_minimum_m": continuous,
            "wall_c_median_s": c_median, "wall_c_min_s": c_min, "wall_fmpy_median_s": statistics.median(walls)}


def exudyn_side(target: float, repeats: int, w0: float = 4.0, duration: float = 15.0) -> dict:
    """EXUDYN refined until its minimum is within AGREEMENT of ``target``; every refinement tried."""
    tried = []
    for elements, step in REFINEMENTS:
        runs = [exudyn_spinup(w0, elements, step, duration) for _ in range(repeats)]
        value, when = runs[0].minimum()
        row = {"elements": elements, "step_s": step, "minimum_m": value, "time_of_minimum_s": when,
               "relative_to_fmu": value / target - 1, "wall_median_s": statistics.median(r.wall_s for r in runs),
               "cpu_median_s": statistics.median(r.cpu_s for r in runs)}
        tried.append(row)
        print(f"  EXUDYN {elements:>3} elements, h = {step:g} s: min {value:.6f} m "
              f"({100 * row['relative_to_fmu']:+.3f} % of the FMU's), wall {row['wall_median_s']:.2f} s, "
              f"CPU {row['cpu_median_s']:.2f} s", flush=True)
        if abs(row["relative_to_fmu"]) <= AGREEMENT:
            return {"agreeing": row, "tried": tried}
    return {"agreeing": None, "tried": tried}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default="benchmarks/results/spinup.json")
    args = parser.parse_args()
    rates = (4.0, 10.0) if args.quick else RATES
    elements, step = (16, 1e-3) if args.quick else (32, 1e-3)

    print("1. minimum tip deflection [m], geometric stiffening on", flush=True)
    stiffened = spinup_figures(MODES, rates)
    reference = {}
    for w0 in rates:
        reference[f"{w0:g}"] = exudyn_spinup(w0, elements, step, duration=20.0).minimum()[0]
    for line in table(stiffened, reference):
        print(line)

    print("\n2. without geometric stiffening (4 modes; a run ends in the second it passes 100 m)", flush=True)
    unstiffened = spinup_figures((4,), rates, stiffening=False)
    for w0 in unstiffened["minimum_m"]:
        value, end = unstiffened["minimum_m"][w0]["4"], unstiffened["end_s"][w0]["4"]
        verdict = f"passed 100 m by t = {end:g} s" if end < 20 else "bounded over 20 s"
        print(f"{w0:>5}: min {value:.5g} m, {verdict}")
    growth = growth_rate()
    print(f"  w0 = 3 after the ramp: |deflection| grows as exp({growth['measured_per_s']:.5f} t); "
          f"sqrt(w0^2 - omega_1^2) = {growth['analytic_per_s']:.5f} /s (omega_1 = {growth['omega_1']:.5f} rad/s)")

    print("\n3. side by side, 15 s spin-up at w0 = 4 rad/s", flush=True)
    with tempfile.TemporaryDirectory(prefix="flexfmu-spinup-") as tmp:
        fmu = fmu_side(args.repeats, Path(tmp))
    print(f"  FMU (4 modes, RK4 h = {fmu['internal_step_s']:g} s, doStep {fmu['communication_step_s']:g} s): "
          f"min {fmu['minimum_m']:.6f} m at {fmu['time_of_minimum_s']:.2f} s; wall from C "
          f"{fmu['wall_c_median_s'] * 1e3:.2f} ms, through FMPy {fmu['wall_fmpy_median_s']:.2f} s "
          f"(continuous profile: {fmu['continuous_profile_minimum_m']:.6f} m)", flush=True)
    exudyn = exudyn_side(fmu["minimum_m"], args.repeats)
    ratio = None
    if exudyn["agreeing"]:
        agreeing = exudyn["agreeing"]
        ratio = {"exudyn_over_fmu_c": agreeing["wall_median_s"] / fmu["wall_c_median_s"],
                 "exudyn_over_fmu_fmpy": agreeing["wall_median_s"] / fmu["wall_fmpy_median_s"]}
        print(f"  agree within {100 * AGREEMENT:g} %: EXUDYN {agreeing['elements']} elements, h = "
              f"{agreeing['step_s']:g} s, {agreeing['wall_median_s']:.2f} s wall; ratio EXUDYN / FMU "
              f"{ratio['exudyn_over_fmu_c']:.0f} (FMU from C), {ratio['exudyn_over_fmu_fmpy']:.1f} (FMU through FMPy)")
    else:
        print("  EXUDYN did not come within 0.5 % of the FMU at the refinements tried")

    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": describe(), "stiffened": stiffened, "exudyn_reference": {"elements": elements, "step_s": step,
                                                                             "minimum_m": reference},
                               "unstiffened": unstiffened, "growth": growth, "fmu": fmu, "exudyn": exudyn,
                               "ratio": ratio}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
