"""Behaviour of the arm specification loader (``flexfmu.load_arm``).

The tests pin down what users rely on: a valid file loads into the expected
numbers (including unit conversions and defaults), and an invalid one is
rejected with every problem listed, each naming its field path and value.
"""

from __future__ import annotations

import copy
import math
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import flexfmu
from flexfmu import (
    Arm,
    FlexibleLink,
    Joint,
    LumpedMass,
    Modes,
    Payload,
    RigidLink,
    SpecError,
    arm_from_dict,
    load_arm,
)

EXAMPLE = textwrap.dedent(
    """\
    name = "example"
    description = "Rigid shoulder, flexible forearm with a motor mass at its middle"
    gravity = [0.0, -9.81]

    [[link]]
    kind = "rigid"
    length = 0.3
    mass = 1.2
    com = [0.15, 0.0]
    inertia = 0.009

    [[link]]
    kind = "flexible"
    length = 0.5
    mass = 0.2
    E = 2.06e11
    I = 6.75e-11

    [link.modes]
    family = "clamped-mass"
    count = 3
    damping_ratio = 0.01

    [link.joint]
    kind = "flexible"
    stiffness = 100.0
    rotor_inertia = 0.02
    gear_ratio = 1.0

    [[lumped_mass]]
    link = 2
    position = 0.5
    mass = 0.1

    [payload]
    mass = 0.1
    inertia = 0.005
    """
)


