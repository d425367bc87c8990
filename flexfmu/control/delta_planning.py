"""Pick-and-place planning for a Delta robot: a move that leaves the platform at rest.

What is planned is the motor reference for the controller the robot already runs (a scenario's law at its
gains, paper 003's computed torque), not torques: the move is one of
:class:`flexfmu.control.pick_place.PickPlaceMoves`, the baseline inverted U retimed and bent.

Minimised: the residual vibration the FMU check measures, the RMS distance of the platform centre from its
mean over the settling window after the move, for the full flexible model (every elastic coordinate) in
the sampled closed loop (law at each sample, torque held). Constrained, at 81 points of the move:

* sigma' >= ``min_slope``: the platform runs forwards along the baseline's curve;
* |dP| <= ``path_tolerance`` on each axis: the commanded path stays that close to the baseline's;
* |motor acceleration| <= ``acceleration_ratio`` x the baseline's peak (every 5 ms): the plan does not buy
  its calm with a harder move.

Solver: Gauss-Newton on the residual samples with Levenberg-Marquardt damping; each step minimises the
linearised residual within the linearised constraints (SLSQP; the slope and bend are linear in the
coefficients, the accelerations' Jacobian is exact) and is kept only if the true residual falls.

The closed loop runs the model's compiled dynamics (the FMU's C contract) under the implicit midpoint rule
of :mod:`flexfmu.integrate` at ``internal_step``. The axial modes (17,000 rad/s with one element per link),
which set the FMU's RK4 step at 17 us, carry no motion of interest; the midpoint rule is stable for them,
and at 0.5 ms its residual agrees with the FMU's to 0.3 % (the FMU check reports both). The run is
JIT-compiled with the C compiler (0.7 s for the 1.2 s pick-and-place against 2.1 s interpreted). The
Jacobian is by forward differences over the compiled run, evaluated in parallel threads: 8 to 10 s for 26
coefficients, where CasADi's forward mode through the interpreted run took 36 to 48 s (when its solves
were CasADi's LDL nodes, which cannot be expanded to scalar graphs; they are now straight-line LDL'
factors, ``flexfmu.codegen.ldl``, whose derivatives CasADi can generate).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import ClassVar

import casadi as ca
import numpy as np
import scipy.optimize

from flexfmu.control.pick_place import PickPlaceMoves
from flexfmu.dynamics.metadata import PLATFORM_POSITION
from flexfmu.errors import FlexfmuError
from flexfmu.integrate import implicit_midpoint_step, is_multiple
from flexfmu.spec.keys import Key, read_keys

CONSTRAINT_POINTS = 81  # normalised times where the slope and the bend are bounded
ACCELERATION_SAMPLE = 5e-3  # s between the samples where the motor accelerations are bounded


class PickPlaceError(FlexfmuError, ValueError):
    """Pick-and-place planning settings that cannot be used; the message names the setting."""


@dataclass(frozen=True)
class PickPlaceSettings:
    """How a pick-and-place move is planned (see the module docstring)."""

    retiming_terms: int = 8
    correction_terms: int = 6
    path_tolerance: float = 5e-3
    acceleration_ratio: float = 1.2
    iterations: int = 6
    internal_step: float = 5e-4
    min_slope: float = 0.05
    difference_step: float = 1e-4

    KEYS: ClassVar[tuple[Key, ...]] = (
        Key("retiming_terms", "integer", "sine terms that retime the path", required=False, default=8, ge=0),
        Key("correction_terms", "integer", "polynomial terms per axis that bend the path", required=False,
            default=6, ge=0),
        Key("path_tolerance", "number", "how far the commanded path may bend from the scenario's", "m",
            required=False, default=5e-3, ge=0),
        Key("acceleration_ratio", "number", "peak motor acceleration allowed, times the baseline's (1: the "
            "baseline itself)", required=False, default=1.2, ge=1),
        Key("iterations", "integer", "planner steps", required=False, default=6, ge=1),
        Key("internal_step", "number", "step of the planner's implicit-midpoint closed loop", "s",
            required=False, default=5e-4, gt=0),
        Key("min_slope", "number", "smallest sigma': how slowly the platform may run along the curve",
            required=False, default=0.05, gt=0),
        Key("difference_step", "number", "step of the forward differences in the coefficients",
            required=False, default=1e-4, gt=0),
    )

    def problems(self) -> list[str]:
        """What is wrong with these settings against :data:`KEYS`, one line each."""
        problems: list[str] = []
        read_keys(problems, asdict(self), "", self.KEYS)
        if not problems and self.retiming_terms + self.correction_terms == 0:
            problems.append("retiming_terms and correction_terms are both 0: nothing to plan")
        return problems


@dataclass(frozen=True)
class PickPlacePlan:
    """A planned move: its coefficients in ``moves``, the residual vibration (m, on the planner's closed
    loop) of the baseline and after each accepted step, the motors' peak accelerations (rad/s^2) and the
    largest bend of the commanded path (m)."""

    moves: PickPlaceMoves
    coefficients: np.ndarray
    history: list[float] = field(default_factory=list)
    peak_acceleration: float = 0.0
    baseline_peak_acceleration: float = 0.0
    path_deviation: float = 0.0
    solve_s: float = 0.0

    @property
    def baseline_residual(self) -> float:
        return self.history[0]

    @property
    def residual(self) -> float:
        return self.history[-1]

    def reference(self):
        """t -> (theta_d, dtheta_d, ddtheta_d) of the planned move, for a sampled controller."""
        return self.moves.reference(self.coefficients)


def closed_loop_run(model, law, gains, count: int, sample_step: float, internal_step: float,
                    folder: str) -> ca.Function:
    """(x0, R) -> X: ``count`` samples of the sampled closed loop of ``model`` under ``law`` at ``gains``, R
    the reference samples [theta_d; dtheta_d; ddtheta_d] (one column each), X[:, k] the state one sample
    after sample k; the plant by the implicit midpoint rule at ``internal_step`` (a divisor of ``sample_step``),
    JIT-compiled in ``folder`` (CasADi removes its files when the Function is freed).

    Raises
    ------
    PickPlaceError
        If the internal step does not divide the sample step.
    """
    if not is_multiple(sample_step, internal_step):
        raise PickPlaceError(f"the internal step {internal_step!r} s must divide the sample step {sample_step!r} s")
    n, p = len(model.coordinates), model.nominal_parameters
    dynamics = model.compiled
    pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
    step = implicit_midpoint_step(dynamics)
    x, r = ca.MX.sym("x", 2 * n), ca.MX.sym("r", 3 * len(model.inputs))
    y = model.kinematic_outputs(x[:n], x[n:], ca.DM.zeros(n), p)
    measured = ca.vertcat(*[y[model.output_names.index(name)] for name in law.measured])
    u = law.function(measured, r, ca.DM(gains))
    x_next = x
    for _ in range(int(round(sample_step / internal_step))):
        x_next = step(x_next, u, pc, internal_step)
    jit = {"jit": True, "compiler": "shell", "jit_name": "pick_place",
           "jit_options": {"flags": ["-O1"], "verbose": False, "directory": os.path.join(folder, "")}}
    sample = ca.Function("pick_place_sample", [x, r], [x_next], jit)
    return sample.mapaccum("pick_place_run", count)


def plan_pick_place(model, moves: PickPlaceMoves, law, gains, x0, duration: float, sample_step: float = 1e-3,
                    settings: PickPlaceSettings = PickPlaceSettings(), progress=None) -> PickPlacePlan:
    """Plan the move of ``moves`` for the Delta robot ``model`` under ``law`` at ``gains``.

    Parameters
    ----------
    model : Model
        A Delta robot's Model.
    moves : PickPlaceMoves
        The family of moves (its baseline is the scenario's inverted U).
    law : ControlLaw
        The controller that tracks the motor reference.
    gains : array
        The law's gains, in its gain order.
    x0 : array
        Initial state (at rest at the move's start, links at their static deflection).
    duration : float
        Length of the run, s; the residual vibration is measured from the move time to ``duration``.
    sample_step : float
        The controller's sample step, s.
    settings : PickPlaceSettings
    progress : callable, optional
        ``progress(iteration, iterations, residual)`` after each step, residual in m.

    Returns
    -------
    PickPlacePlan

    Raises
    ------
    PickPlaceError
        If the settings are unusable.
    """
    problems = settings.problems()
    if duration <= moves.move_time:
        problems.append(f"the run ({duration!r} s) must last longer than the move ({moves.move_time!r} s)")
    if problems:
        raise PickPlaceError("; ".join(problems))
    folder = tempfile.mkdtemp(prefix="flexfmu-jit-")
    try:
        return _plan(model, moves, law, gains, x0, duration, sample_step, settings, progress, folder)
    finally:  # the compiled Functions are freed by now, and with them their files
        shutil.rmtree(folder, ignore_errors=True)


def _plan(model, moves: PickPlaceMoves, law, gains, x0, duration, sample_step, settings: PickPlaceSettings,
          progress, folder: str) -> PickPlacePlan:
    """:func:`plan_pick_place` with the closed loop compiled in ``folder``."""
    began = time.perf_counter()
    grid = np.arange(int(round(duration / sample_step)) + 1) * sample_step
    run = closed_loop_run(model, law, gains, len(grid), sample_step, settings.internal_step, folder)
    residual = _residual_function(model, moves, run, np.asarray(x0, float), grid)
    threads = max(1, min(os.cpu_count() or 1, moves.size + 1))
    batch = residual.map(moves.size + 1, "thread", threads)

    tau = np.linspace(0.0, 1.0, CONSTRAINT_POINTS)
    accel_tau = np.arange(0.0, moves.move_time, ACCELERATION_SAMPLE) / moves.move_time
    zero = np.zeros(moves.size)
    baseline_peak = float(np.abs(moves.accelerations(zero, accel_tau)[0]).max())
    limit = settings.acceleration_ratio * baseline_peak
    slope_map = np.array([moves.shape(e, tau)[0] - moves.shape(zero, tau)[0] for e in np.eye(moves.size)]).T
    bend_map = np.array([moves.shape(e, tau)[1].ravel() for e in np.eye(moves.size)]).T

    def linear_constraints(c):
        slope = 1.0 + slope_map @ c
        bend = bend_map @ c
        return np.concatenate([slope - settings.min_slope, settings.path_tolerance - bend,
                               settings.path_tolerance + bend])

    c = zero.copy()
    history, damping = [], 1e-3
    for iteration in range(settings.iterations):
        columns = np.tile(c[:, None], (1, moves.size + 1))
        columns[:, 1:] += settings.difference_step * np.eye(moves.size)
        samples = np.array(batch(columns))
        values = samples[:, 0]
        if not history:  # the baseline's residual: the first column of the first batch
            history.append(float(np.linalg.norm(values)))
        jacobian = (samples[:, 1:] - values[:, None]) / settings.difference_step
        accel, accel_jacobian = moves.accelerations(c, accel_tau)
        scale = values @ values
        A, g = jacobian.T @ jacobian / scale, jacobian.T @ values / scale
        for _ in range(8):
            step = _constrained_step(A + damping * np.diag(np.diag(A)), g, c, linear_constraints, accel,
                                     accel_jacobian, limit)
            trial = np.array(residual(c + step)).ravel()
            if np.linalg.norm(trial) < history[-1]:
                c, damping = c + step, max(damping / 5, 1e-7)
                history.append(float(np.linalg.norm(trial)))
                break
            damping *= 10
        else:  # no step lowers the residual: converged as far as the constraints allow
            if progress is not None:
                progress(settings.iterations, settings.iterations, history[-1])
            break
        if progress is not None:
            progress(iteration + 1, settings.iterations, history[-1])
    return PickPlacePlan(
        moves=moves, coefficients=c, history=history,
        peak_acceleration=float(np.abs(moves.accelerations(c, accel_tau)[0]).max()),
        baseline_peak_acceleration=baseline_peak,
        path_deviation=float(np.abs(moves.shape(c, tau)[1]).max()), solve_s=time.perf_counter() - began)


def _residual_function(model, moves: PickPlaceMoves, run: ca.Function, x0, grid) -> ca.Function:
    """c -> the platform centre's deviations from its mean over the samples from the move time on, divided
    by the square root of their count (so its norm is the RMS distance)."""
    n = len(model.coordinates)
    c = ca.MX.sym("c", moves.size)
    X = ca.horzcat(ca.DM(x0), run(x0, moves.symbolic_references(c, grid))[:, :-1])  # the states at the grid
    window = np.flatnonzero(grid >= moves.move_time - 1e-9)
    x = ca.SX.sym("x", 2 * n)
    rows = [model.output_names.index(name) for name in model.outputs_of(PLATFORM_POSITION)]
    position = ca.Function("platform", [x], [model.kinematic_outputs(x[:n], x[n:], ca.DM.zeros(n),
                                                                        model.nominal_parameters)[rows]])
    Y = position.map(len(window))(X[:, window.tolist()])
    deviation = Y - ca.repmat(ca.sum2(Y) / len(window), 1, len(window))
    return ca.Function("residual", [c], [ca.vec(deviation) / np.sqrt(len(window))])


def _constrained_step(A, g, c, linear_constraints, accel, accel_jacobian, limit) -> np.ndarray:
    """The step s minimising s'As/2 + g's with linear_constraints(c + s) >= 0 and |accel + J s| <= limit."""
    constraints = [
        {"type": "ineq", "fun": lambda s: linear_constraints(c + s)},
        {"type": "ineq", "fun": lambda s: np.concatenate([limit - accel - accel_jacobian @ s,
                                                          limit + accel + accel_jacobian @ s]),
         "jac": lambda s: np.vstack([-accel_jacobian, accel_jacobian])},
    ]
    solution = scipy.optimize.minimize(lambda s: 0.5 * s @ A @ s + g @ s, np.zeros_like(c), jac=lambda s: A @ s + g,
                                       method="SLSQP", constraints=constraints, options={"maxiter": 200})
    return solution.x
