"""Physics of the spatial Model, checked against what was not derived from it: pinocchio, the
planar Model, analytic beam and rod frequencies, Southwell's rotating-beam coefficient, energy."""

from __future__ import annotations

from functools import lru_cache

import casadi as ca
import numpy as np
import pytest

import flexfmu
from flexfmu.dynamics.linear import linearise, natural_frequencies
from flexfmu.dynamics.spatial.rotations import rotation_vector
from flexfmu.modes import mode_set
from flexfmu.spec.arm import Modes
from tests.conftest import EXAMPLE_ARMS
from tests.test_dynamics import conservative_parameters

# modal coordinates and rates of random states (m, rad): slopes up to about 0.1 rad; the second-order
# kinetic energy loses positive definiteness at slopes of several tenths (docs/dynamics.md)
RNG_STATE_SCALE = 0.01


def physical_inertia(rng, scale=0.2) -> list[list[float]]:
    """The inertia tensor of a random cloud of point masses: physical by construction."""
    points = rng.normal(size=(5, 3)) * scale
    return sum(0.3 * (r @ r * np.eye(3) - np.outer(r, r)) for r in points).tolist()


def modes(count, family="clamped-free", **extra):
    return {"family": family, "count": count, **extra}


def featured_arm(stiffening=True, gravity=(0.3, -0.2, -9.81), damping=0.02) -> dict:
    """A spatial arm with a bit of everything: a rigid shoulder with a lumped mass; a clamped link that
    bends both ways, twists and stretches, on a flexible joint about a tilted axis with an offset and a
    fixed rotation; a pinned-pinned (chord-framed) link on a rigid geared joint, with a lumped mass;
    a rigid wrist rolling about its axis; a payload with a full inertia tensor."""
    rng = np.random.default_rng(5)
    return {"kind": "spatial", "name": "featured", "gravity": list(gravity), "link": [
        {"kind": "rigid", "length": 0.4, "mass": 2.0, "com": [0.2, 0.02, -0.01],
         "inertia": physical_inertia(rng), "joint": {"axis": [0, 0, 1], "rotation": [0, -np.pi / 2, 0],
                                                     "rotor_inertia": 1e-3, "gear_ratio": 20.0}},
        {"kind": "flexible", "length": 0.9, "mass_per_length": 0.8, "polar_inertia_per_length": 3e-3,
         "geometric_stiffening": stiffening,
         "bending_y": {"EI": 40.0, "modes": modes(2, damping_ratio=damping)},
         "bending_z": {"EI": 25.0, "modes": modes(1, damping_ratio=damping)},
         "torsion": {"GJ": 20.0, "modes": modes(1, damping_ratio=damping)},
         "axial": {"EA": 4e4, "modes": modes(1, damping_coefficient=damping)},
         "joint": {"axis": [0.2, 0.1, 1.0], "offset": [0.0, 0.03, 0.1], "rotation": [0.1, 0.0, 0.3],
                   "kind": "flexible", "stiffness": 300.0, "spring_damping": damping, "rotor_inertia": 2e-3,
                   "gear_ratio": 5.0}},
        {"kind": "flexible", "length": 0.7, "mass_per_length": 0.5, "polar_inertia_per_length": 2e-3,
         "geometric_stiffening": stiffening,
         "bending_y": {"EI": 15.0, "modes": modes(2, "pinned-pinned", damping_ratio=damping)},
         "bending_z": {"EI": 18.0, "modes": modes(1, "pinned-pinned", damping_ratio=damping)},
         "torsion": {"GJ": 12.0, "modes": modes(1, damping_ratio=damping)},
         "joint": {"axis": [0, 1, 0], "rotor_inertia": 5e-4, "gear_ratio": 10.0, "viscous_friction": damping}},
        {"kind": "rigid", "length": 0.15, "mass": 0.4, "com": [0.07, 0.0, 0.01], "inertia": physical_inertia(rng, 0.05),
         "joint": {"axis": [1, 0, 0], "offset": [0.02, 0.0, 0.0], "rotor_inertia": 1e-4, "gear_ratio": 8.0}},
    ], "lumped_mass": [
        {"link": 1, "position": 0.5, "mass": 0.3, "inertia": physical_inertia(rng, 0.05)},
        {"link": 3, "position": 0.6, "mass": 0.2, "inertia": physical_inertia(rng, 0.05)},
    ], "payload": {"mass": 0.25, "inertia": physical_inertia(rng, 0.05)}}


