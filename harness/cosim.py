"""Run a scenario: monolithic reference, co-simulation master, model-exchange master.

All three apply the scenario's controller the same way, the way Simulink and
VeriStand run a plant: at each sample time t_k the controller reads the
plant's measured outputs and its torques are held until t_k+1. Results are
labelled Results with the same signal names, sampled at the same times, so
any two can be compared.

- ``reference_run``: the Model integrated by CVODES (rtol 1e-10), restarted
  at each sample (or once per constant stretch of an open-loop input).
- ``cosimulation_run``: a co-simulation FMU (native C or Python-backed) stepped
  with fmi2DoStep.
- ``model_exchange_run``: a model-exchange FMU integrated by FMPy's CVode,
  restarted at each sample because the held input jumps there.
"""

from __future__ import annotations

import numpy as np
import fmpy
from fmpy.fmi2 import FMU2Model, FMU2Slave

from harness.reference import integrate_held, integrator_options, labelled_result, reference_dae
from harness.result import Result


def grid_of(scenario) -> np.ndarray:
    return np.linspace(0.0, scenario.duration, int(round(scenario.duration / scenario.step)) + 1)


def initial_state(model, scenario) -> np.ndarray:
    x0 = np.zeros(2 * len(model.coordinates))
    for name, value in scenario.initial.items():
        x0[model.coordinates.index(name)] = value
    return x0


def recorded_names(model, scenario, controller, extra=()) -> list[str]:
    names = list(dict.fromkeys(list(scenario.outputs) + list(controller.inputs) + list(extra)))
    return names + [name for name in model.inputs if name not in names]


def reference_run(model, scenario, controller, p=None, progress=None) -> Result:
    """The closed loop with the Model integrated by CVODES."""
    import casadi as ca

    p = model.nominal_parameters if p is None else np.asarray(p, float)
    grid, n = grid_of(scenario), len(model.coordinates)
    x0 = initial_state(model, scenario)
    if controller.open_loop:
        u_grid = np.array([controller(t, None) for t in grid])
        states = integrate_held(model, grid, x0, u_grid, p, 1e-10, 1e-12, "bdf")
        return labelled_result(model, grid, states, u_grid, p)
    nu = len(model.inputs)
    integrator = ca.integrator("closed_loop", "cvodes", reference_dae(model), 0.0, scenario.step,
                               integrator_options(1e-10, 1e-12, "bdf"))
    measured_index = [model.output_names.index(name) for name in controller.inputs]
    states, inputs = [x0], []
    u = np.zeros(nu)
    for k, t in enumerate(grid):
        y = np.array(model.outputs(states[-1][:n], states[-1][n:], u, p)).ravel()
        u = np.asarray(controller(t, y[measured_index]), float)
        inputs.append(u)
        if k + 1 < len(grid):
            states.append(integrator(x0=states[-1], p=np.concatenate([u, p]))["xf"].full().ravel())
        if progress:
            progress(k + 1, len(grid))
    return labelled_result(model, grid, np.array(states), np.array(inputs), p)


class FmuController:
    """A controller FMU (co-simulation) used as a controller callable: at each
    call it is stepped to t, given the measurements, and its torques read."""

    open_loop = False

    def __init__(self, path, inputs: list[str], outputs: list[str]):
        md = fmpy.read_model_description(str(path))
        self.inputs, self.outputs = list(inputs), list(outputs)
        self._fmu = FMU2Slave(guid=md.guid, unzipDirectory=fmpy.extract(str(path)),
                              modelIdentifier=md.coSimulation.modelIdentifier, instanceName="controller")
        vrs = {v.name: v.valueReference for v in md.modelVariables}
        self._in = [vrs[name] for name in self.inputs]
        self._out = [vrs[name] for name in self.outputs]
        self._fmu.instantiate()
        self._fmu.setupExperiment(startTime=0.0)
        self._fmu.enterInitializationMode()
        self._fmu.exitInitializationMode()
        self._time = 0.0

    def __call__(self, t: float, measured: np.ndarray) -> np.ndarray:
        if t > self._time:
            self._fmu.doStep(self._time, t - self._time)
            self._time = t
        self._fmu.setReal(self._in, list(map(float, measured)))
        return np.array(self._fmu.getReal(self._out))

    def close(self) -> None:
        self._fmu.terminate()
        self._fmu.freeInstance()


def _open(path, kind: str, start_values: dict):
    md = fmpy.read_model_description(str(path))
    interface = md.coSimulation if kind == "cs" else md.modelExchange
    cls = FMU2Slave if kind == "cs" else FMU2Model
    fmu = cls(guid=md.guid, unzipDirectory=fmpy.extract(str(path)),
              modelIdentifier=interface.modelIdentifier, instanceName=f"plant-{kind}")
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    fmu.instantiate()
    fmu.setupExperiment(startTime=0.0)
    if start_values:
        fmu.setReal([vrs[name] for name in start_values], [float(v) for v in start_values.values()])
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    return fmu, vrs, md


def _sampled_loop(fmu, vrs, model, scenario, controller, advance, progress, record=()) -> Result:
    """Sample and hold: at each t_k read the measurements, apply the
    controller's torques, record, then ``advance(t_k, t_k+1)`` the plant."""
    names = recorded_names(model, scenario, controller, record)
    recorded, measured, torque = ([vrs[n] for n in names], [vrs[n] for n in controller.inputs],
                                  [vrs[n] for n in controller.outputs])
    grid, rows = grid_of(scenario), []
    for k, t in enumerate(grid):
        u = controller(t, np.array(fmu.getReal(measured)))
        fmu.setReal(torque, list(map(float, u)))
        rows.append(fmu.getReal(recorded))
        if k + 1 < len(grid):
            advance(t, grid[k + 1])
        if progress:
            progress(k + 1, len(grid))
    fmu.terminate()
    fmu.freeInstance()
    return Result(grid, names, [""] * len(names), np.array(rows))


def cosimulation_run(path, model, scenario, controller, start_values=None, progress=None, record=()) -> Result:
    """The closed loop with a co-simulation FMU stepped at the scenario's
    step; ``record`` names outputs to record besides the scenario's."""
    fmu, vrs, _ = _open(path, "cs", {**scenario.initial, **(start_values or {})})
    return _sampled_loop(fmu, vrs, model, scenario, controller,
                         lambda t, t_next: fmu.doStep(t, t_next - t), progress, record)


def model_exchange_run(path, model, scenario, controller, start_values=None, rtol=1e-10, progress=None) -> Result:
    """The closed loop with a model-exchange FMU integrated by FMPy's CVode."""
    from fmpy.sundials import CVodeSolver

    fmu, vrs, md = _open(path, "me", {**scenario.initial, **(start_values or {})})
    fmu.enterContinuousTimeMode()
    solver = CVodeSolver(
        nx=md.numberOfContinuousStates, nz=0, get_x=fmu.getContinuousStates, set_x=fmu.setContinuousStates,
        get_dx=fmu.getDerivatives, get_z=fmu.getEventIndicators, get_nominals=fmu.getNominalsOfContinuousStates,
        set_time=fmu.setTime, input=None, startTime=0.0, maxStep=scenario.step, relativeTolerance=rtol,
        maxNumSteps=100_000,
    )

    def advance(t, t_next):
        solver.reset(t)  # the held input jumped: restart the multistep method
        solver.step(t, t_next)
        fmu.setTime(t_next)

    return _sampled_loop(fmu, vrs, model, scenario, controller, advance, progress)