def write(tmp_path, text, name="arm.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def minimal(**top):
    """Smallest valid spec as a dict: one rigid link; ``top`` overrides keys."""
    data = {"name": "m", "link": [{"kind": "rigid", "length": 2.0, "mass": 3.0}]}
    data.update(top)
    return data


def flexible(**modes):
    """A one-link spec with a flexible link whose modes table is ``modes``."""
    link = {"kind": "flexible", "length": 0.5, "mass_per_length": 0.4, "EI": 1.5,
            "modes": modes}
    return {"name": "f", "link": [link]}


def problems_of(data):
    with pytest.raises(SpecError) as info:
        arm_from_dict(data)
    return info.value.problems


def single_problem(data):
    problems = problems_of(data)
    assert len(problems) == 1, problems
    return problems[0]


# ---------------------------------------------------------------- valid specs


def test_example_loads_into_expected_dataclasses(tmp_path):
    arm = load_arm(write(tmp_path, EXAMPLE))

    assert isinstance(arm, Arm)
    assert arm.name == "example"
    assert arm.description.startswith("Rigid shoulder")
    assert arm.gravity == (0.0, -9.81)
    assert arm.links[0] == RigidLink(length=0.3, mass=1.2, com=(0.15, 0.0),
                                     inertia=0.009, joint=Joint())
    forearm = arm.links[1]
    assert isinstance(forearm, FlexibleLink)
    assert forearm.length == 0.5
    assert forearm.mass_per_length == pytest.approx(0.2 / 0.5)  # total mass / length
    assert forearm.EI == pytest.approx(2.06e11 * 6.75e-11)  # E * I
    assert forearm.modes == Modes(family="clamped-mass", count=3, damping_kind="ratio",
                                  damping=(0.01, 0.01, 0.01))  # broadcast per mode
    assert forearm.joint == Joint(kind="flexible", stiffness=100.0, rotor_inertia=0.02,
                                  gear_ratio=1.0)
    assert arm.lumped_masses == (LumpedMass(link=2, position=0.5, mass=0.1, inertia=0.0),)
    assert arm.payload == Payload(mass=0.1, inertia=0.005)


def test_documented_ranges_are_the_checked_ones():
    from flexfmu.spec.ranges import table

    docs = Path(__file__).parents[1] / "docs" / "spec.md"
    assert table() in docs.read_text(encoding="utf-8")


def test_documented_example_is_the_tested_one(tmp_path):
    docs = Path(__file__).parents[1] / "docs" / "spec.md"
    text = docs.read_text(encoding="utf-8").split("## Complete example", 1)[1]
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    assert load_arm(write(tmp_path, block, "doc.toml")) == load_arm(write(tmp_path, EXAMPLE))


def test_loaded_values_are_plain_floats_and_tuples(tmp_path):
    arm = load_arm(write(tmp_path, EXAMPLE.replace("gear_ratio = 1.0", "gear_ratio = 2")))
    assert type(arm.links[1].joint.gear_ratio) is float
    assert arm.links[1].joint.gear_ratio == 2.0
    assert isinstance(arm.links, tuple) and isinstance(arm.lumped_masses, tuple)
    hash(arm)  # frozen all the way down: usable as a cache key


def test_package_exports_without_importing_casadi():
    assert flexfmu.load_arm is load_arm and flexfmu.SpecError is SpecError
    assert issubclass(SpecError, ValueError)
    # The spec layer must stay importable without CasADi (CLI, MATLAB tools);
    # a fresh interpreter shows what ``import flexfmu`` really pulls in.
    code = "import sys, flexfmu; print('casadi' in sys.modules, 'sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(flexfmu.__file__).parents[1])
    assert out.stdout.split() == ["False", "False"]


def test_arm_from_dict_does_not_modify_its_input():
    data = minimal()
    before = copy.deepcopy(data)
    arm_from_dict(data)
    assert data == before


# ------------------------------------------------------------------- defaults


def test_top_level_defaults():
    arm = arm_from_dict(minimal())
    assert arm.description == ""
    assert arm.gravity == (0.0, 0.0)
    assert arm.lumped_masses == ()
    assert arm.payload == Payload(mass=0.0, inertia=0.0)


def test_payload_keys_default_to_zero():
    assert arm_from_dict(minimal(payload={"mass": 2})).payload == Payload(2.0, 0.0)
    assert arm_from_dict(minimal(payload={"inertia": 0.1})).payload == Payload(0.0, 0.1)


def test_rigid_link_defaults_com_and_inertia():
    link = arm_from_dict(minimal()).links[0]
    assert link.com == (1.0, 0.0)  # length / 2 on the x axis
    assert link.inertia == pytest.approx(3.0 * 2.0**2 / 12)  # slender rod about its centre


def test_absent_joint_table_is_a_default_rigid_joint():
    joint = arm_from_dict(minimal()).links[0].joint
    assert joint == Joint()
    assert joint.kind == "rigid" and joint.gear_ratio == 1.0 and joint.coulomb_velocity == 0.01


def test_joint_key_defaults():
    data = minimal()
    data["link"][0]["joint"] = {"kind": "flexible", "stiffness": 50, "rotor_inertia": 0.1}
    joint = arm_from_dict(data).links[0].joint
    assert joint == Joint(kind="flexible", stiffness=50.0, spring_damping=0.0,
                          rotor_inertia=0.1, gear_ratio=1.0, viscous_friction=0.0,
                          coulomb_friction=0.0, coulomb_velocity=0.01)
    data["link"][0]["joint"] = {"viscous_friction": 0.2}  # kind defaults to rigid
    assert arm_from_dict(data).links[0].joint == Joint(viscous_friction=0.2)


def test_lumped_mass_inertia_defaults_to_zero():
    arm = arm_from_dict(minimal(lumped_mass=[{"link": 1, "position": 1, "mass": 0.5}]))
    assert arm.lumped_masses == (LumpedMass(link=1, position=1.0, mass=0.5, inertia=0.0),)


def test_no_damping_means_zero_ratio_per_mode():
    modes = arm_from_dict(flexible(family="clamped-free", count=4)).links[0].modes
    assert modes.damping_kind == "ratio"
    assert modes.damping == (0.0, 0.0, 0.0, 0.0)


def test_damping_coefficient_list_is_kept_per_mode():
    spec = flexible(family="pinned-pinned", count=2, damping_coefficient=[0.5, 2])
    modes = arm_from_dict(spec).links[0].modes
    assert modes.damping_kind == "coefficient"
    assert modes.damping == (0.5, 2.0)


def test_non_user_families_have_no_shapes_frame_or_tip_override():
    modes = arm_from_dict(flexible(family="clamped-mass", count=2)).links[0].modes
    assert modes.shapes == () and modes.frame is None
    assert modes.tip_mass is None and modes.tip_inertia is None


def test_clamped_mass_tip_override():
    spec = flexible(family="clamped-mass", count=1, tip_mass=0.3, tip_inertia=0)
    modes = arm_from_dict(spec).links[0].modes
    assert (modes.tip_mass, modes.tip_inertia) == (0.3, 0.0)


def test_flexible_link_given_mass_per_length_and_ei_directly():
    link = arm_from_dict(flexible(family="clamped-free", count=1)).links[0]
    assert (link.mass_per_length, link.EI) == (0.4, 1.5)


def test_user_count_defaults_to_number_of_shapes():
    spec = flexible(family="user", frame="tangent", shapes=["xi^2", "xi**3 - xi**2"])
    modes = arm_from_dict(spec).links[0].modes
    assert modes.count == 2
    assert modes.shapes == ("xi^2", "xi**3 - xi**2")
    assert modes.frame == "tangent"


def test_user_chord_frame_accepts_sine_shapes():
    spec = flexible(family="user", frame="chord", count=2,
                    shapes=["sin(pi*xi)", "sin(2*pi*xi)"])
    assert arm_from_dict(spec).links[0].modes.count == 2


# ------------------------------------------------------------- invalid specs


def test_several_errors_are_all_reported_with_path_and_value(tmp_path):
    text = (EXAMPLE
            .replace("length = 0.5", "length = -0.4")
            .replace("count = 3", "count = 0")
            .replace("position = 0.5", "position = 1.5")
            .replace("mass = 0.1\ninertia = 0.005", "mass = -2.0\ninertia = 0.005")
            .replace("gravity = [0.0, -9.81]", 'gravity = [0.0, "down"]'))
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as info:
        load_arm(path)
    error = info.value
    assert error.problems == [
        "gravity[2] must be a number, got 'down' (string)",
        "link[2].length must be in [0.001, 100] m, got -0.4",
        "link[2].modes.count must be an integer 1..20, got 0",
        "lumped_mass[1].position must be in [0, 1], got 1.5",
        "payload.mass must be in [0, 1e+06] kg, got -2.0",
    ]
    lines = str(error).splitlines()
    assert lines[0] == f"{path}: 5 problems in the arm specification:"
    assert lines[1:] == [f"  - {p}" for p in error.problems]


def test_single_problem_header_is_singular():
    error = SpecError(["x must be > 0, got -1"], "a.toml")
    assert str(error) == "a.toml: 1 problem in the arm specification:\n  - x must be > 0, got -1"
    copy_ = pickle.loads(pickle.dumps(error))
    assert (copy_.problems, copy_.source, str(copy_)) == (error.problems, "a.toml", str(error))


def test_unknown_key_suggests_closest_name():
    data = minimal()
    data["link"][0]["lenght"] = 1.0
    assert single_problem(data) == "link[1].lenght is not a known key; did you mean 'length'?"


def test_unknown_top_level_and_nested_keys_are_all_reported():
    data = minimal(naem="x", payload={"mas": 1})
    data["link"][0]["joint"] = {"gear_raito": 2}
    problems = problems_of(data)
    assert "naem is not a known key; did you mean 'name'?" in problems
    assert "payload.mas is not a known key; did you mean 'mass'?" in problems
    assert "link[1].joint.gear_raito is not a known key; did you mean 'gear_ratio'?" in problems


def test_unknown_key_without_close_match_lists_the_known_keys():
    problem = single_problem(minimal(payload={"zzz": 1}))
    assert problem == "payload.zzz is not a known key; known keys: mass, inertia"


def test_flexible_only_key_on_rigid_link():
    data = minimal()
    data["link"][0]["EI"] = 3.0
    problem = single_problem(data)
    assert problem.startswith("link[1].EI is not a known key for a rigid link")


def test_rigid_only_key_on_flexible_link():
    spec = flexible(family="clamped-free", count=1)
    spec["link"][0]["com"] = [0.1, 0.0]
    assert single_problem(spec).startswith("link[1].com is not a known key for a flexible link")


def test_toml_syntax_error_names_file_and_line(tmp_path):
    path = write(tmp_path, 'name = "x"\n\n[[link]]\nkind = rigid\n')
    with pytest.raises(SpecError) as info:
        load_arm(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert len(info.value.problems) == 1
    assert info.value.problems[0].startswith("invalid TOML at line 4")


def test_missing_required_keys_are_named():
    problems = problems_of({"link": [{"kind": "rigid"}, {"kind": "flexible", "length": 1}]})
    assert "name is required" in problems
    assert "link[1].length is required" in problems
    assert "link[1].mass is required" in problems
    assert any(p.startswith("link[2].mass_per_length is required") for p in problems)
    assert any(p.startswith("link[2].EI is required") for p in problems)
    assert any(p.startswith("link[2].modes is required") for p in problems)
    assert any(p.startswith("link[1].kind") for p in problems_of({"name": "x", "link": [{}]}))


def test_link_array_required_and_non_empty():
    assert single_problem({"name": "x"}).startswith("link is required")
    assert single_problem({"name": "x", "link": []}).startswith("link must have at least one")
    assert single_problem({"name": "x", "link": [3]}) == "link[1] must be a table, got 3 (int)"


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("length", "long", "link[1].length must be a number, got 'long' (string)"),
        ("length", True, "link[1].length must be a number, got True (boolean)"),
        ("mass", 0, "link[1].mass must be in [1e-06, 1e+06] kg, got 0"),
        ("inertia", -1e-3, "link[1].inertia must be in [1e-15, 1e+08] kg.m2, got -0.001"),
        ("com", [0.1], "link[1].com must be a list of 2 numbers, got [0.1] (1 item)"),
        ("com", [0.1, math.inf], "link[1].com[2] must be finite, got inf"),
        ("kind", "elastic", "link[1].kind must be one of 'rigid', 'flexible', got 'elastic'"),
        ("kind", "flexibel", "link[1].kind must be one of 'rigid', 'flexible', "
                             "got 'flexibel'; did you mean 'flexible'?"),
    ],
)
def test_bad_rigid_link_values(key, value, expected):
    data = minimal()
    data["link"][0][key] = value
    problems = problems_of(data)
    assert problems[0] == expected


