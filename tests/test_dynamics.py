"""Physics of the planar Model, checked against facts not derived from it."""

from __future__ import annotations

import numpy as np
import pytest

import flexfmu
from flexfmu import load_arm
from flexfmu.dynamics.linear import natural_frequencies
from flexfmu.kinds import kind_of
from tests.conftest import EXAMPLE_ARMS, example_model

# the independent motor rates below suit planar arms and the Delta robot; tests/test_spatial.py checks
# spatial arms' power balance and energy
PLANAR_ARMS = [name for name in EXAMPLE_ARMS if flexfmu.load_arm(name).kind == "planar"]
NOT_SPATIAL = [name for name in EXAMPLE_ARMS if flexfmu.load_arm(name).kind != "spatial"]
DISSIPATION = ("damping_ratio", "damping_coefficient", "viscous_friction", "coulomb_friction", "spring_damping",
               "damping.alpha", "damping.beta")  # the last two: Rayleigh damping of a Delta robot


def conservative_parameters(model, scale_rng=None):
    """Nominal p (optionally scaled by random factors) with every dissipative
    parameter set to zero."""
    p = model.nominal_parameters.copy()
    if scale_rng is not None:
        p *= scale_rng.uniform(0.8, 1.25, size=p.size)
    for k, name in enumerate(model.parameters):
        if any(key in name for key in DISSIPATION):
            p[k] = 0.0
        if name.endswith(".position"):  # keep lumped masses on their links
            p[k] = min(p[k], 1.0)
    return p


def random_state(rng, model, spread=0.6):
    n = len(model.coordinates)
    # deflections (modal amplitudes, a Delta's nodal values) small, about the arm's start pose
    scale = np.array([1.0 if c.kind in ("joint", "rotor") else 0.02 for c in model.layout])
    return model.start_coordinates + rng.normal(size=n) * spread * scale, rng.normal(size=n) * scale


def test_example_arms_are_all_present():
    assert set(EXAMPLE_ARMS) >= {"yu_chen_2dof", "subudhi_morris_2link", "lin_lewis_rfr", "rigid_2link", "cantilever"}


@pytest.mark.parametrize("arm_name", [name for name in EXAMPLE_ARMS if len(kind_of(load_arm(name)).graph.METHODS) > 1])
def test_closed_form_and_energy_derivations_agree(arm_name):
    """Two independent derivations give the same M and h (100 random states,
    random parameters around nominal); a Delta robot has one derivation (energy) only."""
    closed, energy = example_model(arm_name), example_model(arm_name, "energy")
    rng = np.random.default_rng(1)
    for _ in range(100):
        p = closed.nominal_parameters * rng.uniform(0.8, 1.25, size=closed.nominal_parameters.size)
        q, qd = random_state(rng, closed)
        M1, M2 = np.array(closed.mass_matrix(q, p)), np.array(energy.mass_matrix(q, p))
        h1, h2 = np.array(closed.bias(q, qd, p)), np.array(energy.bias(q, qd, p))
        assert np.abs(M1 - M2).max() <= 1e-10 * np.abs(M1).max()
        assert np.abs(h1 - h2).max() <= 1e-10 * np.abs(h1).max()


def test_mass_matrix_symmetric_positive_definite(arm_name):
    """M is symmetric, and positive definite over the coordinates the dynamics solve for (the states:
    a prescribed joint's row is inverse dynamics), at random poses with each link's modes bending its
    tip by up to 1 % of its length: geometric stiffening keeps the link's kinetic energy to second
    order in the deflection, so definiteness is a small-deflection property (docs/dynamics.md)."""
    model = example_model(arm_name)
    rng = np.random.default_rng(2)
    states = list(model.drives.states)
    for _ in range(50):
        q, _ = random_state(rng, model, spread=2.0)
        q = within_one_percent(model, q)
        M = np.array(model.mass_matrix(q, model.nominal_parameters))
        assert np.allclose(M, M.T, rtol=0, atol=1e-14 * np.abs(M).max())
        assert np.linalg.eigvalsh(M[np.ix_(states, states)]).min() > 0