@lru_cache(maxsize=None)
def featured_model(stiffening=True, method="closed_form"):
    return flexfmu.build_model(flexfmu.arm_from_dict(featured_arm(stiffening)), method)


def random_state(rng, model, spread=1.0):
    scale = np.array([RNG_STATE_SCALE if c.kind == "modal" else 1.0 for c in model.layout])
    n = len(model.coordinates)
    return rng.normal(size=n) * spread * scale, rng.normal(size=n) * scale


def relative(a, b) -> float:
    """Largest difference of ``a`` and ``b`` (arrays, DMs; any shapes of the same size) relative to the
    largest entry of ``b``."""
    a, b = np.array(a, dtype=float).ravel(), np.array(b, dtype=float).ravel()
    return float(np.abs(a - b).max() / np.abs(b).max())


# ---------------------------------------------------------------------------- two derivations

@pytest.mark.parametrize("stiffening", [True, False])
def test_closed_form_and_energy_derivations_agree(stiffening):
    """M and h of the recursive body equations equal those of the Lagrangian by AD, at random states and
    random parameters (every entry scaled by 0.8..1.25)."""
    closed, energy = featured_model(stiffening), featured_model(stiffening, "energy")
    rng = np.random.default_rng(1)
    for _ in range(20):
        p = closed.nominal_parameters * rng.uniform(0.8, 1.25, size=closed.nominal_parameters.size)
        q, qd = random_state(rng, closed)
        assert relative(closed.mass_matrix(q, p), energy.mass_matrix(q, p)) < 1e-12
        assert relative(closed.bias(q, qd, p), energy.bias(q, qd, p)) < 1e-12


def test_stiffening_changes_the_dynamics():
    """The foreshortening terms are there: with stiffening on, h differs at a deflected, spinning state."""
    on, off = featured_model(True), featured_model(False)
    rng = np.random.default_rng(2)
    q, qd = random_state(rng, on)
    assert relative(on.bias(q, qd, on.nominal_parameters), off.bias(q, qd, off.nominal_parameters)) > 1e-4


# ---------------------------------------------------------------------------- planar limit

def as_spatial(arm) -> dict:
    """A planar example arm written as a spatial one: every joint about z, bending along y only,
    scalar inertias about z (as planar laminae: I/2, I/2, I), no geometric stiffening."""
    def tensor(inertia):
        return [[inertia / 2, 0, 0], [0, inertia / 2, 0], [0, 0, inertia]]

    def joint(j):
        out = {"kind": j.kind, "rotor_inertia": j.rotor_inertia, "gear_ratio": j.gear_ratio,
               "viscous_friction": j.viscous_friction, "coulomb_friction": j.coulomb_friction,
               "coulomb_velocity": j.coulomb_velocity}
        if j.kind == "flexible":
            out.update(stiffness=j.stiffness, spring_damping=j.spring_damping)
        return out

    links = []
    for link in arm.links:
        if link.kind == "rigid":
            links.append({"kind": "rigid", "length": link.length, "mass": link.mass, "com": [*link.com, 0.0],
                          "inertia": tensor(link.inertia), "joint": joint(link.joint)})
            continue
        m = link.modes
        shape = {"family": m.family, "count": m.count,
                 ("damping_ratio" if m.damping_kind == "ratio" else "damping_coefficient"): list(m.damping)}
        if m.family == "user":
            shape.update(shapes=list(m.shapes), frame=m.frame)
        for key in ("tip_mass", "tip_inertia"):
            if getattr(m, key) is not None:
                shape[key] = getattr(m, key)
        links.append({"kind": "flexible", "length": link.length, "mass_per_length": link.mass_per_length,
                      "geometric_stiffening": getattr(link, "geometric_stiffening", False),
                      "bending_y": {"EI": link.EI, "modes": shape}, "joint": joint(link.joint)})
    return {"kind": "spatial", "name": arm.name, "gravity": [*arm.gravity, 0.0], "link": links,
            "lumped_mass": [{"link": m.link, "position": m.position, "mass": m.mass, "inertia": tensor(m.inertia)}
                            for m in arm.lumped_masses],
            "payload": {"mass": arm.payload.mass, "inertia": tensor(arm.payload.inertia)}}


PLANAR_ARMS = [name for name in EXAMPLE_ARMS if flexfmu.load_arm(name).kind == "planar"]


