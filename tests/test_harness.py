"""The harness: it must catch a wrong FMU, agree with itself in closed loop,
and write reports that hold the figures they claim."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import flexfmu
from flexfmu.control.scenario import ScenarioError, load_scenario, scenario_names
from flexfmu.harness.reports.compare import compare_runs
from flexfmu.harness.running.result import Result
from flexfmu.harness.workflows.crosscheck import all_cases, case_setup, crosscheck, run_case
from tests.conftest import ARMS_DIR, example_model

SUBUDHI = ARMS_DIR / "subudhi_morris_2link.toml"
YU_CHEN = ARMS_DIR / "yu_chen_2dof.toml"


def test_every_scenario_loads_and_names_an_example_arm():
    assert set(scenario_names()) >= {"free_vibration", "bang_bang", "pd_circle", "quintic_ct"}
    for name in scenario_names():
        scenario = load_scenario(name)
        model = flexfmu.build_model(flexfmu.load_arm(scenario.arm_path))
        compared = scenario.compared(model)
        assert compared and all(tolerance > 0 for _, tolerance in compared)
        assert {name for name, _ in compared} <= set(model.output_names)


def test_unknown_scenario_is_a_clear_error():
    with pytest.raises(ScenarioError, match="examples: bang_bang"):
        load_scenario("no_such_scenario")


def test_comparison_figures():
    t = np.linspace(0, 1, 101)
    a = Result(t, ["s"], ["m"], np.sin(2 * np.pi * t)[:, None])
    b = Result(t, ["s"], ["m"], (np.sin(2 * np.pi * t) + 0.01 * t)[:, None])
    (row,) = compare_runs({"a": a, "b": b}, [("s", 0.02)])
    assert row.max_abs == pytest.approx(0.01)
    assert row.rms == pytest.approx(0.01 * np.sqrt(np.mean(t**2)))
    assert row.relative_to_range == pytest.approx(0.01 / np.ptp(np.sin(2 * np.pi * t)))
    assert row.passed and not dataclasses.replace(row, tolerance=0.005).passed


def test_runs_of_one_fixed_step_scheme_are_held_to_round_off():
    t = np.linspace(0, 1, 11)
    a = Result(t, ["s"], ["m"], (2 + np.sin(t))[:, None])
    b = Result(t, ["s"], ["m"], (2 + np.sin(t) + 1e-9)[:, None])
    short = Result(t[:4], ["s"], ["m"], (2 + np.sin(t[:4]))[:, None])
    rows = compare_runs({"x": a, "y": b, "z": short}, [("s", 1e-6)], {"x": "rk4", "y": "rk4", "z": None}, {"s": "m"})
    same, other = rows[0], rows[1]
    assert (same.bound, same.unit, same.passed) == ("round-off", "m", False)
    assert same.tolerance == pytest.approx(1e-10 * (2 + np.sin(1.0)))
    assert (other.bound, other.tolerance, other.passed) == ("scenario", 1e-6, True)
    assert other.max_abs == 0.0  # compared over the four samples both runs have
    (torque,) = compare_runs({"x": a, "y": b}, [("s", 1e-6)], {"x": "rk4", "y": "rk4"}, {"s": "N.m"},
                             {"s": "joint_torque"})
    assert torque.tolerance == pytest.approx(1e-8 * (2 + np.sin(1.0))) and torque.passed  # inverse dynamics: x100


def test_a_reduced_models_reference_meets_only_the_full_reference_at_one_percent_of_the_range():
    """Issue 21: the unreduced arm's reference measures the reduction alone: compared with the reduced Model's
    reference only, and held to 1 % of the signal's range, whatever the scenario's tolerance."""
    t = np.linspace(0, 1, 101)
    path = np.sin(2 * np.pi * t)  # range 2
    reference = Result(t, ["s"], ["m"], path[:, None])
    fmu = Result(t, ["s"], ["m"], (path + 1e-7)[:, None])
    full_close = Result(t, ["s"], ["m"], (path + 0.019 * t)[:, None])
    only = {"full-reference": (("reference",), "reduction")}
    rows = compare_runs({"reference": reference, "full-reference": full_close, "native-cs": fmu}, [("s", 1e-6)],
                        only=only)
    assert [(r.first, r.second, r.bound) for r in rows] == [("reference", "full-reference", "reduction"),
                                                            ("reference", "native-cs", "scenario")]
    assert rows[0].tolerance == pytest.approx(0.02) and rows[0].passed
    full_far = Result(t, ["s"], ["m"], (path + 0.021 * t)[:, None])
    (far, _) = compare_runs({"reference": reference, "full-reference": full_far, "native-cs": fmu}, [("s", 1e-6)],
                            only=only)
    assert not far.passed


@pytest.mark.slow
@pytest.mark.compiler
def test_crosscheck_flags_an_fmu_with_two_percent_more_link_mass(tmp_path):
    arm = flexfmu.load_arm(SUBUDHI)
    heavier = dataclasses.replace(arm, links=tuple(
        dataclasses.replace(link, mass_per_length=1.02 * link.mass_per_length) for link in arm.links))
    runs = ("reference", "native-cs")
    honest = run_case(SUBUDHI, "bang_bang", tmp_path / "honest", duration=1.5, runs=runs)
    wrong = run_case(SUBUDHI, "bang_bang", tmp_path / "wrong", duration=1.5, fmu_arm=heavier, runs=runs)
    assert all(c["passed"] for c in honest["comparisons"])
    failed = [c for c in wrong["comparisons"] if not c["passed"]]
    assert failed, "2 % more link mass went unnoticed"
    assert max(c["max_abs"] / c["tolerance"] for c in failed) > 10


@pytest.mark.slow
@pytest.mark.compiler
def test_controller_fmu_closed_loop_agrees_with_the_monolithic_closed_loop(tmp_path):
    case = run_case(YU_CHEN, "pd_circle", tmp_path, duration=1.0, runs=("reference", "native-cs", "controller-fmu"))
    pairs = {(c["first"], c["second"]) for c in case["comparisons"]}
    assert ("reference", "controller-fmu") in pairs
    for c in case["comparisons"]:
        assert c["passed"], c


@pytest.mark.slow
@pytest.mark.compiler
def test_report_files_hold_the_figures_they_claim(tmp_path):
    report = crosscheck([(SUBUDHI, "bang_bang")], tmp_path, duration=0.5)
    data = json.loads((tmp_path / "report.json").read_text())
    assert data == json.loads(json.dumps(report))
    markdown = (tmp_path / "report.md").read_text()
    (case,) = data["cases"]
    assert set(case["runs"]) == {"reference", "native-cs", "native-me", "fmi3-cs", "fmi3-me", "pythonfmu-cs",
                                 "loop-fmu"}
    compared = load_scenario("bang_bang").compared(example_model("subudhi_morris_2link"))
    assert len(case["comparisons"]) == 21 * len(compared)  # every pair of the seven runs
    pairs = {}
    for c in case["comparisons"]:
        pairs.setdefault(f"{c['first']} vs {c['second']}", []).append(c)
    assert len(pairs) == 21
    for pair, rows in pairs.items():
        worst = max(rows, key=lambda c: c["max_abs"] / c["tolerance"])
        assert f"| {pair} | {worst['output']} | {worst['max_abs']:.2e} {worst['unit']} | " \
               f"{worst['tolerance']:.1e} {worst['unit']} ({worst['bound']}) |" in markdown
    # the native and the Python-backed FMU run one fixed-step scheme: held to round-off, not to the scenario
    assert {c["bound"] for c in pairs["native-cs vs pythonfmu-cs"]} == {"round-off"}
    assert all(c["tolerance"] <= 1e-9 for c in pairs["native-cs vs pythonfmu-cs"])
    assert {c["bound"] for c in pairs["reference vs native-cs"]} == {"scenario"}
    for name, value in case["figures"].items():
        assert f"| {name} | {value:.3g} |" in markdown
    assert (tmp_path / case["plot"]).stat().st_size > 20_000
    assert (tmp_path / case["scenario_plot"]).stat().st_size > 20_000
    assert ("PASS" in markdown) == data["passed"]


@pytest.mark.slow
@pytest.mark.compiler
def test_fmu_runner_reads_held_inputs_from_csv_and_applies_parameter_overrides(tmp_path, example_fmu):
    """The same torques from a CSV file and from switch points give the same
    run; a parameter override (start value) reproduces the reference with
    that parameter."""
    from flexfmu.control.controllers import HeldInputs
    from flexfmu.harness.running.reference import simulate_reference
    from flexfmu.harness.running.runner import run_fmu

    model = example_model("subudhi_morris_2link")
    fmu = example_fmu("subudhi_morris_2link").path
    switches = [(0.0, [0.2, 0.1]), (0.3, [-0.2, 0.0])]
    csv_path = tmp_path / "torque.csv"
    csv_path.write_text("time [s],tau[1] [N.m],tau[2] [N.m]\n0.0,0.2,0.1\n0.3,-0.2,0.0\n")
    angles = ["joint[1].angle", "joint[2].angle"]
    heavier = {"payload.mass": 0.3}
    grid = np.linspace(0.0, 0.6, 601)
    held = HeldInputs(switches, model.inputs)
    from_list = run_fmu(fmu, model, held, grid, heavier, record=angles)
    from_csv = run_fmu(fmu, model, HeldInputs.from_csv(csv_path, model.inputs), grid, heavier, record=angles)
    reference = simulate_reference(model, 0.6, 1e-3, inputs=held, p=model.parameter_vector(heavier))
    nominal = simulate_reference(model, 0.6, 1e-3, inputs=held)
    for angle in angles:
        assert np.array_equal(from_list[angle], from_csv[angle])
        assert np.abs(from_csv[angle] - reference[angle]).max() < 1e-6
    assert np.abs(from_csv["joint[1].angle"] - nominal["joint[1].angle"]).max() > 1e-3


def test_crosscheck_all_covers_every_scenario():
    """crosscheck --all (``all_cases``) runs every scenario, each on an example arm written for it."""
    assert {scenario for _, scenario in all_cases()} == set(scenario_names())


# scenarios cross-checked in full, with every run, by another test (tests/test_reference_steps.py)
CROSS_CHECKED_WHOLE = {"delta_pick_place"}


@pytest.mark.slow
@pytest.mark.compiler
@pytest.mark.parametrize("arm_file, scenario", [case for case in all_cases() if case[1] not in CROSS_CHECKED_WHOLE],
                         ids=lambda case: getattr(case, "stem", case))
def test_every_scenario_cross_checks_on_a_short_horizon(arm_file, scenario, tmp_path):
    """crosscheck --all on 0.2 s, one case per test (so parallel workers share them out): every example arm
    with every scenario written for it (but those cross-checked whole elsewhere), reference against the native
    FMU in both interfaces, and the compiled closed loop (loop-fmu) against the Python loop (native-cs) to
    round-off."""
    case = run_case(arm_file, scenario, tmp_path, duration=0.2,
                    runs=("reference", "native-cs", "native-me", "loop-fmu"))
    assert not case["errors"], (scenario, case["errors"])
    assert case["comparisons"] and all(c["passed"] for c in case["comparisons"]), (scenario, case)
    compiled = [c for c in case["comparisons"] if {c["first"], c["second"]} == {"native-cs", "loop-fmu"}]
    assert compiled and all(c["max_abs"] <= c["tolerance"] and c["bound"] == "round-off" for c in compiled)


@pytest.mark.slow
@pytest.mark.compiler
def test_a_scenario_adapts_to_an_arm_without_flexible_links(tmp_path):
    """free_vibration compares the groups joint_angle and deflection and
    tip.ay: on the rigid two-link arm the deflection group is empty."""
    case = run_case(ARMS_DIR / "rigid_2link.toml", "free_vibration", tmp_path, duration=0.5,
                    runs=("reference", "native-cs"))
    compared = {c["output"] for c in case["comparisons"]}
    assert compared == {"joint[1].angle", "joint[2].angle", "tip.ay"}
    assert all(c["passed"] for c in case["comparisons"])


@pytest.mark.parametrize("arm, scenario, rtol", [("yu_chen_2dof", "pd_circle", 1e-10),
                                                  ("canadarm2_5link", "canadarm2_drop", 1e-9),
                                                  ("kuo_delta", "delta_circle", 5e-9),
                                                  ("kuo_delta", "delta_pick_place", 1e-8)])
def test_model_exchange_runs_integrate_to_a_ten_thousandth_of_the_smallest_tolerance(arm, scenario, rtol):
    """CVode's relative tolerance in a cross-check is 1e-4 of the smallest tolerance in the scenario's file
    (1e-6, 1e-5, 5e-5 and 1.5e-4 here), bounded to [1e-10, 1e-8]: tight serial arms keep 1e-10, the Delta's
    pick-and-place, restarted at every sample, takes 1e-8."""
    assert case_setup(arm, scenario).model_exchange_rtol == pytest.approx(rtol, rel=1e-12)


def test_a_scenario_naming_an_output_the_arm_lacks_is_a_clear_error():
    scenario = dataclasses.replace(load_scenario("pd_circle"), outputs=["link[3].deflection"])
    with pytest.raises(ScenarioError, match="link\\[3\\].deflection.*neither an output"):
        scenario.compared(example_model("yu_chen_2dof"))
