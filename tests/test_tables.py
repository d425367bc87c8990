"""The tables that carry flexfmu's structure: every row complete, every row's keys checked at load.

A row that lacks a builder or declares keys that cannot be checked is refused where it is written, with
the table, the row and the part named; a scenario whose reference or motion table breaks its row's keys is
refused when it loads, with the field named; the shipped scenarios use only what their arm can follow.
"""

from __future__ import annotations

import tomllib

import pytest

from flexfmu.control.controllers import CONTROLLERS
from flexfmu.control.delta_planning import PickPlaceSettings
from flexfmu.control.motions import MOTIONS, MotionProfile
from flexfmu.control.planners import PLANNERS, Planner
from flexfmu.control.planning import PlanSettings
from flexfmu.control.reference_kinds import QUINTIC, REFERENCES, ReferenceKind
from flexfmu.control.scenario import ScenarioError, load_scenario
from flexfmu.data import resolve_scenario, scenario_names
from flexfmu.spec.keys import Key, read_keys

ROWS = [*REFERENCES.values(), *MOTIONS.values(), *PLANNERS.values(), *CONTROLLERS.values()]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_every_row_declares_typed_keys_with_help(row):
    assert row.keys and all(isinstance(key, Key) and key.help for key in row.keys)
    assert all(key.describe().startswith(f"{key.name}: ") for key in row.keys)


def test_a_row_without_its_builder_is_refused_naming_table_row_and_part():
    with pytest.raises(TypeError, match=r"REFERENCES row 'spiral': build must be a function"):
        ReferenceKind("spiral", "a spiral", QUINTIC.keys, QUINTIC.fits, None)
    with pytest.raises(TypeError, match=r"MOTIONS row 'ramp': keys must be a tuple of Key"):
        MotionProfile("ramp", "a ramp", ("w0",), lambda values, joints: None)
    with pytest.raises(TypeError, match=r"PLANNERS row 'guess': settings must be a function or class"):
        Planner("guess", "a guess", None)
    with pytest.raises(TypeError, match=r"keys named twice"):
        MotionProfile("ramp", "a ramp", (Key("w0", "number", "rate"), Key("w0", "number", "rate")), print)
    with pytest.raises(ValueError, match=r"key 'w0': type must be one of"):
        Key("w0", "float")


def test_read_keys_names_every_problem_by_its_field_path():
    keys = (Key("radius", "number", "r", "m", gt=0), Key("center", "vector", "c", "m", size=2),
            Key("count", "integer", "n", required=False, default=3, ge=1))
    problems = []
    values = read_keys(problems, {"radius": "10 cm", "centre": [0, 0], "kind": "circle"}, "controller.reference",
                       keys, others=("kind",))
    assert values == {"radius": None, "center": None, "count": 3}
    assert problems == ["controller.reference.centre is not a known key; did you mean 'center'?",
                        "controller.reference.radius must be a number, got '10 cm' (string)",
                        "controller.reference.center is required"]


def scenario_file(tmp_path, name: str, change) -> str:
    """A copy of the shipped scenario ``name`` with ``change`` applied to its parsed TOML, written as TOML."""
    data = tomllib.loads(resolve_scenario(name).read_text())
    change(data)
    lines = []

    def emit(table, prefix):
        scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
        if prefix:
            lines.append(f"[{prefix}]")
        for key, value in scalars.items():
            lines.append(f'"{key}" = {toml_value(value)}')
        for key, value in table.items():
            if isinstance(value, dict):
                emit(value, f'{prefix}."{key}"' if prefix else f'"{key}"')

    emit(data, "")
    path = tmp_path / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return repr(value)


@pytest.mark.parametrize(("name", "change", "message"), [
    ("pd_circle", lambda d: d["controller"]["reference"].pop("radius"), "controller.reference.radius is required"),
    ("pd_circle", lambda d: d["controller"]["reference"].update(radius="10 cm"),
     "controller.reference.radius must be a number, got '10 cm'"),
    ("pd_circle", lambda d: d["controller"]["reference"].update(radus=0.1),
     "controller.reference.radus is not a known key; did you mean 'radius'?"),
    ("delta_pick_place", lambda d: d["controller"]["reference"].update(times=[0.0, 0.8]),
     "controller.reference.times must be a list of 5 numbers"),
    ("quintic_ct", lambda d: d["controller"]["reference"].update(kind="spiral"),
     "controller.reference.kind must be one of 'circle', 'quintic', 'platform_circle', 'inverted_u', got 'spiral'"),
    ("spinup", lambda d: d["motion"].pop("ramp_time"), "motion.ramp_time is required"),
    ("spinup", lambda d: d["motion"].update(w0=-1.0), "motion.w0 must be > 0 rad/s, got -1.0"),
    ("spinup", lambda d: d["motion"].update(kind="ramp"), "motion.kind must be one of 'spinup', got 'ramp'"),
])
def test_a_scenario_that_breaks_its_rows_keys_is_refused_at_load(tmp_path, name, change, message):
    with pytest.raises(ScenarioError) as error:
        load_scenario(scenario_file(tmp_path, name, change))
    assert message in str(error.value)