@pytest.mark.parametrize("name", PLANAR_ARMS)
def test_a_planar_arm_written_as_a_spatial_one_gives_the_planar_model(name):
    """Same q, and M, h and B equal to round-off at random states (the planar chain is an independent
    implementation: world-frame angles, its own templates and energy)."""
    planar_arm = flexfmu.load_arm(name)
    planar = flexfmu.build_model(planar_arm)
    spatial = flexfmu.build_model(flexfmu.arm_from_dict(as_spatial(planar_arm)))
    assert spatial.coordinates == planar.coordinates
    rng = np.random.default_rng(3)
    n, pp, ps = len(planar.coordinates), planar.nominal_parameters, spatial.nominal_parameters
    for _ in range(20):
        q, qd = rng.normal(size=n), rng.normal(size=n)
        assert relative(spatial.mass_matrix(q, ps), planar.mass_matrix(q, pp)) < 1e-13
        assert relative(spatial.bias(q, qd, ps), planar.bias(q, qd, pp)) < 1e-13
        assert np.abs(np.array(spatial.input_matrix(q, ps)) - np.array(planar.input_matrix(q, pp))).max() < 1e-13


# ---------------------------------------------------------------------------- rigid limit: pinocchio

def random_rigid_arm(rng, links=4) -> dict:
    chain = [{"kind": "rigid", "length": float(rng.uniform(0.0, 0.8)), "mass": float(rng.uniform(0.5, 3.0)),
              "com": (rng.normal(size=3) * 0.2).tolist(), "inertia": physical_inertia(rng),
              "joint": {"axis": rng.normal(size=3).tolist(), "offset": (rng.normal(size=3) * 0.2).tolist(),
                        "rotation": rng.normal(size=3).tolist(), "rotor_inertia": float(rng.uniform(0.0, 0.01)),
                        "gear_ratio": float(rng.uniform(1.0, 5.0))}} for _ in range(links)]
    return {"kind": "spatial", "name": "rigid", "gravity": (rng.normal(size=3) * 5).tolist(), "link": chain,
            "lumped_mass": [{"link": 2, "position": 0.3, "mass": 0.5, "inertia": physical_inertia(rng)}],
            "payload": {"mass": 0.7, "inertia": physical_inertia(rng)}}


