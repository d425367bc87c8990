"""Prescribed (motion-driven) joints: the equations of motion hold with the torques the model returns,
the FMU's hybrid articulated-body passes agree with the Model, and the spec, scenarios and FMU
variables say which input is which."""

from __future__ import annotations

import numpy as np
import pytest

import flexfmu
from flexfmu.control.scenario import ScenarioError, load_scenario
from flexfmu.dynamics import metadata as md
from flexfmu.targets.variables import fmu_variables
from tests.test_dynamics import motor_rate

# a rich chain: prescribed joints 1 and 3 (clamped frames on both sides), a free rigid joint 2, a
# flexible joint 4 in front of a pinned-pinned link, a lumped mass, a payload, gravity, friction
SPEC = {
    "name": "prescribed_chain", "gravity": [0.0, -9.81],
    "link": [
        {"kind": "flexible", "length": 1.0, "mass_per_length": 0.5, "EI": 5.0,
         "modes": {"family": "clamped-free", "count": 3, "damping_ratio": 0.01},
         "joint": {"prescribed": True, "rotor_inertia": 0.1, "viscous_friction": 0.2, "coulomb_friction": 0.05}},
        {"kind": "rigid", "length": 0.5, "mass": 0.3, "joint": {"rotor_inertia": 0.01}},
        {"kind": "flexible", "length": 0.8, "mass_per_length": 0.5, "EI": 5.0,
         "modes": {"family": "clamped-mass", "count": 2}, "joint": {"prescribed": True}},
        {"kind": "flexible", "length": 0.8, "mass_per_length": 0.5, "EI": 5.0,
         "modes": {"family": "pinned-pinned", "count": 2},
         "joint": {"kind": "flexible", "stiffness": 50.0, "rotor_inertia": 0.01}},
    ],
    "lumped_mass": [{"link": 1, "position": 0.6, "mass": 0.3}],
    "payload": {"mass": 0.2, "inertia": 0.01},
}


@pytest.fixture(scope="module")
def model():
    return flexfmu.build_model(flexfmu.arm_from_dict(SPEC))


def random_motion(model, rng):
    n, nu = len(model.states), len(model.inputs)
    scale = np.array([0.02 if c.kind == "modal" else 1.0 for c in model.state_layout])
    return rng.normal(size=n) * scale, rng.normal(size=n) * scale, rng.normal(size=nu)


def test_inputs_states_and_outputs_of_a_prescribed_arm(model):
    assert model.states == ["theta[2]", "theta[4]", "alpha[4]", "f[1,1]", "f[1,2]", "f[1,3]", "f[3,1]", "f[3,2]",
                            "f[4,1]", "f[4,2]"]
    assert model.inputs == ["theta[1]", "der(theta[1])", "der(theta[1],2)", "tau[2]", "theta[3]", "der(theta[3])",
                            "der(theta[3],2)", "tau[4]"]
    assert [s.group for s in model.input_table][:4] == [md.PRESCRIBED_ANGLE, md.PRESCRIBED_RATE,
                                                        md.PRESCRIBED_ACCELERATION, md.TORQUE]
    assert model.outputs_of(md.JOINT_TORQUE) == ["tau[1]", "tau[3]"] == model.output_names[-2:]
    variables = {v.name: v for v in fmu_variables(model)}
    assert (variables["theta[1]"].causality, variables["theta[1]"].unit) == ("input", "rad")
    assert (variables["der(theta[1])"].unit, variables["der(theta[1],2)"].unit) == ("rad/s", "rad/s2")
    assert (variables["tau[1]"].causality, variables["tau[1]"].unit) == ("output", "N.m")
    assert variables["theta[2]"].causality == "local" and "der(theta[2],2)" in variables