def test_the_test_writes_scenario_files_as_they_were(tmp_path):
    for name in scenario_names():
        assert load_scenario(scenario_file(tmp_path, name, lambda data: None)) == load_scenario(name)


def test_the_motion_row_builds_the_profile_and_its_keys_bound_with_motion():
    spinup = load_scenario("spinup")
    profile = spinup.motion_profile(2)
    angles, rates, accelerations = profile(1e3)
    assert rates.tolist() == [4.0, 4.0] and accelerations.tolist() == [0.0, 0.0]
    with pytest.raises(ScenarioError, match="its motion has: w0, ramp_time"):
        spinup.with_motion(speed=6)


@pytest.mark.parametrize(("settings", "message"), [
    (PlanSettings(start=(0.0,), goal=(1.0,), move_time=-1.0), "move_time must be > 0 s, got -1.0"),
    (PlanSettings(start=(0.0,), goal=(1.0,), move_time=1.0, elements=0), "elements must be an integer >= 1"),
    (PlanSettings(start=(), goal=(1.0,), move_time=1.0), "start must be a list of one or more numbers"),
    (PickPlaceSettings(iterations=0), "iterations must be an integer >= 1, got 0"),
    (PickPlaceSettings(retiming_terms=0, correction_terms=0), "both 0: nothing to plan"),
])
def test_planner_settings_are_checked_against_their_keys(settings, message):
    assert any(message in problem for problem in settings.problems())


def test_default_planner_settings_pass_their_own_keys():
    assert PickPlaceSettings().problems() == []
    assert PlanSettings(start=(0.0, 0.0), goal=(1.0, 0.5), move_time=2.0).problems() == []


# ------------------------------------------------------------------------------------------ arm kinds

def test_every_registered_kind_has_all_its_parts():
    from flexfmu.commands.plan import PLANS
    from flexfmu.kinds import KINDS

    assert set(KINDS) == {"planar", "spatial", "delta"}
    for name, kind in KINDS.items():
        assert kind.name == name and kind.summary
        assert callable(kind.load) and kind.graph.METHODS
        assert kind.planner is PLANNERS[kind.planner.name] and kind.planner.name in PLANS
        assert kind.references and all(row is REFERENCES[row.name] for row in kind.references)
    assert set(PLANS) == set(PLANNERS)


def test_a_kind_row_without_a_part_is_refused_naming_the_part():
    from flexfmu.kinds import PLANAR
    from flexfmu.kinds.arm_kind import ArmKind

    parts = dict(name="tree", summary="a branching arm", load=PLANAR.load, graph=PLANAR.graph,
                 planner=PLANAR.planner, references=PLANAR.references)
    with pytest.raises(TypeError, match=r"KINDS row 'tree': graph must be a function or class, got None"):
        ArmKind(**(parts | {"graph": None}))
    with pytest.raises(TypeError, match=r"KINDS row 'tree': graph object has no dynamics\(\) of a ModelGraph"):
        ArmKind(**(parts | {"graph": object}))
    with pytest.raises(TypeError, match=r"KINDS row 'tree': planner must be a row of PLANNERS"):
        ArmKind(**(parts | {"planner": "collocation"}))
    with pytest.raises(TypeError, match=r"KINDS row 'tree': references must be rows of REFERENCES"):
        ArmKind(**(parts | {"references": ("circle",)}))


def test_each_example_arm_follows_exactly_the_references_its_kind_lists():
    from flexfmu.data import arm_names
    from flexfmu.kinds import KINDS, kind_of
    from tests.conftest import example_model

    fitting = {name: set() for name in KINDS}
    for arm in arm_names():
        model = example_model(arm)
        kind = kind_of(model.arm)
        assert model.method == kind.graph.METHODS[0]
        fits = {row.name for row in REFERENCES.values() if row.fits(model) is None}
        assert fits <= {row.name for row in kind.references}, f"{arm} follows references its kind does not list"
        fitting[kind.name] |= fits
    for name, kind in KINDS.items():
        assert fitting[name] == {row.name for row in kind.references}, f"kind {name} lists references none of " \
                                                                       "its example arms can follow"


def test_every_shipped_scenario_uses_a_reference_of_its_arms_kind():
    from flexfmu import load_arm
    from flexfmu.kinds import kind_of

    for name in scenario_names():
        scenario = load_scenario(name)
        reference = scenario.controller.get("reference")
        if reference:
            assert REFERENCES[reference["kind"]] in kind_of(load_arm(scenario.arm)).references, name


def test_a_reference_the_arm_cannot_follow_is_refused_naming_the_scenario_and_why():
    from tests.conftest import example_model

    circle = load_scenario("pd_circle")
    with pytest.raises(ScenarioError, match="scenario pd_circle: the circle reference is the inverse kinematics of "
                                            "a planar two-link arm; arm 'canadarm2_5link' has 5 joints"):
        circle.reference(example_model("canadarm2_5link"))
    with pytest.raises(ScenarioError, match="a platform path needs a Delta robot; arm 'yu_chen_2dof' has no platform"):
        load_scenario("delta_circle").reference(example_model("yu_chen_2dof"))
