"""Whatever a scenario file holds, flexfmu refuses it in one line or can run it: a fuzz test over mutated
shipped scenarios, and the findings that motivated it.

Mutants (``tests/scenario_mutants.py``, seeded) of the shipped scenarios go
through ``load_scenario`` / ``scenario_from_dict`` and ``Scenario.check``
against an example arm's Model (its own, or another one). The only outcomes
allowed are a ScenarioError whose message is one line, or a valid scenario:
one that compares some output, starts from a finite state, has a finite
reference and builds its controller. Anything else (another exception, a
hang) is a bug. The checks build no Model per mutant (the example Models are
built once), so 2,000 mutants take seconds; with the slow tests, 4,000 more
from another seed. Some refused mutants also go
through ``flexfmu crosscheck``, which must exit with status 2, one line on
stderr and no output folder.
"""

from __future__ import annotations

import collections
import os
from pathlib import Path

import numpy as np
import pytest

import flexfmu
from flexfmu.cli import main
from flexfmu.control.scenario import MAX_SAMPLES, ScenarioError, load_scenario, scenario_from_dict
from flexfmu.data import resolve_arm
from flexfmu.dynamics.metadata import TORQUE
from tests.scenario_mutants import example_scenarios, mutants, toml_text

SEED = int(os.environ.get("FLEXFMU_FUZZ_SEED", "2024"))
CLI_EVERY = 300  # every so many refused mutants also go through the command line


class Models:
    """The example arms' Models, each built once."""

    def __init__(self):
        self.built = {}

    def __call__(self, arm: str):
        path = str(resolve_arm(arm))
        if path not in self.built:
            self.built[path] = flexfmu.build_model(flexfmu.load_arm(path))
        return self.built[path]


def sound(scenario, model, built: set) -> None:
    """Assert that a scenario that passed its checks can run on ``model``: it compares outputs, its grid has
    its step, its start state is finite and its controller builds (these two once per arm and start, and per
    arm and controller structure: the gains are numbers the law takes as they are, and the reference,
    sampled by the check, is not part of the law)."""
    compared = scenario.compared(model)
    assert compared and all(tolerance > 0 for _, tolerance in compared)
    grid = scenario.grid()
    assert 2 <= len(grid) <= MAX_SAMPLES + 1 and abs(grid[1] - grid[0] - scenario.step) <= 1e-9 * scenario.step
    start = repr((model.arm.name, scenario.initial))
    if start not in built:
        built.add(start)
        assert np.all(np.isfinite(scenario.initial_state(model)))
    skip = {*scenario.controller_kind.gains, "reference"}
    structure = repr((model.arm.name, {k: v for k, v in scenario.controller.items() if k not in skip},
                      scenario.motion))
    if structure not in built:
        built.add(structure)
        controller = scenario.build_controller(model)
        assert controller.outputs == model.inputs_of(TORQUE) or controller.outputs == model.inputs


def refused_by_the_command_line(path, arm: str, out) -> None:
    """``flexfmu crosscheck ARM --scenario PATH --out OUT`` refuses the scenario: status 2, one line on stderr,
    nothing written."""
    import contextlib
    import io

    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        status = main(["crosscheck", arm, "--scenario", str(path), "--out", str(out)])
    message = stderr.getvalue()
    assert status == 2 and message.startswith("error: ") and message.count("\n") == 1, message
    assert not out.exists()


def outcome(kind: str, item, arm: str | None, tmp_path, models: Models, built: set) -> tuple[str, object]:
    """("refused", its file or TOML text) for a ScenarioError in one line, ("valid", None) for a sound
    scenario; anything else raises."""
    path = tmp_path / "scenario.toml"
    try:
        if kind == "toml":
            path.write_bytes(item)
            scenario = load_scenario(path)
        else:
            scenario = scenario_from_dict(item, "mutant.toml")
        model = models(arm or scenario.arm)
        scenario.check(model)
    except ScenarioError as error:
        message = str(error)
        assert message and "\n" not in message, f"not one line: {message!r}"
        return "refused", path if kind == "toml" else toml_text(item)
    sound(scenario, model, built)
    return "valid", None


def run_fuzz(seed: int, count: int, tmp_path) -> collections.Counter:
    counts, models, built = collections.Counter(), Models(), set()
    for index, (kind, item, arm) in enumerate(mutants(seed, count, example_scenarios())):
        try:
            verdict, file = outcome(kind, item, arm, tmp_path, models, built)
            counts[verdict] += 1
            if verdict == "refused" and counts["refused"] % CLI_EVERY == 0:
                if not isinstance(file, Path):
                    file = tmp_path / "scenario.toml"
                    file.write_text(toml_text(item))
                refused_by_the_command_line(file, arm or "rigid_2link", tmp_path / f"out{index}")
                counts["refused on the command line"] += 1
        except Exception as error:
            raise AssertionError(f"mutant {index} of seed {seed} ({kind}, arm {arm}): {type(error).__name__}: "
                                 f"{error}\n{item!r}"[:3000]) from error
    print(f"seed {seed}: {dict(counts)}")
    return counts


def test_two_thousand_mutant_scenarios_are_refused_in_one_line_or_sound(tmp_path):
    counts = run_fuzz(SEED, 2000, tmp_path)
    assert counts["refused"] + counts["valid"] == 2000
    # both outcomes are reached: the test is not vacuous either way
    assert counts["refused"] > 1200 and counts["valid"] > 150 and counts["refused on the command line"] >= 5


@pytest.mark.slow
def test_four_thousand_more_mutant_scenarios(tmp_path):
    counts = run_fuzz(SEED + 1, 4000, tmp_path)
    assert counts["refused"] > 2400 and counts["valid"] > 300
