"""The cost a closed loop is tuned for, and the same cost of a recorded run.

For a run sampled at t_k = k T (k = 0..K) with torques held over each sample,

    J = sum_k T [ tracking  * sum_j (theta_d,j(t_k) - joint[j].angle(t_k))^2
                + vibration * sum_i link[i].deflection(t_k)^2
                + effort    * sum_j tau[j](t_k)^2 ]

in rad^2 s, m^2 s and (N m)^2 s times the weights. The joint angles are the
link-side encoders (what the arm's tip follows), the deflections those of
every flexible link. A cost file (``--cost FILE``) is TOML:

    [weights]
    tracking = 100.0   # 1 / (rad^2 s)
    vibration = 100.0  # 1 / (m^2 s)
    effort = 0.001     # 1 / ((N m)^2 s)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

import casadi as ca
import numpy as np

from flexfmu.dynamics.metadata import DEFLECTION, JOINT_ANGLE, PLATFORM_POSITION, TIP_POSITION
from flexfmu.errors import FlexfmuError


class CostError(FlexfmuError, ValueError):
    """A cost file that cannot be used; the message names the field."""


@dataclass(frozen=True)
class CostWeights:
    """Weights of the cost's terms (units in the module docstring). The defaults weigh tracking and
    vibration alike in their units, so that with them (and tuning's default limit, tracking no worse
    than before) a tuned loop vibrates less without tracking worse."""

    tracking: float = 100.0
    vibration: float = 100.0
    effort: float = 1e-3


def load_cost(path: str | Path) -> CostWeights:
    """Weights from a TOML cost file; unknown or negative weights are errors.

    Parameters
    ----------
    path : str or Path
        The cost file, with a ``[weights]`` table (missing weights keep their defaults).

    Returns
    -------
    CostWeights

    Raises
    ------
    CostError
        If the file cannot be read or parsed, holds anything but a ``[weights]`` table, or a weight is unknown
        or not a number >= 0.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise CostError(f"cost file {str(path)!r} cannot be read: {error}") from None
    weights = data.get("weights")
    if not isinstance(weights, dict) or set(data) != {"weights"}:
        raise CostError(f"cost file {str(path)!r}: expected just a [weights] table, found "
                        f"{', '.join(map(repr, data)) or 'nothing'}")
    known = [f.name for f in fields(CostWeights)]
    problems = [f"weights.{key}: unknown weight (known: {', '.join(known)})" for key in weights if key not in known]
    problems += [f"weights.{key} must be a number >= 0, got {value!r}" for key, value in weights.items()
                 if key in known and not (isinstance(value, (int, float)) and value >= 0)]
    if problems:
        raise CostError(f"{path}: " + "; ".join(problems))
    return CostWeights(**{key: float(value) for key, value in weights.items()})


def cost_signals(model) -> list[str]:
    """Outputs of ``model`` the cost reads, in order: joint angles, then link deflections."""
    return model.outputs_of(JOINT_ANGLE) + model.outputs_of(DEFLECTION)


def end_effector(model) -> list[str]:
    """The outputs of ``model`` that place its end effector: a serial arm's tip (x, y; and z in space), a Delta
    robot's platform centre (x, y, z)."""
    return model.outputs_of(TIP_POSITION) or model.outputs_of(PLATFORM_POSITION)


TERMS = ("tracking", "vibration", "effort")


def weight_vector(weights: CostWeights) -> np.ndarray:
    """The ``weights`` (CostWeights) as an array in the order of :data:`TERMS`."""
    return np.array([getattr(weights, name) for name in TERMS])


def unit_weights(term: str) -> CostWeights:
    """Weights that select the one term ``term`` of :data:`TERMS`, unweighted."""
    return CostWeights(**{name: float(name == term) for name in TERMS})


def stage_terms(model, sample_step: float) -> ca.Function:
    """(s, theta_d, tau) -> T [tracking, vibration, effort] of one sample, s the ``cost_signals``,
    unweighted: sum_j (theta_d,j - theta_j)^2, sum_i deflection_i^2 and sum_j tau_j^2, times the
    sample step ``sample_step`` T (s), for the ``model``'s joints and links."""
    nj = len(model.inputs)
    s, theta_d, tau = ca.SX.sym("s", len(cost_signals(model))), ca.SX.sym("theta_d", nj), ca.SX.sym("tau", nj)
    terms = sample_step * ca.vertcat(ca.sumsqr(theta_d - s[:nj]), ca.sumsqr(s[nj:]), ca.sumsqr(tau))
    return ca.Function("stage_terms", [s, theta_d, tau], [terms], ["s", "theta_d", "tau"], ["terms"])


def stage_cost(model, weights: CostWeights, sample_step: float) -> ca.Function:
    """(s, theta_d, tau) -> the term of sample k, s the ``cost_signals``.

    Parameters
    ----------
    model : Model
        Gives the number of joints and the cost signals.
    weights : CostWeights
    sample_step : float
        The sample step T, s, multiplying each term.

    Returns
    -------
    casadi.Function
    """
    nj = len(model.inputs)
    s, theta_d, tau = ca.SX.sym("s", len(cost_signals(model))), ca.SX.sym("theta_d", nj), ca.SX.sym("tau", nj)
    term = sample_step * (weights.tracking * ca.sumsqr(theta_d - s[:nj]) + weights.vibration * ca.sumsqr(s[nj:])
                          + weights.effort * ca.sumsqr(tau))
    return ca.Function("stage_cost", [s, theta_d, tau], [term], ["s", "theta_d", "tau"], ["cost"])


def run_cost(model, result, reference, weights: CostWeights, sample_step: float) -> float:
    """J of a recorded run (a harness Result holding the cost signals and tau).

    Parameters
    ----------
    model : Model
    result : Result
        The run, with a column for each of the model's ``cost_signals`` and inputs.
    reference : callable
        t -> (theta_d, dtheta_d, ddtheta_d); only theta_d is used, at the result's times.
    weights : CostWeights
    sample_step : float
        The run's sample step T, s.

    Returns
    -------
    float
    """
    term = stage_cost(model, weights, sample_step)
    signals = np.column_stack([result[name] for name in cost_signals(model)])
    torques = np.column_stack([result[name] for name in model.inputs])
    theta_d = np.array([reference(t)[0] for t in result.time])
    return float(np.sum(np.array(term(signals.T, theta_d.T, torques.T))))


def cost_terms(model, result, reference, sample_step: float) -> dict[str, float]:
    """The three terms of J of a recorded run, unweighted and apart, with their units in the keys:
    tracking (rad^2 s; None without a ``reference``), vibration (m^2 s), effort ((N m)^2 s).

    Parameters
    ----------
    model : Model
    result : Result
        The run, with a column for each of the model's ``cost_signals`` and inputs.
    reference : callable or None
        t -> (theta_d, dtheta_d, ddtheta_d) of a closed loop.
    sample_step : float
        The run's sample step T, s.
    """
    nj = len(model.inputs)
    signals = np.column_stack([result[name] for name in cost_signals(model)])
    torques = np.column_stack([result[name] for name in model.inputs])
    terms = {"vibration [m^2 s]": float(sample_step * np.sum(signals[:, nj:] ** 2)),
             "effort [N^2 m^2 s]": float(sample_step * np.sum(torques**2))}
    if reference is not None:
        theta_d = np.array([reference(t)[0] for t in result.time])
        terms = {"tracking [rad^2 s]": float(sample_step * np.sum((theta_d - signals[:, :nj]) ** 2))} | terms
    return terms
