"""The Delta's links as flexible bodies: exact without reduction, within 0.1 % of the full model's first eight
frequencies with the default Craig-Bampton reduction, and what the reduction keeps is data."""

from __future__ import annotations

import dataclasses

import casadi as ca
import numpy as np
import pytest

from flexfmu import build_model, load_arm
from flexfmu.dynamics.delta.assembly import LINKS, ElementEnergies, chain_frames, elastic_layout
from flexfmu.dynamics.delta.body_energies import BodyEnergies, chain_layout
from flexfmu.dynamics.delta.frequencies import natural_frequencies, parameter_values
from flexfmu.dynamics.delta.kinematics import DeltaKinematics, Dimensions, chain_frame, forward_kinematics
from flexfmu.dynamics.delta.reduction import VALUE_NAMES, Reduction, link_bases
from flexfmu.spec.errors import SpecError
from flexfmu.kinds import arm_from_dict

FULL = Reduction("none")
PAPER_POSE = (0.1, 0.0, 0.5)  # where paper 003 tabulates the first eight frequencies


@pytest.fixture(scope="module")
def arm():
    return load_arm("kuo_delta")


def with_elements(arm, **settings):
    return dataclasses.replace(arm, elements=dataclasses.replace(arm.elements, **settings))


def energies(arm, bodies: bool):
    """The energies of ``arm`` as (T, gravity, strain, axial) Functions of (q, qd): from the flexible bodies over
    the full nodal basis, or element by element (the reference)."""
    settings, values = arm.elements, parameter_values(arm)
    if bodies:
        bases = link_bases(settings, values, FULL)
        layout = chain_layout(bases, settings.approximation, settings.count)
        lengths = {link: values[f"{link}.length"] for link in LINKS}
        robot = BodyEnergies(layout, bases, lengths, settings.approximation, settings.count, values, True)
    else:
        layout = elastic_layout(settings.approximation, settings.count)
        robot = ElementEnergies(layout, values, True)
    n = 3 + layout.size
    q, qd = ca.SX.sym("q", n), ca.SX.sym("qd", n)
    T = robot.kinetic(q[:3], q[3:], qd[:3], qd[3:], q, qd)
    return [c.name for c in layout.records], ca.Function("energies", [q, qd], [T, *robot.potential(q[:3], q[3:])])


@pytest.mark.parametrize("approximation, count", [("linear-cubic", 1), ("linear-cubic", 3), ("cubic-quintic", 2)])
def test_flexible_bodies_over_the_full_basis_equal_the_element_energies(arm, approximation, count):
    """Invariants integrated once per link give the kinetic, gravity, strain and axial-load energies of the
    elements' Gauss points to round-off, at random poses, deformations and rates; the coordinates are the same."""
    arm = with_elements(arm, count=count, approximation=approximation)
    names, by_bodies = energies(arm, bodies=True)
    reference_names, by_elements = energies(arm, bodies=False)
    assert names == reference_names
    rng = np.random.default_rng(count)
    dims = Dimensions(arm.base_radius, arm.platform_radius, arm.upper.length, arm.lower.length)
    theta = DeltaKinematics(dims).inverse((0.05, 0.02, 0.48))
    for _ in range(3):
        q = np.concatenate([theta + 0.05 * rng.standard_normal(3), 1e-3 * rng.standard_normal(len(names))])
        qd = rng.standard_normal(len(q))
        got, expected = (np.array([float(v) for v in f(q, qd)]) for f in (by_bodies, by_elements))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14 * np.abs(expected).max())


@pytest.mark.parametrize("approximation, count", [("linear-cubic", 2), ("linear-cubic", 4), ("cubic-quintic", 2)])
def test_default_reduction_keeps_the_first_eight_frequencies_within_a_thousandth(arm, approximation, count):
    """Issue 21's accuracy target, at home and at paper 003's pose: the default cutoff keeps every link's
    first bending pair and drops the axial and torsion modes inside the links."""
    arm = with_elements(arm, count=count, approximation=approximation)
    for pose in (arm.home, PAPER_POSE):
        full = natural_frequencies(arm, pose, reduction=FULL)
        reduced = natural_frequencies(arm, pose)
        assert np.max(np.abs(reduced / full - 1)) < 1e-3
        assert not np.allclose(reduced, full, rtol=1e-7)  # something was reduced


