"""The S-function target without MATLAB: its C compiles against declarations of exactly the SimStruct and
MATLAB-array functions it uses, with MathWorks' documented signatures (tests/c/simulink), and the folder
it is exported into is an ordinary folder.

This proves that the S-function's C is well-formed and calls every Simulink function as documented; it
does not prove that Simulink runs it (docs/simulink.md says so). The MEX gateway is built and run under
GNU Octave in tests/test_matlab_glue.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from flexfmu.targets import ExportSettings, export
from tests.conftest import example_model

STAND_IN = Path(__file__).resolve().parent / "c" / "simulink"
SOURCE = Path(__file__).resolve().parent.parent / "flexfmu" / "targets" / "c" / "ffmu_sfunction.c"
SIMULINK_NAME = re.compile(r"\b((?:ss|mx)[A-Z]\w*)\s*\(")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The sfunction export of the two-link flexible arm of paper 000."""
    out = tmp_path_factory.mktemp("sfunction") / "yu_chen_sfun"
    export(example_model("yu_chen_2dof"), out, ExportSettings(), "sfunction")
    return out


@pytest.mark.compiler
def test_the_sfunction_compiles_against_the_documented_simstruct_functions(folder, tmp_path):
    """C99, every warning an error (an undeclared function, a wrong argument type, an unused method)."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.fail("no C compiler: the S-function's C cannot be checked")
    source = next(folder.glob("*_sfun.c"))
    done = subprocess.run([compiler, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                           "-I", str(STAND_IN), "-I", str(folder), "-c", str(source), "-o", str(tmp_path / "sfun.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "sfun.o").stat().st_size > 1000


def test_the_stand_in_header_declares_exactly_the_functions_the_sfunction_calls():
    """What the header declares is what the S-function calls: a function the S-function stops using leaves
    the header (and one it starts using must be declared there, with its documented signature)."""
    code = re.sub(r"/\*.*?\*/", "", SOURCE.read_text(), flags=re.S)
    used = set(SIMULINK_NAME.findall(code))
    header = re.sub(r"/\*.*?\*/", "", (STAND_IN / "simstruc.h").read_text(), flags=re.S)
    declared = set(SIMULINK_NAME.findall(header))
    assert used == declared, f"used only: {sorted(used - declared)}; declared only: {sorted(declared - used)}"
    assert len(declared) == 31


def test_the_sfunction_folder_has_the_permissions_of_an_ordinary_folder(folder, tmp_path):
    """It is written in a private temporary folder (0700) and moved into place: it must end up as a folder
    made with mkdir is, not private."""
    ordinary = tmp_path / "ordinary"
    ordinary.mkdir()
    assert os.stat(folder).st_mode & 0o777 == os.stat(ordinary).st_mode & 0o777
