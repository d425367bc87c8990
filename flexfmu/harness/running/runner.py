"""Run an FMU with FMPy the way Simulink and VeriStand run a plant.

At each sample time t_k the controller reads the plant's measured outputs
and its torques are held until t_k+1 (sample and hold; open-loop torques are
a controller that ignores its measurements). The plant is either a
co-simulation FMU stepped with doStep, or a model-exchange FMU integrated by
FMPy's CVode and restarted at each sample, because the held input jumps
there; FMI 2.0 and FMI 3.0 FMUs run the same way (an FMI 3 instance is driven
through the FMI 2 method names, see :class:`Fmi3AsFmi2`). The result is a
labelled Result sampled on the grid, so it compares directly with the
reference (``flexfmu.harness.running.reference``).

Every FMU is extracted into a temporary folder that is removed when the run
ends, whatever happens.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager

import fmpy
import numpy as np
from fmpy.fmi2 import FMU2Model, FMU2Slave
from fmpy.fmi3 import FMU3Model, FMU3Slave

from flexfmu.harness.running.result import Result

INTERFACES = ("cs", "me")


@contextmanager
def extracted(path):
    """(model description, folder) of the FMU at ``path``, unpacked into a
    temporary folder that is removed on exit."""
    folder = tempfile.mkdtemp(prefix="flexfmu-fmu-")
    try:
        yield fmpy.read_model_description(str(path)), fmpy.extract(str(path), unzipdir=folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class Fmi3AsFmi2:
    """An FMPy FMI 3.0 instance (FMU3Slave, FMU3Model) under the FMI 2.0 method names the runner calls
    (getReal, setReal, doStep, getDerivatives); every other method is the instance's own."""

    def __init__(self, fmu):
        self._fmu = fmu

    def __getattr__(self, name):
        return getattr(self._fmu, name)

    def getReal(self, vrs):
        """The Float64 values of the value references ``vrs``."""
        return self._fmu.getFloat64(vrs)

    def setReal(self, vrs, values):
        """Set the Float64 variables ``vrs`` to ``values``."""
        self._fmu.setFloat64(vrs, values)

    def doStep(self, t, h):
        """One communication step of size ``h`` from ``t``."""
        self._fmu.doStep(t, h)

    def getDerivatives(self, derivatives, nx):
        """Fill ``derivatives`` with the ``nx`` state derivatives."""
        return self._fmu.getContinuousStateDerivatives(derivatives, nx)


def _instantiate(md, folder, interface: str, name: str, start_values: dict):
    """An initialised FMPy instance (FMI 2 names) and its value references by name."""
    description = md.coSimulation if interface == "cs" else md.modelExchange
    fmi3 = md.fmiVersion.startswith("3")
    cls = {("cs", False): FMU2Slave, ("me", False): FMU2Model, ("cs", True): FMU3Slave, ("me", True): FMU3Model}[
        interface, fmi3]
    fmu = cls(guid=md.guid, unzipDirectory=folder, modelIdentifier=description.modelIdentifier, instanceName=name)
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    fmu.instantiate()
    if fmi3:
        fmu = Fmi3AsFmi2(fmu)
    else:
        fmu.setupExperiment(startTime=0.0)
    if start_values:
        unknown = sorted(set(start_values) - set(vrs))
        if unknown:
            fmu.freeInstance()
            raise KeyError(f"the FMU has no variable {', '.join(unknown)}")
        fmu.setReal([vrs[n] for n in start_values], [float(v) for v in start_values.values()])
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    if fmi3 and interface == "me":
        fmu.updateDiscreteStates()  # FMI 3 model exchange leaves initialization in event mode
    return fmu, vrs


