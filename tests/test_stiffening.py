"""Geometric stiffening against facts not derived from the code: rotating-beam
frequencies from the literature, a spun tip mass and a standing column
against closed-form beam-column results, and both derivations, the
articulated-body passes, energy and power on stiffened example arms."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import flexfmu
from flexfmu.harness.reproductions.spinup import beam_variant
from tests.conftest import example_model
from tests.test_dynamics import conservative_parameters, motor_rate, random_state

STIFFENED = ("yu_chen_2dof", "subudhi_morris_2link", "lin_lewis_rfr")


def stiffened_model(name: str, method: str = "closed_form"):
    """The example arm ``name`` with geometric stiffening on every flexible link."""
    return flexfmu.build_model(beam_variant(flexfmu.load_arm(name), stiffening=True), method)


def spun_beam(modes: int = 8, stiffening: bool = True, rho=1.0, EI=1.0, L=1.0, payload=0.0, family="clamped-free",
              gravity=(0.0, 0.0), distal_mass=None):
    """A flexible link on a prescribed hub; optionally a payload, or a point-like rigid link on a second
    prescribed joint carrying ``distal_mass``."""
    links = [{"kind": "flexible", "length": L, "mass_per_length": rho, "EI": EI, "geometric_stiffening": stiffening,
              "modes": {"family": family, "count": modes}, "joint": {"prescribed": True}}]
    if distal_mass is not None:
        links.append({"kind": "rigid", "length": 1e-3, "mass": distal_mass, "com": [0.0, 0.0], "inertia": 1e-15,
                      "joint": {"prescribed": True}})
    spec = {"name": "spun", "gravity": list(gravity), "link": links, "payload": {"mass": payload}}
    return flexfmu.build_model(flexfmu.arm_from_dict(spec))


def frequencies_about(model, u) -> np.ndarray:
    """Frequencies (rad/s, ascending) of the state equations linearised at x = 0 under the inputs ``u``;
    an unstable pair (eigenvalues +-s, real) shows as -s."""
    n = 2 * len(model.states)
    x = ca.MX.sym("x", n)
    A = np.array(ca.Function("A", [x], [ca.jacobian(model.state_derivative(x, u, model.nominal_parameters), x)])(
        np.zeros(n)))
    squares = np.sort(-(np.linalg.eigvals(A) ** 2).real)[::2]  # +-i w -> w^2, +-s -> -s^2
    return np.sign(squares) * np.sqrt(np.abs(squares))


# First and second flapwise frequencies of a uniform clamped-free beam rotating about its root
# (hub radius 0), lambda = omega sqrt(rho L^4 / EI) against T = Omega sqrt(rho L^4 / EI):
# Wright, Smith, Thompson and Wittrick (1982), J. Appl. Mech. 49, 197-202, Table 1
# (also Hodges and Rutkowski 1981; Banerjee 2000). In-plane (chordwise) bending, flexfmu's plane,
# has lambda_in^2 = lambda_flap^2 - T^2.
FLAPWISE = {0: (3.5160, 22.0345), 1: (3.6816, 22.1810), 2: (4.1373, 22.6149), 3: (4.7973, 23.3203),
            4: (5.5850, 24.2733), 5: (6.4495, 25.4461), 10: (11.2023, 33.6418)}


@pytest.mark.parametrize("rate", sorted(FLAPWISE))
def test_rotating_beam_frequencies_match_the_published_values(rate):
    """A clamped-free link (8 modes) on a hub prescribed to turn at a constant rate: the linearised modal
    frequencies are the published rotating-beam frequencies (to 2e-4, the tables' 5 digits and the Ritz
    error); without stiffening they are sqrt(lambda_0^2 - T^2) instead, unstable once T > 3.516."""
    u = [0.0, float(rate), 0.0]
    lam = frequencies_about(spun_beam(8), u)
    expected = [np.sqrt(flap**2 - rate**2) for flap in FLAPWISE[rate]]
    np.testing.assert_allclose(lam[:2], expected, rtol=2e-4)
    unstiffened = frequencies_about(spun_beam(8, stiffening=False), u)
    first = 1.8751041**4 - rate**2  # (beta_1 L)^4 of the cantilever
    assert unstiffened[0] == pytest.approx(np.sign(first) * np.sqrt(abs(first)), rel=1e-6)


def test_a_spun_tip_mass_stiffens_its_light_link_as_a_beam_column():
    """A tip mass M on a nearly massless cantilever spun at Omega: the tension N = M Omega^2 L makes the
    tip stiffness that of a beam-column, k = N / (L - tanh(a L) / a), a = sqrt(N / EI), so the in-plane
    frequency is sqrt(k / M - Omega^2) (the bare beam alone: 3 EI / L^3 - M Omega^2 < 0, unstable).
    The same through a payload of the link and through a distal body on a held joint (the tip's
    foreshortening carries its load)."""
    M, L, EI, rate = 1.0, 1.0, 1.0, 3.0
    N = M * rate**2 * L
    a = np.sqrt(N / EI)
    expected = np.sqrt(N / (L - np.tanh(a * L) / a) / M - rate**2)
    light = dict(rho=1e-6, EI=EI, L=L, family="clamped-mass")
    payload = frequencies_about(spun_beam(6, payload=M, **light), [0.0, rate, 0.0])
    distal = frequencies_about(spun_beam(6, distal_mass=M, **light), [0.0, rate, 0.0, 0.0, 0.0, 0.0])
    assert payload[0] == pytest.approx(expected, rel=1e-3)
    assert distal[0] == pytest.approx(payload[0], rel=1e-9)
    assert frequencies_about(spun_beam(6, payload=M, stiffening=False, **light), [0.0, rate, 0.0])[0] < 0


def test_a_standing_column_buckles_under_its_own_weight_at_greenhill_load():
    """A clamped-free column held upright (prescribed hub at 90 deg) under gravity: its first frequency
    falls to zero at the self-weight rho g L^3 / EI = 7.837 (Greenhill); without stiffening gravity
    does not soften it at all."""
    def first_squared(weight, stiffening=True):
        first = frequencies_about(spun_beam(6, stiffening, rho=weight, gravity=(0.0, -1.0)), [np.pi / 2, 0.0, 0.0])[0]
        return np.sign(first) * first**2

    # rho omega^2 = (stiffness - weight x geometric stiffness) / modal mass is linear in the weight rho
    low, high = 7.5, 8.2
    stiffness = [w * first_squared(w) for w in (low, high)]
    critical = low - stiffness[0] * (high - low) / (stiffness[1] - stiffness[0])
    assert critical == pytest.approx(7.8373, rel=2e-3)
    assert first_squared(high, stiffening=False) == pytest.approx(1.8751041**4 / high, rel=1e-6)


@pytest.mark.parametrize("name", STIFFENED)
def test_stiffened_arms_closed_form_energy_and_passes_agree(name):
    """With stiffening on every flexible link (lumped masses, payloads, chord and tangent frames, flexible
    joints, rigid links between): closed form = energy to 1e-10, the articulated-body passes = the
    Model's solve to 1e-9, at random states and parameters."""
    closed, energy = stiffened_model(name), stiffened_model(name, "energy")
    dynamics = closed.compiled
    rng = np.random.default_rng(11)
    for _ in range(20):
        p = closed.nominal_parameters * rng.uniform(0.8, 1.25, size=closed.nominal_parameters.size)
        q, qd = random_state(rng, closed)
        M1, M2 = np.array(closed.mass_matrix(q, p)), np.array(energy.mass_matrix(q, p))
        h1, h2 = np.array(closed.bias(q, qd, p)), np.array(energy.bias(q, qd, p))
        assert np.abs(M1 - M2).max() <= 1e-10 * np.abs(M1).max()
        assert np.abs(h1 - h2).max() <= 1e-10 * np.abs(h1).max()
        u = rng.normal(size=len(closed.inputs))
        pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
        fast = np.array(dynamics.state_derivative(np.concatenate([q, qd]), u, pc)).ravel()
        slow = np.array(closed.state_derivative(np.concatenate([q, qd]), u, p)).ravel()
        assert np.abs(fast - slow).max() <= 1e-9 * np.abs(slow).max()


