"""Quasi-static torsion, stretch and joint springs of spatial chains (``flexfmu.dynamics.spatial.quasi_static``):
the condensed Model against the dynamic Model it approximates, both built from the same arm file with the
option set one way and the other."""

from __future__ import annotations

import json

import casadi as ca
import numpy as np
import pytest

import flexfmu
from flexfmu.dynamics.linear import natural_frequencies
from flexfmu.dynamics.spatial import bodies as B
from flexfmu.dynamics.spatial.quasi_static import FAST, first_frequency, twist_load


def link(GJ=45.0, EA=None, quasi_static=None, length=0.5):
    """An aluminium-like tube (0.5 m) bending both ways (one mode each) and twisting (and stretching when ``EA``
    is given); ``quasi_static`` sets the option of its torsion and stretch (None: the default rule)."""
    out = {"kind": "flexible", "length": length, "mass_per_length": 0.6, "polar_inertia_per_length": 2e-4,
           "bending_y": {"EI": 60.0, "modes": {"family": "clamped-free", "count": 1, "damping_ratio": 0.01}},
           "bending_z": {"EI": 60.0, "modes": {"family": "clamped-free", "count": 1, "damping_ratio": 0.01}},
           "torsion": {"GJ": GJ, "modes": {"count": 1, "damping_ratio": 0.01}}}
    if EA is not None:
        out["axial"] = {"EA": EA, "modes": {"count": 1, "damping_ratio": 0.01}}
    if quasi_static is not None:
        for kind in ("torsion", "axial"):
            if kind in out:
                out[kind]["quasi_static"] = quasi_static
    return out


def chain(links=3, quasi_static=None, GJ=45.0, EA=None, joint=None, gravity=(0.0, 0.0, -9.81)) -> dict:
    """The benchmarks' spatial test chain (benchmarks/spatial.py): ``links`` tubes on joints about z, y, z, ...
    with geared rotors and a payload. ``joint``: None for rigid joints, else the quasi_static option of
    flexible ones (400 N m/rad)."""
    out = []
    for k in range(links):
        joint_table = {"axis": [0.0, 0.0, 1.0] if k % 2 == 0 else [0.0, 1.0, 0.0], "rotor_inertia": 1e-4,
                       "gear_ratio": 50.0}
        if joint is not None:
            joint_table.update(kind="flexible", stiffness=400.0, spring_damping=0.5, quasi_static=joint)
        out.append({**link(GJ, EA, quasi_static), "joint": joint_table})
    return {"kind": "spatial", "name": f"chain{links}", "gravity": list(gravity), "link": out,
            "payload": {"mass": 0.2}}


def build(data: dict):
    return flexfmu.build_model(flexfmu.arm_from_dict(data))


def parameters_for(model, other) -> np.ndarray:
    """``other``'s nominal parameters with ``model``'s values where the names agree (the dynamic Model has the
    damping parameters the quasi-static one leaves out; they multiply zero rates here)."""
    mine = model.parameters
    return np.array([mine.get(name, value) for name, value in other.parameters.items()])


def embedding(model, dynamic) -> np.ndarray:
    """E with q_dynamic = E q for a quasi-static ``model``'s q at rest in its deformations: its coordinates as
    they are, a quasi-static mode at zero, a quasi-static joint's rotor turning with the joint (alpha = psi,
    the encoder row, which is theta for the tangent-framed links used here)."""
    E = np.zeros((len(dynamic.coordinates), len(model.coordinates)))
    for k, name in enumerate(dynamic.coordinates):
        if name in model.coordinates:
            E[k, model.coordinates.index(name)] = 1.0
        elif name.startswith("alpha"):
            E[k, model.coordinates.index(name.replace("alpha", "theta"))] = 1.0
    return E


def held(model, theta):
    """(q, u, outputs) of ``model`` at rest with its joint coordinates held at ``theta`` by the torques u: the
    static equilibrium of everything else under gravity (Newton on h(q, 0) = B u)."""
    n, nu = len(model.coordinates), len(model.inputs)
    joints = model.coordinates_of("joint")
    free = [k for k in range(n) if k not in joints]
    z, u = ca.SX.sym("z", len(free)), ca.SX.sym("u", nu)
    q = ca.SX(n, 1)
    for k, j in enumerate(joints):
        q[j] = theta[k]
    for k, f in enumerate(free):
        q[f] = z[k]
    p = model.nominal_parameters
    residual = model.bias(q, ca.SX(n, 1), p) - ca.mtimes(model.input_matrix(q, p), u)
    solve = ca.rootfinder("held", "newton", ca.Function("r", [ca.vertcat(z, u)], [residual]), {"abstol": 1e-13})
    w = np.array(solve(np.zeros(len(free) + nu))).ravel()
    qv = np.array(ca.Function("q", [z], [q])(w[:len(free)])).ravel()
    y = np.array(model.outputs(qv, np.zeros(n), w[len(free):], p)).ravel()
    return qv, w[len(free):], dict(zip(model.output_names, y))