@pytest.mark.parametrize("count", [2, 3])
def test_keeping_every_fixed_interface_mode_is_only_a_change_of_basis(arm, count):
    arm = with_elements(arm, count=count)
    full = natural_frequencies(arm, PAPER_POSE, count=30, reduction=FULL)
    everything = natural_frequencies(arm, PAPER_POSE, count=30, reduction=Reduction(cutoff=1e8))
    np.testing.assert_allclose(everything, full, rtol=1e-7)


def _bodies(arm, reduction):
    """(BodyEnergies, bases) of ``arm``'s links at nominal values over the basis ``reduction`` asks for."""
    settings, values = arm.elements, parameter_values(arm)
    bases = link_bases(settings, values, reduction)
    layout = chain_layout(bases, settings.approximation, settings.count)
    lengths = {link: values[f"{link}.length"] for link in LINKS}
    return BodyEnergies(layout, bases, lengths, settings.approximation, settings.count, values, True), bases


def _nodal_names(basis, chain: int) -> list[str]:
    """The full model's coordinate name of each column of its (permutation) basis ``basis``."""
    boundary = [f"{basis.link}[{chain}].{VALUE_NAMES[value]}[{node}]" for node, value in basis.boundary]
    return boundary + [name.format(i=chain) for name, _ in basis.interior]


def test_rayleigh_damping_is_the_same_whatever_basis_describes_the_links(arm):
    """A complete Craig-Bampton basis is a change of coordinates: q_full = F(q_cb), the lower link's inner
    nodal values following its joints (which turn with the motors) through the static constraint modes. The
    kinetic energy and the dissipation function must be the same functions of the motion in both. Damping the
    rates of the elastic coordinates alone was not (with the motors turning, the two bases share a link's
    strain rate out differently between the motor angles and the elastic coordinates): the full and the
    Craig-Bampton Delta then left 549 and 201 um of residual vibration after the same planned move, and 553
    and 226 um without mass-proportional damping, but agreed to 0.02 um without damping."""
    arm = with_elements(arm, count=2)
    full, full_bases = _bodies(arm, FULL)
    every, every_bases = _bodies(arm, Reduction(cutoff=1e8))
    n = 3 + every.layout.size
    q, qd = ca.SX.sym("q", n), ca.SX.sym("qd", n)
    names = ["theta[1]", "theta[2]", "theta[3]"] + [c.name for c in every.layout.records]
    symbol = dict(zip(names, ca.vertsplit(q)))
    position = forward_kinematics(q[:3], every.dims)
    platform, chains = every.split(q[3:])
    for i, local in enumerate(chains):
        xi = every.link_coordinates(chain_frames(chain_frame(i), q[i], position, every.dims), platform, local)
        for link in LINKS:
            nodal = ca.mtimes(ca.DM(every_bases[link].psi), xi[link])
            for name, column in zip(_nodal_names(full_bases[link], i + 1), full_bases[link].psi.T):
                symbol.setdefault(name, nodal[int(np.flatnonzero(column)[0])])
    full_names = ["theta[1]", "theta[2]", "theta[3]"] + [c.name for c in full.layout.records]
    q_full = ca.vertcat(*(symbol[name] for name in full_names))
    qd_full = ca.jtimes(q_full, q, qd)
    alpha, beta = 0.8, 1e-5

    def terms(robot, q, qd):
        return ca.vertcat(robot.kinetic(q[:3], q[3:], qd[:3], qd[3:], q, qd),
                          robot.dissipation(q[:3], q[3:], qd[:3], qd[3:], q, qd, alpha, beta))

    both = ca.Function("both", [q, qd], [terms(every, q, qd)])
    q_f, qd_f = ca.SX.sym("q_f", q_full.numel()), ca.SX.sym("qd_f", q_full.numel())
    mapped = ca.Function("mapped", [q, qd], [ca.Function("full", [q_f, qd_f], [terms(full, q_f, qd_f)])(
        q_full, qd_full)])
    rng = np.random.default_rng(7)
    dims = Dimensions(arm.base_radius, arm.platform_radius, arm.upper.length, arm.lower.length)
    theta = DeltaKinematics(dims).inverse((0.05, 0.02, 0.48))
    for _ in range(3):
        x = np.concatenate([theta + 0.05 * rng.standard_normal(3), 1e-4 * rng.standard_normal(n - 3)])
        v = rng.standard_normal(n)
        got, expected = np.array(mapped(x, v)).ravel(), np.array(both(x, v)).ravel()
        assert expected[1] > 0
        np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_every_mode_kept_holds_the_full_models_rest(arm):
    """A complete Craig-Bampton basis spans the full model's space, so its rest at the start pose is the full
    model's: the holding torques and the platform's sag agree. With an even element count a link's
    antisymmetric bending modes have no displacement at the middle node; scaled by that (round-off) they made
    the equilibrium's Newton iteration stop at once, at the undeformed pose with zero torques."""
    full = build_model(with_elements(arm, count=2, reduction="none"))
    every = build_model(with_elements(arm, count=2, cutoff=1e8))

    def platform(model):
        return np.asarray(model.start_state, float).ravel()[3:9]

    assert np.asarray(full.start_inputs).min() > 1.0  # the motors hold the platform up
    np.testing.assert_allclose(every.start_inputs, full.start_inputs, rtol=1e-9)
    np.testing.assert_allclose(platform(every), platform(full), rtol=1e-7, atol=1e-12)