def test_nan_and_inf_are_rejected_from_toml(tmp_path):
    text = EXAMPLE.replace("mass = 1.2", "mass = nan").replace("inertia = 0.005", "inertia = inf")
    with pytest.raises(SpecError) as info:
        load_arm(write(tmp_path, text))
    assert info.value.problems == ["link[1].mass must be finite, got nan",
                                   "payload.inertia must be finite, got inf"]


def test_gravity_must_have_two_numbers():
    assert single_problem(minimal(gravity=[0, -9.81, 0])) == (
        "gravity must be a list of 2 numbers, got [0, -9.81, 0] (3 items)")


def test_flexible_mass_and_stiffness_exclusivity():
    spec = flexible(family="clamped-free", count=1)
    link = spec["link"][0]
    link.update(mass=0.2, E=2e11)  # mass_per_length and EI are already given
    problems = problems_of(spec)
    assert problems == [
        "link[1].mass and link[1].mass_per_length are both given (0.2 and 0.4); give one",
        "link[1].EI and link[1].E are both given; give EI or both E and I",
    ]
    del link["EI"]
    assert "link[1].I is required together with E (or give EI)" in problems_of(spec)


def test_modes_count_and_damping_checks():
    problems = problems_of(flexible(family="clamped-free", count=2.0,
                                    damping_ratio=1.0, damping_coefficient=0.1))
    assert problems == [
        "link[1].modes.count must be an integer 1..20, got 2.0 (float)",
        "link[1].modes.damping_ratio and link[1].modes.damping_coefficient are both given; "
        "give at most one",
    ]
    assert single_problem(flexible(family="clamped-free", count=21)) == (
        "link[1].modes.count must be an integer 1..20, got 21")
    assert single_problem(flexible(family="clamped-free", count=2, damping_ratio=1.0)) == (
        "link[1].modes.damping_ratio must be in [0, 1), got 1.0")
    assert single_problem(flexible(family="clamped-free", count=2, damping_ratio=[0.1])) == (
        "link[1].modes.damping_ratio must have 2 values (one per mode), got [0.1] (1 value)")
    assert single_problem(
        flexible(family="clamped-free", count=2, damping_coefficient=[0.1, -1])) == (
        "link[1].modes.damping_coefficient[2] must be in [0, 1e+06] N.s/m, got -1")