# ------------------------------------------------------------------ the option and the default rule


def test_the_option_is_refused_where_it_has_no_meaning():
    bending = link()
    bending["bending_y"]["quasi_static"] = True
    rigid_joint = {**link(), "joint": {"quasi_static": True}}
    wrong_type = link()
    wrong_type["torsion"]["quasi_static"] = "yes"
    for data, expected in ((bending, "link[1].bending_y.quasi_static is only allowed for torsion and axial"),
                           (rigid_joint, "link[1].joint.quasi_static is only allowed for a flexible joint"),
                           (wrong_type, "link[1].torsion.quasi_static must be true or false")):
        with pytest.raises(flexfmu.SpecError) as error:
            flexfmu.arm_from_dict({"kind": "spatial", "name": "s", "link": [data]})
        assert any(expected in problem for problem in error.value.problems), error.value.problems


def test_the_rules_frequency_is_the_clamped_links_with_its_distal_load():
    """The rule's estimate (numbers from the mode set and the distal load) is a natural frequency of the Model
    of one clamped link carrying its load as a payload (its derivation, linearised), and without a load the
    fixed-free rod's (pi/2) sqrt(GJ / (rho Ip)) / L and (pi/2) sqrt(EA / (rho A)) / L."""
    for payload in ({"mass": 0.0}, {"mass": 0.4, "inertia": [[3e-4, 0, 0], [0, 1e-3, 0], [0, 0, 1e-3]]}):
        data = {"kind": "spatial", "name": "one", "link": [link(EA=4e4, quasi_static=False)], "payload": payload}
        arm = flexfmu.arm_from_dict(data)
        sets = B.link_mode_sets(arm)
        omega = natural_frequencies(flexfmu.build_model(arm), locked=["theta[1]"])
        for kind in ("torsion", "axial"):
            estimate = first_frequency(arm, 0, kind, sets[0])
            assert np.min(np.abs(omega - estimate)) < 1e-8 * estimate, (kind, estimate, omega)
    free = flexfmu.arm_from_dict({"kind": "spatial", "name": "one", "link": [link(EA=4e4)]})
    sets = B.link_mode_sets(free)
    assert first_frequency(free, 0, "torsion", sets[0]) == pytest.approx(np.pi / 2 * np.sqrt(45.0 / 2e-4) / 0.5,
                                                                        rel=1e-9)
    assert first_frequency(free, 0, "axial", sets[0]) == pytest.approx(np.pi / 2 * np.sqrt(4e4 / 0.6) / 0.5,
                                                                      rel=1e-9)


def test_the_twist_load_bounds_the_twists_inertia_at_every_pose():
    """The rule's load for a twist is the most the distal chain can put about the link's axis: at random joint
    angles the dynamic Model's twist inertia M_tt (its own derivation) stays below rho Ip L + load phi(1)^2,
    and comes within a factor of two of it (the bound is not loose: folded, link 1 of the 7-link chain twists
    at 5 rad/s, straight at 413)."""
    arm = flexfmu.arm_from_dict(chain(7, quasi_static=False))
    model = flexfmu.build_model(arm)
    p, rng = model.nominal_parameters, np.random.default_rng(0)
    bounds = [2e-4 * 0.5 + twist_load(arm, i) * 2.0 for i in range(7)]  # phi(1)^2 = 2 for the rod's sine
    largest = np.zeros(7)
    for _ in range(200):
        q = np.zeros(len(model.coordinates))
        q[:7] = rng.uniform(-np.pi, np.pi, 7)
        M = np.array(model.mass_matrix(q, p))
        for i in range(7):
            k = model.coordinates.index(f"f[{i + 1},3]")
            largest[i] = max(largest[i], M[k, k])
    assert np.all(largest <= np.array(bounds) * (1 + 1e-12))
    assert np.all(largest >= 0.5 * np.array(bounds))
    assert np.sqrt(222.066 / largest[0]) < 6.0  # GJ pi^2 / (4 L) over the folded chain's inertia


