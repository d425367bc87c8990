"""A spatial arm through the rest of the pipeline, checked on its exported FMU: the FMI 3.0 target, tuning
(the FMU's cost equals the optimiser's prediction) and planning (the planned move leaves ten times less
vibration on the FMU than the computed-torque baseline), and a 3-link chain through the Rosenbrock step the
export picks for it. Export, validation and cross-checks of the example arm canadarm2_5link are in
tests/test_fmu.py and tests/test_harness.py, which cover every example arm."""

from __future__ import annotations

import json

import numpy as np
import pytest

import flexfmu
from flexfmu.cli import main
from flexfmu.harness.workflows.crosscheck import run_case
from flexfmu.targets import ExportSettings, export
from flexfmu.targets.validate import validate_fmu

pytestmark = [pytest.mark.compiler, pytest.mark.slow]

# A space arm (no gravity): a rigid turret yawing about z and a boom pitching about y, 0.1 m above the turret's
# tip, that bends both ways and twists; a payload with an inertia tensor. Slow modes (about 20 to 130 rad/s) so
# that the FMU takes one RK4 step per millisecond and a plan needs few collocation points.
SPACE_ARM = """
kind = "spatial"
name = "space_boom"

[[link]]
kind = "rigid"
length = 0.2
mass = 2.0
inertia = [[0.01, 0.0, 0.0], [0.0, 0.02, 0.0], [0.0, 0.0, 0.02]]
[link.joint]
rotor_inertia = 1e-4
gear_ratio = 20.0

[[link]]
kind = "flexible"
length = 1.0
mass_per_length = 0.5
polar_inertia_per_length = 2e-3
bending_y = { EI = 20.0, modes = { family = "clamped-free", count = 1, damping_ratio = 0.01 } }
bending_z = { EI = 30.0, modes = { family = "clamped-free", count = 1, damping_ratio = 0.01 } }
torsion = { GJ = 10.0, modes = { count = 1, damping_ratio = 0.01 } }
[link.joint]
axis = [0.0, 1.0, 0.0]
offset = [0.0, 0.0, 0.1]
rotor_inertia = 1e-4
gear_ratio = 20.0

[payload]
mass = 0.2
inertia = [[1e-4, 0.0, 0.0], [0.0, 2e-4, 0.0], [0.0, 0.0, 2e-4]]
"""

