"""The reference: compiled one-step DOP853 over the Model's graph. It must
agree with an independent integrator (CVODES restarted at every sample, as
the reference used to run) and with itself at a 100 times tighter
tolerance, through both of its paths (a compiled law, a Python controller)."""

from __future__ import annotations

import dataclasses

import casadi as ca
import numpy as np
import pytest

from flexfmu.control.scenario import load_scenario
from flexfmu.harness.running.reference import integrator_options, reference_dae, reference_run
from tests.conftest import example_model

pytestmark = pytest.mark.compiler

ANGLES = ["joint[1].angle", "joint[2].angle"]


@pytest.fixture(scope="module")
def case():
    scenario = dataclasses.replace(load_scenario("pd_circle"), duration=0.3)
    model = example_model(scenario.arm)
    return model, scenario, scenario.build_controller(model)


def _cvodes_restarted_per_sample(model, scenario, controller):
    """The closed loop with CVODES (BDF, rtol 1e-12) restarted at every sample, written out here."""
    n, p = len(model.coordinates), model.nominal_parameters
    integrator = ca.integrator("check", "cvodes", reference_dae(model), 0.0, scenario.step,
                               integrator_options(1e-12, 1e-14, "bdf"))
    index = [model.output_names.index(name) for name in controller.inputs]
    x, u, states = scenario.initial_state(model), np.zeros(len(model.inputs)), []
    for t in scenario.grid():
        states.append(x)
        u = controller(t, np.array(model.outputs(x[:n], x[n:], u, p)).ravel()[index])
        x = integrator(x0=x, p=np.concatenate([u, p]))["xf"].full().ravel()
    return np.array(states)


def test_compiled_reference_agrees_with_cvodes_restarted_at_every_sample(case):
    model, scenario, controller = case
    run = reference_run(model, scenario, controller)
    states = _cvodes_restarted_per_sample(model, scenario, controller)
    n = len(model.coordinates)
    for k, name in enumerate(model.coordinates):
        assert np.max(np.abs(run[name] - states[:, k])) < 1e-9, name
        assert np.max(np.abs(run[f"der({name})"] - states[:, n + k])) < 1e-7, name


def test_the_reference_error_is_far_below_the_crosscheck_tolerances(case):
    model, scenario, controller = case
    run = reference_run(model, scenario, controller)
    tight = reference_run(model, scenario, controller, rtol=1e-12, atol=1e-14)
    for name, tolerance in scenario.compared(model):
        assert np.max(np.abs(run[name] - tight[name])) < 1e-3 * tolerance, name


class _PythonController:
    """The scenario's controller behind a plain callable: the reference's per-sample path."""

    open_loop = False

    def __init__(self, controller):
        self.controller, self.inputs, self.outputs = controller, controller.inputs, controller.outputs

    def __call__(self, t, measured):
        return self.controller(t, measured)


def test_a_python_controller_runs_the_same_loop_as_the_compiled_law(case):
    model, scenario, controller = case
    compiled = reference_run(model, scenario, controller)
    python = reference_run(model, scenario, _PythonController(controller))
    for name in ANGLES + list(model.inputs):
        assert np.max(np.abs(compiled[name] - python[name])) < 1e-12, name