def within_one_percent(model, q):
    """``q`` with every flexible link's modal coordinates scaled so that its deflections at the tip and
    at mid-span (from the mode shapes, summed in magnitude) are at most 1 % of its length; a Delta robot's
    nodal values are already small (random_state)."""
    from flexfmu.dynamics.planar.bodies import link_mode_sets

    q = np.array(q, float)
    if model.arm.kind != "planar":
        return q
    for i, shapes in enumerate(link_mode_sets(model.arm)):
        if shapes is None:
            continue
        idx = [model.coordinates.index(f"f[{i + 1},{k}]") for k in range(1, shapes.count + 1)]
        tip = np.abs(np.array(shapes.values(1.0)) * q[idx]).sum() + np.abs(np.array(shapes.values(0.5)) * q[idx]).sum()
        q[idx] *= min(1.0, 0.01 * model.arm.links[i].length / max(tip, 1e-300))
    return q


def test_coriolis_skew_symmetry_and_velocity_products(arm_name):
    """dM/dt - 2C is skew-symmetric (dM/dt by central differences, not AD),
    and C qd is exactly the velocity-product part of h."""
    model = example_model(arm_name)
    rng = np.random.default_rng(3)
    p = conservative_parameters(model)
    for _ in range(20):
        q, qd = random_state(rng, model)
        eps = 1e-6
        Mdot = (np.array(model.mass_matrix(q + eps * qd, p)) - np.array(model.mass_matrix(q - eps * qd, p))) / (2 * eps)
        C = np.array(model.coriolis(q, qd, p))
        N = Mdot - 2 * C
        # central differences: truncation ~eps^2, round-off ~1e-16 |M| / eps
        scale = np.abs(np.array(model.mass_matrix(q, p))).max() * np.abs(qd).max()
        assert np.abs(N + N.T).max() <= 1e-8 * scale
        velocity_part = np.array(model.bias(q, qd, p)) - np.array(model.bias(q, 0 * qd, p))
        # round-off of the products that cancel: |M| |qd|^2 (the h of a Delta robot differences large terms)
        tiny = 1e-10 * max(np.abs(velocity_part).max(), scale * np.abs(qd).max())
        assert np.allclose(C @ qd, velocity_part.ravel(), rtol=1e-9, atol=tiny)


@pytest.mark.parametrize("arm_name", NOT_SPATIAL)
def test_energy_balance_under_input(arm_name):
    """dE/dt equals the power of the joint torques on the motor-side rates,
    computed independently: rotor rate for a flexible joint, otherwise the
    rate of (link j root tangent) - (link j-1 tip tangent) from the absolute
    tangent angles. This checks B (virtual work, paper 000 eq. 29-32), and
    for a prescribed joint its torque output (the power it puts in)."""
    model = example_model(arm_name)
    arm = model.arm
    rng = np.random.default_rng(4)
    p = conservative_parameters(model)
    import casadi as ca

    n, states = len(model.coordinates), list(model.drives.states)
    qs, qds = ca.SX.sym("q", n), ca.SX.sym("qd", n)
    total = ca.sum1(model.energy(qs, qds, p))
    gradients = ca.Function("dE", [qs, qds], [ca.gradient(total, qs), ca.gradient(total, qds)])
    for _ in range(10):
        q_all, qd_all = random_state(rng, model)
        u = rng.normal(size=len(model.inputs))
        q, qd, qdd, tau_p = (np.array(v).ravel() for v in model.motion(q_all[states], qd_all[states], u, p))
        dE_dq, dE_dqd = (np.array(g).ravel() for g in gradients(q, qd))
        dE = float(dE_dq @ qd + dE_dqd @ qdd)
        torques = dict(zip([s.link for s in model.input_table if s.group == "torque"], u[list(model.drives.torques)]))
        torques |= dict(zip([j + 1 for j in model.drives.prescribed_joints], tau_p))
        cancelling = np.abs(dE_dq * qd).sum() + np.abs(dE_dqd * qdd).sum()  # round-off of the stiff terms
        power = sum(tau * motor_rate(model, arm, j - 1, qd) for j, tau in torques.items())
        assert dE == pytest.approx(power, rel=1e-9, abs=max(1e-12, 1e-13 * cancelling))


