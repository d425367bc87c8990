"""The Rosenbrock-W step (ROS2): its stability function on a stiff oscillator, second order on nonlinear arms
whatever the approximation of the Jacobian, and the Delta robot at the communication step."""

from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

from flexfmu.dynamics.model import CompiledDynamics
from flexfmu.integrate import ROS2_GAMMA, default_integrator, highest_frequency, rk4_step, rosenbrock_step
from tests.conftest import example_model


def oscillator(omega: float, zeta: float = 0.0) -> CompiledDynamics:
    """q'' = -omega^2 q - 2 zeta omega q' as the C contract (unit mass, K and D exact)."""
    x, u, pc = ca.MX.sym("x", 2), ca.MX.sym("u", 1), ca.MX.sym("pc", 1)
    K, D = omega**2, 2 * zeta * omega
    f = -K * x[0] - D * x[1] + u
    unused = ca.Function("unused", [x], [x])
    return CompiledDynamics(
        constants=ca.Function("constants", [pc], [ca.MX(0, 1)]),
        state_derivative=ca.Function("state_derivative", [x, u, pc], [ca.vertcat(x[1], f)]),
        outputs=unused, directional=unused, newton_correction=unused,
        mass_form=ca.Function("mass_form", [x, u, pc], [ca.MX(1), f, ca.MX(K), ca.MX(D)]))


def ros2_stability(z: complex) -> complex:
    """R(z) of ROS2 with the exact Jacobian: y1 = y0 + h (3/2 k1 + 1/2 k2) on y' = lambda y, z = h lambda."""
    g = ROS2_GAMMA
    k1 = 1 / (1 - g * z)
    k2 = (1 + z * k1 - 2 * k1) / (1 - g * z)
    return 1 + 1.5 * z * k1 + 0.5 * z * k2


@pytest.mark.parametrize("h_omega", [0.1, 1.0, 30.0, 1e6])
def test_step_matrix_has_the_ros2_stability_function(h_omega):
    """On the undamped oscillator the step is linear: its eigenvalues are R(+-i h omega), |R| < 1 (modes are
    damped, never amplified) and R -> 0 as h omega -> infinity (L-stability: a stiff mode dies in one step)."""
    omega, h = 1e4, h_omega / 1e4
    step = rosenbrock_step(oscillator(omega))
    matrix = np.column_stack([np.array(step(e, 0.0, 0.0, h)).ravel() for e in np.eye(2)])
    eigenvalues = np.sort_complex(np.linalg.eigvals(matrix))
    expected = np.sort_complex(np.array([ros2_stability(1j * h_omega), ros2_stability(-1j * h_omega)]))
    np.testing.assert_allclose(eigenvalues, expected, rtol=1e-12, atol=1e-10)
    assert np.abs(eigenvalues).max() < 1.0
    if h_omega >= 1e6:
        assert np.abs(eigenvalues).max() < 1e-5


def observed_order(model) -> float:
    """log2 of the ratio of the Rosenbrock step's errors at h and h/2 (largest over the common times of 64
    steps of h) against RK4 at h/64, from the start state with the joints turned and turning a little, in
    the asymptotic regime: h omega_max = 0.05 for the arm's highest frequency (a W-method's error constant
    grows with h times the stiffness its matrix leaves out; at h omega_max = 0.2 the flexible arms show
    1.8 between h/2 and h/4)."""
    dynamics = model.compiled
    p = model.nominal_parameters
    pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
    joints = np.array([c.kind == "joint" for c in model.state_layout], float)
    x0 = model.start_state + np.concatenate([0.05 * joints, 0.2 * joints])
    u = model.start_inputs + 0.01
    h = 0.05 / max(highest_frequency(model), 100.0)

    def run(function, size):
        x, every, samples = x0.copy(), int(round(h / size)), []
        for k in range(64 * every):
            x = np.array(function(x, u, pc, size)).ravel()
            if (k + 1) % every == 0:
                samples.append(x)
        return np.array(samples)

    exact = run(rk4_step(dynamics), h / 64)
    step = rosenbrock_step(dynamics)
    errors = [np.abs(run(step, size) - exact).max() for size in (h, h / 2)]
    return math.log2(errors[0] / errors[1])


@pytest.mark.parametrize("name", ["rigid_2link", "lin_lewis_rfr", "cantilever"])
def test_second_order_with_the_structural_jacobian(name):
    """A W-method keeps its order for any matrix in place of the Jacobian: rigid_2link's W is its mass matrix
    alone (no structure), the flexible arms' hold their structural stiffness and damping (joint springs,
    modes) but not the rest of the Jacobian of their nonlinear dynamics."""
    order = observed_order(example_model(name))
    assert 1.85 < order < 2.15


def test_stiff_arms_default_to_the_rosenbrock_step():
    """The rule of flexfmu.integrate.default_integrator: RK4 while it needs at most 16 substeps."""
    assert default_integrator(1000.0, 1e-3) == "rk4"  # 4 substeps
    assert default_integrator(17000.0, 1e-3) == "rosenbrock"  # 57 substeps
