"""High-accuracy reference simulation of a Model (its graph, not the FMU's C).

``simulate_reference`` runs the Model under a function of time,
``reference_run`` under a scenario's controller, sampled and held as the
FMU runners apply it (``flexfmu.harness.running.runner``).

Inputs are held constant over each output interval (sample and hold, as a
fixed-step co-simulation master applies them). Open loop, CVODES integrates
each run of equal inputs in one go and is restarted where the held input
changes (a multistep method carried across a jump of the right-hand side
fails its error test); when the input changes at nearly every sample, a
scenario's run goes to the compiled one-step integrator below (one call into
C, no restarts), and ``integrate_held`` reuses one integrator over a single
interval from sample to sample. ``method="adams"`` is the
non-dissipative choice for energy checks, ``"bdf"`` the robust one for stiff
arms. In closed loop the input changes at every sample, and a compiled
one-step integrator (``flexfmu.harness.running.compiled_reference``) runs
the loop without restarts: DOP853, or ROS34PW2 for a stiff arm
(``flexfmu.harness.running.reference_steps``). States are x = [q; qd] over the model's
state coordinates (``Model.states``: a prescribed joint's angle, rate and
acceleration are inputs, held like torques).
"""

from __future__ import annotations

from typing import Callable

import casadi as ca
import numpy as np

from flexfmu.dynamics import Model
from flexfmu.harness.running.result import Result

# up to this many stretches of equal held input, CVODES integrates each in one go; beyond, a scenario's run goes
# to the compiled one-step integrator (reference_run) and integrate_held restarts at every sample
MAX_SEGMENTS = 50


def integrator_options(rtol: float, atol: float, method: str) -> dict:
    """CVODES options for relative and absolute tolerances ``rtol``, ``atol`` and the multistep ``method``
    (``"bdf"`` or ``"adams"``, the latter with functional iteration)."""
    options = {"abstol": atol, "reltol": rtol, "linear_multistep_method": method, "max_num_steps": 1_000_000}
    if method == "adams":
        options["nonlinear_solver_iteration"] = "functional"
    return options


def reference_dae(model: Model) -> dict:
    """ODE of ``model`` with the held input and the parameters together as CVODES' p."""
    n, nu, npar = len(model.states), len(model.inputs), len(model.parameters)
    x, up = ca.MX.sym("x", 2 * n), ca.MX.sym("up", nu + npar)
    return {"x": x, "p": up, "ode": model.state_derivative(x, up[:nu], up[nu:])}


def integrate_held(model: Model, grid: np.ndarray, x0: np.ndarray, u_grid: np.ndarray, p: np.ndarray,
                   rtol: float, atol: float, method: str) -> np.ndarray:
    """States of ``model`` on ``grid`` from ``x0``, with ``u_grid``[k] held over [grid[k], grid[k+1]), at
    parameters ``p``; CVODES with tolerances ``rtol``, ``atol`` and multistep ``method`` (``"bdf"`` or
    ``"adams"``), restarted where the input changes."""
    dae, options = reference_dae(model), integrator_options(rtol, atol, method)
    changes = held_stretches(u_grid)
    states = [np.asarray(x0, float)]
    if len(changes) - 1 <= MAX_SEGMENTS:
        for a, b in zip(changes, changes[1:]):
            integrator = ca.integrator("reference", "cvodes", dae, grid[a], grid[a + 1:b + 1], options)
            xf = integrator(x0=states[-1], p=np.concatenate([u_grid[a], p]))["xf"].full().T
            states.extend(xf)
    else:
        step = grid[1] - grid[0]
        integrator = ca.integrator("reference", "cvodes", dae, 0.0, step, options)
        for k in range(len(grid) - 1):
            states.append(integrator(x0=states[-1], p=np.concatenate([u_grid[k], p]))["xf"].full().ravel())
    return np.array(states)


def held_stretches(u_grid: np.ndarray) -> list[int]:
    """The sample indices where a stretch of equal held input begins in ``u_grid`` (one row per sample, the
    last row the input at the end, never held), then the last sample: stretch k runs from entry k to k + 1."""
    last = len(u_grid) - 1
    return [0] + [k for k in range(1, last) if np.any(u_grid[k] != u_grid[k - 1])] + [last]


def simulate_reference(
    model: Model,
    duration: float,
    step: float,
    x0: np.ndarray | None = None,
    inputs: Callable[[float], np.ndarray] | None = None,
    p: np.ndarray | None = None,
    rtol: float = 1e-10,
    atol: float = 1e-12,
    method: str = "bdf",
) -> Result:
    """Integrate ``model`` and return states, inputs and outputs on a grid.

    Parameters
    ----------
    model : Model
    duration, step : float
        End time and output interval (s); inputs are held over each interval.
    x0 : array, optional
        Initial state [q; qd] over the state coordinates (the start pose at rest by default).
    inputs : callable t -> u, optional
        Evaluated at the start of each interval (zeros by default).
    p : array, optional
        Parameter vector (nominal by default).
    rtol, atol : float
        CVODES relative and absolute tolerances.
    method : {"bdf", "adams"}
        CVODES linear multistep method.

    Returns
    -------
    Result
        States, their derivatives' names ``der(...)``, inputs and outputs on the grid 0, step, ..., duration.
    """
    nu = len(model.inputs)
    grid = np.linspace(0.0, duration, int(round(duration / step)) + 1)
    x0 = model.start_state.copy() if x0 is None else np.asarray(x0, float)
    p = model.nominal_parameters if p is None else np.asarray(p, float)
    u_grid = np.array([np.zeros(nu) if inputs is None else np.asarray(inputs(t), float) for t in grid])
    states = integrate_held(model, grid, x0, u_grid, p, rtol, atol, method)
    return labelled_result(model, grid, states, u_grid, p)


