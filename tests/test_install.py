"""flexfmu installs like a library: from its wheel, into a fresh virtual
environment, and runs from outside the source tree with nothing but its
package data (example arms, scenarios, C sources)."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(command, cwd, **kwargs):
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, command))}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.slow
@pytest.mark.compiler
def test_the_wheel_runs_the_demo_in_a_fresh_environment(tmp_path):
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp_path / "dist",
         ROOT], cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("flexfmu-*.whl")
    venv.create(tmp_path / "env", with_pip=True)
    python = tmp_path / "env" / "bin" / "python"
    # no byte-compiling of every installed module ahead of time (half of the install): the demo compiles what
    # it imports
    run([python, "-m", "pip", "install", "-q", "--no-compile", wheel], cwd=tmp_path, timeout=1200)

    where = run([python, "-c", "import flexfmu, flexfmu.data as d; print(flexfmu.__file__); print(d.arm_names())"],
                cwd=tmp_path).stdout
    assert str(tmp_path / "env") in where and str(ROOT) not in where
    assert "yu_chen_2dof" in where
    missing = subprocess.run([python, "-c", "import harness"], cwd=tmp_path, capture_output=True, text=True)
    assert missing.returncode != 0, "the wheel must not install a top-level 'harness' package"

    run([tmp_path / "env" / "bin" / "flexfmu", "demo", "--out", "main"], cwd=tmp_path, timeout=1800)
    report = (tmp_path / "main" / "report.md").read_text()
    assert "Result: **PASS**" in report
    assert (tmp_path / "main" / "yu_chen_2dof.fmu").is_file()


def test_ci_installs_the_system_tools_before_the_readme_test_command():
    """.ci/run calls scripts/install-tools.sh (apt-get, non-interactive) and then the README's test command
    verbatim; the script is valid bash and installs the packages the delivery tests need."""
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    readme = (ROOT / "README.md").read_text()
    test_command = next(line for line in readme.splitlines() if "pytest -q" in line)
    assert ci.index("scripts/install-tools.sh") < ci.index(test_command)
    script = ROOT / "scripts" / "install-tools.sh"
    assert os.access(script, os.X_OK)
    subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text()
    assert "DEBIAN_FRONTEND=noninteractive apt-get install -y" in text
    for package in ("gcc-mingw-w64-x86-64-win32", "wine64", "octave", "liboctave-dev"):
        assert package in text
