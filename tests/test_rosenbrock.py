"""The Rosenbrock-W step (ROS2): its stability function on a stiff oscillator, second order on nonlinear arms
whatever the approximation of the Jacobian, and the Delta robot at the communication step."""

from __future__ import annotations

import dataclasses
import math

import casadi as ca
import numpy as np
import pytest

from flexfmu.dynamics.model import CompiledDynamics
import flexfmu
from benchmarks.spatial import spatial_chain_table as spatial_chain
from flexfmu.integrate import (
    MAX_RK4_OPERATIONS,
    ROS2_GAMMA,
    default_integrator,
    highest_frequency,
    right_hand_side_operations,
    rk4_step,
    rk4_substeps,
    rosenbrock_step,
    rosenbrock_tangent,
)
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


@pytest.mark.parametrize("name", ["rigid_2link", "lin_lewis_rfr", "cantilever", "canadarm2_5link"])
def test_second_order_with_the_structural_jacobian(name):
    """A W-method keeps its order for any matrix in place of the Jacobian: rigid_2link's W is its mass matrix
    alone (no structure), the flexible arms' hold their structural stiffness and damping (joint springs,
    modes) but not the rest of the Jacobian of their nonlinear dynamics; Canadarm2's stages are solved by its
    articulated-body passes."""
    order = observed_order(example_model(name))
    assert 1.85 < order < 2.15


def test_stiff_arms_default_to_the_rosenbrock_step():
    """The rule of flexfmu.integrate.default_integrator on stiffness: RK4 while it needs at most 16 substeps."""
    assert default_integrator(1000.0, 1e-3) == "rk4"  # 4 substeps
    assert default_integrator(17000.0, 1e-3) == "rosenbrock"  # 57 substeps


def test_arms_whose_rk4_substeps_are_dear_default_to_the_rosenbrock_step():
    """and on cost: a 3-link spatial chain needs 7 RK4 substeps of 5,000 operations each per millisecond (1.4e8
    per second simulated, beyond MAX_RK4_OPERATIONS) and takes ROS2; Canadarm2 (one substep) and the planar
    yu_chen_2dof (three substeps of a small right-hand side) keep RK4."""
    chain = flexfmu.build_model(flexfmu.arm_from_dict(spatial_chain(3)))
    omega = highest_frequency(chain)
    assert 2 < rk4_substeps(omega, 1e-3) <= 16
    per_second = 4 * rk4_substeps(omega, 1e-3) * right_hand_side_operations(chain.compiled) / 1e-3
    assert per_second > MAX_RK4_OPERATIONS
    assert default_integrator(omega, 1e-3, chain.compiled) == "rosenbrock"
    assert default_integrator(omega, 1e-3) == "rk4"  # stiffness alone would keep RK4
    for name in ("canadarm2_5link", "yu_chen_2dof"):
        model = example_model(name)
        assert default_integrator(highest_frequency(model), 1e-3, model.compiled) == "rk4", name


def stage_function(dynamics, model):
    """(x, u, pc, c, r_q, r_v) -> (forced k_v, massed k_v) of ``dynamics.linear_stages``."""
    n, nu, npc = len(model.state_layout), len(model.inputs), model.compiled.constants.size1_out(0)
    x, u, pc, c = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("pc", len(model.parameters) + npc), \
        ca.MX.sym("c")
    r_q, r_v = ca.MX.sym("r_q", n), ca.MX.sym("r_v", n)
    stages = dynamics.linear_stages(x, u, pc, c)
    return ca.Function("stages", [x, u, pc, c, r_q, r_v], [stages.forced(r_q)[1], stages.massed(r_q, r_v)[1]])