def test_by_default_only_twists_fast_at_every_pose_are_quasi_static():
    """The 7-link test chain: only the last link's twist (1,490 rad/s, nothing distal to swing) leaves q; the
    others are fast straight (413 to 860 rad/s) but slow folded. Canadarm2's booms twist and stretch at 3 to
    82 rad/s under the rule: nothing is condensed. Asked for, the chain's torsion all leaves q and the FMU's
    fastest mode drops from 3,019 to 400 rad/s (its bending)."""
    model = build(chain(7))
    assert [c.name for c in model.quasi_static] == ["f[7,3]"]
    assert [c.kind for c in model.quasi_static] == ["modal"]
    assert "f[7,3]" not in model.coordinates
    canadarm2 = flexfmu.load_arm("canadarm2_5link")
    assert flexfmu.build_model(canadarm2).quasi_static == ()
    sets = B.link_mode_sets(canadarm2)
    estimates = [first_frequency(canadarm2, i, kind, sets[i]) for i in (1, 2) for kind in ("torsion", "axial")]
    assert max(estimates) < FAST / 3
    condensed = build(chain(7, quasi_static=True))
    assert [c.name for c in condensed.quasi_static] == [f"f[{i},3]" for i in range(1, 8)]
    omega, dynamic = natural_frequencies(condensed), natural_frequencies(build(chain(7, quasi_static=False)))
    assert dynamic.max() > 3000.0 and 395.0 < omega.max() < 405.0  # RK4 at 1 ms: 2 substeps instead of 11


# ------------------------------------------------------------------ the condensed Model


def test_a_condensed_model_moves_as_its_arm_with_the_deformation_rigid():
    """M, h and B of the quasi-static Model are those of the dynamic one restricted to its coordinates, with the
    quasi-static modes at rest and each quasi-static rotor turning with its joint: E'M(Eq)E, E'h(Eq, Eq'), E'B
    (a Lagrangian constrained by q_dynamic = E q). Torsion, stretch and joint springs at once, random states."""
    model = build(chain(3, quasi_static=True, EA=3e3, joint=True))
    dynamic = build(chain(3, quasi_static=False, EA=3e3, joint=False))
    assert len(model.quasi_static) == 9 and len(model.coordinates) + 9 == len(dynamic.coordinates)
    E = embedding(model, dynamic)
    p, pd = model.nominal_parameters, parameters_for(model, dynamic)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, qd = rng.normal(size=len(model.coordinates)), rng.normal(size=len(model.coordinates))
        q[len(model.inputs):] *= 0.01
        M = E.T @ np.array(dynamic.mass_matrix(E @ q, pd)) @ E
        h = E.T @ np.array(dynamic.bias(E @ q, E @ qd, pd)).ravel()
        Bq = E.T @ np.array(dynamic.input_matrix(E @ q, pd))
        np.testing.assert_allclose(np.array(model.mass_matrix(q, p)), M, rtol=1e-12, atol=1e-14 * np.abs(M).max())
        np.testing.assert_allclose(np.array(model.bias(q, qd, p)).ravel(), h, rtol=1e-11, atol=1e-12 * np.abs(h).max())
        np.testing.assert_allclose(np.array(model.input_matrix(q, p)), Bq, atol=1e-14)


