"""Shared fixtures: the example arms and their Models (built once per run)."""

from __future__ import annotations

import os
import tempfile
from functools import lru_cache

import pytest

import flexfmu
from flexfmu.data import arm_names, resolve_arm

# built FMUs and compiled references (flexfmu.harness.cache) go to a cache of this test session, shared by
# its tests (and their subprocesses), not the user's
os.environ["FLEXFMU_CACHE"] = tempfile.mkdtemp(prefix="flexfmu-test-cache-")

ARMS_DIR = resolve_arm("yu_chen_2dof").parent  # the example arms' folder (package data)
EXAMPLE_ARMS = arm_names()


@lru_cache(maxsize=None)
def example_model(name: str, method: str = "closed_form"):
    return flexfmu.build_model(flexfmu.load_arm(ARMS_DIR / f"{name}.toml"), method)


@pytest.fixture(params=EXAMPLE_ARMS)
def arm_name(request) -> str:
    return request.param
