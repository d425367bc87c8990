"""Check what the optimiser predicts by running the exported FMU.

The closed loop is run with the scenario's law and the given gains through
the co-simulation FMU (FMPy, fmi2DoStep per sample), and the cost of
``flexfmu.control.cost`` is computed from the recorded outputs: an
independent evaluation of the number the optimiser minimised, since nothing
of the Python graph runs inside the FMU.
"""

from __future__ import annotations

import numpy as np

from flexfmu.control.controllers import SampledController
from flexfmu.control.cost import CostWeights, cost_signals, run_cost
from flexfmu.dynamics.metadata import PLATFORM_POSITION, TIP_POSITION
from flexfmu.harness.reports.envelope import envelope_outputs
from flexfmu.harness.running.runner import run_fmu


def fmu_closed_loop(path, model, scenario, law, gains, weights: CostWeights = CostWeights()):
    """(cost, Result) of the scenario's closed loop through the FMU at ``path``
    with ``gains`` (in the law's order); the Result records the cost's signals and the validity envelope.

    Parameters
    ----------
    path : str or Path
        The plant FMU (co-simulation).
    model : Model
        The model the FMU was exported from; names its outputs and inputs.
    scenario : Scenario
        Gives the reference, sample grid, initial state and sample step.
    law : ControlLaw
        The law run with sample and hold, here in Python.
    gains : array
        The law's gains, in its gain order.
    weights : CostWeights
    """
    reference = scenario.reference(model)
    controller = SampledController(law, np.asarray(gains, float), reference)
    result = run_fmu(path, model, controller, scenario.grid(), scenario.start_values(model),
                     record=cost_signals(model) + envelope_outputs(model))
    return run_cost(model, result, reference, weights, scenario.step), result


def fmu_gradient_fd(path, model, scenario, law, gains, names, weights: CostWeights = CostWeights(),
                    relative_step: float = 1e-4) -> np.ndarray:
    """Central finite differences of the FMU's closed-loop cost over the gains ``names``.

    Parameters
    ----------
    path, model, scenario, law, gains, weights :
        As for :func:`fmu_closed_loop`; ``gains`` is the point of the gradient.
    relative_step : float
        Each gain is moved by +- this times its magnitude (times 1 for a zero gain).

    Returns
    -------
    numpy.ndarray
        dJ/dgain for each of ``names``, in that order.
    """
    gains, order = np.asarray(gains, float), list(law.gains)
    gradient = []
    for name in names:
        k = order.index(name)
        delta = relative_step * (abs(gains[k]) or 1.0)
        plus, minus = gains.copy(), gains.copy()
        plus[k] += delta
        minus[k] -= delta
        gradient.append((fmu_closed_loop(path, model, scenario, law, plus, weights)[0]
                         - fmu_closed_loop(path, model, scenario, law, minus, weights)[0]) / (2 * delta))
    return np.array(gradient)


def residual_tip_vibration(model, result, after: float) -> float:
    """RMS distance (m) of the end effector from its mean position over the
    samples at t >= ``after``: what is left of the motion once the move is over.
    ``result`` is a run (a Result) recording the end effector's position outputs of ``model`` (a serial
    arm's tip, a Delta robot's platform centre)."""
    window = result.time >= after - 1e-9
    names = model.outputs_of(TIP_POSITION) or model.outputs_of(PLATFORM_POSITION)
    tip = np.column_stack([result[name][window] for name in names])
    return float(np.sqrt(np.mean(np.sum((tip - tip.mean(axis=0)) ** 2, axis=1))))
