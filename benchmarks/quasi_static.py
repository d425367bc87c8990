"""Quasi-static benchmark: cost and error of condensing fast torsion and stretch, measured from C.

Exported (linux64), in one run: the 7-link spatial test chain of
benchmarks/spatial.py with every torsion dynamic under RK4
(``quasi_static = false``: the model before this option), with the default
quasi-static rule (which condenses only the last link's twist: the others
are fast straight but slow folded) under RK4 at its default internal step
(the export's default before RK4's cost counted: 10 substeps per 1 ms),
with every torsion quasi-static under RK4, and with the export's defaults
(the Rosenbrock step at 1 ms, ``flexfmu.integrate.default_integrator``: the
stiff torsion damped by an L-stable step instead of resolved by RK4
substeps, its error held against the RK4 version); the Canadarm2 example arm
with its defaults (nothing condensed, RK4) and with its booms' torsion and
stretch forced quasi-static. It prints a table and writes
JSON (benchmarks/results/quasi_static.json):
- states, internal RK4 steps per 1 ms, the highest linearised frequency,
  export seconds;
- ns per fmi2DoStep of 1 ms from the C driver of benchmarks/fmu.py: the
  versions are timed in turn, round after round, so that a change of the
  shared machine's load hits them alike; the median over rounds of each
  round's median, the minimum, and the ratio to the arm's first version;
- the error of each condensed FMU against the dynamic FMU on a run of both:
  the largest difference of each compared output, absolute and relative to
  its range in the dynamic run. The 7-link chain moves in space (gravity off:
  in gravity its 3.5 m of soft tubes sag beyond the model's 10 % envelope)
  under computed torque, designed on its rigid model and so the same for
  every version, along a quintic from straight to a bent pose in 2 s, and
  holds it for 0.5 s; Canadarm2 runs its scenario canadarm2_drop.
Targets (issue 21): the 7-link chain at most 50 us per 1 ms doStep (241 us
before, on an idle machine); Canadarm2 no slower.

Usage: python benchmarks/quasi_static.py [--count 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np
from fmpy import read_model_description

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fmu import compile_driver, fmu_path, measure, time_dostep  # noqa: E402
from benchmarks.machine import describe  # noqa: E402
from benchmarks.spatial import spatial_chain, spatial_chain_table  # noqa: E402
from flexfmu import build_model, load_arm  # noqa: E402
from flexfmu.control.scenario import load_scenario  # noqa: E402
from flexfmu.harness.running.runner import run_fmu  # noqa: E402
from flexfmu.targets import ExportSettings  # noqa: E402

HERE = Path(__file__).resolve().parent
TARGETS = {"spatial7 dostep ns": 50000.0}
REFERENCE_BEFORE_NS = {"spatial7": 241000.0, "canadarm2_5link": 8100.0}  # issue 21, idle machine
COMPARED = ("joint_angle", "tip_position", "deflection", "twist", "stretch")


def with_torsion_and_stretch(arm, quasi_static: bool):
    """``arm`` with every link's torsion and stretch set quasi-static (True) or dynamic (False)."""
    links = []
    for link in arm.links:
        if hasattr(link, "deformations"):
            link = dataclasses.replace(link, deformations=tuple(
                dataclasses.replace(d, quasi_static=quasi_static) if d.kind in ("torsion", "axial") else d
                for d in link.deformations))
        links.append(link)
    return dataclasses.replace(arm, links=tuple(links))


MOVE = """
name = "spatial7_move"
arm = "{arm}"
description = "in space, computed torque along a quintic from straight to a bent pose in 2 s, then holding it"
duration = 2.5
step = 1e-3

[controller]
kind = "computed_torque"
kp = 16.0
kd = 8.0

[controller.reference]
kind = "quintic"
start = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
goal = [0.5, 0.4, -0.3, 0.5, 0.3, -0.4, 0.2]
move_time = 2.0

[compare]
outputs = ["joint_angle"]

[tolerances]
default = 1.0
"""