def test_the_quasi_static_deflection_balances_the_loads_of_the_motion():
    """At random states and torques, the reported twist and stretch s solve the dynamic Model's own rows of its
    deformation (the energy derivation, independent of the recursive Newton-Euler the outputs run) with s, s'
    and s'' at zero: K s = -(M_sp p'' + h_s), d'Alembert's loads of the moving arm included; a quasi-static
    spring deflects by what the link side of the joint needs: k delta = (M p'' + h)_theta."""
    model = build(chain(3, quasi_static=True, EA=3e3, joint=True))
    dynamic = flexfmu.build_model(flexfmu.arm_from_dict(chain(3, quasi_static=False, EA=3e3, joint=False)),
                                  "energy")
    E, pd, p = embedding(model, dynamic), parameters_for(model, dynamic), model.nominal_parameters
    K = np.array(dynamic.structure_matrices(pd)[0])
    modes = [dynamic.coordinates.index(c.name) for c in model.quasi_static if c.kind == "modal"]
    outputs = [model.output_names.index(f"link[{c.link}].mode[{c.mode}]") for c in model.quasi_static
               if c.kind == "modal"]
    rng = np.random.default_rng(9)
    for _ in range(3):
        q, qd = rng.normal(size=len(model.coordinates)), rng.normal(size=len(model.coordinates))
        q[len(model.inputs):] *= 0.01
        u = rng.normal(size=len(model.inputs))
        qdd = np.array(model.forward_dynamics(q, qd, u, p)).ravel()
        y = np.array(model.outputs(q, qd, u, p)).ravel()
        loads = np.array(dynamic.mass_matrix(E @ q, pd)) @ (E @ qdd) + np.array(dynamic.bias(E @ q, E @ qd, pd)).ravel()
        s = y[outputs]
        assert np.abs(s).max() > 1e-6
        np.testing.assert_allclose(K[np.ix_(modes, modes)] @ s, -loads[modes], rtol=1e-9, atol=1e-12)
        for j in range(1, 4):
            delta = y[model.output_names.index(f"joint[{j}].spring_deflection")]
            link_side = loads[dynamic.coordinates.index(f"theta[{j}]")]
            assert delta * 400.0 == pytest.approx(link_side, rel=1e-9)


def test_quasi_static_joint_springs_agree_exactly_at_a_static_equilibrium():
    """Held at a bent pose under gravity, the model with quasi-static joint springs and the dynamic one have
    the same equilibrium: holding torques, every output (encoders, rotors, spring deflections, bending, tip) to
    round-off. Its springs have no geometric effect, so leaving out the rotor's motion relative to the joint
    changes nothing at rest."""
    pose = [0.3, 0.9, -0.5]
    _, u, y = held(build(chain(3, quasi_static=False, joint=True)), pose)
    _, u_dynamic, y_dynamic = held(build(chain(3, quasi_static=False, joint=False)), pose)
    assert abs(y_dynamic["joint[2].spring_deflection"]) > 1e-3
    np.testing.assert_allclose(u, u_dynamic, rtol=1e-10, atol=1e-12)
    assert list(y) == list(y_dynamic)
    for name, value in y_dynamic.items():
        assert y[name] == pytest.approx(value, rel=1e-9, abs=1e-12), name


def test_a_stretch_along_gravity_agrees_exactly_at_rest():
    """A link hanging along gravity stretches under its weight and the payload's: the quasi-static stretch is
    the dynamic model's equilibrium to round-off (the load does not depend on the stretch)."""
    def hanging(quasi_static):
        data = {"kind": "spatial", "name": "hanging", "gravity": [9.81, 0.0, 0.0], "payload": {"mass": 2.0},
                "link": [{**link(EA=2e3, quasi_static=quasi_static), "joint": {"axis": [0.0, 1.0, 0.0]}}]}
        return held(build(data), [0.0])[2]

    static, dynamic = hanging(True), hanging(False)
    assert dynamic["link[1].stretch"] > 1e-3
    for name in ("link[1].stretch", "link[1].tip.x", "tip.x", "link[1].twist"):
        assert static[name] == pytest.approx(dynamic[name], rel=1e-10, abs=1e-14), name


def test_a_held_twist_agrees_to_first_order_in_the_twist():
    """Held at a bent pose, gravity twists the links by a few milliradians. The quasi-static twist leaves out
    its own effect on the loads (the distal links turned by it), so it differs from the dynamic model's by a
    fraction of itself proportional to the twist: doubling GJ halves both the twist and that fraction."""
    pose = [0.3, 0.9, -0.5]
    errors = []
    for GJ in (45.0, 90.0, 180.0):
        static, dynamic = (held(build(chain(3, quasi_static=flag, GJ=GJ)), pose)[2] for flag in (True, False))
        twists = [name for name in dynamic if name.endswith("twist")]
        largest = max(abs(dynamic[name]) for name in twists)
        errors.append(max(abs(static[name] - dynamic[name]) for name in twists) / largest)
        assert errors[-1] < 10 * largest  # first order: the relative error is a few times the twist (rad)
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.05)
    assert errors[1] / errors[2] == pytest.approx(2.0, rel=0.05)


