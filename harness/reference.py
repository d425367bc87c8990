"""High-accuracy reference simulation of a Model with CasADi's CVODES.

Inputs are held constant over each output interval (sample and hold, as a
fixed-step co-simulation master applies them). CVODES runs once over the
whole grid with tight tolerances; ``method="adams"`` is the non-dissipative
choice for energy checks, ``"bdf"`` the robust one for stiff arms.
"""

from __future__ import annotations

from typing import Callable

import casadi as ca
import numpy as np

from flexfmu.dynamics import Model
from harness.result import Result


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
    duration, step : float
        End time and output interval (s); inputs are held over each interval.
    x0 : array, optional
        Initial state [q; qd] (zeros by default).
    inputs : callable t -> u, optional
        Evaluated at the start of each interval (zeros by default).
    p : array, optional
        Parameter vector (nominal by default).
    method : {"bdf", "adams"}
        CVODES linear multistep method.
    """
    n, nu = len(model.coordinates), len(model.inputs)
    grid = np.linspace(0.0, duration, int(round(duration / step)) + 1)
    x0 = np.zeros(2 * n) if x0 is None else np.asarray(x0, float)
    p = model.nominal_parameters if p is None else np.asarray(p, float)
    u_grid = np.array([np.zeros(nu) if inputs is None else np.asarray(inputs(t), float) for t in grid])

    x, u, pp = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("p", p.size)
    dae = {"x": x, "u": u, "p": pp, "ode": model.state_derivative(x, u, pp)}
    options = {
        "abstol": atol, "reltol": rtol, "linear_multistep_method": method,
        "max_num_steps": 1_000_000,
    }
    if method == "adams":
        options["nonlinear_solver_iteration"] = "functional"
    integrator = ca.integrator("reference", "cvodes", dae, 0.0, grid[1:], options)
    states = integrator(x0=x0, u=u_grid[:-1].T, p=p)["xf"].full().T
    states = np.vstack([x0, states])

    y = model.outputs.map(len(grid))(states[:, :n].T, states[:, n:].T, u_grid.T, p).full().T
    coords = model.coordinates
    names = coords + [f"der({c})" for c in coords] + model.inputs + model.output_names
    units = _coordinate_units(coords) + [u + "/s" for u in _coordinate_units(coords)]
    units += ["N.m"] * nu + model.output_units
    return Result(grid, names, units, np.hstack([states, u_grid, y]))


def _coordinate_units(coords: list[str]) -> list[str]:
    return ["m" if name.startswith("f[") else "rad" for name in coords]
