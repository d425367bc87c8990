"""Shared fixtures: the example arms, their Models and their native FMUs (each built once per run).

The suite runs in parallel worker processes, each taking whole test files (pytest-xdist, ``-n auto --dist
loadfile`` in pyproject.toml; ``-n 0`` runs it in this process, as a debugger wants). Everything built to disk goes to one content-hashed cache of the run
(``flexfmu.codegen.cache``), shared by the workers and by the subprocesses of tests: the first process that
needs a file builds it while the others wait for it.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import fmpy
import pytest

import flexfmu
from flexfmu.data import arm_names, resolve_arm

# built FMUs and compiled references (flexfmu.codegen.cache) go to a cache of this test run, not the user's:
# made by the first pytest process, inherited by its workers (which xdist starts after this import) and by
# the subprocesses of tests, removed when the run ends
WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if WORKER is None:
    os.environ["FLEXFMU_CACHE"] = tempfile.mkdtemp(prefix="flexfmu-test-cache-")

ARMS_DIR = resolve_arm("yu_chen_2dof").parent  # the example arms' folder (package data)
EXAMPLE_ARMS = arm_names()


def pytest_unconfigure(config):
    if WORKER is None:
        shutil.rmtree(os.environ["FLEXFMU_CACHE"], ignore_errors=True)


@cache
def example_model(name: str, method: str | None = None):
    return flexfmu.build_model(flexfmu.load_arm(ARMS_DIR / f"{name}.toml"), method)


@pytest.fixture(params=EXAMPLE_ARMS)
def arm_name(request) -> str:
    return request.param


@cache
def _exported(name: str, settings, target: str):
    """The export report of ``example_fmu``, its FMU built once per run in the run's cache (by the first worker
    that asks; a report pickled beside the FMU tells the others what the export decided)."""
    from flexfmu.codegen.cache import cache_dir, cached_file, content_hash
    from flexfmu.harness.running.fmu_cache import source_fingerprint
    from flexfmu.targets import export

    stem = f"example-{name}-{target}-{content_hash(repr(settings), source_fingerprint())}"

    def build(report_path: Path) -> None:
        report = export(example_model(name), cache_dir() / f"{stem}.fmu", settings, target)
        report_path.write_bytes(pickle.dumps(report))

    return pickle.loads(cached_file(f"{stem}.report", build).read_bytes())


@pytest.fixture(scope="session")
def example_fmu():
    """``example_fmu(name, settings=ExportSettings(), target="fmi2") -> ExportReport``: the example arm
    ``name`` exported once per test run for each settings and target, whichever test asks first (a full
    FMU build compiles the whole model, for win64 too where MinGW-w64 is present: seconds to a minute). The
    file is shared by every test and worker: a test that alters an FMU works on a copy."""
    from flexfmu.targets import ExportSettings

    return lambda name, settings=None, target="fmi2": _exported(name, settings or ExportSettings(), target)


@pytest.fixture(scope="session")
def wine():
    """``run(args) -> CompletedProcess``: runs a Windows program under Wine (64-bit, headless, quiet),
    in one Wine prefix for the whole test session, created on first use and removed at the end."""
    if shutil.which("wine") is None or shutil.which("wineboot") is None:
        pytest.skip("Wine is not installed (scripts/install-tools.sh installs it)")
    prefix = tempfile.mkdtemp(prefix="flexfmu-wine-")
    env = {key: value for key, value in os.environ.items() if key != "DISPLAY"}
    env.update(WINEPREFIX=prefix, WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=")
    try:
        subprocess.run(["wineboot", "--init"], env=env, capture_output=True, timeout=600, check=True)
        yield lambda args: subprocess.run(["wine", *map(str, args)], env=env, capture_output=True, text=True,
                                          timeout=600, check=False)
    finally:
        subprocess.run(["wineserver", "-k"], env=env, capture_output=True, timeout=120, check=False)
        shutil.rmtree(prefix, ignore_errors=True)


@cache
def unzipped(path) -> str:
    """The FMU at ``path`` extracted once per process, beside it (so into the run's own folders, never the
    system's temporary directory): a loaded library must not be overwritten by a second extraction, which is
    also why each worker has its own."""
    folder = Path(path).with_suffix(f".{WORKER or 'main'}.unzipped")
    return fmpy.extract(str(path), unzipdir=str(folder))