def pinocchio_model(arm):
    """The same rigid chain in pinocchio: joint i placed in link i-1's frame at (L, 0, 0) + offset with
    the fixed rotation, revolving about the axis in its own frame; bodies, lumped masses and the payload
    appended to their joints; reflected rotor inertias as armature."""
    pin = pytest.importorskip("pinocchio", reason="pinocchio (pip install pin) is the rigid-body reference")
    model = pin.Model()
    model.gravity = pin.Motion(np.array(arm.gravity), np.zeros(3))
    parent, previous = 0, 0.0
    for i, link in enumerate(arm.links):
        R = rotation_vector(link.joint.rotation)
        placement = pin.SE3(R, np.array([previous, 0.0, 0.0]) + np.array(link.joint.offset))
        joint = model.addJoint(parent, pin.JointModelRevoluteUnaligned(R.T @ np.array(link.joint.axis)), placement,
                               f"joint{i + 1}")
        model.appendBodyToJoint(joint, pin.Inertia(link.mass, np.array(link.com), np.array(link.inertia)),
                                pin.SE3.Identity())
        for lumped in arm.lumped_masses:
            if lumped.link == i + 1:
                model.appendBodyToJoint(joint, pin.Inertia(lumped.mass, np.array([lumped.position * link.length, 0, 0]),
                                                           np.array(lumped.inertia)), pin.SE3.Identity())
        model.armature[i] = link.joint.gear_ratio**2 * link.joint.rotor_inertia
        parent, previous = joint, link.length
    model.appendBodyToJoint(parent, pin.Inertia(arm.payload.mass, np.array([previous, 0.0, 0.0]),
                                                np.array(arm.payload.inertia)), pin.SE3.Identity())
    return pin, model


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_all_rigid_arms_match_pinocchio(seed):
    """Random rigid chains (random axes, offsets, fixed rotations, masses, centres of mass, full inertia
    tensors, lumped masses, payload, rotor inertias, gravity): M and h equal pinocchio's crba and
    nonLinearEffects to 1e-10 relative at random states."""
    rng = np.random.default_rng(seed)
    arm = flexfmu.arm_from_dict(random_rigid_arm(rng))
    model = flexfmu.build_model(arm)
    pin, reference = pinocchio_model(arm)
    data = reference.createData()
    n, p = len(model.coordinates), model.nominal_parameters
    for _ in range(20):
        q, v = rng.uniform(-np.pi, np.pi, n), rng.normal(size=n) * 2
        M = pin.crba(reference, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.nonLinearEffects(reference, data, q, v)
        assert relative(model.mass_matrix(q, p), M) < 1e-10
        assert relative(np.array(model.bias(q, v, p)).ravel(), h) < 1e-10


# ---------------------------------------------------------------------------- clamped link frequencies

def test_a_clamped_link_with_the_joint_locked_has_the_analytic_frequencies():
    """Bending along y and along z (different EI), torsion and stretch of one clamped link: the
    cantilever's beta_k^2 sqrt(EI / (rho A L^4)) in both planes, the rod's (2k-1) pi/2 sqrt(GJ / (rho Ip)) / L
    and (2k-1) pi/2 sqrt(EA / (rho A)) / L."""
    L, rho, polar, EIy, EIz, GJ, EA = 1.3, 0.7, 2e-3, 30.0, 12.0, 9.0, 2e3
    arm = flexfmu.arm_from_dict({"kind": "spatial", "name": "clamped", "link": [{
        "kind": "flexible", "length": L, "mass_per_length": rho, "polar_inertia_per_length": polar,
        "bending_y": {"EI": EIy, "modes": modes(3)}, "bending_z": {"EI": EIz, "modes": modes(3)},
        "torsion": {"GJ": GJ, "modes": modes(2)}, "axial": {"EA": EA, "modes": modes(2)},
        "joint": {"axis": [0.0, 1.0, 1.0]}}]})
    omega = natural_frequencies(flexfmu.build_model(arm), locked=["theta[1]"])
    betas = np.array([1.8751040687, 4.6940911330, 7.8547574382])  # cantilever eigenvalues beta_k L
    rods = (2 * np.arange(1, 3) - 1) * np.pi / 2
    expected = np.concatenate([betas**2 * np.sqrt(EIy / (rho * L**4)), betas**2 * np.sqrt(EIz / (rho * L**4)),
                               rods * np.sqrt(GJ / polar) / L, rods * np.sqrt(EA / rho) / L])
    np.testing.assert_allclose(omega, np.sort(expected), rtol=1e-7)


def test_a_spinning_beam_stiffens_by_southwells_coefficient():
    """A cantilever spun about z at a held rate W: flapwise bending (along z) stiffens to
    w^2 = w0^2 + 1.1933 W^2 and in-plane bending (along y) to w0^2 + (1.1933 - 1) W^2, with 1.1933 the
    Southwell coefficient of the first cantilever mode; without the foreshortening, flapwise bending
    would not stiffen at all and in-plane bending would soften."""
    L, rho, EI, spin = 2.0, 0.5, 3.0, 4.0

    def frequencies(stiffening):
        arm = flexfmu.arm_from_dict({"kind": "spatial", "name": "spin", "link": [{
            "kind": "flexible", "length": L, "mass_per_length": rho, "geometric_stiffening": stiffening,
            "bending_y": {"EI": EI, "modes": modes(1)}, "bending_z": {"EI": EI, "modes": modes(1)}}]})
        model = flexfmu.build_model(arm)
        n = len(model.coordinates)
        q, qd = ca.SX.sym("q", n), ca.SX.sym("qd", n)
        h = model.bias(q, qd, model.nominal_parameters)
        spinning = np.array([spin, 0.0, 0.0])
        K = np.array(ca.Function("K", [q, qd], [ca.jacobian(h, q)])(np.zeros(n), spinning))[1:, 1:]
        gyroscopic = np.array(ca.Function("D", [q, qd], [ca.jacobian(h, qd)])(np.zeros(n), spinning))[1:, 1:]
        assert np.abs(gyroscopic).max() < 1e-12  # spin about z couples neither plane to the other
        M = np.array(model.mass_matrix(np.zeros(n), model.nominal_parameters))[1:, 1:]
        return np.diag(K) / np.diag(M)  # squared frequencies of in-plane and flapwise bending

    w0 = 1.8751040687**2 * np.sqrt(EI / (rho * L**4))
    in_plane, flapwise = frequencies(True)
    assert flapwise == pytest.approx(w0**2 + 1.1933 * spin**2, rel=5e-5)  # the coefficient to +-5e-5
    assert in_plane == pytest.approx(w0**2 + 0.1933 * spin**2, rel=2e-4)
    in_plane, flapwise = frequencies(False)
    assert flapwise == pytest.approx(w0**2, rel=1e-9)
    assert in_plane == pytest.approx(w0**2 - spin**2, rel=1e-9) and in_plane < 0  # above w0: unstable


# ---------------------------------------------------------------------------- energy

def soft_arm() -> dict:
    """A two-link spatial arm with slow modes (below 250 rad/s), so that a tight reference run is quick, and
    stiff enough that gravity bends it by under 1 % of its length (the second-order model's range): a
    rigid yawing shoulder and a link pitching about y on a flexible joint, bending both ways with geometric
    stiffening, twisting, with a lumped mass and a payload with a full inertia tensor."""
    rng = np.random.default_rng(21)
    return {"kind": "spatial", "name": "soft", "gravity": [0.5, 0.0, -9.81], "link": [
        {"kind": "rigid", "length": 0.3, "mass": 1.5, "com": [0.15, 0.01, 0.0], "inertia": physical_inertia(rng),
         "joint": {"axis": [0, 0, 1], "rotor_inertia": 1e-3, "gear_ratio": 10.0}},
        {"kind": "flexible", "length": 1.0, "mass_per_length": 1.0, "polar_inertia_per_length": 0.01,
         "bending_y": {"EI": 150.0, "modes": modes(1)}, "bending_z": {"EI": 200.0, "modes": modes(1)},
         "torsion": {"GJ": 2.0, "modes": modes(1)},
         "joint": {"axis": [0, 1, 0], "offset": [0.0, 0.0, 0.05], "kind": "flexible", "stiffness": 40.0,
                   "rotor_inertia": 2e-3, "gear_ratio": 5.0}}],
        "lumped_mass": [{"link": 2, "position": 0.5, "mass": 0.2, "inertia": physical_inertia(rng, 0.05)}],
        "payload": {"mass": 0.3, "inertia": physical_inertia(rng, 0.05)}}


@pytest.mark.slow
def test_energy_is_conserved_without_damping_or_input():
    """10 s of free motion under gravity with stiffening on, no damping, friction or input: total energy
    constant to 1e-8 relative (CVODES Adams, tight tolerances)."""
    from flexfmu.harness.running.reference import simulate_reference

    model = flexfmu.build_model(flexfmu.arm_from_dict(soft_arm()))
    assert max(natural_frequencies(model)) < 250.0
    p = conservative_parameters(model)
    rng = np.random.default_rng(6)
    q0, qd0 = random_state(rng, model, spread=0.5)
    for c, coordinate in enumerate(model.layout):  # joint springs relaxed: deflections stay in the model's range
        if coordinate.kind == "rotor":
            q0[c] = q0[model.coordinates.index(f"theta[{coordinate.link}]")]
    result = simulate_reference(model, 10.0, 0.01, x0=np.concatenate([q0, qd0]), p=p, rtol=1e-13, atol=1e-14,
                                method="adams")
    n = len(model.coordinates)
    states = result.values[:, :2 * n]
    energies = np.array([np.array(model.energy(x[:n], x[n:], p)).ravel() for x in states])
    total = energies.sum(axis=1)
    scale = max(abs(total[0]), energies[:, 0].max())
    assert np.abs(total - total[0]).max() <= 1e-8 * scale
    assert energies[:, 0].max() > 0.1 * scale  # it does move


def motor_rates(model, arm, qd) -> np.ndarray:
    """Rate of each joint's motor-side angle, from the spec and the mode shapes alone: the rotor rate of a
    flexible joint; else theta' plus the link's root rotation rate about its joint axis minus the parent's
    tip-tangent rotation rate (chord-framed bending) about the same axis."""
    def modal_rates(i, kind):
        link, first = arm.links[i], 1
        for other in ("bending_y", "bending_z", "torsion", "axial"):
            if other == kind:
                break
            first += link.count(other)
        return np.array([qd[model.coordinates.index(f"f[{i + 1},{first + k}]")] for k in range(link.count(kind))])

    def rotation_rate(i, where):  # (0, -w', v') rates at xi = where, for chord planes only when at the tip
        link, out = arm.links[i], np.zeros(3)
        if link.kind != "flexible":
            return out
        for kind, row, sign in (("bending_y", 2, 1.0), ("bending_z", 1, -1.0)):
            d = link.deformation(kind)
            if d is None or (where == 1.0 and d.modes.family != "pinned-pinned"):
                continue
            shapes = mode_set(Modes(d.modes.family, d.modes.count))
            out[row] += sign * np.dot(np.array(shapes.slopes(where)) / link.length, modal_rates(i, kind))
        return out

    rates = []
    for j, link in enumerate(arm.links):
        if link.joint.kind == "flexible":
            rates.append(qd[model.coordinates.index(f"alpha[{j + 1}]")])
            continue
        axis = np.array(link.joint.axis)
        own_axis = rotation_vector(link.joint.rotation).T @ axis
        rate = qd[model.coordinates.index(f"theta[{j + 1}]")] + own_axis @ rotation_rate(j, 0.0)
        if j > 0:
            rate -= axis @ rotation_rate(j - 1, 1.0)
        rates.append(rate)
    return np.array(rates)


@pytest.mark.parametrize("name", ["featured", "canadarm2_5link"])
def test_energy_rate_equals_the_power_of_the_joint_torques(name):
    """dE/dt along the motion equals sum tau_j times the motor-side rate (computed independently), which
    checks B (virtual work) on chord- and tangent-framed links, rigid and flexible joints."""
    if name == "featured":
        model, arm = featured_model(True), flexfmu.arm_from_dict(featured_arm(True))
    else:
        arm = flexfmu.load_arm(name)
        model = flexfmu.build_model(arm)
    p = conservative_parameters(model)
    n, nu = len(model.coordinates), len(model.inputs)
    q, qd = ca.SX.sym("q", n), ca.SX.sym("qd", n)
    total = ca.sum1(model.energy(q, qd, p))
    gradients = ca.Function("dE", [q, qd], [ca.gradient(total, q), ca.gradient(total, qd)])
    rng = np.random.default_rng(4)
    for _ in range(10):
        q0, qd0 = random_state(rng, model)
        u = rng.normal(size=nu) * np.abs(np.array(model.bias(q0, qd0, p))).max()  # as large as gravity's torques
        qdd = np.array(model.forward_dynamics(q0, qd0, u, p)).ravel()
        dE_dq, dE_dqd = (np.array(g).ravel() for g in gradients(q0, qd0))
        power = float(u @ motor_rates(model, arm, qd0))
        scale = np.abs(dE_dq * qd0).sum() + np.abs(dE_dqd * qdd).sum()  # the terms that cancel
        assert abs(float(dE_dq @ qd0 + dE_dqd @ qdd) - power) <= 1e-11 * scale
        assert abs(power) > 1e-6 * scale


# ---------------------------------------------------------------------------- C contract, outputs

@pytest.mark.parametrize("stiffening", [True, False])
def test_articulated_passes_newton_correction_and_directional_derivatives(stiffening):
    """The O(N) passes against the Model's M, h and LDL; the Newton correction against the dense
    formula; the directional derivatives (inverse dynamics, then the passes) against CasADi AD of the
    Model's state derivative and outputs, at random states, inputs and parameters."""
    model = featured_model(stiffening)
    dynamics = model.compiled
    rng = np.random.default_rng(8)
    n, nu = len(model.coordinates), len(model.inputs)
    xs, us = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu)
    for _ in range(4):
        p = model.nominal_parameters * rng.uniform(0.9, 1.1, model.nominal_parameters.size)
        pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
        q, qd = random_state(rng, model)
        x, u = np.concatenate([q, qd]), rng.normal(size=nu)
        reference = np.array(model.state_derivative(x, u, p)).ravel()
        assert relative(dynamics.state_derivative(x, u, pc), reference) < 1e-10
        v0, h = rng.normal(size=n), 1e-3
        M = np.array(model.mass_matrix(q, p))
        K, D = (np.array(m) for m in model.structure_matrices(p))
        r = qd - v0 - h / 2 * reference[n:]
        dense = np.linalg.solve(M + h / 2 * D + h**2 / 4 * K, M @ r)
        assert relative(dynamics.newton_correction(q, qd, v0, u, pc, h), dense) < 1e-9
        dx, du = rng.normal(size=2 * n), rng.normal(size=nu)
        joint = ca.vertcat(model.state_derivative(xs, us, p), model.outputs(xs[:n], xs[n:], us, p))
        ad = ca.Function("ad", [xs, us], [ca.jtimes(joint, ca.vertcat(xs, us), ca.vertcat(ca.DM(dx), ca.DM(du)))])
        expected = np.array(ad(x, u)).ravel()
        dxdot, dy = (np.array(v).ravel() for v in dynamics.directional(x, u, pc, dx, du))
        assert relative(np.concatenate([dxdot, dy]), expected) < 1e-9
        assert relative(dynamics.outputs(x, u, pc), model.outputs(q, qd, u, p)) < 1e-10