def run_fmu(path, model, controller, grid, start_values: dict | None = None, interface: str = "cs",
            record=(), progress=None, rtol: float = 1e-10) -> Result:
    """Run the FMU at ``path`` under ``controller`` on the sample times ``grid``.

    Parameters
    ----------
    path : str or Path
        The plant FMU (native or Python-backed).
    model : Model
        The arm's Model, for the names of its inputs.
    controller : callable
        ``controller(t, measured) -> torques`` with ``inputs`` (measured
        output names) and ``outputs`` (the torques' input names), as
        ``flexfmu.control.controllers``.
    grid : array
        Sample times, starting at 0.
    start_values : dict, optional
        Parameters and initial coordinates by name.
    interface : {"cs", "me"}
        Co-simulation (one doStep per sample) or model exchange (FMPy's CVode
        at ``rtol``, restarted at each sample where the torques change).
    record : sequence of str
        Outputs to record besides what the controller reads and the inputs.
    progress : callable, optional
        ``progress(done, total)`` after each sample.

    Returns
    -------
    Result
        The recorded signals at every sample.
    """
    if interface not in INTERFACES:
        raise ValueError(f"interface must be one of {INTERFACES}, got {interface!r}")
    names = list(dict.fromkeys([*record, *controller.inputs]))
    names += [name for name in model.inputs if name not in names]
    with extracted(path) as (md, folder):
        fmu, vrs = _instantiate(md, folder, interface, f"plant-{interface}", start_values or {})
        try:
            advance = _stepper(fmu, md, interface, grid, rtol)
            recorded, measured = [vrs[n] for n in names], [vrs[n] for n in controller.inputs]
            torque = [vrs[n] for n in controller.outputs]
            rows, held = [], None
            for k, t in enumerate(grid):
                u = list(map(float, controller(t, np.array(fmu.getReal(measured)))))
                fmu.setReal(torque, u)
                rows.append(fmu.getReal(recorded))
                if k + 1 < len(grid):
                    advance(t, grid[k + 1], restart=u != held)
                held = u
                if progress:
                    progress(k + 1, len(grid))
            fmu.terminate()
        finally:
            fmu.freeInstance()
            fmu.freeLibrary()
    return Result(np.asarray(grid, float), names, [""] * len(names), np.array(rows))


def _stepper(fmu, md, interface: str, grid, rtol: float):
    """advance(t, t_next, restart) for the instance; ``restart`` says the held input jumped at t."""
    if interface == "cs":
        return lambda t, t_next, restart: fmu.doStep(t, t_next - t)
    from fmpy.sundials import CVodeSolver

    fmu.enterContinuousTimeMode()
    step = float(grid[1] - grid[0]) if len(grid) > 1 else 1.0
    solver = CVodeSolver(
        nx=md.numberOfContinuousStates, nz=0, get_x=fmu.getContinuousStates, set_x=fmu.setContinuousStates,
        get_dx=fmu.getDerivatives, get_z=fmu.getEventIndicators, get_nominals=fmu.getNominalsOfContinuousStates,
        set_time=fmu.setTime, input=None, startTime=0.0, maxStep=step, relativeTolerance=rtol,
        maxNumSteps=100_000,
    )

    def advance(t, t_next, restart):
        if restart:  # the held input jumped: restart the multistep method
            solver.reset(t)
        solver.step(t, t_next)
        fmu.setTime(t_next)
        fmu.completedIntegratorStep()  # the FMU checks its validity envelope at accepted points

    return advance


class FmuController:
    """A controller FMU (co-simulation) used as a controller callable: at each
    call it is stepped to t, given the measurements, and its torques read.
    Use it as a context manager, so its folder and instance are released."""

    open_loop = False

    def __init__(self, path, inputs: list[str], outputs: list[str]):
        self.path, self.inputs, self.outputs = path, list(inputs), list(outputs)

    def __enter__(self) -> FmuController:
        self._files = extracted(self.path)
        md, folder = self._files.__enter__()
        self._fmu, vrs = _instantiate(md, folder, "cs", "controller", {})
        self._in = [vrs[name] for name in self.inputs]
        self._out = [vrs[name] for name in self.outputs]
        self._time = 0.0
        return self

    def __exit__(self, *exc) -> None:
        self._fmu.terminate()
        self._fmu.freeInstance()
        self._fmu.freeLibrary()
        self._files.__exit__(*exc)

    def __call__(self, t: float, measured: np.ndarray) -> np.ndarray:
        if t > self._time:
            self._fmu.doStep(self._time, t - self._time)
            self._time = t
        self._fmu.setReal(self._in, list(map(float, measured)))
        return np.array(self._fmu.getReal(self._out))
