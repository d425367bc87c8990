"""Pick-and-place planning on the Delta robot (paper 003's inverted U): the family of moves keeps the
baseline's curve, ends and rest; the planner lowers the residual vibration on its closed loop, and the FMU
confirms it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from flexfmu.cli import main
from flexfmu.control.delta_planning import PickPlaceError, PickPlaceSettings, plan_pick_place, planner_residual
from flexfmu.control.pick_place import PickPlaceMoves
from flexfmu.control.reference_kinds import delta_kinematics
from flexfmu.control.references import inverted_u
from flexfmu.control.scenario import load_scenario
from tests.conftest import example_model

SCENARIO = "delta_pick_place"


@pytest.fixture(scope="module")
def delta():
    model = example_model("kuo_delta")
    scenario = load_scenario(SCENARIO)
    spec = scenario.controller["reference"]
    moves = PickPlaceMoves(spec["start"], spec["travel"], spec["times"], delta_kinematics(model).dims, 3, 2)
    return model, scenario, moves


@pytest.mark.slow
def test_zero_coefficients_give_the_scenarios_reference(delta):
    model, scenario, moves = delta
    time = np.linspace(0.0, scenario.duration, 241)
    ours = moves.references(np.zeros(moves.size), time)
    # the scenario's reference: inverse kinematics and Jacobian, accelerations by central differences
    theirs = np.array([np.concatenate(scenario.reference(model)(t)) for t in time]).T
    np.testing.assert_allclose(ours[:3], theirs[:3], atol=1e-12)
    np.testing.assert_allclose(ours[3:6], theirs[3:6], atol=1e-10)
    np.testing.assert_allclose(ours[6:], theirs[6:], atol=1e-5 * np.abs(theirs[6:]).max())


def test_a_retimed_move_runs_along_the_baseline_curve_and_ends_at_rest(delta):
    model, scenario, moves = delta
    spec = scenario.controller["reference"]
    a = np.array([0.12, -0.05, 0.02])  # sigma' = 1 + sum k pi a_k cos(k pi tau) > 0
    c = np.concatenate([a, np.zeros(moves.size - 3)])
    T = moves.move_time
    tau = np.linspace(0.0, 1.0, 161)
    sigma = tau + np.sin(np.outer(tau, np.pi * np.arange(1, 4))) @ a
    baseline = inverted_u(spec["start"], spec["travel"], spec["times"])
    expected = np.array([baseline(T * s)[0] for s in sigma]).T
    np.testing.assert_allclose(moves.platform_path(c, T * tau), expected, atol=1e-12)
    R = moves.references(c, [0.0, T - 1e-6, T, T + 0.1])
    kinematics = delta_kinematics(model)
    np.testing.assert_allclose(R[:3, 0], kinematics.inverse(spec["start"]), atol=1e-12)
    goal = np.add(spec["start"], np.multiply(spec["travel"], [1, 1, 0]))
    np.testing.assert_allclose(R[:3, 2], kinematics.inverse(goal), atol=1e-12)
    assert np.abs(R[3:, 0]).max() < 1e-12 and np.abs(R[3:, 1]).max() < 1e-6 and np.abs(R[3:, 2:]).max() == 0


def test_the_bend_is_linear_bounded_and_vanishes_at_both_ends(delta):
    _, _, moves = delta
    rng = np.random.default_rng(7)
    c1, c2 = np.zeros(moves.size), np.zeros(moves.size)
    c1[3:], c2[3:] = rng.normal(size=moves.size - 3), rng.normal(size=moves.size - 3)
    tau = np.linspace(0.0, 1.0, 101)
    bend1, bend2, bend12 = (moves.shape(c, tau)[1] for c in (c1, c2, c1 + c2))
    np.testing.assert_allclose(bend12, bend1 + bend2, atol=1e-15)
    assert np.abs(bend1[:, [0, -1]]).max() == 0
    # |w| <= 1 and |2 tau - 1| <= 1: each axis bends by at most the sum of its coefficients' sizes, in mm
    per_axis = np.abs(c1[3:].reshape(3, -1)).sum(axis=1) * 1e-3
    assert np.all(np.abs(bend1).max(axis=1) <= per_axis + 1e-15)
    # the platform starts and ends at rest: the bent move's rates vanish at both ends
    R = moves.references(c1, [0.0, moves.move_time - 1e-6])
    assert np.abs(R[3:6]).max() < 1e-9


def test_the_acceleration_jacobian_matches_differences(delta):
    _, _, moves = delta
    c = np.linspace(-0.05, 0.05, moves.size)
    tau = np.linspace(0.05, 0.95, 7)
    accel, jacobian = moves.accelerations(c, tau)
    for k in (0, moves.size - 1):
        e = np.zeros(moves.size)
        e[k] = 1e-6
        difference = (moves.accelerations(c + e, tau)[0] - moves.accelerations(c - e, tau)[0]) / 2e-6
        np.testing.assert_allclose(jacobian[:, k], difference, atol=1e-6 * np.abs(accel).max())


def test_the_reference_derivatives_match_differences(delta):
    """The planner's sensitivities start from dR/dc, the references' derivatives in the coefficients."""
    _, scenario, moves = delta
    c = np.linspace(-0.05, 0.05, moves.size)
    time = np.linspace(0.0, scenario.duration, 97)
    derivatives = moves.reference_derivatives(c, time)
    assert np.abs(derivatives[time >= moves.move_time]).max() == 0  # at rest at the goal, whatever c
    for k in (0, moves.size - 1):
        e = np.zeros(moves.size)
        e[k] = 1e-6
        difference = (moves.references(c + e, time) - moves.references(c - e, time)) / 2e-6
        np.testing.assert_allclose(derivatives[:, :, k].T, difference, atol=1e-6 * np.abs(difference).max())


@pytest.mark.compiler
@pytest.mark.slow
def test_the_planners_jacobian_is_the_derivative_of_its_residual():
    """The Gauss-Newton steps use the exact Jacobian of the residual (the loop's forward sensitivities through
    the FMU's own Rosenbrock step): it must equal central differences of the residual itself, to the
    differences' own error, at a bent and retimed move over a short window (the settings of the CLI test
    below, so the compiled loop is shared)."""
    model, scenario = example_model("kuo_delta"), load_scenario(SCENARIO)
    spec = scenario.controller["reference"]
    moves = PickPlaceMoves(spec["start"], spec["travel"], spec["times"], delta_kinematics(model).dims, 4, 2)
    law = scenario.law(model)
    grid = np.arange(int(round((moves.move_time + 0.1) / scenario.step)) + 1) * scenario.step
    residual = planner_residual(model, moves, law, law.gain_vector(), scenario.initial_state(model), grid,
                                scenario.step)
    c = 0.02 * np.random.default_rng(5).standard_normal(moves.size)
    values, jacobian = residual.with_jacobian(c)
    np.testing.assert_array_equal(values, residual.values(c))
    e = 1e-5
    differences = np.column_stack([(residual.values(c + e * d) - residual.values(c - e * d)) / (2 * e)
                                   for d in np.eye(moves.size)])
    np.testing.assert_allclose(jacobian, differences, rtol=0, atol=1e-6 * np.abs(jacobian).max())


def test_unusable_settings_name_the_setting(delta):
    model, scenario, moves = delta
    law = scenario.law(model)
    with pytest.raises(PickPlaceError, match="path_tolerance must be >= 0.*the run"):
        plan_pick_place(model, moves, law, law.gain_vector(), scenario.initial_state(model), moves.move_time,
                        settings=PickPlaceSettings(path_tolerance=-1.0))


@pytest.mark.compiler
@pytest.mark.slow
def test_the_planned_pick_and_place_shakes_less_on_the_fmu(tmp_path):
    """One planner step over ten coefficients, 0.2 s of settling: the residual vibration on the FMU falls by
    more than two, as the planner's own closed loop predicts to round-off (it runs the FMU's discretisation,
    the Rosenbrock step at 1 ms, under the same law: the FMU runs through FMPy, its controller in Python),
    within the path tolerance and the acceleration limit."""
    out = tmp_path / "plan"
    status = main(["plan", "kuo_delta", "--iterations", "1", "--retiming-terms", "4", "--correction-terms", "2",
                   "--settle", "0.2", "--out", str(out)])
    summary = json.loads((out / "plan.json").read_text())
    assert status == 0
    assert summary["reduction"] > 2.0
    history = summary["planner_residual_history_m"]
    assert history[-1] < history[0]
    np.testing.assert_allclose(summary["residual_baseline_m"], history[0], rtol=1e-8)
    np.testing.assert_allclose(summary["residual_plan_m"], history[-1], rtol=1e-8)
    assert summary["path_deviation_m"] <= 5e-3 * (1 + 1e-6)  # SLSQP meets its constraints to round-off
    limit = 1.2 * summary["baseline_peak_motor_acceleration_rad_s2"]
    assert summary["peak_motor_acceleration_rad_s2"] <= limit * (1 + 1e-6)
    rows = np.loadtxt(out / "reference.csv", delimiter=",", skiprows=1)
    scenario = load_scenario(SCENARIO)
    start = [scenario.initial[f"theta[{i}]"] for i in (1, 2, 3)]
    np.testing.assert_allclose(rows[0, 1:4], start, atol=1e-9)
    spec = scenario.controller["reference"]
    goal = np.add(spec["start"], np.multiply(spec["travel"], [1, 1, 0]))
    np.testing.assert_allclose(rows[-1, 10:13], goal, atol=1e-12)
    assert {p.name for p in out.iterdir()} >= {"plan.json", "report.md", "plan.png", "reference.csv", "plant.fmu"}