def labelled_result(model: Model, grid, states, u_grid, p, method: str = "") -> Result:
    """States, inputs and outputs of a run of ``model`` as a Result: ``states`` (one row per time of
    ``grid``) and the held inputs ``u_grid``, with the outputs computed at parameters ``p``; ``method`` names
    the integrator."""
    n = len(model.states)
    y = model.outputs.map(len(grid))(states[:, :n].T, states[:, n:].T, u_grid.T, p).full().T
    coords = model.states
    names = coords + [f"der({c})" for c in coords] + model.inputs + model.output_names
    units = [c.unit for c in model.state_layout] + [c.unit + "/s" for c in model.state_layout]
    units += [s.unit for s in model.input_table] + model.output_units
    return Result(grid, names, units, np.hstack([states, u_grid, y]), method)


def reference_run(model, scenario, controller, p=None, progress=None, rtol: float | None = None,
                  atol: float | None = None, integrator: str | None = None) -> Result:
    """A scenario's run of the Model, the controller applied with sample and hold; its ``method`` names the
    integrator.

    Open loop, CVODES (BDF) integrates each stretch of constant input in one
    go, unless it holds more than :data:`MAX_SEGMENTS` such stretches (planned torques, a prescribed
    motion): then, as in closed loop, the compiled one-step integrator runs the samples. In closed loop a
    compiled one-step integrator
    (``flexfmu.harness.running.compiled_reference``) runs every sample without a
    restart: DOP853, or ROS34PW2 where the arm is stiff at the scenario's step
    (``flexfmu.harness.running.reference_steps.reference_integrator``); a sampled law is
    compiled into its loop, any other controller (an FMU, a Python object) is called once per sample.

    Parameters
    ----------
    model : Model
    scenario : Scenario
        Gives the sample grid, step and initial state.
    controller : controller
        From ``scenario.build_controller(model)``: ``controller(t, y)`` returns u from the measured outputs
        ``controller.inputs`` (y is None for an open-loop one).
    p : array, optional
        Plant parameters (nominal by default).
    progress : callable, optional
        Called as progress(done, total) as the samples of a closed loop are done.
    rtol, atol : float, optional
        Relative and absolute tolerances of the integrator (CVODES: 1e-10 and 1e-12; the compiled
        integrator's own defaults, :data:`~flexfmu.harness.running.reference_steps.REFERENCE_INTEGRATORS`).
    integrator : str, optional
        The compiled integrator by name, a key of ``REFERENCE_INTEGRATORS`` (chosen from the arm's
        stiffness when None).
    """
    from flexfmu.harness.running.compiled_reference import CompiledReference
    from flexfmu.harness.running.reference_steps import REFERENCE_INTEGRATORS, reference_integrator

    p = model.nominal_parameters if p is None else np.asarray(p, float)
    grid, n = scenario.grid(), len(model.states)
    x0 = scenario.initial_state(model, p)
    if integrator is not None and integrator not in REFERENCE_INTEGRATORS:
        raise ValueError(f"integrator must be one of {', '.join(REFERENCE_INTEGRATORS)}, got {integrator!r}")
    u_grid = np.array([controller(t, None) for t in grid]) if controller.open_loop else None
    if u_grid is not None and len(held_stretches(u_grid)) - 1 <= MAX_SEGMENTS:
        states = integrate_held(model, grid, x0, u_grid, p, 1e-10 if rtol is None else rtol,
                                1e-12 if atol is None else atol, "bdf")
        return labelled_result(model, grid, states, u_grid, p, "CVODES (BDF)")
    integrator = REFERENCE_INTEGRATORS[integrator] if integrator else reference_integrator(model, scenario.step)
    if u_grid is not None:
        states, _, _, _ = CompiledReference(model, integrator).run(scenario.step, len(grid) - 1, x0, p,
                                                                   inputs=u_grid[:-1], rtol=rtol, atol=atol)
        return labelled_result(model, grid, states, u_grid, p, integrator.name)
    reference = CompiledReference(model, integrator, controller)
    measured_index = [model.output_names.index(name) for name in controller.inputs]

    def measure(x, u):
        return np.array(model.outputs(x[:n], x[n:], u, p)).ravel()[measured_index]

    count = len(grid) - 1
    if reference.closed_loop:
        references = np.array([controller.reference_sample(t) for t in grid[:-1]])
        states, applied, _, _ = reference.run(scenario.step, count, x0, p, references=references,
                                              gains=controller.gains, rtol=rtol, atol=atol, progress=progress)
    else:
        states, applied, h = [np.asarray(x0, float)], [], None
        for k, t in enumerate(grid[:-1]):
            u = np.asarray(controller(t, measure(states[-1], applied[-1] if applied else np.zeros(len(model.inputs)))),
                           float)
            xs, _, _, h = reference.run(scenario.step, 1, states[-1], p, inputs=u[None, :], rtol=rtol, atol=atol,
                                        first_step=h)
            states.append(xs[-1])
            applied.append(u)
            if progress:
                progress(k + 1, count)
        states, applied = np.array(states), np.array(applied)
    last = np.asarray(controller(grid[-1], measure(states[-1], applied[-1])), float)
    return labelled_result(model, grid, states, np.vstack([applied, last]), p, integrator.name)