def test_end_effector_motion_is_the_derivative_of_its_position():
    """tip.v* and tip.a* (an outward recursion of angular velocities) equal CasADi AD of the tip
    position output along (qd, qdd)."""
    model = featured_model(True)
    n = len(model.coordinates)
    q, qd, qdd = (ca.SX.sym(name, n) for name in ("q", "qd", "qdd"))
    p = model.nominal_parameters
    y = model.kinematic_outputs(q, qd, qdd, p)
    pick = {a: model.output_names.index(f"tip.{a}") for a in ("x", "y", "z", "vx", "vy", "vz", "ax", "ay", "az")}
    position = ca.vertcat(*[y[pick[a]] for a in "xyz"])
    velocity = ca.jtimes(position, q, qd)
    acceleration = ca.jtimes(velocity, ca.vertcat(q, qd), ca.vertcat(qd, qdd))
    check = ca.Function("check", [q, qd, qdd], [ca.vertcat(*[y[pick[a]] for a in ("vx", "vy", "vz", "ax", "ay", "az")]),
                                                ca.vertcat(velocity, acceleration)])
    rng = np.random.default_rng(9)
    for _ in range(5):
        ours, differentiated = check(*random_state(rng, model), rng.normal(size=n))
        assert relative(ours, differentiated) < 1e-12