def tangent_rates(model, link_index, qd):
    """(root, tip) tangent rotation rates of a flexible link relative to its
    frame, from the mode shapes' closed forms (not from the Model's rows)."""
    from flexfmu.dynamics.planar.bodies import link_mode_sets

    link = model.arm.links[link_index]
    shapes = link_mode_sets(model.arm)[link_index]
    idx = [model.coordinates.index(f"f[{link_index + 1},{k}]") for k in range(1, link.modes.count + 1)]
    root = float(np.dot(np.array(shapes.slopes(0.0)), qd[idx])) / link.length
    tip = float(np.dot(np.array(shapes.slopes(1.0)), qd[idx])) / link.length
    if shapes.frame == "tangent":
        return root, 0.0  # the next frame already turns with the tip
    return root, tip


def motor_rate(model, arm, j, qd):
    if arm.kind == "delta":  # motor j turns upper link j (its torque is on the joint side of the gear)
        return qd[model.coordinates.index(f"theta[{j + 1}]")]
    if arm.links[j].joint.kind == "flexible":
        return qd[model.coordinates.index(f"alpha[{j + 1}]")]
    rate = qd[model.coordinates.index(f"theta[{j + 1}]")]
    if arm.links[j].kind == "flexible":
        rate += tangent_rates(model, j, qd)[0]
    if j > 0 and arm.links[j - 1].kind == "flexible":
        rate -= tangent_rates(model, j - 1, qd)[1]
    return rate


def test_dissipation_only_removes_energy():
    model = example_model("yu_chen_2dof")
    rng = np.random.default_rng(5)
    p = model.nominal_parameters
    h0 = np.array(model.bias(*random_state(rng, model), conservative_parameters(model)))
    assert np.isfinite(h0).all()
    for _ in range(20):
        q, qd = random_state(rng, model)
        dissipative = np.array(model.bias(q, qd, p) - model.bias(q, qd, conservative_parameters(model))).ravel()
        assert float(qd @ dissipative) > 0


# a Delta robot's axial modes (17,000 rad/s) make 10 s of CVODES Adams impractical: its power balance is checked
# instantaneously (test_energy_balance_under_input, tests/test_delta.py); spatial arms: tests/test_spatial.py
# (random joint springs would bend them beyond second order). Stiff joint springs make three arms' runs 5-10 s:
# slow tests.
STIFF_ENERGY_RUNS = {"lin_lewis_rfr", "subudhi_morris_2link", "yu_chen_2dof"}


@pytest.mark.parametrize("arm_name", [pytest.param(name, marks=pytest.mark.slow) if name in STIFF_ENERGY_RUNS else name
                                      for name in PLANAR_ARMS])
def test_energy_conserved_without_dissipation(arm_name):
    """10 s of free motion with no damping, friction or input: total energy
    constant to 1e-8 relative (CVODES Adams, tight tolerance); a prescribed
    joint is held at rest (zero inputs), so it does no work."""
    from flexfmu.harness.running.reference import simulate_reference

    model = example_model(arm_name)
    p = conservative_parameters(model)
    rng = np.random.default_rng(6)
    q0, qd0 = random_state(rng, model, spread=0.5)
    states = list(model.drives.states)
    result = simulate_reference(
        model, 10.0, 0.01, x0=np.concatenate([q0[states], qd0[states]]), p=p, rtol=1e-13, atol=1e-14, method="adams"
    )
    n, nu = len(states), len(model.inputs)
    motion = model.motion.map(len(result.time))
    q, qd, _, _ = motion(result.values[:, :n].T, result.values[:, n:2 * n].T, np.zeros((nu, len(result.time))), p)
    energy = np.array(model.energy.map(len(result.time))(q, qd, p))
    total = energy.sum(axis=0)
    scale = max(abs(total[0]), energy[0].max())
    assert np.abs(total - total[0]).max() <= 1e-8 * scale


