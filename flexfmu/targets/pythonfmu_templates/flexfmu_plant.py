"""PythonFMU slave of a flexfmu arm: the plant as a co-simulation FMU.

Why it exists: a second, independent implementation of the plant FMU that
runs the Model's own CasADi Functions in Python with CVODES (BDF, tight
tolerances), so the native C FMU (generated code, fixed-step integrator) can
be cross-checked under the same master, start values and output names. It
is a desktop tool: the importing machine needs Python with flexfmu and
casadi, and it is far too slow for real-time targets.

The exporter copies this file into the FMU's ``resources/`` with the arm
TOML and ``flexfmu_config.json`` (see ``flexfmu.targets.pythonfmu``).
"""

from __future__ import annotations

from pathlib import Path

import casadi as ca
import numpy as np
from pythonfmu import DefaultExperiment, Fmi2Slave, Real
from pythonfmu.enums import Fmi2Causality, Fmi2Initial, Fmi2Status, Fmi2Variability

import flexfmu
from flexfmu.targets.pythonfmu_templates.description import complete_description, read_config
from flexfmu.targets.variables import VR_ACCELERATION, VR_BLOCK, VR_INPUT, VR_OUTPUT, VR_PARAMETER, VR_STATE, fmu_variables

# variables the master sets: value-reference block -> attribute holding the values
SETTABLE = {VR_PARAMETER: "_p", VR_STATE: "_x", VR_INPUT: "_u"}


def held_input_integrator(model, rtol: float, atol: float) -> ca.Function:
    """CVODES (BDF) over one communication step, built once.

    Time is scaled to s = (t - t_k) / h on [0, 1], so one integrator serves
    every step size: dx/ds = h f(x, u, p) with CVODES' parameter [u; p; h].
    A call is a fresh CVODES run, i.e. the integrator restarts at every
    step, where the held input may jump.
    """
    n, nu, npar = len(model.states), len(model.inputs), len(model.parameters)
    x, up = ca.MX.sym("x", 2 * n), ca.MX.sym("up", nu + npar + 1)
    ode = up[-1] * model.state_derivative(x, up[:nu], up[nu:nu + npar])
    options = {"abstol": atol, "reltol": rtol, "linear_multistep_method": "bdf", "max_num_steps": 1_000_000}
    return ca.integrator("flexfmu_plant_step", "cvodes", {"x": x, "p": up, "ode": ode}, 0.0, 1.0, options)


def observation(model) -> ca.Function:
    """(x, u, p) -> (accelerations, outputs), the values computed from the state."""
    n, nu, npar = len(model.states), len(model.inputs), len(model.parameters)
    x, u, p = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("p", npar)
    q, qd = x[:n], x[n:]
    return ca.Function("observation", [x, u, p], [model.forward_dynamics(q, qd, u, p), model.outputs(q, qd, u, p)])


class FlexfmuPlant(Fmi2Slave):
    """The arm in ``resources/``: states, parameters, torques in, outputs out.

    Variables have the native FMU's names, causalities, variabilities and
    units (``flexfmu.targets.variables.fmu_variables``), not its value
    references: PythonFMU numbers variables in registration order.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        config = read_config(self.resources)
        self.modelName = config["model_identifier"]
        self.description = config["description"]
        self.default_experiment = DefaultExperiment(
            start_time=0.0, stop_time=config["stop_time"], step_size=config["communication_step"],
            tolerance=config["rtol"],
        )
        model = flexfmu.build_model(flexfmu.load_arm(Path(self.resources) / config["arm"]))
        n = len(model.states)
        self._x = np.zeros(2 * n)
        self._u = np.zeros(len(model.inputs))
        self._p = model.nominal_parameters
        self._step = held_input_integrator(model, config["rtol"], config["atol"])
        self._observation = observation(model)
        self._observed = None  # (qdd, y) at the current (x, u, p); None when stale
        self._units = {}
        for variable in fmu_variables(model):
            self._register(variable)

    def _register(self, variable) -> None:
        block, k = divmod(variable.vr, VR_BLOCK)
        block *= VR_BLOCK
        if block in SETTABLE:
            name = SETTABLE[block]
            getter, setter = (lambda: getattr(self, name)[k]), (lambda value: self._set(name, k, value))
        else:
            which = {VR_ACCELERATION: 0, VR_OUTPUT: 1}[block]
            getter, setter = (lambda: self._observe()[which][k]), None
        self.register_variable(Real(
            variable.name, start=variable.start, description=variable.description,
            causality=Fmi2Causality[variable.causality], variability=Fmi2Variability[variable.variability],
            initial=Fmi2Initial[variable.initial] if variable.initial else None,
            getter=getter, setter=setter,
        ), nested=False)
        self._units[variable.name] = variable.unit

    def _set(self, name: str, k: int, value: float) -> None:
        getattr(self, name)[k] = value
        self._observed = None

    def _observe(self) -> tuple[np.ndarray, np.ndarray]:
        """Accelerations and outputs, computed on first read after a change:
        outputs depend on the inputs directly (through the accelerations)."""
        if self._observed is None:
            qdd, y = self._observation(self._x, self._u, self._p)
            self._observed = (qdd.full().ravel(), y.full().ravel())
        return self._observed

    def to_xml(self, model_options=dict()):
        return complete_description(super().to_xml(model_options), self._units)

    def do_step(self, current_time: float, step_size: float) -> bool:
        if step_size <= 0:
            return True
        try:
            xf = self._step(x0=self._x, p=np.concatenate([self._u, self._p, [step_size]]))["xf"].full().ravel()
        except RuntimeError as error:
            self.log(f"CVODES failed on [{current_time}, {current_time + step_size}] s: {error}", Fmi2Status.error)
            return False
        if not np.all(np.isfinite(xf)):
            self.log(f"non-finite state at t = {current_time + step_size} s", Fmi2Status.error)
            return False
        self._x = xf
        self._observed = None
        return True