# computed torque on the hub encoders along a quintic move of both joints, and the settling a tuning cost
# needs after it (flexfmu.control.tuning)
SCENARIO = """
name = "space_boom_ct"
arm = "{arm}"
duration = 1.1
step = 1e-3

[controller]
kind = "computed_torque"
kp = 36.0
kd = 12.0

[controller.reference]
kind = "quintic"
start = [0.0, 0.0]
goal = [0.5, 0.3]
move_time = 0.7

[compare]
outputs = ["joint_angle", "deflection", "twist", "tip_position"]

[tolerances]
default = 1e-6
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spatial_pipeline")
    arm = folder / "space_boom.toml"
    arm.write_text(SPACE_ARM)
    scenario = folder / "space_boom_ct.toml"
    scenario.write_text(SCENARIO.format(arm=arm))
    return arm, scenario


def test_the_arm_has_slow_modes_and_one_rk4_step_per_millisecond(files):
    """The premise of the lean tests below (checked, not assumed)."""
    from flexfmu.dynamics.linear import natural_frequencies

    omega = natural_frequencies(flexfmu.build_model(flexfmu.load_arm(files[0])))
    assert 10.0 < omega[omega > 1e-6].min() and omega.max() < 300.0  # h omega_max < 0.3 at h = 1 ms


def test_fmi3_fmu_validates_and_cross_checks_against_the_reference(files, tmp_path):
    """FMI 3.0 export of a spatial arm: flexfmu validates it (FMPy's checks, the binaries, a rebuild of the
    sources); its CS and ME runs match the reference within the scenario's 1e-6 on angles, deflections, twist
    and tip position."""
    arm, scenario = files
    report = export(flexfmu.build_model(flexfmu.load_arm(arm)), tmp_path / "arm3.fmu",
                    ExportSettings(platforms=("linux64",)), target="fmi3")
    assert validate_fmu(report.path).problems == []
    case = run_case(arm, str(scenario), tmp_path / "cc", duration=0.5,
                    runs=("reference", "fmi3-cs", "fmi3-me"))
    pairs = {(c["first"], c["second"]) for c in case["comparisons"]}
    assert {("reference", "fmi3-cs"), ("reference", "fmi3-me")} <= pairs
    assert {c["output"] for c in case["comparisons"]} >= {"link[2].deflection.y", "link[2].twist", "tip.z"}
    assert all(c["passed"] for c in case["comparisons"]), [c for c in case["comparisons"] if not c["passed"]]


def test_tune_lowers_the_cost_and_the_fmu_matches_the_prediction(files, tmp_path, capsys):
    """flexfmu tune on the spatial arm: the gains it finds lower the cost on the exported FMU, which agrees
    with the optimiser's prediction to 1 % (the command's own check, exit 0)."""
    arm, scenario = files
    out = tmp_path / "tune"
    status = main(["tune", str(arm), "--scenario", str(scenario), "--params", "kp,kd", "--max-iterations", "15",
                   "--workers", "0", "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 0, printed
    summary = json.loads((out / "tuned.json").read_text())
    assert summary["fmu_cost_after"] < summary["fmu_cost_before"]
    assert summary["fmu_cost_after"] == pytest.approx(summary["predicted_cost_after"], rel=0.01)


def test_plan_leaves_ten_times_less_vibration_than_computed_torque_on_the_fmu(files, tmp_path):
    """flexfmu plan on the spatial arm: a yaw-and-pitch move in 1 s ends at rest on the FMU, with at least ten
    times less residual tip vibration than the quintic computed-torque baseline."""
    out = tmp_path / "plan"
    status = main(["plan", str(files[0]), "--from", "0,0", "--to", "30deg,20deg", "--time", "1", "--settle", "1",
                   "--interval", "0.02", "--out", str(out)])
    summary = json.loads((out / "plan.json").read_text())
    assert status == 0
    assert summary["residual_tip_vibration_baseline_m"] > 10 * summary["residual_tip_vibration_plan_m"]
    assert np.max(np.abs(summary["final_joint_error_rad"])) < 1e-3


def test_canadarm2_drop_cross_checks_over_the_whole_scenario(tmp_path):
    """The example arm's scenario, all 2.5 s: the native FMU in both interfaces within the scenario's 1e-5 of
    the CVODES reference on joint and motor angles, deflections in both planes, twist, stretch and tip position,
    and inside its validity envelope throughout (tests/test_harness.py runs every scenario for 0.2 s only)."""
    case = run_case("canadarm2_5link", "canadarm2_drop", tmp_path, runs=("reference", "native-cs", "native-me"))
    compared = {c["output"] for c in case["comparisons"]}
    assert {"motor[5].angle", "link[3].deflection.z", "link[2].twist", "link[2].stretch", "tip.z"} <= compared
    assert all(c["passed"] for c in case["comparisons"]), [c for c in case["comparisons"] if not c["passed"]]
    assert case["horizons"]["native-me"] == 2.5
    runs = case["envelope"]["runs"]
    assert set(runs) == {"reference", "native-cs", "native-me"}
    assert all(run["left_at"] is None for run in runs.values())
    assert 0.01 < max(runs["reference"]["peak_fraction"].values()) < 0.2  # the booms do bend


CHAIN_SWING = """
name = "chain3_swing"
arm = "{arm}"
description = "torque pulses on the first two joints, then free motion"
duration = 0.5
step = 1e-3

[controller]
kind = "held"
switches = [[0.0, [0.5, -0.3, 0.0]], [0.2, [-0.5, 0.3, 0.0]], [0.4, [0.0, 0.0, 0.0]]]

[compare]
outputs = ["joint_angle", "tip_position", "deflection", "twist"]

[tolerances]
default = 1e-3
"""


def test_a_chain_that_defaults_to_the_rosenbrock_step_cross_checks(tmp_path):
    """A 3-link spatial chain (torsion near 2,000 rad/s: 7 RK4 substeps of a large right-hand side) exports with
    the Rosenbrock step by default, its stages solved by the articulated-body passes in C; the Python-backed
    FMU solves the same stages by an LDL' of the closed-form mass matrix, and the two agree to round-off over
    the whole swing; both FMU interfaces stay within the scenario's 1 mm and 1 mrad of the reference."""
    from benchmarks.quasi_static import toml_text
    from benchmarks.spatial import spatial_chain_table

    arm, scenario = tmp_path / "chain3.toml", tmp_path / "swing.toml"
    arm.write_text(toml_text(spatial_chain_table(3)))
    scenario.write_text(CHAIN_SWING.format(arm=arm))
    model = flexfmu.build_model(flexfmu.load_arm(arm))
    report = export(model, tmp_path / "chain3.fmu", ExportSettings(platforms=("linux64",)))
    assert report.integrator == "rosenbrock" and report.internal_step == pytest.approx(1e-3)
    case = run_case(arm, str(scenario), tmp_path / "cc", runs=("reference", "native-cs", "native-me", "pythonfmu-cs"))
    assert all(c["passed"] for c in case["comparisons"]), [c for c in case["comparisons"] if not c["passed"]]
    two_implementations = [c for c in case["comparisons"] if {c["first"], c["second"]} == {"native-cs", "pythonfmu-cs"}]
    assert two_implementations and all(c["bound"] == "round-off" for c in two_implementations)
    against_reference = [c for c in case["comparisons"] if "reference" in (c["first"], c["second"])]
    assert {c["second"] for c in against_reference} >= {"native-cs", "native-me"}
