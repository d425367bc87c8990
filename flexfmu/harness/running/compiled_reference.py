"""The reference's integrator: an adaptive one-step method compiled to C, one step at a time.

The reference integrates the Model's own graph (``model.state_derivative``:
the closed-form M, h and B with an LDL solve), not the articulated-body
passes the FMU's C runs, so it stays an independent implementation.

Why not CVODES: a multistep method must restart wherever the held input
jumps, which in a closed loop is every sample, and a restart begins at
order 1 with tiny steps: 10 000 cold starts in a 10 s run at 1 kHz.
A one-step method needs none: a jump of the input at a sample is simply the
start of the next step, and the step size is carried from sample to sample.
The step is DOP853, or ROS34PW2 for a stiff arm
(``flexfmu.harness.running.reference_steps`` says which and why). One step
(all stages and the error norm), the sampled control law and the sample loop
are C (CasADi's code generator plus
``flexfmu/harness/running/c/ffref_driver.c``), compiled once per model, law
and integrator and cached by content (``flexfmu.codegen.cache``), so a whole
closed-loop run is one call into C.

Sources over :data:`LARGE_SOURCE` (the Delta robot's: its Model's graph
makes 3.1 MB of straight-line C) compile at -O0: gcc's -O2 register
allocation grows faster than the code on them (48 s against 6 s), for runs
2.6 times slower (the whole ``delta_pick_place``: 12 s against 4.5 s), so a
first cross-check, and every test run, which starts with an empty cache,
takes a third of the time. The serial arms' sources (at most 0.35 MB)
compile at -O2 in seconds.
"""

from __future__ import annotations

import ctypes
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

import casadi as ca
import numpy as np

from flexfmu.codegen.cache import cached_file, content_hash
from flexfmu.harness.running.reference_steps import ReferenceIntegrator
from flexfmu.targets.build import BuildError, compiler

CHUNK = 500  # samples per call into C, between progress reports
LARGE_SOURCE = 1_000_000  # characters of generated C above which the reference compiles at -O0 (module docstring)


class ReferenceError(RuntimeError):
    """The integrator failed (the step size fell below round-off or the state is not finite)."""


def control_function(model, controller) -> ca.Function:
    """(x, u, p, r, k) -> the law's torque from the measured outputs of state x (under the held
    input u) of ``controller``, a ``flexfmu.control.controllers.SampledController`` of ``model``."""
    n, nu, npar = len(model.states), len(model.inputs), len(model.parameters)
    x, u, p = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("p", npar)
    law = controller.law.function
    r, k = ca.MX.sym("r", law.size1_in(1)), ca.MX.sym("k", law.size1_in(2))
    y = model.outputs(x[:n], x[n:], u, p)
    measured = ca.vertcat(*[y[model.output_names.index(name)] for name in controller.inputs])
    return ca.Function("ffref_control", [x, u, p, r, k], [law(measured, r, k)])


def _source(functions: list[ca.Function], closed_loop: bool, error_order: int) -> str:
    with tempfile.TemporaryDirectory(prefix="flexfmu-ref-") as tmp:
        generator = ca.CodeGenerator("ffref_generated.c", {"with_header": False})
        for function in functions:
            generator.add(function)
        generator.generate(tmp + "/")
        generated = Path(tmp, "ffref_generated.c").read_text()
    driver = (resources.files("flexfmu.harness.running") / "c" / "ffref_driver.c").read_text()
    defines = f"\n#define FFREF_ERROR_ORDER {error_order}.0\n" + ("#define FFREF_CLOSED_LOOP\n" if closed_loop else "")
    return generated + defines + driver


def _compile(source: str, output: Path) -> None:
    c_file = output.with_suffix(".c")
    c_file.write_text(source)
    try:
        level = "-O0" if len(source) > LARGE_SOURCE else "-O2"
        done = subprocess.run([compiler(), level, "-fPIC", "-shared", "-o", str(output), str(c_file), "-lm"],
                              capture_output=True, text=True)
    finally:
        c_file.unlink(missing_ok=True)
    if done.returncode != 0:
        raise BuildError(f"compiling the reference failed:\n{done.stdout}{done.stderr}")


