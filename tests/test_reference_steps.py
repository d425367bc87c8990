"""The reference's stiff step, ROS34PW2 (flexfmu.harness.running.reference_steps): third order whatever
its J (the W property), L-stable, an error estimate of the order it claims, chosen for the stiff Delta only,
and on the Delta in agreement with the DOP853 reference far inside the crosscheck's tolerances."""

from __future__ import annotations

import dataclasses

import casadi as ca
import numpy as np
import pytest

from flexfmu.control.scenario import load_scenario
from flexfmu.harness.running.reference import reference_run
from flexfmu.harness.running.reference_steps import REFERENCE_INTEGRATORS, reference_integrator, ros34pw2_function
from flexfmu.harness.workflows.crosscheck import RUNS, run_case
from tests.conftest import example_model

STIFFNESS = 1e4  # of the manufactured problem's stiff spring, 1/s^2 (omega = 100 rad/s)


def manufactured(stiffness: float) -> ca.Function:
    """(x, u, p) -> dx/dt of q1'' = -k (q1 - sin q2) - 3 (v1 - cos q2) - q1^3 + sin(q2)^3 - sin q2, q2'' = 0: with
    q1(0) = 0, v1(0) = 1, q2(0) = 0, v2(0) = 1 its solution is q1 = sin t, q2 = t (nonlinear, and stiff for a
    large k)."""
    x, u, p = ca.SX.sym("x", 4), ca.SX.sym("u", 0), ca.SX.sym("p", 0)
    q1, q2, v1, v2 = ca.vertsplit(x)
    a1 = -stiffness * (q1 - ca.sin(q2)) - 3 * (v1 - ca.cos(q2)) - q1**3 + ca.sin(q2) ** 3 - ca.sin(q2)
    return ca.Function("f", [x, u, p], [ca.vertcat(v1, v2, a1, 0)])


def blocks(k: float, d: float) -> ca.Function:
    """(x, u, p) -> (M, K, D) = (I, diag(k, 0), diag(d, 0)): the J the W-method holds."""
    x, u, p = ca.SX.sym("x", 4), ca.SX.sym("u", 0), ca.SX.sym("p", 0)
    return ca.Function("blocks", [x, u, p], [ca.SX.eye(2), ca.diag(ca.vertcat(k, 0)), ca.diag(ca.vertcat(d, 0))])


def global_error(step: ca.Function, steps: int, end: float = 1.0) -> float:
    """Largest error of q1 and v1 at ``end`` after ``steps`` equal steps from the manufactured start."""
    x, h = np.array([0.0, 0.0, 1.0, 1.0]), end / steps
    for _ in range(steps):
        x = np.array(step(x, [], [], h, 1.0, 1.0)[0]).ravel()
    return max(abs(x[0] - np.sin(end)), abs(x[2] - np.cos(end)))


@pytest.mark.parametrize("J", [(0.0, 0.0), (50.0, -7.0)])
def test_ros34pw2_is_third_order_whatever_its_jacobian(J):
    """The W property on the non-stiff problem: with J = 0 (the method is then explicit) and with a J that is
    wrong, even of the wrong sign, the global error still falls 8 times when h halves."""
    step = ros34pw2_function(manufactured(0.0), blocks(*J))
    errors = [global_error(step, n) for n in (40, 80, 160)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 3.0) < 0.25), orders


def test_ros34pw2_converges_on_a_stiff_problem_with_the_stiff_part_of_its_jacobian():
    """Stiff (omega = 100 rad/s, h omega from 2.5 down), J holding only the stiff spring and damper, not the
    cubic terms: at least third order from the first halving of h."""
    step = ros34pw2_function(manufactured(STIFFNESS), blocks(STIFFNESS, 3.0))
    errors = [global_error(step, n) for n in (40, 80, 160)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders > 2.75) and errors[-1] < 1e-6, (orders, errors)


