"""PythonFMU slave of a scenario's controller.

Why it exists: the scenarios' controllers are Python objects that the
reference and the co-simulation master call directly; as an FMU the same law
can sit next to a plant FMU in any FMI master, so a closed loop can be run
entirely between FMUs and compared with the monolithic reference.

Semantics are sample and hold without delay: the torques are evaluated when
read, at the FMU's current time (the start time before the first step,
t + h after doStep(t, h)) with the inputs as last set, so after the master
sets the measurements of communication point t_k, reading the outputs gives
u_k = controller(t_k, measurements). The exporter copies this file into the
FMU's ``resources/`` with the scenario and arm TOML files and
``flexfmu_config.json``; the importing machine needs Python with flexfmu.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pythonfmu import DefaultExperiment, Fmi2Slave, Real
from pythonfmu.enums import Fmi2Causality, Fmi2Variability

import flexfmu
from flexfmu.targets.pythonfmu_templates.description import complete_description, read_config
from flexfmu.control.scenario import load_scenario


class FlexfmuController(Fmi2Slave):
    """Inputs: the measured plant outputs the controller reads; outputs: its torques."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        config = read_config(self.resources)
        resources = Path(self.resources)
        self.modelName = config["model_identifier"]
        self.description = config["description"]
        scenario = load_scenario(resources / config["scenario"])
        self.default_experiment = DefaultExperiment(
            start_time=0.0, stop_time=scenario.duration, step_size=scenario.step,
        )
        model = flexfmu.build_model(flexfmu.load_arm(resources / config["arm"]))
        self.controller = scenario.build_controller(model)
        units = dict(zip(model.output_names, model.output_units))
        self._time = 0.0
        self._measured = np.zeros(len(self.controller.inputs))
        self._command = None  # torques at (time, measured); None when stale
        self._units = {}
        for k, name in enumerate(self.controller.inputs):
            self._add(Real(name, start=0.0, description=f"measured plant output {name}",
                           causality=Fmi2Causality.input, variability=Fmi2Variability.continuous,
                           getter=lambda k=k: self._measured[k], setter=lambda value, k=k: self._measure(k, value)),
                      units.get(name, ""))
        for k, name in enumerate(self.controller.outputs):
            self._add(Real(name, description=f"commanded {name}, held until the next communication point",
                           causality=Fmi2Causality.output, variability=Fmi2Variability.continuous,
                           getter=lambda k=k: self._torques()[k]),
                      "N.m")

    def _add(self, variable: Real, unit: str) -> None:
        self.register_variable(variable, nested=False)
        self._units[variable.name] = unit

    def _measure(self, k: int, value: float) -> None:
        self._measured[k] = value
        self._command = None

    def _torques(self) -> np.ndarray:
        if self._command is None:
            self._command = np.asarray(self.controller(self._time, self._measured.copy()), float).ravel()
        return self._command

    def to_xml(self, model_options=dict()):
        return complete_description(super().to_xml(model_options), self._units)

    def setup_experiment(self, start_time: float, stop_time=None, tolerance=None) -> None:
        self._time = float(start_time)
        self._command = None

    def do_step(self, current_time: float, step_size: float) -> bool:
        self._time = current_time + step_size
        self._command = None
        return True