def test_the_low_frequencies_approach_the_dynamic_ones_as_the_torsion_stiffens():
    """The quasi-static model's natural frequencies (its torsion condensed) are the limit of the dynamic model's
    as GJ grows: their largest relative difference falls tenfold for each tenfold GJ."""
    differences = []
    for scale in (1.0, 10.0, 100.0):
        static = natural_frequencies(build(chain(3, quasi_static=True, GJ=45.0 * scale)))
        dynamic = natural_frequencies(build(chain(3, quasi_static=False, GJ=45.0 * scale)))
        static = static[static > 1.0]
        dynamic = dynamic[dynamic > 1.0][:static.size]
        differences.append(np.max(np.abs(static - dynamic) / dynamic))
    assert differences[0] < 1e-3
    assert differences[0] / differences[1] == pytest.approx(10.0, rel=0.05)
    assert differences[1] / differences[2] == pytest.approx(10.0, rel=0.05)


def test_a_condensed_model_keeps_the_outputs_and_drops_only_the_damping_of_what_it_condenses():
    """Same output names and order as the dynamic model (twist, stretch, modes, rotors, spring deflections
    from the equilibrium), the same parameters without the damping of the quasi-static deformations and
    springs, the other coordinates under their own names."""
    model = build(chain(3, quasi_static=True, EA=3e3, joint=True))
    dynamic = build(chain(3, quasi_static=False, EA=3e3, joint=False))
    assert model.output_names == dynamic.output_names
    dropped = [name for name in dynamic.parameters if name not in model.parameters]
    assert set(model.parameters) < set(dynamic.parameters)
    assert all("damping" in name for name in dropped) and len(dropped) == 3 * 3
    assert model.coordinates == [name for name in dynamic.coordinates
                                 if name not in {c.name for c in model.quasi_static}]