def test_family_specific_modes_keys():
    problems = problems_of(flexible(family="clamped-free", count=1, tip_mass=1.0,
                                    frame="chord", shapes=["xi"]))
    assert problems == [
        'link[1].modes.tip_mass is only allowed for family "clamped-mass"',
        'link[1].modes.frame is only allowed for family "user"',
        'link[1].modes.shapes is only allowed for family "user"',
    ]
    problems = problems_of(flexible(family="user"))
    assert any(p.startswith("link[1].modes.frame is required") for p in problems)
    assert any(p.startswith("link[1].modes.shapes is required") for p in problems)


def test_user_count_must_match_shapes():
    spec = flexible(family="user", frame="tangent", count=3, shapes=["xi^2"])
    assert single_problem(spec) == (
        "link[1].modes.count must equal the number of shapes (1), got 3")


@pytest.mark.parametrize(
    ("frame", "shape", "expected"),
    [
        ("tangent", "xi", "violates phi'(0) = 0 (tangent frame): phi'(0) = 1"),
        ("chord", "xi**2", "violates phi(1) = 0 (chord frame): phi(1) = 1"),
        ("chord", "cos(pi*xi)", "violates phi(0) = 0: phi(0) = 1"),
        ("tangent", "sqrt(xi)", "violates phi'(0) = 0 (tangent frame): phi'(0) is not a finite"),
        ("tangent", "xi**2 + y", "uses the unknown name 'y'"),
        ("tangent", "__import__('os')", "uses the unknown name '__import__'"),
        ("tangent", "xi**2 +", "does not parse as an expression in xi"),
        ("tangent", "xi - xi", "is identically zero"),
        ("tangent", "(xi**2", "has unbalanced parentheses"),
        ("tangent", "xi.__class__", "has the character '.'"),
        ("tangent", "E*xi**2", "uses the unknown name 'E'"),
        ("chord", "xi*log(xi)", "violates phi(0) = 0: phi(0) is not a finite number"),
    ],
)
def test_user_shape_problems_name_the_shape(frame, shape, expected):
    spec = flexible(family="user", frame=frame, shapes=["xi**2 * (1 - xi)", shape])
    problem = single_problem(spec)
    assert problem.startswith(f"link[1].modes.shapes[2] = {shape!r} {expected}")