@pytest.mark.parametrize("name", ["canadarm2_5link", "chain3"])
def test_the_spatial_stages_solve_with_the_structure_added_to_the_passes(name):
    """A spatial chain's stage solves run the articulated-body passes with each body's stiffness and damping
    added (no mass matrix); they must solve W k_v = f - c K r_q and W k_v = M r_v - c K r_q with
    W = M + c D + c^2 K, against dense solves with the Model's closed-form M and f and its structure matrices, at
    a random moving, deformed state."""
    model = example_model(name) if name != "chain3" else \
        flexfmu.build_model(flexfmu.arm_from_dict(spatial_chain(3)))
    dynamics = model.compiled
    assert dynamics.stages is not None
    rng = np.random.default_rng(7)
    n = len(model.state_layout)
    p = model.nominal_parameters
    pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
    x = model.start_state + 0.1 * rng.standard_normal(2 * n)
    u = model.start_inputs + rng.standard_normal(len(model.inputs))
    c, r_q, r_v = 3e-4, rng.standard_normal(n), rng.standard_normal(n)
    forced, massed = (np.array(v).ravel() for v in stage_function(dynamics, model)(x, u, pc, c, r_q, r_v))
    q, qd = x[:n], x[n:]
    M = np.array(model.mass_matrix(q, p))
    f = M @ np.array(model.forward_dynamics(q, qd, u, p)).ravel()
    K, D = (np.array(ca.densify(m)) for m in model.structure_matrices(p))
    W = M + c * D + c**2 * K
    np.testing.assert_allclose(forced, np.linalg.solve(W, f - c * K @ r_q), rtol=1e-9, atol=1e-9 * np.abs(forced).max())
    np.testing.assert_allclose(massed, np.linalg.solve(W, M @ r_v - c * K @ r_q), rtol=1e-9,
                               atol=1e-9 * np.abs(massed).max())


def _two_element_delta(reduction: str):
    """kuo_delta meshed with two elements per link, with its default Craig-Bampton reduction or without any
    (``reduction`` "none": every nodal value); at one element per link every node is an interface."""
    arm = flexfmu.load_arm("kuo_delta")
    elements = dataclasses.replace(arm.elements, count=2, reduction=reduction)
    return flexfmu.build_model(dataclasses.replace(arm, elements=elements))


@pytest.mark.parametrize("name", ["kuo_delta", "kuo_delta 2 reduced", "kuo_delta 2 full", "yu_chen_2dof"])
def test_the_tangent_of_the_step_is_its_derivative(name):
    """flexfmu.integrate.rosenbrock_tangent differentiates the step by hand around its LDL' factors (the
    mass form's derivatives by CasADi): in three directions at once it must equal CasADi's own forward
    derivative of the whole step to round-off, and central differences of the step to their error, at a
    moving, deformed state; on the Delta (two elements per link reduced and full, too) and a planar arm."""
    meshes = {"kuo_delta 2 reduced": "craig-bampton", "kuo_delta 2 full": "none"}
    model = _two_element_delta(meshes[name]) if name in meshes else example_model(name)
    dynamics = model.compiled
    p = model.nominal_parameters
    pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
    rng = np.random.default_rng(3)
    x = model.start_state + 0.01 * rng.standard_normal(model.start_state.size)
    u = model.start_inputs + 0.1 * rng.standard_normal(len(model.inputs))
    dX, dU = rng.standard_normal((x.size, 3)), rng.standard_normal((u.size, 3))
    h, e = 1e-3, 1e-6
    step = rosenbrock_step(dynamics)
    tangents = np.array(rosenbrock_tangent(dynamics, 3)(x, u, pc, h, dX, dU))
    forward, x1 = step.forward(1), step(x, u, pc, h)
    for j in range(3):
        derivative = np.array(forward(x, u, pc, h, x1, dX[:, j], dU[:, j], 0, 0)).ravel()
        np.testing.assert_allclose(tangents[:, j], derivative, rtol=0, atol=1e-11 * np.abs(derivative).max())
        difference = (np.array(step(x + e * dX[:, j], u + e * dU[:, j], pc, h))
                      - np.array(step(x - e * dX[:, j], u - e * dU[:, j], pc, h))).ravel() / (2 * e)
        np.testing.assert_allclose(tangents[:, j], difference, rtol=0, atol=1e-7 * np.abs(difference).max())
