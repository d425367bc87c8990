"""Gain tuning: minimise a closed loop's cost over some of its law's gains.

The optimiser is L-BFGS-B (bounds, no Hessian) on gains scaled by their
starting values, fed by the exact cost and adjoint gradient of
``ClosedLoop``. With limits on the cost's terms (for example tracking no
worse than with the starting gains) it is SLSQP, each limit an inequality
constraint with the term's own adjoint gradient. A trial point whose loop
goes unstable (non-finite cost) is answered with a cost far above the
start, so the line search backs off.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

from flexfmu.control.closed_loop import ClosedLoop
from flexfmu.control.cost import TERMS, unit_weights
from flexfmu.errors import FlexfmuError

UNSTABLE_PENALTY = 1e3  # times the starting cost, for trial points that blow up


class TuningError(FlexfmuError, ValueError):
    """A tuning request that cannot be run; the message names the setting."""


@dataclass
class TuningResult:
    """Gains before and after (every gain of the law, by name), the
    optimiser's cost at both, and the cost after each iteration."""

    tuned_names: list[str]
    initial: dict[str, float]
    tuned: dict[str, float]
    cost_initial: float
    cost_tuned: float
    message: str
    history: list[float] = field(default_factory=list)
    evaluations: int = 0


def tune(loop: ClosedLoop, gains: dict[str, float], names: list[str], bounds: dict | None = None,
         max_iterations: int = 30, progress=None, limits: dict | None = None) -> TuningResult:
    """Tune the gains ``names`` of ``loop`` starting from ``gains`` (all of the law's).

    ``bounds`` maps a name to (low, high); by default a gain may range over
    [0, 20 x its start] (a zero start ranges over [0, 20]).
    ``max_iterations`` caps the optimiser's iterations. ``progress``, when
    given, is called as ``progress(iteration, max_iterations, cost, gains)``
    after every iteration (``gains`` then holds the tuned ones only).
    ``limits`` maps terms of the cost (``flexfmu.control.cost.TERMS``) to
    upper bounds on their unweighted values (rad^2 s, m^2 s, (N m)^2 s).

    Raises
    ------
    TuningError
        If a name is not a gain of the law, bounds are empty, or the
        starting gains give an unstable loop.
    """
    unknown = [name for name in names if name not in gains]
    if unknown or not names:
        raise TuningError(f"--params: {', '.join(unknown) or 'nothing'} is not a gain of this law; "
                          f"its gains: {', '.join(gains)}")
    order = list(gains)
    start = np.array([gains[name] for name in order], float)
    index = [order.index(name) for name in names]
    scale = np.array([abs(start[k]) or 1.0 for k in index])
    box = []
    for name, s in zip(names, scale):
        low, high = (bounds or {}).get(name, (0.0, 20.0 * s))
        if not low < high:
            raise TuningError(f"bounds of {name}: low {low!r} must be below high {high!r}")
        box.append((low / s, high / s))

    def full(z):
        k = start.copy()
        k[index] = z * scale
        return k

    cost0 = loop.cost(start)
    if not np.isfinite(cost0):
        raise TuningError(f"the starting gains {gains} give an unstable loop (non-finite cost)")
    evaluations = {"count": 0, "last": cost0}

    def objective(z):
        evaluations["count"] += 1
        J, dJ = loop.cost_and_gradient(full(z))
        if not (np.isfinite(J) and np.all(np.isfinite(dJ))):
            return UNSTABLE_PENALTY * abs(cost0), np.zeros(len(z))
        evaluations["last"] = J
        return J, dJ[index] * scale

    history = [cost0]

    def after_iteration(z):
        history.append(evaluations["last"])
        if progress:
            progress(len(history) - 1, max_iterations, evaluations["last"], dict(zip(names, z * scale)))

    z0 = np.clip(start[index] / scale, [b[0] for b in box], [b[1] for b in box])
    unknown = sorted(set(limits or {}) - set(TERMS))
    if unknown:
        raise TuningError(f"limits: {', '.join(unknown)} is not a term of the cost ({', '.join(TERMS)})")
    if limits:
        constraints = [_limit(loop, full, index, scale, term, bound) for term, bound in limits.items()]
        solution = scipy.optimize.minimize(objective, z0, jac=True, method="SLSQP", bounds=box,
                                           constraints=constraints, callback=after_iteration,
                                           options={"maxiter": max_iterations})
    else:
        solution = scipy.optimize.minimize(objective, z0, jac=True, method="L-BFGS-B", bounds=box,
                                           callback=after_iteration, options={"maxiter": max_iterations})
    tuned = full(solution.x)
    return TuningResult(
        tuned_names=list(names), initial=dict(zip(order, start.tolist())), tuned=dict(zip(order, tuned.tolist())),
        cost_initial=cost0, cost_tuned=loop.cost(tuned), message=str(solution.message), history=history,
        evaluations=evaluations["count"],
    )


def _limit(loop: ClosedLoop, full, index, scale, term: str, bound: float) -> dict:
    """The SLSQP constraint 1 - term(z) / bound >= 0, with its adjoint gradient (one sweep per z)."""
    if not bound > 0:
        raise TuningError(f"the limit on {term} must be > 0, got {bound!r}")
    memo = {}

    def evaluate(z):
        key = tuple(z)
        if key not in memo:
            value, gradient = loop.cost_and_gradient(full(z), weights=unit_weights(term))
            if not (np.isfinite(value) and np.all(np.isfinite(gradient))):
                value, gradient = 2 * bound, np.zeros_like(gradient)
            memo.clear()
            memo[key] = (value, gradient)
        return memo[key]

    return {"type": "ineq", "fun": lambda z: 1.0 - evaluate(z)[0] / bound,
            "jac": lambda z: -evaluate(z)[1][index] * scale / bound}
