"""Shared fixtures: the example arms, their Models and their native FMUs (each built once per run)."""

from __future__ import annotations

import os
import tempfile
from functools import lru_cache
from pathlib import Path

import fmpy
import pytest

import flexfmu
from flexfmu.data import arm_names, resolve_arm

# built FMUs and compiled references (flexfmu.codegen.cache) go to a cache of this test session, shared by
# its tests (and their subprocesses), not the user's
os.environ["FLEXFMU_CACHE"] = tempfile.mkdtemp(prefix="flexfmu-test-cache-")

ARMS_DIR = resolve_arm("yu_chen_2dof").parent  # the example arms' folder (package data)
EXAMPLE_ARMS = arm_names()


@lru_cache(maxsize=None)
def example_model(name: str, method: str | None = None):
    return flexfmu.build_model(flexfmu.load_arm(ARMS_DIR / f"{name}.toml"), method)


@pytest.fixture(params=EXAMPLE_ARMS)
def arm_name(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def example_fmu(tmp_path_factory):
    """``example_fmu(name, settings=ExportSettings(), target="fmi2") -> ExportReport``: the example arm
    ``name`` exported once per test session for each settings and target, whichever test asks first (a full
    FMU build compiles the whole model, for win64 too where MinGW-w64 is present: seconds to a minute). The
    file is shared: a test that alters an FMU works on a copy."""
    from flexfmu.targets import ExportSettings, export

    reports = {}

    def exported(name: str, settings=None, target: str = "fmi2"):
        settings = settings or ExportSettings()
        key = (name, settings, target)
        if key not in reports:
            folder = tmp_path_factory.mktemp(f"{name}-{target}")
            reports[key] = export(example_model(name), folder / f"{name}.fmu", settings, target)
        return reports[key]

    return exported


@pytest.fixture(scope="session")
def wine():
    """``run(args) -> CompletedProcess``: runs a Windows program under Wine (64-bit, headless, quiet),
    in one Wine prefix for the whole test session, created on first use and removed at the end."""
    import os
    import shutil
    import subprocess
    import tempfile

    if shutil.which("wine") is None or shutil.which("wineboot") is None:
        pytest.skip("Wine is not installed (scripts/install-tools.sh installs it)")
    prefix = tempfile.mkdtemp(prefix="flexfmu-wine-")
    env = {key: value for key, value in os.environ.items() if key != "DISPLAY"}
    env.update(WINEPREFIX=prefix, WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=")
    try:
        subprocess.run(["wineboot", "--init"], env=env, capture_output=True, timeout=600, check=True)
        yield lambda args: subprocess.run(["wine", *map(str, args)], env=env, capture_output=True, text=True,
                                          timeout=600)
    finally:
        subprocess.run(["wineserver", "-k"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(prefix, ignore_errors=True)


@lru_cache(maxsize=None)
def unzipped(path) -> str:
    """The FMU at ``path`` extracted once, beside it (so into pytest's own temporary folders, never the system's
    temporary directory): a loaded library must not be overwritten by a second extraction."""
    folder = Path(path).with_suffix(".unzipped")
    return fmpy.extract(str(path), unzipdir=str(folder))
