"""PythonFMU slave of a flexfmu arm: the plant as a co-simulation FMU.

Why it exists: a second implementation of the native FMU's discrete
system. It integrates the Model's own CasADi graph (closed-form M, h and B,
an LDL solve) with the native FMU's fixed-step scheme and internal step
(``flexfmu.integrate.step_function`` over
``flexfmu.dynamics.graph_dynamics.graph_dynamics``), where the native FMU runs
generated articulated-body passes. Same scheme, same step, same inputs: the
two must agree to round-off, so any difference is a defect of one of them,
not a tolerance. It is a desktop tool: the importing machine needs Python
with flexfmu and casadi, and it is far too slow for real-time targets.

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
from flexfmu.dynamics.graph_dynamics import graph_dynamics
from flexfmu.integrate import step_function
from flexfmu.targets.model_data import envelope_entries
from flexfmu.targets.pythonfmu_templates.description import complete_description, read_config
from flexfmu.targets.variables import VR_ACCELERATION, VR_BLOCK, VR_INPUT, VR_OUTPUT, VR_PARAMETER, VR_STATE, fmu_variables

# variables the master sets: value-reference block -> attribute holding the values
SETTABLE = {VR_PARAMETER: "_p", VR_STATE: "_x", VR_INPUT: "_u"}


def advance_function(model, integrator: str, h: float, substeps: int) -> ca.Function:
    """(x, u, p) -> the state after ``substeps`` fixed steps of size ``h`` of ``integrator`` with u
    held: one communication step, one call."""
    step = step_function(graph_dynamics(model), integrator)
    n, nu, npar = len(model.states), len(model.inputs), len(model.parameters)
    x, u, p = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("p", npar)
    x_next = x
    for _ in range(substeps):
        x_next = step(x_next, u, p, h)
    return ca.Function("flexfmu_plant_step", [x, u, p], [x_next])


def split_step(size: float, h: float) -> list[tuple[float, int]]:
    """The fixed steps of one communication step of ``size`` s with the internal step ``h``, as the native
    FMU's instance code takes them: [(h, n)] when ``size`` is a whole number n of h (to 1e-9), else the
    whole steps it holds and one shorter step for the rest."""
    whole = round(size / h)
    if whole >= 1 and abs(size - whole * h) <= 1e-9 * size:
        return [(h, whole)]
    whole = int(size // h)
    rest = size - whole * h
    if rest >= h:  # rounding of size / h just below an integer
        whole, rest = whole + 1, size - (whole + 1) * h
    return [(h, whole)] * (whole > 0) + [(rest, 1)] * (rest > 0)


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
        )
        model = flexfmu.build_model(flexfmu.load_arm(Path(self.resources) / config["arm"]))
        self._x = model.start_state.copy()
        self._u = model.start_inputs.copy()
        self._p = model.nominal_parameters
        self._model, self._integrator, self._h = model, config["integrator"], config["internal_step"]
        self._advance = {}  # (step size, count) -> advance_function
        self._observation = observation(model)
        self._observed = None  # (qdd, y) at the current (x, u, p); None when stale
        self._envelope = [(model.output_names[k], k, limit, model.parameter_table[limit].name, label)
                          for k, limit, label in envelope_entries(model)]
        self._warned = set()  # envelope quantities warned about (once each, as the native FMU does)
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
        xf = self._x
        for size, count in split_step(step_size, self._h):
            if (size, count) not in self._advance:
                self._advance[(size, count)] = advance_function(self._model, self._integrator, size, count)
            xf = self._advance[(size, count)](xf, self._u, self._p).full().ravel()
        if not np.all(np.isfinite(xf)):
            self.log(f"non-finite state at t = {current_time + step_size} s", Fmi2Status.error)
            return False
        self._x = xf
        self._observed = None
        self._check_envelope(current_time + step_size)
        return True

    def _check_envelope(self, time: float) -> None:
        """Warn once per quantity that is beyond its validity envelope at ``time`` (as the native FMU)."""
        y = self._observe()[1]
        for name, k, limit, limit_name, label in self._envelope:
            if name in self._warned or not abs(y[k]) > self._p[limit]:
                continue
            self._warned.add(name)
            self.log(f"t={time:.9g} s: {name} = {y[k]:.4g} is beyond the validity envelope (|value| <= "
                     f"{limit_name} = {self._p[limit]:.4g}): the {label}; results from here on are outside the "
                     f"model's validity (warned once)", Fmi2Status.warning)
