"""The closed-loop FMU: the compiled loop gives the Python loop's numbers to round-off, runs each point in one
reused instance, and answers in the FMU's own words.

The Python loop is the independent check: the plant FMU stepped by FMPy, the controller called from Python
(``flexfmu.harness.running.runner``), the figures computed by numpy from the recorded samples
(``flexfmu.harness.reports.figures``, ``flexfmu.control.cost.cost_terms``). The closed-loop FMU shares
with it only the plant's generated C and the controller's CasADi graph.
"""

from __future__ import annotations

import dataclasses

import fmpy
import numpy as np
import pytest
from fmpy.validation import validate_fmu

import flexfmu
from flexfmu.control.cost import cost_signals, cost_terms, end_effector
from flexfmu.control.run_figures import ENVELOPE_LEFT
from flexfmu.control.scenario import ScenarioError, load_scenario
from flexfmu.harness.reports.envelope import envelope_outputs
from flexfmu.harness.reports.figures import scenario_figures
from flexfmu.harness.running.fmu_cache import loop_fmu, native_fmu
from flexfmu.harness.running.loop_case import WARNINGS, LoopCase
from flexfmu.harness.running.loop_runner import PointError
from flexfmu.harness.running.runner import run_fmu

pytestmark = pytest.mark.compiler


@pytest.fixture(scope="module")
def pd_circle():
    """yu_chen_2dof in pd_circle shortened to 0.6 s (the settled window starts at 0.3 s): Model, Scenario,
    LoopCase."""
    scenario = dataclasses.replace(load_scenario("pd_circle"), duration=0.6)
    arm = flexfmu.load_arm(scenario.arm_path)
    model = flexfmu.build_model(arm)
    return model, scenario, LoopCase.of(model, scenario, loop_fmu(arm, scenario))


def python_loop(model, scenario, point: dict, record=()):
    """(figures, Result) of ``point`` (parameters and gains by name) through the plant FMU stepped from Python."""
    gains = {name: value for name, value in point.items() if name not in model.parameters}
    controller = scenario.build_controller(model, gains)
    varied = {name: value for name, value in point.items() if name in model.parameters}
    start = scenario.start_values(model, model.parameter_vector(varied)) | varied  # at rest under the point's
    names = list(dict.fromkeys([*cost_signals(model), *end_effector(model), *envelope_outputs(model), *record]))
    result = run_fmu(native_fmu(model.arm), model, controller, scenario.grid(), start, "cs", names)
    reference = scenario.reference(model)
    return cost_terms(model, result, reference, scenario.step) | scenario_figures(result, model, reference), result


@pytest.mark.parametrize("point", [{}, {"kp": 90.0, "kd": 30.0, "payload.mass": 0.3}])
def test_the_compiled_loop_gives_the_python_loops_figures_to_round_off(pd_circle, point):
    model, scenario, case = pd_circle
    compiled = case.holding(model, scenario, [point]).row(point)
    expected, result = python_loop(model, scenario, point)
    assert set(expected) <= set(compiled)
    for name, value in expected.items():
        assert compiled[name] == pytest.approx(value, rel=1e-9, abs=1e-15), name
    first = left_at(model, result, point.get("envelope.link_deflection", 0.1))
    assert compiled[ENVELOPE_LEFT] == (None if first is None else pytest.approx(first, abs=1e-12))


def left_at(model, result, limit: float):
    """The first sample time of ``result`` with a relative link deflection beyond ``limit``, None if none."""
    relative = np.column_stack([np.abs(result[s.name]) for s in model.output_table if s.limit is not None])
    beyond = np.flatnonzero((relative > limit).any(axis=1))
    return float(result.time[beyond[0]]) if beyond.size else None


def test_the_samples_of_a_point_are_the_python_loops_to_round_off(pd_circle):
    model, scenario, case = pd_circle
    names = [name for name, _ in scenario.compared(model)] + list(model.inputs)
    compiled = case.trajectory({"kd": 20.0}, names)
    _, expected = python_loop(model, scenario, {"kd": 20.0}, names)
    np.testing.assert_array_equal(compiled.time, expected.time)
    for name in names:
        np.testing.assert_allclose(compiled[name], expected[name], rtol=0, atol=1e-10 * np.abs(expected[name]).max())


