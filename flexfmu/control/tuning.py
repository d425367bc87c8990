"""Gain tuning: minimise a closed loop's cost over some of its law's gains, without cheating.

The optimiser works on gains scaled by their starting values, fed by the
exact cost and adjoint gradient of ``ClosedLoop``: SLSQP whenever there are
constraints, each an inequality: a limit on a term of the cost (for example
tracking no worse than with the starting gains) with the term's own adjoint
gradient, and a stability margin; L-BFGS-B (bounds only) otherwise. A trial
point whose loop goes unstable (non-finite cost) is answered with a cost far
above the start, so the line search backs off.

A cost can be lowered by gains that no controls engineer would ship, so
three rules keep tuning honest (``flexfmu tune`` applies all three):

- **The horizon covers the settling.** A reference that ends its move
  (:attr:`~flexfmu.control.reference_kinds.ReferenceKind.move_end`) is
  tuned over the move and a settling window after it: the scenario's own,
  and at least half the move (:func:`tuning_horizon`). Cut at the end of the
  move, a loop without position feedback scores best: nothing after the
  move costs anything.
- **Position feedback stays.** A position gain of the law
  (``LawKind.position_gains``) stays within [start / GAIN_RANGE, start x
  GAIN_RANGE], any other gain within [0, start x GAIN_RANGE]
  (:func:`gain_bounds`).
- **The loop stays stable with a margin.** The slowest decay rate of the
  sampled loop linearised at rest at poses along the move
  (:meth:`ClosedLoop.decay_rate`) must stay at least MARGIN_FRACTION of
  what the starting gains give (:func:`required_decay`), a constraint of the
  optimiser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

from flexfmu.control.closed_loop import ClosedLoop
from flexfmu.control.cost import TERMS, unit_weights
from flexfmu.errors import FlexfmuError

UNSTABLE_PENALTY = 1e3  # times the starting cost, for trial points that blow up
GAIN_RANGE = 20.0  # a tuned gain stays within a factor of this of its start (position gains) or below it
MARGIN_FRACTION = 0.5  # the tuned loop's slowest decay rate, at least this fraction of the starting gains'
CONSTRAINT_SLACK = 1e-6  # how far (a fraction of its bound) a tuned result may sit outside a constraint
SETTLE_FRACTION = 0.5  # the settling window tuned after a move, at least this fraction of the move


class TuningError(FlexfmuError, ValueError):
    """A tuning request that cannot be run; the message names the setting."""


@dataclass
class TuningResult:
    """Gains before and after (every gain of the law, by name), the
    optimiser's cost at both, the cost after each iteration, and the slowest decay rates (1/s) of the loop
    before and after with the one required (NaN when no margin was asked for)."""

    tuned_names: list[str]
    initial: dict[str, float]
    tuned: dict[str, float]
    cost_initial: float
    cost_tuned: float
    message: str
    history: list[float] = field(default_factory=list)
    evaluations: int = 0
    decay_initial: float = float("nan")
    decay_tuned: float = float("nan")
    decay_required: float = float("nan")


def tuning_horizon(scenario, duration: float | None = None):
    """``scenario`` run for the horizon a tuning cost needs: ``duration`` s (the scenario's own when None),
    refused when it does not cover the move and the settling after it.

    For a reference that ends its move at t_m (its row's ``move_end``), the horizon must reach t_m plus the
    scenario's own settling window, and at least SETTLE_FRACTION t_m after the move; a reference that keeps
    moving takes any horizon.

    Raises
    ------
    TuningError
        If the horizon is too short, naming the one needed.
    """
    from flexfmu.control.reference_kinds import REFERENCES

    spec = scenario.controller["reference"]
    move_end = REFERENCES[spec["kind"]].move_end
    horizon = scenario.duration if duration is None else duration
    if move_end is not None:
        end = move_end(spec)
        settle = max(scenario.duration - end, SETTLE_FRACTION * end)
        tolerance = 1e-9 * (end + settle)
        if horizon < end + settle - tolerance:
            given = f"--duration {duration:g} s" if duration is not None else f"its duration ({horizon:g} s)"
            what = ("ends before the move does" if horizon < end - tolerance else "ends with the move"
                    if horizon <= end + tolerance else f"leaves only {horizon - end:g} s of settling")
            raise TuningError(
                f"scenario {scenario.name}: {given} {what} (the move ends at {end:g} s): a tuning cost must cover "
                f"the move and {settle:g} s of settling after it, or gains that stop holding the arm score best; "
                f"use --duration {end + settle:g} or longer")
    return scenario if duration is None else scenario.with_duration(duration)


def gain_bounds(gains: dict[str, float], names: list[str], position_gains=()) -> dict[str, tuple[float, float]]:
    """(low, high) of each gain of ``names`` from its start in ``gains``: [start / GAIN_RANGE, start x
    GAIN_RANGE] for the ``position_gains`` (a zero start: [1 / GAIN_RANGE, GAIN_RANGE]), [0, start x
    GAIN_RANGE] for the others (a zero start: [0, GAIN_RANGE])."""
    bounds = {}
    for name in names:
        scale = abs(gains[name]) or 1.0
        bounds[name] = (scale / GAIN_RANGE if name in position_gains else 0.0, scale * GAIN_RANGE)
    return bounds


def required_decay(loop: ClosedLoop, gains: dict[str, float]) -> float:
    """The slowest decay rate (1/s) a tuning of ``loop`` from ``gains`` must keep: MARGIN_FRACTION of what
    ``gains`` give.

    Raises
    ------
    TuningError
        If ``gains`` themselves do not give a loop whose modes decay at every pose along the move.
    """
    start = loop.decay_rate(list(gains.values()))
    if not start > 0:
        raise TuningError(f"the starting gains {gains} give a sampled loop that is not stable at rest along the move "
                          f"(slowest decay rate {start:.3g} 1/s): nothing to keep stable while tuning")
    return MARGIN_FRACTION * start


def tune(loop: ClosedLoop, gains: dict[str, float], names: list[str], bounds: dict | None = None,
         max_iterations: int = 30, progress=None, limits: dict | None = None,
         decay: float | None = None) -> TuningResult:
    """Tune the gains ``names`` of ``loop`` starting from ``gains`` (all of the law's).

    ``bounds`` maps a name to (low, high); by default a gain may range over
    [0, GAIN_RANGE x its start] (a zero start ranges over [0, GAIN_RANGE]; see :func:`gain_bounds` for
    the bounds that keep position feedback).
    ``max_iterations`` caps the optimiser's iterations. ``progress``, when
    given, is called as ``progress(iteration, max_iterations, cost, gains)``
    after every iteration (``gains`` then holds the tuned ones only).
    ``limits`` maps terms of the cost (``flexfmu.control.cost.TERMS``) to
    upper bounds on their unweighted values (rad^2 s, m^2 s, (N m)^2 s).
    ``decay``, when given, is the slowest decay rate (1/s) the tuned loop must keep at every pose along the
    move (:meth:`ClosedLoop.decay_rate`, :func:`required_decay`): a constraint of the optimiser.

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

    history, iterates = [cost0], [None]

    def after_iteration(z):
        history.append(evaluations["last"])
        iterates.append(np.array(z, float))
        if progress:
            progress(len(history) - 1, max_iterations, evaluations["last"], dict(zip(names, z * scale)))

    z0 = np.clip(start[index] / scale, [b[0] for b in box], [b[1] for b in box])
    unknown = sorted(set(limits or {}) - set(TERMS))
    if unknown:
        raise TuningError(f"limits: {', '.join(unknown)} is not a term of the cost ({', '.join(TERMS)})")
    constraints = [_limit(loop, full, index, scale, term, bound) for term, bound in (limits or {}).items()]
    if decay is not None:
        if not decay > 0:
            raise TuningError(f"the decay rate to keep must be > 0 1/s, got {decay!r}")
        constraints.append({"type": "ineq", "fun": lambda z: loop.decay_rate(full(z)) / decay - 1.0})
    if constraints:
        solution = scipy.optimize.minimize(objective, z0, jac=True, method="SLSQP", bounds=box,
                                           constraints=constraints, callback=after_iteration,
                                           options={"maxiter": max_iterations})
    else:
        solution = scipy.optimize.minimize(objective, z0, jac=True, method="L-BFGS-B", bounds=box,
                                           callback=after_iteration, options={"maxiter": max_iterations})
    z, message = solution.x, str(solution.message)
    if not _feasible(constraints, z):
        z, message = _last_feasible(constraints, z0, iterates, history, message)
    tuned = full(z)
    nan = float("nan")
    return TuningResult(
        tuned_names=list(names), initial=dict(zip(order, start.tolist())), tuned=dict(zip(order, tuned.tolist())),
        cost_initial=cost0, cost_tuned=loop.cost(tuned), message=message, history=history,
        evaluations=evaluations["count"],
        decay_initial=loop.decay_rate(start) if decay is not None else nan,
        decay_tuned=loop.decay_rate(tuned) if decay is not None else nan, decay_required=nan if decay is None
        else decay,
    )


def _feasible(constraints: list[dict], z) -> bool:
    """Whether ``z`` meets every SLSQP constraint (each ``fun(z) >= 0``, a bound's fraction) to
    :data:`CONSTRAINT_SLACK`, the tolerance the FMU checks allow."""
    return all(constraint["fun"](z) >= -CONSTRAINT_SLACK for constraint in constraints)


def _last_feasible(constraints: list[dict], z0, iterates: list, history: list[float], message: str):
    """The optimiser's last iterate that meets every constraint, or the start (``z0``), and the message saying
    so; ``history`` is cut after it. SLSQP stopped by its iteration limit can end a hair outside a
    constraint it is converging onto, where an earlier iterate was inside."""
    for k in range(len(iterates) - 1, 0, -1):
        if _feasible(constraints, iterates[k]):
            del history[k + 1:]
            return iterates[k], f"{message}; its last iterate missed a constraint, so iteration {k}'s gains"
    del history[1:]
    return z0, f"{message}; no iterate met every constraint, so the starting gains"


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
