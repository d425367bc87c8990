"""A seeded mutator of scenario files, for the fuzz test of the scenario checks.

Each mutant is a shipped scenario (parsed TOML) with one to three random
edits of the kinds a user makes: a value replaced by an extreme, a negative,
a non-finite or a wrongly typed one, or scaled by up to twelve orders of
magnitude (the generic edits of ``tests/spec_mutants.py``); a key deleted,
misspelt or misplaced; a controller, reference or motion kind changed to
another row's or to none; the arm renamed; a list made one entry longer or
shorter; names in ``compare``, ``tolerances`` and ``initial`` swapped for
other outputs, groups, coordinates or misspellings. Or, for the file path,
the TOML text itself with bytes flipped. The same seed gives the same
mutants.
"""

from __future__ import annotations

import copy
import tomllib

import numpy as np

from flexfmu.data import arm_names, resolve_scenario, scenario_names
from tests.spec_mutants import at, delete_key, flipped, leaves, pick, set_number, tables

KEYS = ("kpp", "kp", "kd", "kf", "refrence", "reference", "radius", "center", "frequency", "w0", "ramp_time",
        "outputs", "default", "bogus", "switches", "measure", "design_pose", "fast_effort", "kind", "move_time",
        "times", "start", "goal", "travel", "step", "duration", "name", "arm", "initial", "motion", "compare")
KINDS = ("held", "joint_pd", "pd_gravity", "computed_torque", "composite", "lqr", "circle", "quintic",
         "platform_circle", "inverted_u", "spinup", "ramp", "", 3)
NAMES = ("joint_angle", "tip_position", "link[2].deflection", "tip.ay", "link[3].deflection", "joint[1].angle",
         "deflecton", "platform_position", "mode", "joint_torque", "envelope", "motor_angle", "theta[1]",
         "theta[3]", "alpha[1]", "f[1,1]", "platform.dx", "upper[1].u[1]", "", "default", "tip.x", "twist")
VALUES = (1.0, 0.5, "x", [0.1, 0.0], {"kind": "quintic"}, 2, [], -1.0, 1e-9, True, [[0.0, [0.1, 0.1]]])


def example_scenarios() -> dict[str, tuple[bytes, dict]]:
    """{name: (TOML bytes, parsed dict)} of every shipped scenario."""
    scenarios = {}
    for name in scenario_names():
        raw = resolve_scenario(name).read_bytes()
        scenarios[name] = (raw, tomllib.loads(raw.decode()))
    return scenarios


def add_key(rng, data):
    """Add a key that belongs elsewhere, nowhere, or is a misspelling, to a random table."""
    table = at(data, pick(rng, list(tables(data))))
    table[pick(rng, KEYS)] = copy.deepcopy(pick(rng, VALUES))


def rename_key(rng, data):
    """Misspell a key: drop one of its letters."""
    table = at(data, pick(rng, list(tables(data))))
    if table:
        key = pick(rng, list(table))
        if len(key) > 1:
            cut = int(rng.integers(len(key)))
            table[key[:cut] + key[cut + 1:]] = table.pop(key)


def change_kind(rng, data):
    """Set the kind of the controller, its reference or the motion to another row's (or to nonsense)."""
    candidates = [path for path in tables(data) if isinstance(at(data, path), dict) and "kind" in at(data, path)]
    if candidates:
        at(data, pick(rng, candidates))["kind"] = pick(rng, KINDS)


def change_arm(rng, data):
    """Point the scenario at another example arm, a missing one, or nonsense."""
    data["arm"] = pick(rng, (*arm_names(), "no_such_arm", "", "missing/arm.toml", 7))


def resize_list(rng, data):
    """Make a list one entry longer or shorter (per-joint lists, vectors, schedules)."""
    lists = [path for path in leaves(data) if isinstance(at(data, path), list) and at(data, path)]
    if lists:
        items = at(data, pick(rng, lists))
        if rng.random() < 0.5:
            items.pop()
        else:
            items.append(copy.deepcopy(items[-1]))


def change_names(rng, data):
    """Swap a name of ``compare.outputs``, ``tolerances`` or ``initial`` for another output, group, coordinate
    or a misspelling."""
    choice = int(rng.integers(3))
    if choice == 0 and isinstance(data.get("compare"), dict) and isinstance(data["compare"].get("outputs"), list):
        outputs = data["compare"]["outputs"]
        if outputs and rng.random() < 0.5:
            outputs[int(rng.integers(len(outputs)))] = pick(rng, NAMES)
        else:
            outputs.append(pick(rng, NAMES))
    else:
        table = data.setdefault("tolerances" if choice == 1 else "initial", {})
        if isinstance(table, dict):
            table[pick(rng, NAMES)] = pick(rng, (1e-6, 0.1, -1.0, 0.0, "1e-6"))


MUTATIONS = (set_number, set_number, set_number, delete_key, add_key, rename_key, change_kind, change_kind,
             change_arm, resize_list, change_names, change_names)


def mutant(rng, scenarios: dict) -> tuple[str, dict | bytes]:
    """One mutant: ("dict", data) for scenario_from_dict, or ("toml", bytes) for load_scenario (one in ten)."""
    raw, data = scenarios[pick(rng, sorted(scenarios))]
    if rng.random() < 0.1:
        return "toml", flipped(rng, raw)
    data = copy.deepcopy(data)
    for _ in range(int(rng.choice([1, 2, 3], p=[0.6, 0.3, 0.1]))):
        pick(rng, MUTATIONS)(rng, data)
    return "dict", data


def toml_text(data: dict) -> str:
    """``data`` written as TOML (every key quoted, tables as sections, tables inside lists inline)."""
    lines = []

    def emit(table, prefix):
        if prefix:
            lines.append(f"[{prefix}]")
        for key, value in table.items():
            if not isinstance(value, dict):
                lines.append(f"{quoted(key)} = {toml_value(value)}")
        for key, value in table.items():
            if isinstance(value, dict):
                emit(value, f"{prefix}.{quoted(key)}" if prefix else quoted(key))

    emit(data, "")
    return "\n".join(lines) + "\n"


def quoted(key) -> str:
    return '"' + str(key).replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_value(value) -> str:
    """One TOML value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quoted(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quoted(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and abs(value) == float("inf"):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def mutants(seed: int, count: int, scenarios: dict | None = None):
    """``count`` mutants of the shipped scenarios from the seed ``seed``, each with the example arm it is
    checked against: its own (when it names an example) or, one time in four, any other."""
    rng = np.random.default_rng(seed)
    scenarios = scenarios or example_scenarios()
    arms = arm_names()
    for _ in range(count):
        kind, item = mutant(rng, scenarios)
        yield kind, item, pick(rng, arms) if rng.random() < 1 / 4 else None
