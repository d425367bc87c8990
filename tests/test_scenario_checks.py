"""Scenario files are checked like arm files: at load against their declared keys, then against the arm's
Model, all before anything runs or is written; a crosscheck whose runs fail says so instead of printing a
worst difference."""

from __future__ import annotations

import pytest

from flexfmu.cli import main
from flexfmu.control.controllers import CONTROLLERS
from flexfmu.control.laws import LAWS, ControlLawError, build_law
from flexfmu.control.scenario import ScenarioError, load_scenario
from flexfmu.harness.reports.report import case_lines
from tests.conftest import example_model
from tests.test_tables import scenario_file


def refused(capsys, tmp_path, arm: str, path: str) -> str:
    """The one-line error of ``flexfmu crosscheck ARM --scenario PATH``, which must write nothing."""
    out = tmp_path / "out"
    assert main(["crosscheck", arm, "--scenario", path, "--out", str(out), "--duration", "0.01"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert not out.exists(), "a refused scenario left an output folder"
    return err


@pytest.mark.parametrize(("name", "change", "message"), [
    # the findings, each of which used to fail inside a run (or after the reference had run)
    ("pd_circle", lambda d: d["controller"]["reference"].update(radius="10 cm"),
     "controller.reference.radius must be a number, got '10 cm' (string)"),
    ("pd_circle", lambda d: d["controller"].update(kpp=125.0), "controller.kpp is not a known key; did you mean 'kp'?"),
    ("pd_circle", lambda d: d["controller"].update(refrence=d["controller"].pop("reference")),
     "controller.refrence is not a known key; did you mean 'reference'?"),
    ("pd_circle", lambda d: d["compare"].update(outputs=["joint_angle", "tip_positon"]),
     "compare.outputs[2] names 'tip_positon', not an output or output group of the arm; did you mean "
     "'tip_position'?"),
    ("pd_circle", lambda d: d["controller"]["reference"].pop("radius"), "controller.reference.radius is required"),
    # and what a demanding user would try next
    ("pd_circle", lambda d: d["controller"]["reference"].update(radius=1.0),
     "controller.reference cannot be followed by arm 'yu_chen_2dof': the circle's point (1.67, 0.34) m at t = 0 s"),
    ("pd_circle", lambda d: d["tolerances"].update(deflecton=1e-5),
     "tolerances names 'deflecton', not an output or output group of the arm; did you mean 'deflection'?"),
    ("pd_circle", lambda d: d["initial"].update({"theta[3]": 0.1}),
     "initial names 'theta[3]', not a state coordinate of the arm; did you mean 'theta[2]'?"),
    ("canadarm2_drop", lambda d: d["initial"].update({"theta[1]": -1e300}),
     "initial.theta[1] = -1e+300 rad is beyond +-1000 rad"),
    ("delta_circle", lambda d: d["initial"].update({"theta[3]": -2.47}),
     "initial (theta[1] = -0.187863, theta[2] = -0.511414, theta[3] = -2.47): arm 'kuo_delta': no static "
     "equilibrium found"),
    ("pd_circle", lambda d: d["controller"].update(measure="motor"),
     "measure = 'motor' needs a motor encoder on every joint; arm 'yu_chen_2dof' has 0 for 2 joints"),
    ("pd_circle", lambda d: d["controller"].update(kind="composit"),
     "controller.kind must be one of 'held', 'joint_pd', 'pd_gravity', 'computed_torque', 'composite', got "
     "'composit'; did you mean 'composite'?"),
    ("pd_circle", lambda d: d.update(duration=1.0005), "duration (1.0005 s) must be a whole number of steps (0.001 s)"),
    ("quintic_ct", lambda d: d["controller"]["reference"].update(goal=[1.0, 0.5, 0.2]),
     "controller.reference.goal has 3 entries; arm 'subudhi_morris_2link' has 2 torque-driven joints"),
    ("bang_bang", lambda d: d["controller"].update(switches=[[0.0, [0.2]], [0.5, [0.0, 0.0]]]),
     "controller.switches[1][2] has 1 entry; arm 'subudhi_morris_2link' has 2 torque-driven joints"),
    ("bang_bang", lambda d: d["controller"].update(switches=[[0.5, [0.2, 0.2]], [0.5, [0.0, 0.0]]]),
     "controller.switches: the times must increase from pair to pair, got [0.5, 0.5]"),
    ("bang_bang", lambda d: d["controller"].update(reference={"kind": "quintic"}),
     "controller.reference: a 'held' controller follows no reference"),
    ("delta_pick_place", lambda d: d["controller"]["reference"].update(times=[0.0, 0.4, 0.2, 0.6, 0.8]),
     "controller.reference.times must increase from entry to entry, got [0.0, 0.4, 0.2, 0.6, 0.8]"),
    ("quintic_composite", lambda d: d["controller"].update(design_pose=[0.1]),
     "controller.design_pose has 1 entry; arm 'subudhi_morris_2link' has 2 torque-driven joints"),
    ("quintic_composite", lambda d: d["controller"].update(kf=-1.0), "controller.kf must be in [0, 1e+09], got -1.0"),
    ("spinup", lambda d: d.pop("motion"), "arm 'spinup_beam' has prescribed joints (theta[1]): give their motion in "
                                          "a [motion] table"),
])
def test_a_scenario_with_a_fault_is_refused_on_one_line_naming_the_field_before_anything_is_written(
        tmp_path, capsys, name, change, message):
    scenario = load_scenario(name)
    err = refused(capsys, tmp_path, scenario.arm, scenario_file(tmp_path, name, change))
    assert message in err, err


def test_a_scenario_that_does_not_fit_the_arm_it_is_run_on_is_refused_naming_why(tmp_path, capsys):
    assert "arm 'rigid_2link': controller.kind = 'composite': composite control needs flexible links or joints; " \
           "arm 'rigid_2link' is rigid" in refused(capsys, tmp_path, "rigid_2link", "quintic_composite")
    assert "controller.kind = 'computed_torque': control laws drive joint torques; arm 'spinup_beam' has " \
           "prescribed joints (theta[1])" in refused(capsys, tmp_path, "spinup_beam", "quintic_ct")
    assert "controller.reference.kind = 'platform_circle': a platform path needs a Delta robot" in \
        refused(capsys, tmp_path, "subudhi_morris_2link", "delta_circle")


def test_every_controller_kind_declares_its_keys_and_the_law_table_checks_what_it_builds():
    assert set(CONTROLLERS) == {"held", *LAWS}
    for row in LAWS.values():
        assert set(row.gains) <= {key.name for key in row.keys} and all(key.help for key in row.keys)
    model = example_model("subudhi_morris_2link")
    assert build_law(model, "computed_torque", kp=4.0).gains == {"kp": 4.0, "kd": 12.0}
    with pytest.raises(ControlLawError, match="computed_torque: kpp is not a known key; did you mean 'kp'"):
        build_law(model, "computed_torque", kpp=4.0)
    with pytest.raises(ControlLawError, match="composite: design_pose has 3 entries"):
        build_law(model, "composite", design_pose=[0.0, 0.0, 0.0])


def test_a_shortened_scenario_must_end_on_a_sample():
    scenario = load_scenario("quintic_ct")
    assert scenario.with_duration(2.0).grid()[-1] == 2.0
    with pytest.raises(ScenarioError, match=r"duration \(0.0005 s\) must be a whole number of steps"):
        scenario.with_duration(5e-4)


def test_a_crosscheck_whose_runs_failed_prints_no_worst_difference():
    case = {"arm": "a", "scenario": "s", "errors": {"reference": "TypeError: boom", "native-cs": "x"},
            "comparisons": [], "envelope": None}
    lines = case_lines(case)
    assert not any("worst difference" in line for line in lines)
    assert lines[0] == "a/s: 2 run(s) failed, so no difference is summarised"
    assert "  run reference failed: TypeError: boom" in lines
    ok = {"arm": "a", "scenario": "s", "errors": {}, "envelope": None,
          "comparisons": [{"max_abs": 2e-7, "tolerance": 1e-6}, {"max_abs": 5e-7, "tolerance": 1e-6}]}
    assert case_lines(ok) == ["a/s: worst difference 0.5 x its tolerance"]