def test_joint_rules():
    data = minimal()
    data["link"][0]["joint"] = {"kind": "flexible", "spring_damping": -1, "gear_ratio": 0}
    assert problems_of(data) == [
        "link[1].joint.stiffness is required for a flexible joint (must be > 0)",
        "link[1].joint.spring_damping must be in [0, 1e+06] N.m.s/rad, got -1",
        "link[1].joint.rotor_inertia is required for a flexible joint (must be > 0)",
        "link[1].joint.gear_ratio must be in [0.01, 10000], got 0",
    ]
    data["link"][0]["joint"] = {"stiffness": 10.0, "coulomb_velocity": 0}
    assert problems_of(data) == [
        'link[1].joint.stiffness is only allowed for a flexible joint (kind = "flexible")',
        "link[1].joint.coulomb_velocity must be in [1e-06, 1000] rad/s, got 0",
    ]
    data["link"][0]["joint"] = {"start_angle": 7.0}
    assert problems_of(data) == ["link[1].joint.start_angle must be in [-6.28319, 6.28319] rad, got 7.0"]
    data["link"][0]["joint"] = {"prescribed": True, "start_angle": 0.5}
    assert problems_of(data)[0] == ("link[1].joint.start_angle must be 0 on a prescribed joint (its motion starts "
                                    "it), got 0.5")


def test_lumped_mass_link_must_exist():
    spec = minimal(lumped_mass=[{"link": 2, "position": 0.5, "mass": 1.0},
                                {"link": True, "position": 0, "mass": 1.0}])
    assert problems_of(spec) == [
        "lumped_mass[1].link must be an integer 1..1, got 2",
        "lumped_mass[2].link must be an integer 1..1, got True (boolean)",
    ]