def test_ros34pw2_error_estimate_is_of_order_three():
    """The embedded second-order result makes a local error estimate that goes with h^3: the step size
    controller's exponent 1/3 (``error_order``)."""
    step = ros34pw2_function(manufactured(0.0), blocks(0.0, 0.0))
    x0 = [0.0, 0.0, 1.0, 1.0]
    norms = [float(step(x0, [], [], h, 0.0, 1.0)[1]) for h in (0.02, 0.01)]
    assert np.log2(norms[0] / norms[1]) == pytest.approx(REFERENCE_INTEGRATORS["ROS34PW2"].error_order, abs=0.1)


def test_ros34pw2_damps_a_mode_far_beyond_its_step():
    """L-stability: an undamped mode stepped over with h omega = 1000 keeps less than 1 % of its amplitude
    (sqrt(q^2 + (v / omega)^2)) after one step, and ten times less at h omega = 10^4: the stability function
    falls as 1 / (h omega), to 0 at infinity, instead of ringing on (|R| = 1) as the implicit midpoint rule
    would."""
    x, u, p = ca.SX.sym("x", 2), ca.SX.sym("u", 0), ca.SX.sym("p", 0)
    left = []
    for omega in (1e6, 1e7):
        f = ca.Function("f", [x, u, p], [ca.vertcat(x[1], -omega**2 * x[0])])
        J = ca.Function("blocks", [x, u, p], [ca.SX(1), ca.SX(omega**2), ca.SX(0)])
        q, v = np.array(ros34pw2_function(f, J)([1.0, 0.0], [], [], 1e-3, 1.0, 1.0)[0]).ravel()
        left.append(np.hypot(q, v / omega))
    assert left[0] < 1e-2 and left[1] == pytest.approx(left[0] / 10, rel=0.01), left


def test_the_stiff_reference_is_chosen_for_the_delta_only():
    """ROS34PW2 where an export would take the Rosenbrock step (the Delta's axial modes at 17,000 rad/s at a
    1 ms sample), DOP853 for a serial arm."""
    assert reference_integrator(example_model("kuo_delta"), 1e-3).name == "ROS34PW2"
    assert reference_integrator(example_model("yu_chen_2dof"), 1e-3).name == "DOP853"


@pytest.mark.slow
@pytest.mark.compiler
def test_the_stiff_delta_reference_agrees_with_dop853():
    """The first 0.1 s of delta_pick_place (computed torque at 1 kHz, the links' axial modes excited at every
    sample) by ROS34PW2 at its default tolerances and by DOP853 (rtol 1e-10): the compared outputs agree to
    1e-7 (their tightest tolerance is 1.5e-4), the motor rates to 1e-6 rad/s."""
    scenario = dataclasses.replace(load_scenario("delta_pick_place"), duration=0.1)
    model = example_model("kuo_delta")
    controller = scenario.build_controller(model)
    stiff = reference_run(model, scenario, controller)
    explicit = reference_run(model, scenario, controller, integrator="DOP853")
    assert (stiff.method, explicit.method) == ("ROS34PW2", "DOP853")
    for name, _ in scenario.compared(model):
        assert np.max(np.abs(stiff[name] - explicit[name])) < 1e-7, name
    for k in (1, 2, 3):
        assert np.max(np.abs(stiff[f"der(theta[{k}])"] - explicit[f"der(theta[{k}])"])) < 1e-6


@pytest.mark.slow
@pytest.mark.compiler
def test_the_delta_cross_checks_over_its_whole_pick_and_place(tmp_path):
    """Issue 21: the Delta's delta_pick_place in full, every run against the stiff reference, every comparison
    passing (delta_circle, 5 s, is cross-checked on a short horizon in tests/test_harness.py: in full it would
    take minutes of the suite's ten)."""
    scenario = "delta_pick_place"
    case = run_case("kuo_delta", scenario, tmp_path, runs=tuple(RUNS))
    assert not case["errors"], case["errors"]
    assert case["reference_integrator"] == "ROS34PW2"
    assert case["horizons"]["reference"] == pytest.approx(load_scenario(scenario).duration)
    assert case["comparisons"] and all(c["passed"] for c in case["comparisons"]), case["comparisons"]
