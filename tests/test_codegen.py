"""flexfmu.codegen.generate_c: Functions written unoptimised into the same file as optimised ones."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess

import casadi as ca
import numpy as np
import pytest

from flexfmu.codegen import generate_c

GCC_X86_64 = shutil.which("gcc") is not None and platform.machine() in ("x86_64", "AMD64")


def toy_functions():
    """f and g sharing the Function ``shared``; g's forward derivative is g's own code."""
    x = ca.SX.sym("x", 3)
    shared = ca.Function("shared", [x], [ca.vertcat(ca.sin(x[0]) * x[1], ca.exp(x[2]) + x[0] ** 2)])
    xm = ca.MX.sym("x", 3)
    f = ca.Function("f", [xm], [ca.sum1(shared(xm))])
    seed = ca.MX.sym("dx", 3)
    g = ca.Function("g", [xm, seed], [ca.jtimes(shared(xm) * xm[0], xm, seed)])
    return f, g


def function_bodies(assembly: str) -> dict[str, str]:
    """Each function's assembly in gcc's x86-64 listing, by its label."""
    bodies = {}
    for match in re.finditer(r"^(\w+):\n(.*?)^\s+\.size\s+\1,", assembly, re.MULTILINE | re.DOTALL):
        bodies[match.group(1)] = match.group(2)
    return bodies


@pytest.mark.compiler
@pytest.mark.skipif(not GCC_X86_64, reason="reads gcc's x86-64 assembly: needs gcc on an x86-64 machine")
def test_unoptimised_functions_compile_without_optimisation_and_share_code(tmp_path):
    """Asked for -O2, gcc compiles the optimised Function without a frame pointer (as -O2 does on x86-64)
    and g's own code (its body and its forward derivative) with one (as -O0 does), the code they share once;
    the library computes what CasADi computes."""
    f, g = toy_functions()
    source, _ = generate_c([f], tmp_path, "toy", unoptimised=[g])
    text = source.read_text()
    names = dict(re.findall(r"^/\* (\w+):\(.*\*/\nstatic int casadi_(f\d+)\(", text, re.MULTILINE))
    assert list(names).count("shared") == 1 and {"f", "g", "fwd1_shared"} <= set(names)
    flags = ["-O2", "-fno-inline", "-fno-ipa-cp", "-fno-ipa-sra", "-fPIC", "-fno-asynchronous-unwind-tables"]
    subprocess.run(["gcc", *flags, "-S", str(source), "-o", str(tmp_path / "toy.s")], check=True)
    bodies = function_bodies((tmp_path / "toy.s").read_text())

    def framed(name):
        return "movq\t%rsp, %rbp" in bodies[f"toy_{names[name]}"]

    assert not framed("shared") and not framed("f")
    assert framed("g") and framed("fwd1_shared")
    # CasADi's own loader passes its integers as long long (the FMU's code uses int)
    subprocess.run(["gcc", "-O2", "-fPIC", "-shared", "-Dcasadi_int=long long int", str(source), "-o",
                    str(tmp_path / "toy.so"), "-lm"], check=True)
    x, dx = np.array([0.3, -1.2, 0.7]), np.array([1.0, 0.5, -2.0])
    library = str(tmp_path / "toy.so")
    assert np.allclose(ca.external("f", library)(x).full(), f(x).full(), rtol=1e-15, atol=0)
    assert np.allclose(ca.external("g", library)(x, dx).full(), g(x, dx).full(), rtol=1e-15, atol=0)