def rigid_two_link_textbook(q, qd, link1, link2, g):
    """Rigid two-link planar arm (Spong, Hutchinson & Vidyasagar, ch. 7),
    centres of mass on the link axes, gravity along -y."""
    (m1, l1, lc1, I1), (m2, _, lc2, I2) = link1, link2
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    d11 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + I1 + I2
    d12 = m2 * (lc2**2 + l1 * lc2 * c2) + I2
    d22 = m2 * lc2**2 + I2
    hc = -m2 * l1 * lc2 * s2
    coriolis = np.array([hc * (2 * qd[0] * qd[1] + qd[1] ** 2), -hc * qd[0] ** 2])
    c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
    gravity = np.array([(m1 * lc1 + m2 * l1) * g * c1 + m2 * lc2 * g * c12, m2 * lc2 * g * c12])
    return np.array([[d11, d12], [d12, d22]]), coriolis, gravity


def test_rigid_arm_equals_textbook_equations():
    model = example_model("rigid_2link")
    arm = model.arm
    g = -arm.gravity[1]
    link1 = (arm.links[0].mass, arm.links[0].length, arm.links[0].com[0], arm.links[0].inertia)
    link2 = (arm.links[1].mass, arm.links[1].length, arm.links[1].com[0], arm.links[1].inertia)
    rng = np.random.default_rng(7)
    p = model.nominal_parameters
    for _ in range(50):
        q, qd = rng.uniform(-np.pi, np.pi, 2), rng.normal(size=2) * 3
        M, coriolis, gravity = rigid_two_link_textbook(q, qd, link1, link2, g)
        np.testing.assert_allclose(np.array(model.mass_matrix(q, p)), M, rtol=1e-13, atol=1e-14)
        h_gravity = np.array(model.bias(q, 0 * qd, p)).ravel()
        h_velocity = np.array(model.bias(q, qd, p)).ravel() - h_gravity
        np.testing.assert_allclose(h_gravity, gravity, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(h_velocity, coriolis, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.array(model.input_matrix(q, p)), np.eye(2), atol=0)


def single_link_arm(family, count, payload=0.0, rho=0.5, EI=5.0, L=1.2, gravity=(0.0, 0.0), lumped=(), hub=0.0):
    data = {
        "name": "single",
        "gravity": list(gravity),
        "link": [{
            "kind": "flexible", "length": L, "mass_per_length": rho, "EI": EI,
            "modes": {"family": family, "count": count},
            "joint": {"kind": "rigid", "rotor_inertia": hub},
        }],
        "payload": {"mass": payload},
    }
    if lumped:
        data["lumped_mass"] = [dict(link=1, position=pos, mass=mass) for pos, mass in lumped]
    return flexfmu.build_model(flexfmu.arm_from_dict(data))


def beta_from_omega(omega, rho=0.5, EI=5.0, L=1.2):
    return (omega**2 * rho / EI) ** 0.25 * L


def test_locked_cantilever_has_analytic_frequencies():
    model = single_link_arm("clamped-free", 3)
    omega = natural_frequencies(model, locked=["theta[1]"])
    np.testing.assert_allclose(beta_from_omega(omega), [1.875104, 4.694091, 7.854757], rtol=1e-6)


def test_spin_up_beam_fundamental_frequency_paper_001():
    """Paper 001 quotes 0.464 Hz for the clamped-free spin-up beam."""
    omega = natural_frequencies(example_model("cantilever"), locked=["theta[1]"])
    assert omega[0] / (2 * np.pi) == pytest.approx(0.464, rel=2e-3)


def test_clamped_link_with_tip_mass_ratio_one():
    """Tip mass M = rho L: beta_1 L = 1.24792 (clamped-mass eigenvalue)."""
    model = single_link_arm("clamped-mass", 3, payload=0.5 * 1.2)
    omega = natural_frequencies(model, locked=["theta[1]"])
    assert beta_from_omega(omega[0]) == pytest.approx(1.24792, rel=5e-6)


def test_free_hub_frequencies_decrease_as_modes_are_added():
    """Rayleigh-Ritz: each frequency of a beam on a free hub is an upper bound
    that can only fall as admissible modes are added."""
    spectra = []
    for count in range(1, 7):
        omega = natural_frequencies(single_link_arm("clamped-free", count, hub=0.05))
        assert omega[0] < 1e-6  # rigid-body rotation of the free hub
        spectra.append(omega[1:])
    for fewer, more in zip(spectra, spectra[1:]):
        assert np.all(more[: len(fewer)] <= fewer * (1 + 1e-12))
    # and they do fall: the fundamental with one mode is a strict upper bound
    assert spectra[-1][0] < spectra[0][0] * (1 - 1e-4)


def static_tip_deflection(model, locked=("theta[1]",)):
    """Static deflection of the modal coordinates under gravity, joint held."""
    from flexfmu.dynamics.linear import linearise

    lin = linearise(model, locked=locked)
    n = len(model.coordinates)
    free = [model.coordinates.index(name) for name in lin.names]
    h0 = np.array(model.bias(np.zeros(n), np.zeros(n), model.nominal_parameters)).ravel()[free]
    q = np.zeros(n)
    q[free] = np.linalg.solve(lin.K, -h0)  # h is affine in f at theta = 0
    y = np.array(model.outputs(q, np.zeros(n), np.zeros(len(model.inputs)), model.nominal_parameters)).ravel()
    return y[model.output_names.index("link[1].deflection")]


def test_horizontal_cantilever_sags_as_a_uniform_load_beam():
    rho, EI, L, g = 0.5, 5.0, 1.2, 9.81
    model = single_link_arm("clamped-free", 3, rho=rho, EI=EI, L=L, gravity=(0.0, -g))
    assert static_tip_deflection(model) == pytest.approx(-rho * g * L**4 / (8 * EI), rel=5e-3)


def test_the_holding_equilibrium_sags_as_a_uniform_load_beam_and_refuses_a_link_with_no_stiffness():
    """The FMU's start state: a horizontal cantilever held at theta = 0 sags as the beam tables say, with the
    joint torque the load's moment about the joint (a stiff beam: its sag, 0.25 mm, shortens the moment arm by
    parts in 1e8); with EI = 0 nothing holds the modes against gravity, and the equilibrium is refused naming
    them (the least-squares Newton step used to stop at a compromise that left forces unbalanced on the modes,
    and return it as a state at rest)."""
    from flexfmu.dynamics.equilibrium import EquilibriumError, holding_equilibrium

    rho, EI, L, g = 0.5, 5000.0, 1.2, 9.81
    model = single_link_arm("clamped-free", 3, rho=rho, EI=EI, L=L, gravity=(0.0, -g))
    q, tau = holding_equilibrium(model)
    n = len(model.coordinates)
    y = np.array(model.outputs(q, np.zeros(n), tau, model.nominal_parameters)).ravel()
    assert y[model.output_names.index("link[1].deflection")] == pytest.approx(-rho * g * L**4 / (8 * EI), rel=5e-3)
    assert tau == pytest.approx([rho * L * g * L / 2], rel=1e-6)
    with pytest.raises(EquilibriumError, match=r"unbalanced on f\[1,1\], f\[1,2\], f\[1,3\]"):
        holding_equilibrium(model, p=model.parameter_vector({"link[1].EI": 0.0}))


def test_many_parameter_sets_settle_each_at_its_own_beam_sag_and_a_set_with_no_stiffness_is_named():
    """A sweep's start states are solved together (``holding_equilibria``: one Newton system with the
    parameters as inputs, evaluated for every set at once): each set's cantilever sags as the uniform-load beam
    at its own density and stiffness and holds with the load's moment, equal to that set's single solve
    (parameters folded in) to round-off; a set with EI = 0 among good ones is refused by its place."""
    from flexfmu.dynamics.equilibrium import EquilibriumError, holding_equilibria, holding_equilibrium

    g, L = 9.81, 1.2
    model = single_link_arm("clamped-free", 3, rho=0.5, EI=5000.0, L=L, gravity=(0.0, -g))
    sets = [(0.2, 5000.0), (0.5, 4000.0), (1.0, 8000.0), (2.0, 3000.0)]
    ps = [model.parameter_vector({"link[1].mass_per_length": rho, "link[1].EI": EI}) for rho, EI in sets]
    q, tau = holding_equilibria(model, ps)
    n = len(model.coordinates)
    for k, (rho, EI) in enumerate(sets):
        y = np.array(model.outputs(q[k], np.zeros(n), tau[k], ps[k])).ravel()
        assert y[model.output_names.index("link[1].deflection")] == pytest.approx(-rho * g * L**4 / (8 * EI),
                                                                                    rel=5e-3)
        assert tau[k] == pytest.approx([rho * L * g * L / 2], rel=1e-6)
        alone_q, alone_tau = holding_equilibrium(model, p=ps[k])
        assert np.abs(q[k] - alone_q).max() <= 1e-12 * np.abs(alone_q).max()
        assert np.abs(tau[k] - alone_tau).max() <= 1e-12 * np.abs(alone_tau).max()
    limp = model.parameter_vector({"link[1].EI": 0.0})
    with pytest.raises(EquilibriumError, match=r"unbalanced on f\[1,1\]") as refused:
        holding_equilibria(model, [ps[0], ps[1], limp, ps[2]])
    assert refused.value.index == 2


@pytest.mark.parametrize("angle", [0.0, np.pi / 4, np.pi / 2, -2.0])
def test_an_arm_starts_at_rest_at_its_joints_start_angles_held_by_the_weights_moment(angle):
    """``joint.start_angle`` moves the start pose: a rigid pendulum (mass m, centre of mass c out along the link)
    starts at that angle, at rest, held by the torque m g c cos(angle) that balances its weight's moment (zero
    when it hangs or stands)."""
    m, c, g = 2.0, 0.3, 9.81
    arm = flexfmu.arm_from_dict({"name": "pendulum", "gravity": [0.0, -g], "link": [
        {"kind": "rigid", "length": 0.5, "mass": m, "com": [c, 0.0], "inertia": 0.02,
         "joint": {"start_angle": angle}}]})
    model = flexfmu.build_model(arm)
    assert model.start_state == pytest.approx([angle, 0.0], abs=1e-15)
    assert model.start_inputs == pytest.approx([m * g * c * np.cos(angle)], abs=1e-12)


def test_an_arm_bent_beyond_its_modes_at_rest_is_refused_and_canadarm2_hangs_unbent():
    """Held out horizontally in 1 g, Canadarm2's upper boom sags 0.34 m under the elbow, lower boom and wrist:
    there the second-order kinetic energy of its first mode outweighs the first, the mass matrix is not
    positive definite and no dynamics can start; the equilibrium is refused naming that mode. At 3 m/s^2 the
    same pose is valid. The example arm starts hanging instead: gravity along the booms bends nothing (every
    deflection zero to round-off), needs no torque, and stretches both booms (tension: they hang, not stand)."""
    import tomllib

    from flexfmu.data import resolve_arm
    from flexfmu.dynamics.equilibrium import EquilibriumError

    data = tomllib.loads(resolve_arm("canadarm2_5link").read_text())
    del data["link"][1]["joint"]["start_angle"]
    held_out = flexfmu.build_model(flexfmu.arm_from_dict(data))
    with pytest.raises(EquilibriumError, match=r"not positive definite .*f\[2,1\] = 0\.33"):
        held_out.start_state
    data["gravity"] = [0.0, 0.0, -3.0]
    lighter = flexfmu.build_model(flexfmu.arm_from_dict(data))
    assert lighter.start_state[lighter.states.index("f[2,1]")] > 0.05

    model = example_model("canadarm2_5link")
    q = model.start_coordinates.copy()
    q[[model.coordinates.index(name) for name in model.states]] = model.start_state[:len(model.states)]
    n = len(q)
    y = dict(zip(model.output_names, np.array(model.outputs(q, np.zeros(n), model.start_inputs,
                                                              model.nominal_parameters)).ravel()))
    assert np.abs(model.start_inputs).max() < 1e-6
    assert max(abs(y[name]) for name in model.outputs_of("deflection")) < 1e-12
    assert y["link[2].stretch"] > y["link[3].stretch"] > 0.0
    assert y["tip.z"] < -14.0


def test_lumped_mass_mid_span_sags_as_a_point_load():
    """A heavy mass at mid-span on a light cantilever: tip deflection
    P a^2 (3L - a) / (6 EI) with a = L/2 (beam tables), plus the beam's own
    uniform-load sag."""
    rho, EI, L, g, mass = 0.01, 5.0, 1.2, 9.81, 2.0
    model = single_link_arm("clamped-free", 6, rho=rho, EI=EI, L=L, gravity=(0.0, -g), lumped=[(0.5, mass)])
    a = L / 2
    expected = -(mass * g * a**2 * (3 * L - a) / (6 * EI) + rho * g * L**4 / (8 * EI))
    assert static_tip_deflection(model) == pytest.approx(expected, rel=5e-3)


def test_every_parameter_enters_the_graphs(arm_name):
    import casadi as ca

    model = example_model(arm_name)
    n = len(model.coordinates)
    q, qd = ca.SX.sym("q", n), ca.SX.sym("qd", n)
    p = ca.SX.sym("p", len(model.parameters))
    everything = ca.vertcat(
        ca.vec(model.mass_matrix(q, p)), model.bias(q, qd, p), ca.vec(model.input_matrix(q, p)),
        model.energy(q, qd, p), model.kinematic_outputs(q, qd, ca.SX.sym("qdd", n), p),  # envelope limits: y
    )
    dead = [name for k, name in enumerate(model.parameters) if not ca.depends_on(everything, p[k])]
    assert set(dead) <= unfelt_inertia(model.arm)


def unfelt_inertia(arm) -> set[str]:
    """Inertia entries no motion can feel: a spatial arm's first rigid link turns about a fixed axis a,
    so of its inertia tensor only a'I a counts (entries ij with a_i a_j = 0 cannot enter)."""
    if arm.kind != "spatial" or arm.links[0].kind != "rigid":
        return set()
    from flexfmu.dynamics.spatial.rotations import rotation_vector

    axis = rotation_vector(arm.links[0].joint.rotation).T @ np.array(arm.links[0].joint.axis)
    entries = {"xx": (0, 0), "yy": (1, 1), "zz": (2, 2), "xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}
    return {f"link[1].inertia.{name}" for name, (i, j) in entries.items() if abs(axis[i] * axis[j]) < 1e-12}


def test_yu_chen_highest_linearised_mode_near_1150_rad_s():
    """The issue's figure for paper 000's arm as Table 2 prints it (no motor
    rotors): a mode near 1,150 rad/s. The reflected rotor inertia of our
    example lowers it (heavier hubs)."""
    model = example_model("yu_chen_2dof")
    q0 = np.zeros(len(model.coordinates))
    q0[:2] = np.pi / 4, -np.pi / 4
    table_2 = model.parameter_vector({"joint[1].rotor_inertia": 0.0, "joint[2].rotor_inertia": 0.0})
    assert natural_frequencies(model, q0, p=table_2)[-1] == pytest.approx(1150, rel=0.03)
    assert natural_frequencies(model, q0)[-1] < 0.8 * natural_frequencies(model, q0, p=table_2)[-1]


def test_outputs_are_consistent_with_kinematics():
    """Tip velocity and acceleration outputs are the time derivatives of the
    tip position output along a simulated trajectory (finite differences)."""
    from flexfmu.harness.running.reference import simulate_reference

    model = example_model("subudhi_morris_2link")
    result = simulate_reference(model, 0.5, 1e-4, inputs=lambda t: np.array([0.2, -0.1]))
    t = result.time
    for axis in "xy":
        velocity = np.gradient(result[f"tip.{axis}"], t)
        acceleration = np.gradient(result[f"tip.v{axis}"], t)
        inner = slice(5, -5)
        assert np.abs(velocity - result[f"tip.v{axis}"])[inner].max() < 1e-3 * np.abs(result[f"tip.v{axis}"]).max()
        assert np.abs(acceleration - result[f"tip.a{axis}"])[inner].max() < 2e-2 * np.abs(result[f"tip.a{axis}"]).max()


@pytest.mark.parametrize("stiffening", [False, pytest.param(True, marks=pytest.mark.slow)])  # sympy: 10 s
def test_plain_sympy_lagrangian_agrees_with_the_model(stiffening):
    """A third, fully independent derivation (flexfmu/harness/reproductions/sympy_lagrangian.py,
    written from paper 000's setting with closed-form sine integrals, and
    with the foreshortening integrals done by sympy) gives the same M and h
    for a two-link pinned-pinned arm under gravity, with and without
    geometric stiffening."""
    import sympy as sp

    from benchmarks.derivation import chain
    from flexfmu.harness.reproductions.sympy_lagrangian import derive

    M_sym, h_sym = derive(2, stiffening=stiffening)
    symbols = sorted(M_sym.free_symbols | h_sym.free_symbols, key=str)
    model = flexfmu.build_model(chain(2, stiffening))
    p = conservative_parameters(model)
    rng = np.random.default_rng(8)
    q_names = ["theta1", "theta2", "f1_1", "f1_2", "f2_1", "f2_2"]
    evaluate = sp.lambdify(symbols, [M_sym, h_sym])
    for _ in range(5):
        q, qd = random_state(rng, model)
        values = dict(zip(q_names, q)) | dict(zip(["d" + name for name in q_names], qd))
        M_ref, h_ref = evaluate(*[values[str(s)] for s in symbols])
        np.testing.assert_allclose(np.array(model.mass_matrix(q, p)), np.array(M_ref, float), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(np.array(model.bias(q, qd, p)).ravel(), np.array(h_ref, float).ravel(),
                                   rtol=1e-10, atol=1e-12)


def test_user_shapes_written_with_a_caret_build_a_model():
    """docs/spec.md writes powers as ``xi^2``: what the spec accepts, the
    dynamics build (one parser for both)."""
    spec = {"name": "caret", "link": [{"kind": "flexible", "length": 0.5, "mass_per_length": 0.4, "EI": 1.5,
                                       "modes": {"family": "user", "frame": "tangent",
                                                 "shapes": ["xi^2", "xi^3 - xi^2"]}}]}
    caret = flexfmu.build_model(flexfmu.arm_from_dict(spec))
    spec["link"][0]["modes"]["shapes"] = ["xi**2", "xi**3 - xi**2"]
    power = flexfmu.build_model(flexfmu.arm_from_dict(spec))
    q = np.array([0.1, 0.02, -0.01])
    assert np.allclose(np.array(caret.mass_matrix(q, caret.nominal_parameters)),
                       np.array(power.mass_matrix(q, power.nominal_parameters)), rtol=1e-14, atol=0)