def test_deflection_outputs_of_a_sagging_cantilever():
    """A horizontal clamped link under gravity along -z, joint held: the static tip deflection along z
    is the uniform-load cantilever's -rho g L^4 / (8 EI) and the y deflection is zero."""
    L, rho, EI, g = 1.2, 0.5, 5.0, 9.81
    arm = flexfmu.arm_from_dict({"kind": "spatial", "name": "sag", "gravity": [0.0, 0.0, -g], "link": [{
        "kind": "flexible", "length": L, "mass_per_length": rho, "geometric_stiffening": True,
        "bending_y": {"EI": EI, "modes": modes(3)}, "bending_z": {"EI": EI, "modes": modes(3)},
        "joint": {"axis": [0.0, 1.0, 0.0]}}]})
    model = flexfmu.build_model(arm)
    lin = linearise(model, locked=["theta[1]"])
    n = len(model.coordinates)
    free = [model.coordinates.index(name) for name in lin.names]
    h0 = np.array(model.bias(np.zeros(n), np.zeros(n), model.nominal_parameters)).ravel()[free]
    q = np.zeros(n)
    q[free] = np.linalg.solve(lin.K, -h0)
    y = np.array(model.outputs(q, np.zeros(n), np.zeros(1), model.nominal_parameters)).ravel()
    assert y[model.output_names.index("link[1].deflection.z")] == pytest.approx(-rho * g * L**4 / (8 * EI), rel=5e-3)
    assert abs(y[model.output_names.index("link[1].deflection.y")]) < 1e-15


def test_output_table_extends_the_planar_one_to_three_axes():
    model = flexfmu.build_model(flexfmu.load_arm("canadarm2_5link"))
    assert model.outputs_of("tip_position") == ["tip.x", "tip.y", "tip.z"]
    assert model.outputs_of("deflection") == ["link[2].deflection.y", "link[2].deflection.z",
                                              "link[3].deflection.y", "link[3].deflection.z"]
    assert model.outputs_of("twist") == ["link[2].twist", "link[3].twist"]
    assert model.outputs_of("stretch") == ["link[2].stretch", "link[3].stretch"]
    assert model.outputs_of("link_tip")[:3] == ["link[1].tip.x", "link[1].tip.y", "link[1].tip.z"]
    units = dict(zip(model.output_names, model.output_units))
    assert units["link[2].mode[3]"] == "rad" and units["link[2].mode_rate[4]"] == "m/s"  # torsion, axial
