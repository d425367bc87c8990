"""Shared fixtures: the example arms and their Models (built once per run)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

import flexfmu

ARMS_DIR = Path(__file__).resolve().parent.parent / "fmus" / "arms"
EXAMPLE_ARMS = sorted(path.stem for path in ARMS_DIR.glob("*.toml"))


@lru_cache(maxsize=None)
def example_model(name: str, method: str = "closed_form"):
    return flexfmu.build_model(flexfmu.load_arm(ARMS_DIR / f"{name}.toml"), method)


@pytest.fixture(params=EXAMPLE_ARMS)
def arm_name(request) -> str:
    return request.param