def toml_text(table: dict) -> str:
    """An arm file's text from its parsed form (``table``): top-level values, arrays of tables, tables, with
    nested tables inline."""
    def inline(value) -> str:
        if isinstance(value, dict):
            return "{ " + ", ".join(f"{k} = {inline(v)}" for k, v in value.items()) + " }"
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(inline(v) for v in value) + "]"
        if isinstance(value, bool):
            return "true" if value else "false"
        return f'"{value}"' if isinstance(value, str) else repr(value)

    def tables(value) -> list:
        return value if isinstance(value, list) and value and isinstance(value[0], dict) else \
            [value] if isinstance(value, dict) else []

    lines = [f"{key} = {inline(value)}" for key, value in table.items() if not tables(value)]
    for key, value in table.items():
        for entry in tables(value):
            lines.append(f"[[{key}]]" if isinstance(value, list) else f"[{key}]")
            lines += [f"{k} = {inline(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def compared_outputs(model) -> list[str]:
    return [name for group in COMPARED for name in model.outputs_of(group)]


def run_error(dynamic_fmu: Path, static_fmu: Path, model, controller, grid, start: dict) -> dict:
    """{output: (largest difference, its fraction of the output's range in the dynamic run)} of the two FMUs
    run side by side (co-simulation, one doStep per sample of ``grid``)."""
    names = compared_outputs(model)
    runs = [run_fmu(path, model, controller, grid, start, "cs", names) for path in (dynamic_fmu, static_fmu)]
    out = {}
    for name in names:
        reference, other = runs[0][name], runs[1][name]
        difference = float(np.max(np.abs(other - reference)))
        span = float(np.ptp(reference))
        out[name] = (difference, difference / span if span > 0 else None)
    return out


def by_group(model, errors: dict) -> dict:
    """The largest error of each compared output group: (absolute, relative to range, output)."""
    rows = {}
    for group in COMPARED:
        names = [n for n in model.outputs_of(group) if n in errors]
        if names:
            worst = max(names, key=lambda n: errors[n][0])
            relative = max((errors[n][1] or 0.0) for n in names)
            rows[group] = {"largest": errors[worst][0], "output": worst, "largest_relative_to_range": relative}
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000, help="doSteps per timing")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of timing every version in turn")
    parser.add_argument("--json", default="benchmarks/results/quasi_static.json")
    args = parser.parse_args()
    machine = describe()
    chain, canadarm2 = spatial_chain(7), load_arm("canadarm2_5link")
    # (arm, version, its arm, the integrator: None for the export's default)
    cases = [("spatial7", "dynamic", with_torsion_and_stretch(chain, False), "rk4"), ("spatial7", "rk4", chain, "rk4"),
             ("spatial7", "quasi-static", with_torsion_and_stretch(chain, True), "rk4"),
             ("spatial7", "default", chain, None),
             ("canadarm2_5link", "default", canadarm2, None),
             ("canadarm2_5link", "quasi-static", with_torsion_and_stretch(canadarm2, True), "rk4")]
    rows, built = [], {}
    with tempfile.TemporaryDirectory(prefix="flexfmu-bench-") as tmp:
        work = Path(tmp)
        dostep = work / "time_dostep"
        compile_driver(HERE / "c" / "time_dostep.c", dostep, f"-I{resources.files('flexfmu.targets') / 'c'}")
        for label, version, arm, integrator in cases:
            settings = ExportSettings(integrator=integrator, platforms=("linux64",))
            model = build_model(arm)
            tag = f"{label}_{version}"
            row = measure(model, tag, settings, work, args.count, 3, dostep)
            row.update(arm=label, version=version, quasi_static=[c.name for c in model.quasi_static])
            fmu = fmu_path(work, tag, settings)
            library = fmu.with_suffix("") / "binaries" / "linux64" / f"{model.arm.name}.so"
            built[(label, version)] = (model, fmu, library, read_model_description(fmu).guid)
            rows.append(row)
            print(f"exported {label} ({version}) in {row['export_total_s']:.1f} s", flush=True)
        times = {key: [] for key in built}
        for _ in range(args.rounds):
            for key, (model, _, library, guid) in built.items():
                times[key].append(time_dostep(dostep, library, guid, args.count, 3, len(model.inputs)))
        print(f"{'arm':<17}{'version':<14}{'states':>7}{'sub/ms':>7}{'w_max':>8}{'export s':>9}{'doStep us':>10}"
              f"{'min us':>8}{'ratio':>7}")
        for row in rows:
            measured = times[(row["arm"], row["version"])]
            row["dostep_ns_median"] = statistics.median(m for m, _ in measured)
            row["dostep_ns_min"] = min(low for _, low in measured)
            first = next(r for r in rows if r["arm"] == row["arm"])
            row["ratio_to_first_version"] = row["dostep_ns_median"] / first["dostep_ns_median"]
            print(f"{row['arm']:<17}{row['version']:<14}{row['states']:>7}{row['substeps_per_ms']:>7}"
                  f"{row['omega_max_rad_s']:>8.0f}{row['export_total_s']:>9.1f}{row['dostep_ns_median'] / 1e3:>10.2f}"
                  f"{row['dostep_ns_min'] / 1e3:>8.2f}{row['ratio_to_first_version']:>7.3f}", flush=True)
        space = spatial_chain_table(7)
        space["gravity"] = [0.0, 0.0, 0.0]
        arm_file, move = work / "space7.toml", work / "space7_move.toml"
        arm_file.write_text(toml_text(space))
        move.write_text(MOVE.format(arm=arm_file))
        # (arm, version, scenario, the version it is held against)
        runs = [("spatial7", "rk4", load_scenario(move), "dynamic"),
                ("spatial7", "quasi-static", load_scenario(move), "dynamic"),
                ("spatial7", "default", load_scenario(move), "rk4"),
                ("canadarm2_5link", "quasi-static", load_scenario("canadarm2_drop"), "default")]
        errors = {}
        for label, version, scenario, against in runs:
            model, dynamic_fmu = built[(label, against)][:2]
            condensed = set(model.coordinates) - set(built[(label, version)][0].coordinates)  # not in the other FMU
            if label == "spatial7":  # in space: the plant's gravity off, the controller designed without it, and
                # the chain straight at rest (the FMUs start at their sag in 1 g): every coordinate both have at 0
                design = build_model(with_torsion_and_stretch(load_arm(arm_file), False))
                start = {"gravity.z": 0.0} | {name: 0.0 for name in model.coordinates if name not in condensed}
            else:
                design = model
                start = {name: value for name, value in scenario.initial.items() if name not in condensed}
            found = run_error(dynamic_fmu, built[(label, version)][1], model, scenario.build_controller(design),
                              scenario.grid(), start)
            errors[f"{label} {version}"] = by_group(model, found)
            print(f"{label} {version} ({scenario.name}): against {against}, largest difference (of the range):")
            for group, row in errors[f"{label} {version}"].items():
                print(f"  {group:<14}{row['largest']:>11.3g}  {row['largest_relative_to_range']:>9.2%}  "
                      f"({row['output']})")
    row_of = {(r["arm"], r["version"]): r for r in rows}
    default = {r["arm"]: r for r in rows if r["version"] == "default"}
    measured = {f"spatial7 {version} dostep ns": row_of[("spatial7", version)]["dostep_ns_median"]
                for version in ("default", "rk4", "quasi-static")}
    for key, value in measured.items():
        print(f"target {key} <= {TARGETS['spatial7 dostep ns']:g}: {value:.4g} "
              f"{'met' if value <= TARGETS['spatial7 dostep ns'] else 'MISSED'} (this machine, now)")
    for version in ("default", "rk4", "quasi-static"):
        ratio = row_of[("spatial7", version)]["ratio_to_first_version"]
        print(f"spatial7 {version}: {REFERENCE_BEFORE_NS['spatial7'] / 1e3:g} us before (issue 21, idle machine) "
              f"x {ratio:.3f} (this run's ratio to the dynamic version) = "
              f"{REFERENCE_BEFORE_NS['spatial7'] * ratio / 1e3:.1f} us")
    condensed = default["canadarm2_5link"]["quasi_static"]
    print(f"canadarm2_5link: condensed by default: {condensed or 'nothing (its FMU is the dynamic one)'}; "
          f"{default['canadarm2_5link']['dostep_ns_median'] / 1e3:.2f} us here, "
          f"{REFERENCE_BEFORE_NS['canadarm2_5link'] / 1e3:g} us in issue 21 on an idle machine")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "rows": rows, "errors": errors, "targets": TARGETS,
                               "measured": measured, "reference_before_ns": REFERENCE_BEFORE_NS}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