def test_points_reuse_one_instance_and_each_starts_afresh(pd_circle):
    model, scenario, case = pd_circle
    case = case.holding(model, scenario, [{"payload.mass": 0.2}])
    first = case.row({"kp": 100.0})
    other = case.row({"kp": 150.0, "payload.mass": 0.2})
    assert case.row({"kp": 100.0}) == first != other
    from flexfmu.harness.running.loop_runner import _RUNNERS

    assert len([runner for runner in _RUNNERS.values() if runner.path == case.fmu]) == 1


def test_a_diverging_point_fails_in_the_fmus_words_and_the_next_point_runs(pd_circle):
    _, _, case = pd_circle
    with pytest.raises(PointError, match=r"fmi2DoStep: state '[^']+' became (NaN|.*diverged)") as caught:
        case.row({"kd": 1e6})  # kd = 1e6 N m s/rad sampled at 1 kHz is far beyond stability
    assert "FMICallException" not in str(caught.value) and "status" not in str(caught.value)
    assert case.row({"kd": 25.0})["tracking [rad^2 s]"] > 0


def test_a_point_the_arm_cannot_rest_under_is_named_by_its_values_before_anything_runs(pd_circle):
    """The points' start states are solved together; a point under which no equilibrium exists (a link with
    no bending stiffness) is refused by its own values."""
    model, scenario, case = pd_circle
    with pytest.raises(ScenarioError, match=r"^at link\[2\]\.EI=0: scenario pd_circle: .*unbalanced on theta\[2\]"):
        case.holding(model, scenario, [{"payload.mass": 0.1}, {"link[1].EI": 4000.0}, {"link[2].EI": 0.0},
                                       {"payload.mass": 0.2}])


def test_leaving_the_validity_envelope_is_a_figure_and_the_fmus_warning(pd_circle):
    model, scenario, case = pd_circle
    point = {"envelope.link_deflection": 0.02}
    compiled = case.holding(model, scenario, [point]).row(point)
    _, result = python_loop(model, scenario, point)
    assert compiled[ENVELOPE_LEFT] == pytest.approx(left_at(model, result, 0.02), abs=1e-9)
    assert "beyond the validity envelope" in compiled[WARNINGS]
    for s in model.output_table:
        if s.limit is not None:
            assert compiled[f"envelope: largest {s.name} / {s.limit}"] == pytest.approx(
                np.abs(result[s.name]).max() / 0.02, rel=1e-9)


def test_the_loop_fmu_is_valid_co_simulation_and_keeps_the_plants_names(pd_circle):
    model, _, case = pd_circle
    assert validate_fmu(str(case.fmu)) == []
    loop = fmpy.read_model_description(str(case.fmu))
    plant = fmpy.read_model_description(str(native_fmu(model.arm)))
    assert loop.coSimulation is not None and loop.modelExchange is None
    references = {v.name: v.valueReference for v in loop.modelVariables}
    for v in plant.modelVariables:
        if v.causality != "input":
            assert references[v.name] == v.valueReference, v.name
    assert not [v for v in loop.modelVariables if v.causality == "input"]
    tunable = {v.name for v in loop.modelVariables if v.causality == "parameter" and v.variability == "tunable"}
    assert {"controller.kp", "controller.kd", "reference.radius", "reference.frequency"} <= tunable


def test_the_export_command_writes_a_scenarios_loop_that_holds_its_torques_as_python_does(tmp_path):
    from flexfmu.cli import main

    path = tmp_path / "bang_bang_loop.fmu"
    assert main(["export", "subudhi_morris_2link", "--target", "fmi2-loop", "--scenario", "bang_bang", "-o",
                 str(path), "--platforms", "linux64"]) == 0
    scenario = dataclasses.replace(load_scenario("bang_bang"), duration=1.2)  # the switches at 0.5 s and 1 s
    model = flexfmu.build_model(flexfmu.load_arm(scenario.arm_path))
    names = [name for name, _ in scenario.compared(model)] + list(model.inputs)
    compiled = LoopCase.of(model, scenario, path).trajectory({}, names)
    expected = run_fmu(native_fmu(model.arm), model, scenario.build_controller(model), scenario.grid(),
                       scenario.start_values(model), "cs", names)
    for name in names:
        np.testing.assert_allclose(compiled[name], expected[name], rtol=0, atol=1e-12 * np.abs(expected[name]).max())
    assert set(np.round(compiled["tau[1]"], 12)) == {0.2, -0.2, 0.0}