def test_the_compiled_passes_and_outputs_of_a_condensed_model_equal_its_functions():
    """The C contract of a quasi-static Model: the articulated-body passes equal its forward dynamics, the
    compiled outputs (the equilibrium by recursive Newton-Euler, with p-only terms hoisted) its outputs, and
    the directional derivatives CasADi AD of both."""
    model = build(chain(3, EA=3e3, quasi_static=True, joint=True))
    dynamics = model.compiled
    rng = np.random.default_rng(4)
    n, nu = len(model.coordinates), len(model.inputs)
    xs, us = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu)
    p = model.nominal_parameters
    pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
    for _ in range(3):
        q, qd = rng.normal(size=n), rng.normal(size=n)
        q[nu:] *= 0.01
        x, u = np.concatenate([q, qd]), rng.normal(size=nu)
        reference = np.array(model.state_derivative(x, u, p)).ravel()
        np.testing.assert_allclose(np.array(dynamics.state_derivative(x, u, pc)).ravel(), reference, rtol=1e-10,
                                   atol=1e-10 * np.abs(reference).max())
        outputs = np.array(model.outputs(q, qd, u, p)).ravel()
        np.testing.assert_allclose(np.array(dynamics.outputs(x, u, pc)).ravel(), outputs, rtol=1e-10, atol=1e-12)
        dx, du = rng.normal(size=2 * n), rng.normal(size=nu)
        joint = ca.vertcat(model.state_derivative(xs, us, p), model.outputs(xs[:n], xs[n:], us, p))
        ad = ca.Function("ad", [xs, us], [ca.jtimes(joint, ca.vertcat(xs, us), ca.vertcat(ca.DM(dx), ca.DM(du)))])
        expected = np.array(ad(x, u)).ravel()
        found = np.concatenate([np.array(v).ravel() for v in dynamics.directional(x, u, pc, dx, du)])
        np.testing.assert_allclose(found, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


BOOM = """
kind = "spatial"
name = "boom"

[[link]]
kind = "flexible"
length = 1.0
mass_per_length = 0.6
polar_inertia_per_length = 2e-4
bending_y = { EI = 60.0, modes = { family = "clamped-free", count = 1 } }
torsion = { GJ = 45.0, modes = { count = 1 } }
axial = { EA = 5e3, modes = { count = 1 } }
joint = { axis = [0.3, 0.0, 1.0], kind = "flexible", stiffness = 500.0, rotor_inertia = 1e-3, quasi_static = true }

[payload]
mass = 0.2
inertia = [[2e-4, 0.0, 0.0], [0.0, 1e-4, 0.0], [0.0, 0.0, 1e-4]]
"""


def test_info_names_what_is_quasi_static(tmp_path, capsys):
    """flexfmu info: the twist (430 rad/s with the payload) by the default rule, the spring because the file
    asks; the stretch (111 rad/s) stays a coordinate."""
    from flexfmu.cli import main

    arm = tmp_path / "boom.toml"
    arm.write_text(BOOM)
    assert main(["info", str(arm)]) == 0
    assert "quasi-static (at their static equilibrium, not states): alpha[1], f[1,2]" in capsys.readouterr().out
    assert main(["info", str(arm), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in data["quasi_static"]] == ["alpha[1]", "f[1,2]"]
    assert "f[1,3]" in data["coordinates"]


SWING = """
name = "boom_swing"
arm = "{arm}"
description = "torque pulses on the boom's quasi-static joint spring, then free motion"
duration = 0.6
step = 1e-3

[controller]
kind = "held"
switches = [[0.0, [2.0]], [0.2, [-2.0]], [0.4, [0.0]]]

[compare]
outputs = ["joint_angle", "motor_angle", "deflection", "twist", "stretch", "tip_position", "envelope"]

[tolerances]
default = 1e-5
"""


@pytest.mark.slow
@pytest.mark.compiler
def test_the_fmu_of_a_condensed_model_cross_checks_against_its_reference(tmp_path):
    """Export, validation and the harness take a quasi-static Model unchanged: its FMU (co-simulation and model
    exchange) matches the reference run of its graph within 1e-5 on every compared output (RK4 at the default
    step: about 2e-6 on the joint angle, which swings by 0.2 rad), the quasi-static
    twist, spring deflection and motor angle included (the tilted joint axis twists the boom as it swings)."""
    from flexfmu.control.scenario import load_scenario
    from flexfmu.harness.running.reference import reference_run
    from flexfmu.harness.workflows.crosscheck import run_case
    from flexfmu.targets import ExportSettings, export_fmu
    from flexfmu.targets.validate import validate_fmu

    arm, scenario = tmp_path / "boom.toml", tmp_path / "swing.toml"
    arm.write_text(BOOM)
    scenario.write_text(SWING.format(arm=arm))
    model = flexfmu.build_model(flexfmu.load_arm(arm))
    assert [c.name for c in model.quasi_static] == ["alpha[1]", "f[1,2]"]
    report = export_fmu(model, tmp_path / "boom.fmu", ExportSettings(platforms=("linux64",)))
    assert validate_fmu(report.path).problems == []
    swing = load_scenario(scenario)
    reference = reference_run(model, swing, swing.build_controller(model))
    for name, least in (("link[1].twist", 1e-4), ("joint[1].spring_deflection", 1e-3), ("link[1].stretch", 1e-6)):
        assert np.ptp(reference[name]) > least, name
    case = run_case(arm, str(scenario), tmp_path / "cc", runs=("reference", "native-cs", "native-me"))
    outputs = {c["output"] for c in case["comparisons"]}
    assert {"link[1].twist", "motor[1].angle", "joint[1].spring_deflection", "tip.z"} <= outputs
    assert all(c["passed"] for c in case["comparisons"]), [c for c in case["comparisons"] if not c["passed"]]


def test_the_composite_law_measures_the_state_without_the_quasi_static_outputs():
    """Paper 004's composite controller reads the whole state from encoders and modes (x = pinv(C) y): on a
    model with quasi-static twists and springs it leaves out their outputs (equilibria that follow the
    accelerations, not measurements of x), and what it reads is C x exactly, whatever the torques, with C of
    full rank."""
    from flexfmu.control.laws import build_law

    model = build(chain(3, quasi_static=True, joint=True))
    law = build_law(model, "composite")
    condensed = {f"link[{c.link}].mode[{c.mode}]" for c in model.quasi_static if c.kind == "modal"}
    condensed |= {f"motor[{c.link}].angle" for c in model.quasi_static if c.kind == "rotor"}
    assert len(condensed) == 6 and not condensed & set(law.measured)
    n, nu, p = len(model.coordinates), len(model.inputs), model.nominal_parameters
    rows = [model.output_names.index(name) for name in law.measured]
    xs, us = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu)
    y = model.outputs(xs[:n], xs[n:], us, p)[rows]
    C = np.array(ca.Function("C", [xs, us], [ca.jacobian(y, xs)])(np.zeros(2 * n), np.zeros(nu)))
    assert np.linalg.matrix_rank(C) == 2 * n
    measure = ca.Function("y", [xs, us], [y])
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = np.concatenate([rng.normal(size=n) * 0.05, rng.normal(size=n)])
        np.testing.assert_allclose(np.array(measure(x, rng.normal(size=nu) * 10)).ravel(), C @ x, atol=1e-12)