def test_the_reduced_model_is_smaller_and_says_what_it_kept(arm):
    model = build_model(with_elements(arm, count=4))
    full = build_model(with_elements(arm, count=4, reduction="none"))
    assert len(model.coordinates) < len(full.coordinates) // 2
    summary = model.reduction
    assert summary.method == "craig-bampton"
    for body in summary.bodies:
        kept = [frequency for _, frequency, keep in body.modes if keep]
        dropped = [frequency for _, frequency, keep in body.modes if not keep]
        assert kept and max(kept) <= 1000.0 < min(dropped)
        assert {field for field, _, keep in body.modes if not keep} >= {"u", "phi"}  # axial and torsion go
    modes = [c.name for c in model.layout if ".mode[" in c.name]
    assert len(modes) == 3 * sum(keep for body in summary.bodies for _, _, keep in body.modes)


def test_the_compiled_dynamics_of_a_reduced_delta_equal_its_model(arm):
    """The C contract's assembly (templates per chain) and the Model's (one Lagrangian) give the same
    accelerations and the same stiffness and damping matrices for the stiff integrators."""
    model = build_model(with_elements(arm, count=2))
    dynamics = model.compiled
    p = model.nominal_parameters
    pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
    rng = np.random.default_rng(4)
    scale = np.array([0.01 if c.kind == "elastic" else 1.0 for c in model.state_layout] * 2)
    for _ in range(3):
        x = model.start_state + scale * rng.standard_normal(len(model.start_state))
        u = rng.standard_normal(3)
        got = np.array(dynamics.state_derivative(x, u, pc)).ravel()
        expected = np.array(model.state_derivative(x, u, p)).ravel()
        assert np.abs(got - expected).max() <= 1e-9 * np.abs(expected).max()
        _, _, K, D = (np.array(ca.DM(m)) for m in dynamics.mass_form(x, u, pc))
        K_model, D_model = (np.array(ca.DM(m)) for m in model.stiffness_at(x[:len(x) // 2], p))
        np.testing.assert_allclose(K, K_model, rtol=0, atol=1e-9 * np.abs(K_model).max())
        np.testing.assert_allclose(D, D_model, rtol=0, atol=1e-9 * np.abs(D_model).max())


@pytest.mark.parametrize("elements, message", [
    ({"reduction": "guyan"}, "elements.reduction"),
    ({"cutoff": -5.0}, "elements.cutoff"),
    ({"cutoff": 500.0, "modes": 2}, "cutoff or modes, not both"),
    ({"reduction": "none", "modes": 2}, "apply to reduction"),
    ({"modes": 2.5}, "elements.modes"),
])
def test_reduction_settings_are_checked_and_named(elements, message):
    import tomllib

    from flexfmu.data import resolve_arm

    data = tomllib.loads(resolve_arm("kuo_delta").read_text())
    data["elements"] = {**data["elements"], **elements}
    with pytest.raises(SpecError, match=message):
        arm_from_dict(data)