def test_the_equations_of_motion_hold_with_the_returned_torques(model):
    """M qdd + h = B tau on every row, with tau the torque inputs and the prescribed joints' torque
    outputs, and the prescribed coordinates moving as given; the power of all joint torques on the
    motor-side rates is dE/dt (energy function, not the solve)."""
    import casadi as ca

    rng = np.random.default_rng(21)
    p = model.nominal_parameters * np.where([("friction" in n) or ("damping" in n) for n in model.parameters], 0, 1)
    n = len(model.coordinates)
    qs, qds = ca.SX.sym("q", n), ca.SX.sym("qd", n)
    total = ca.sum1(model.energy(qs, qds, p))
    gradients = ca.Function("dE", [qs, qds], [ca.gradient(total, qs), ca.gradient(total, qds)])
    drives = model.drives
    for _ in range(10):
        q_s, qd_s, u = random_motion(model, rng)
        q, qd, qdd, tau_p = (np.array(v).ravel() for v in model.motion(q_s, qd_s, u, p))
        assert np.array_equal(q[list(drives.prescribed)], u[list(drives.angles)])
        assert np.array_equal(qd[list(drives.prescribed)], u[list(drives.rates)])
        assert np.allclose(qdd[list(drives.prescribed)], u[list(drives.accelerations)], rtol=0, atol=1e-13)
        tau = np.zeros(len(model.arm.links))
        tau[list(drives.torque_joints)] = u[list(drives.torques)]
        tau[list(drives.prescribed_joints)] = tau_p
        M, h, B = np.array(model.mass_matrix(q, p)), np.array(model.bias(q, qd, p)).ravel(), np.array(
            model.input_matrix(q, p))
        residual = M @ qdd + h - B @ tau
        assert np.abs(residual).max() <= 1e-11 * max(1.0, np.abs(h).max())
        dE_dq, dE_dqd = (np.array(g).ravel() for g in gradients(q, qd))
        power = sum(tau[j] * motor_rate(model, model.arm, j, qd) for j in range(len(tau)))
        assert float(dE_dq @ qd + dE_dqd @ qdd) == pytest.approx(power, rel=1e-9)


def test_hybrid_articulated_passes_equal_the_model(model):
    """The FMU's O(N) hybrid passes give the Model's accelerations and the prescribed joints' torques
    (outputs) to 1e-9, at random states, inputs and parameters; the energy derivation agrees too."""
    dynamics = model.compiled
    energy = flexfmu.build_model(model.arm, "energy")
    rng = np.random.default_rng(22)
    ns = len(model.states)
    for _ in range(5):
        p = model.nominal_parameters * rng.uniform(0.9, 1.1, model.nominal_parameters.size)
        pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
        q_s, qd_s, u = random_motion(model, rng)
        x = np.concatenate([q_s, qd_s])
        expected = np.array(model.state_derivative(x, u, p)).ravel()
        for fast in (dynamics.state_derivative(x, u, pc), energy.state_derivative(x, u, p)):
            assert np.abs(np.array(fast).ravel() - expected).max() <= 1e-9 * np.abs(expected).max()
        y, y_fast = np.array(model.outputs(q_s, qd_s, u, p)).ravel(), np.array(dynamics.outputs(x, u, pc)).ravel()
        assert np.abs(y - y_fast).max() <= 1e-9 * np.abs(y).max()
        assert np.abs(y[-2:]).min() > 1e-3  # the torques are there, not zeros
        assert ns == x.size // 2


def test_newton_correction_with_prescribed_joints_equals_the_dense_formula(model):
    """(M_ss + h/2 D_ss + h^2/4 K_ss)^-1 M_ss r over the state coordinates, the prescribed ones held."""
    dynamics = model.compiled
    rng = np.random.default_rng(23)
    p = model.nominal_parameters
    pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
    q_s, qd_s, u = random_motion(model, rng)
    v0, h = rng.normal(size=q_s.size), 1e-3
    correction = np.array(dynamics.newton_correction(q_s, qd_s, v0, u, pc, h)).ravel()
    q, _, _, _ = (np.array(v).ravel() for v in model.motion(q_s, qd_s, u, p))
    s = list(model.drives.states)
    M = np.array(model.mass_matrix(q, p))[np.ix_(s, s)]
    K, D = (np.array(v)[np.ix_(s, s)] for v in model.structure_matrices(p))
    r = qd_s - v0 - h / 2 * np.array(model.forward_dynamics(q_s, qd_s, u, p)).ravel()
    expected = np.linalg.solve(M + h / 2 * D + h**2 / 4 * K, M @ r)
    assert np.abs(correction - expected).max() <= 1e-9 * np.abs(expected).max()


