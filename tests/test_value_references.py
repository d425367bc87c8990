"""Value references are a contract: Simulink and VeriStand projects map them.

``tests/data/value_references/<arm>.json`` holds, for every example arm, the
value reference of every FMU variable as released (generated once, from the
FMU export of the commit before the structure redesign, and committed). A
change that renumbers a variable (reordering an output list, inserting a
parameter) fails here; new variables may only be added. A new example arm
gets its file with ``python -m tests.test_value_references NAME``, which
refuses to overwrite an existing one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import flexfmu
from flexfmu.targets.variables import fmu_variables
from tests.conftest import EXAMPLE_ARMS, example_model

LOCKS = Path(__file__).parent / "data" / "value_references"


@pytest.mark.parametrize("arm_name", EXAMPLE_ARMS)
def test_value_references_of_the_example_arms_are_as_released(arm_name):
    lock = LOCKS / f"{arm_name}.json"
    assert lock.is_file(), f"no value reference lock for {arm_name}: run python -m tests.test_value_references {arm_name}"
    released = json.loads(lock.read_text())
    now = {v.name: v.vr for v in fmu_variables(example_model(arm_name))}
    renumbered = {name: (vr, now.get(name)) for name, vr in released.items() if now.get(name) != vr}
    assert renumbered == {}, "variables renumbered or removed (released vr, now)"
    assert len(set(now.values())) == len(now), "two variables share a value reference"


def write_lock(name: str) -> Path:
    """Write the lock of a new example arm (never overwrites)."""
    path = LOCKS / f"{name}.json"
    if path.exists():
        raise SystemExit(f"{path} exists: value references of a released arm are not regenerated")
    model = flexfmu.build_model(flexfmu.load_arm(name))
    path.write_text(json.dumps({v.name: v.vr for v in fmu_variables(model)}, indent=1) + "\n")
    return path


if __name__ == "__main__":
    for arm in sys.argv[1:]:
        print(f"wrote {write_lock(arm)}")