def test_stiffening_changes_the_dynamics_it_is_said_to():
    """The stiffened and plain models of the same arm differ, by the size of the foreshortening, so the
    agreements above are not agreements of two unstiffened models."""
    plain, stiff = example_model("subudhi_morris_2link"), stiffened_model("subudhi_morris_2link")
    rng = np.random.default_rng(12)
    q, qd = random_state(rng, plain)
    p = plain.nominal_parameters
    difference = np.abs(np.array(plain.bias(q, qd, p)) - np.array(stiff.bias(q, qd, p))).max()
    assert difference > 1e-4 * np.abs(np.array(plain.bias(q, qd, p))).max()


@pytest.mark.parametrize("name", [pytest.param("yu_chen_2dof", marks=pytest.mark.slow), "cantilever"])  # 10 s, 1 s
def test_stiffened_arms_keep_energy_and_its_balance(name):
    """No damping or input: total energy constant to 1e-8 over 3 s (CVODES Adams at 1e-13); with
    torques, dE/dt equals their power on the motor-side rates (the second-order energy is a true
    Lagrangian of the equations). Paper 000's arm under gravity and the spin-up beam on a free hub.
    Not from the random starts of the unstiffened energy test on paper 004's and 002's arms: there
    the joint springs start wound by up to 1.8 rad, the soft links bend by several lengths and buckle
    under the axial load, beyond any second-order model (docs/dynamics.md, "range")."""
    from flexfmu.harness.running.reference import simulate_reference

    model = stiffened_model(name)
    assert all(link.geometric_stiffening for link in model.arm.links if link.kind == "flexible")
    p = conservative_parameters(model)
    rng = np.random.default_rng(6)
    q0, qd0 = random_state(rng, model, spread=0.5)
    result = simulate_reference(model, 3.0, 0.01, x0=np.concatenate([q0, qd0]), p=p, rtol=1e-13, atol=1e-14,
                                method="adams")
    n = len(model.coordinates)
    energy = np.array([np.sum(np.array(model.energy(x[:n], x[n:2 * n], p))) for x in result.values])
    assert np.abs(energy - energy[0]).max() <= 1e-8 * max(abs(energy[0]), 1e-3)

    qs, qds = ca.SX.sym("q", n), ca.SX.sym("qd", n)
    total = ca.sum1(model.energy(qs, qds, p))
    gradients = ca.Function("dE", [qs, qds], [ca.gradient(total, qs), ca.gradient(total, qds)])
    for _ in range(5):
        q, qd = random_state(rng, model)
        u = rng.normal(size=len(model.inputs))
        qdd = np.array(model.forward_dynamics(q, qd, u, p)).ravel()
        dE_dq, dE_dqd = (np.array(g).ravel() for g in gradients(q, qd))
        power = float(np.dot(u, [motor_rate(model, model.arm, j, qd) for j in range(len(u))]))
        assert float(dE_dq @ qd + dE_dqd @ qdd) == pytest.approx(power, rel=1e-9, abs=1e-12)
