"""The closed loop's C contract before any compiler: its forward derivatives are those of its derivatives and
outputs, checked against central differences (the loop FMU ships them as fmi2GetDirectionalDerivative).

The loop's derivative reuses the plant's own (``CompiledDynamics.directional``, which never differentiates a
factorisation) along the controller's response to the seed; these tests hold that chain rule to the loop's
undifferentiated Functions."""

from __future__ import annotations

import numpy as np
import pytest

import flexfmu
from flexfmu.control.scenario import load_scenario
from flexfmu.targets.loop import loop_system


@pytest.mark.parametrize("name", ["pd_circle", "delta_circle"])
def test_the_loops_directional_derivatives_are_central_differences_of_its_functions(name):
    scenario = load_scenario(name)
    model = flexfmu.build_model(flexfmu.load_arm(scenario.arm_path))
    system = loop_system(model, scenario)
    functions = system.functions
    rng = np.random.default_rng(11)
    p = np.array(list(system.parameters.values()))
    pc = np.concatenate([p, functions["constants"](p).full().ravel()])
    n = len(system.start_state)
    discrete = np.array([d.start for d in system.discrete])
    discrete[0] = 0.05  # a sample inside the move, where the references change
    x = np.concatenate([system.start_state + rng.normal(0.0, 1e-4, n), discrete])
    seed = np.concatenate([rng.normal(0.0, 1.0, n), np.zeros(len(discrete))])
    none = np.zeros(0)
    dxdot, dy = (v.full().ravel() for v in functions["directional"](x, none, pc, seed, none))

    def values(state):
        return np.concatenate([functions["derivatives"](state, none, pc).full().ravel(),
                               functions["outputs"](state, none, pc).full().ravel()])

    eps = 1e-6
    central = (values(x + eps * seed) - values(x - eps * seed)) / (2 * eps)
    exact = np.concatenate([dxdot, dy])
    assert np.abs(exact).max() > 1.0  # the seed moves the loop
    np.testing.assert_allclose(exact, central, rtol=1e-5, atol=1e-5 * np.abs(exact).max())