def _pointer(array: np.ndarray):
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


class CompiledReference:
    """The compiled reference of ``model`` by ``integrator``, closed over ``controller``'s law when it is a
    sampled law (``controller`` None or any other controller: inputs are given per sample).

    Parameters
    ----------
    model : Model
    integrator : ReferenceIntegrator
        The adaptive step (``flexfmu.harness.running.reference_steps``); its tolerances are the run's defaults.
    controller : SampledController, optional
        Its law (not its gains or reference, which are run arguments) is compiled into the loop.
    """

    def __init__(self, model, integrator: ReferenceIntegrator, controller=None):
        self.model, self.integrator = model, integrator
        self.nx, self.nu = 2 * len(model.states), len(model.inputs)
        functions = [integrator.step(model)]
        self.closed_loop = controller is not None and hasattr(controller, "law")
        if self.closed_loop:
            functions.append(control_function(model, controller))
        source = _source(functions, self.closed_loop, integrator.error_order)
        library = cached_file(f"reference-{content_hash(source)}.so", lambda path: _compile(source, path))
        self._run = ctypes.CDLL(str(library)).ffref_run
        self._run.restype = ctypes.c_int

    def run(self, step: float, count: int, x0, p, inputs=None, references=None, gains=None, u0=None,
            rtol: float | None = None, atol: float | None = None, progress=None, first_step: float | None = None):
        """Advance ``count`` samples of ``step`` seconds from ``x0`` at parameters ``p``.

        Parameters
        ----------
        step : float
            The sample step, s; the input is held over each sample.
        count : int
            Number of samples to integrate.
        x0, p : array
            Initial state [q; qd] and parameters.
        inputs : array (count, nu), optional
            Open loop: the input held over each sample.
        references, gains : array, optional
            Closed loop: the law's reference sample r_k per sample (count rows) and its gains.
        u0 : array, optional
            Closed loop: the input before the first sample (zeros by default); the measured outputs
            may depend on it through the accelerations.
        rtol, atol : float, optional
            Relative and absolute tolerances of each step's error (the integrator's defaults when None).
        progress : callable, optional
            ``progress(done, count)`` every :data:`CHUNK` samples.
        first_step : float, optional
            The step size to try first (``step`` when None): pass the last call's, to continue a run.

        Returns
        -------
        tuple
            (states: count + 1 rows, applied inputs: count rows, number of accepted steps, the step size to
            try next).
        """
        closed = references is not None
        rtol = self.integrator.rtol if rtol is None else rtol
        atol = self.integrator.atol if atol is None else atol
        if closed and not self.closed_loop:
            raise ValueError("this reference was compiled without a control law")
        x = np.array(x0, float)
        u = np.zeros(self.nu) if u0 is None else np.array(u0, float)
        p = np.ascontiguousarray(p, float)
        states, applied = np.zeros((count + 1, self.nx)), np.zeros((count, self.nu))
        data = np.ascontiguousarray(references if closed else inputs, float).reshape(count, -1)
        gains = np.ascontiguousarray(gains if closed else [0.0], float)
        h, steps = ctypes.c_double(first_step or step), ctypes.c_long(0)
        for start in range(0, count, CHUNK):
            stop = min(count, start + CHUNK)
            block = np.ascontiguousarray(data[start:stop])
            status = self._run(
                ctypes.c_int(stop - start), ctypes.c_double(step), ctypes.c_int(self.nx), ctypes.c_int(self.nu),
                ctypes.c_int(block.shape[1]), _pointer(x), _pointer(u), _pointer(p),
                _pointer(block), _pointer(block), _pointer(gains), ctypes.c_int(int(closed)),
                ctypes.c_double(rtol), ctypes.c_double(atol), ctypes.byref(h),
                _pointer(states[start:stop]), _pointer(applied[start:stop]), ctypes.byref(steps))
            if status:
                raise ReferenceError(f"the reference integrator failed in the sample at t = "
                                     f"{(start + status - 1) * step:.6g} s (step size below round-off or a "
                                     f"non-finite state)")
            if progress:
                progress(stop, count)
        states[count] = x
        return states, applied, steps.value, h.value