def test_graph_dynamics_of_a_prescribed_arm_equal_the_passes(model):
    """The Python-backed FMU's Functions (the Model's graph, ``graph_dynamics``) and the native FMU's
    passes: the same state derivative, outputs and implicit-midpoint Newton correction over the state
    coordinates, so the two FMUs run one discrete system."""
    from flexfmu.dynamics.graph_dynamics import graph_dynamics

    dynamics, graph = model.compiled, graph_dynamics(model)
    rng = np.random.default_rng(24)
    p = model.nominal_parameters
    pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
    q_s, qd_s, u = random_motion(model, rng)
    x, v0, h = np.concatenate([q_s, qd_s]), rng.normal(size=q_s.size), 1e-3
    pairs = [(dynamics.state_derivative(x, u, pc), graph.state_derivative(x, u, p)),
             (dynamics.outputs(x, u, pc), graph.outputs(x, u, p)),
             (dynamics.newton_correction(q_s, qd_s, v0, u, pc, h), graph.newton_correction(q_s, qd_s, v0, u, p, h))]
    for native, python in pairs:
        native, python = np.array(native).ravel(), np.array(python).ravel()
        assert native.shape == python.shape and np.abs(native - python).max() <= 1e-9 * np.abs(native).max()


@pytest.mark.parametrize("change, message", [
    ({"joint": {"kind": "flexible", "stiffness": 1.0, "rotor_inertia": 0.1, "prescribed": True}},
     r"link\[1\].joint.prescribed is only allowed for a rigid joint"),
    ({"modes": {"family": "pinned-pinned", "count": 2}, "joint": {"prescribed": True}},
     r"link\[1\].joint.prescribed needs tangent frames at joint 1, but link 1 has chord-framed modes"),
    ({"joint": {"prescribed": "yes"}}, r"link\[1\].joint.prescribed must be true or false, got 'yes'"),
])
def test_the_spec_rejects_joints_that_cannot_be_prescribed(change, message):
    link = {"kind": "flexible", "length": 1.0, "mass_per_length": 0.5, "EI": 5.0,
            "modes": {"family": "clamped-free", "count": 2}} | change
    with pytest.raises(flexfmu.SpecError, match=message):
        flexfmu.arm_from_dict({"name": "bad", "link": [link]})


def test_a_chord_framed_link_before_a_prescribed_joint_is_rejected():
    links = [{"kind": "flexible", "length": 1.0, "mass_per_length": 0.5, "EI": 5.0,
              "modes": {"family": "pinned-pinned", "count": 2}},
             {"kind": "rigid", "length": 0.5, "mass": 1.0, "joint": {"prescribed": True}}]
    with pytest.raises(flexfmu.SpecError, match=r"link\[2\].joint.prescribed needs tangent frames at joint 2, "
                                                r"but link 1"):
        flexfmu.arm_from_dict({"name": "bad", "link": links})


def test_an_arm_with_nothing_left_to_simulate_is_rejected():
    """Every joint prescribed and every link rigid leaves no state (a fuzz finding: the Model failed to
    build with an empty state)."""
    link = {"kind": "rigid", "length": 0.5, "mass": 1.0, "joint": {"prescribed": True}}
    with pytest.raises(flexfmu.SpecError, match="link: every joint is prescribed and every link rigid"):
        flexfmu.arm_from_dict({"name": "bad", "link": [link, link]})
    flexible = {"kind": "flexible", "length": 1.0, "mass_per_length": 0.5, "EI": 5.0,
                "modes": {"family": "clamped-free", "count": 1}, "joint": {"prescribed": True}}
    model = flexfmu.build_model(flexfmu.arm_from_dict({"name": "fine", "link": [link, flexible]}))
    assert model.states == ["f[2,1]"]


def test_scenarios_on_prescribed_arms_say_what_does_not_fit():
    import dataclasses

    spinup = load_scenario("spinup")
    beam = flexfmu.build_model(flexfmu.load_arm("spinup_beam"))
    assert spinup.with_motion(w0=6).motion["w0"] == 6.0
    with pytest.raises(ScenarioError, match="no motion parameter speed"):
        spinup.with_motion(speed=6)
    with pytest.raises(ScenarioError, match="has prescribed joints .theta\\[1\\]. and the scenario no \\[motion\\]"):
        dataclasses.replace(spinup, motion={}).build_controller(beam)
    with pytest.raises(ScenarioError, match="control laws drive joint torques"):
        dataclasses.replace(spinup, controller=load_scenario("quintic_ct").controller).build_controller(beam)
    with pytest.raises(ScenarioError, match="initial names theta\\[1\\], not state coordinates"):
        dataclasses.replace(spinup, initial={"theta[1]": 0.1}).initial_state(beam)
    with pytest.raises(ScenarioError, match="has no prescribed joint for the scenario's \\[motion\\]"):
        spinup.build_controller(flexfmu.build_model(flexfmu.load_arm("cantilever")))
