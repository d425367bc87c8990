"""A casadi.Function compiled to C and loaded back, cached by content.

CasADi's virtual machine evaluates an expanded graph about ten times slower
than the same graph compiled; a fit evaluates its run and sensitivities a
few dozen times over thousands of samples, so ``flexfmu identify
--compile`` hands its per-step Functions here. The C is CasADi's code
generator's, compiled with -O1 (higher levels take minutes on these large
straight-line functions for little gain) into a shared library named by the
hash of the serialised Function (``flexfmu.harness.running.cache``): the first fit of an
arm, step and parameter set pays the compiler, every later one loads it.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import casadi as ca

from flexfmu.harness.running.cache import cached_file, content_hash
from flexfmu.targets.build import BuildError, compiler

FLAGS = ("-O1", "-shared", "-fPIC")


def compiled_function(function: ca.Function) -> ca.Function:
    """``function`` compiled to C (cached by content) and loaded as a casadi.Function of the same signature.

    Raises
    ------
    BuildError
        If there is no C compiler or the source does not compile.
    """
    name = function.name()

    def build(path: Path) -> None:
        with tempfile.TemporaryDirectory(prefix="flexfmu-function-") as work:
            generator = ca.CodeGenerator(f"{name}.c", {"with_header": False})
            generator.add(function)
            generator.generate(f"{work}/")
            done = subprocess.run([compiler(), *FLAGS, "-o", str(path), str(Path(work, f"{name}.c")), "-lm"],
                                  capture_output=True, text=True, check=False)
            if done.returncode:
                raise BuildError(f"compiling {name} failed:\n{done.stderr[-2000:]}")

    # the serialised Function names its graph exactly and costs far less than generating its C
    library = cached_file(f"function-{name}-{content_hash(function.serialize(), ' '.join(FLAGS))}.so", build)
    return ca.external(name, str(library))
