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

The closed loop is the FMU's own discretisation: the model's compiled dynamics (the FMU's C contract) under
the Rosenbrock step at the sample step (the export's default for a stiff arm), the law at each sample, so
the residual it predicts is what the FMU check measures, to round-off. The Jacobian is exact: the loop's
forward sensitivities in the 26 coefficients, sample by sample, dX+ = (the step's tangent) in the
directions of dX and of the references' derivatives dR/dc (:func:`sampled_loop`;
:func:`flexfmu.integrate.rosenbrock_tangent` differentiates the step around its LDL' factors, so no
factorisation is differentiated), the directions in one group per core, in parallel threads. The per-sample
Functions are compiled like the FMU's code and cached (the law and the plant step as two libraries, side by
side: 16 s the first time on a machine), then 1.5 to 1.7 s for the 26 directions over the 1.2 s
pick-and-place, where 27 forward-difference runs of the implicit midpoint loop the planner ran before took
8 to 10 s.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from typing import ClassVar

import casadi as ca
import numpy as np
import scipy.linalg
import scipy.optimize

from flexfmu.codegen.native import native_libraries
from flexfmu.control.pick_place import PickPlaceMoves
from flexfmu.dynamics.metadata import PLATFORM_POSITION
from flexfmu.errors import FlexfmuError
from flexfmu.integrate import is_multiple, rosenbrock_step, rosenbrock_tangent
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
    internal_step: float | None = None
    min_slope: float = 0.05

    KEYS: ClassVar[tuple[Key, ...]] = (
        Key("retiming_terms", "integer", "sine terms that retime the path", required=False, default=8, ge=0),
        Key("correction_terms", "integer", "polynomial terms per axis that bend the path", required=False,
            default=6, ge=0),
        Key("path_tolerance", "number", "how far the commanded path may bend from the scenario's", "m",
            required=False, default=5e-3, ge=0),
        Key("acceleration_ratio", "number", "peak motor acceleration allowed, times the baseline's (1: the "
            "baseline itself)", required=False, default=1.2, ge=1),
        Key("iterations", "integer", "planner steps", required=False, default=6, ge=1),
        Key("internal_step", "number", "internal step of the planner's closed loop (none: the FMU's default)", "s",
            required=False, default=None, gt=0),
        Key("min_slope", "number", "smallest sigma': how slowly the platform may run along the curve",
            required=False, default=0.05, gt=0),
    )

    def problems(self) -> list[str]:
        """What is wrong with these settings against :data:`KEYS`, one line each."""
        problems: list[str] = []
        read_keys(problems, {k: v for k, v in asdict(self).items() if v is not None}, "", self.KEYS)
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


@dataclass(frozen=True)
class SampledLoop:
    """The planner's sampled closed loop over ``count`` samples, compiled (see :func:`sampled_loop`).

    ``run``: (x0, R) -> X, R the reference samples [theta_d; dtheta_d; ddtheta_d] (one column each), X[:, k]
    the state one sample after sample k. ``sensitivities``: (x0, R, dR) -> (X, S) for one group of
    ``group`` directions: dR holds, for each sample in turn, the ``group`` columns of the derivatives of its
    reference, S the states' derivatives in the same layout (the state at the start has none)."""

    run: ca.Function
    sensitivities: ca.Function
    group: int


def sampled_loop(model, law, gains, count: int, sample_step: float, internal_step: float | None,
                 group: int) -> SampledLoop:
    """The sampled closed loop of ``model`` under ``law`` at ``gains`` (sampled every ``sample_step``) as the
    arm's FMU runs it (the Rosenbrock step, the export's default for a stiff arm, at the sample step or at
    ``internal_step``), and its forward sensitivities in ``group`` directions at a time, exact: the law's by
    CasADi's forward derivative, the plant's by :func:`flexfmu.integrate.rosenbrock_tangent` (no
    factorisation differentiated). The per-sample Functions are compiled like the FMU's code and cached
    (``flexfmu.codegen.native``); they do not depend on ``count``.

    Raises
    ------
    PickPlaceError
        If the internal step does not divide the sample step.
    """
    h = internal_step or sample_step
    if not is_multiple(sample_step, h):
        raise PickPlaceError(f"the internal step {internal_step!r} s must divide the sample step {sample_step!r} s")
    dynamics = model.compiled
    n, p = len(model.coordinates), model.nominal_parameters
    pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
    step, tangent = rosenbrock_step(dynamics), rosenbrock_tangent(dynamics, group)
    x, r = ca.MX.sym("x", 2 * n), ca.MX.sym("r", 3 * len(model.inputs))
    y = model.kinematic_outputs(x[:n], x[n:], ca.DM.zeros(n), p)
    measured = ca.vertcat(*[y[model.output_names.index(name)] for name in law.measured])
    control = ca.Function("pick_place_control", [x, r], [law.function(measured, r, ca.DM(gains))])
    control_tangents = control.forward(1).map("pick_place_control_tangents", "serial", group, [0, 1, 2], [])
    # the law and the plant step in two libraries compiled side by side (-O2: the sensitivities 10 % faster
    # than at -O1): 16 s once per machine, where one library took 30 s
    libraries = native_libraries({"pick_place_law": [control, control_tangents], "pick_place_plant": [step, tangent]})
    (control, control_tangents), (step, tangent) = libraries["pick_place_law"], libraries["pick_place_plant"]
    S, dR = ca.MX.sym("S", 2 * n, group), ca.MX.sym("dR", r.numel(), group)
    u = control(x, r)
    dU = control_tangents(x, r, u, S, dR)
    x_next, S_next = x, S
    for _ in range(int(round(sample_step / h))):
        x_next, S_next = step(x_next, u, pc, h), tangent(x_next, u, pc, h, S_next, dU)
    sample = ca.Function("pick_place_sample", [x, r], [x_next])
    augmented = ca.Function("pick_place_sensitivities", [x, S, r, dR], [x_next, S_next])
    return SampledLoop(sample.mapaccum("pick_place_run", count),
                       augmented.mapaccum("pick_place_sensitivity_run", count, 2), group)


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
    return _plan(model, moves, law, gains, x0, duration, sample_step, settings, progress)


def _plan(model, moves: PickPlaceMoves, law, gains, x0, duration, sample_step, settings: PickPlaceSettings,
          progress) -> PickPlacePlan:
    """:func:`plan_pick_place` once the settings are checked."""
    began = time.perf_counter()
    grid = np.arange(int(round(duration / sample_step)) + 1) * sample_step
    residual = planner_residual(model, moves, law, gains, x0, grid, sample_step, settings.internal_step)

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
        values, jacobian = residual.with_jacobian(c)
        if not history:  # the baseline's residual
            history.append(float(np.linalg.norm(values)))
        accel, accel_jacobian = moves.accelerations(c, accel_tau)
        scale = values @ values
        A, g = jacobian.T @ jacobian / scale, jacobian.T @ values / scale
        for _ in range(8):
            step = _constrained_step(A + damping * np.diag(np.diag(A)), g, c, linear_constraints, accel,
                                     accel_jacobian, limit)
            trial = residual.values(c + step)
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


def planner_residual(model, moves: PickPlaceMoves, law, gains, x0, grid, sample_step: float,
                     internal_step: float | None = None) -> Residual:
    """The :class:`Residual` the planner minimises for ``moves`` of ``model`` under ``law`` at ``gains``, from
    ``x0`` over the sample times ``grid`` (``sample_step`` apart; the plant at ``internal_step``, None: the
    sample step), its loop compiled with one group of directions per core."""
    groups = max(1, min(os.cpu_count() or 1, moves.size))
    loop = sampled_loop(model, law, gains, len(grid), sample_step, internal_step, -(-moves.size // groups))
    return Residual(model, moves, loop, np.asarray(x0, float), grid)


class Residual:
    """The residual the planner minimises, c -> the platform centre's deviations from its mean over the samples
    from the move time on, divided by the square root of their count (so its norm is the RMS distance), and
    its exact Jacobian by the loop's forward sensitivities, the groups of directions in parallel threads."""

    def __init__(self, model, moves: PickPlaceMoves, loop: SampledLoop, x0: np.ndarray, grid: np.ndarray):
        n, self.size, self.loop, self.x0 = len(model.coordinates), moves.size, loop, x0
        self.moves, self.grid = moves, grid
        self.window = np.flatnonzero(grid >= moves.move_time - 1e-9)
        x, S = ca.SX.sym("x", 2 * n), ca.SX.sym("S", 2 * n, moves.size)
        rows = [model.output_names.index(name) for name in model.outputs_of(PLATFORM_POSITION)]
        position = model.kinematic_outputs(x[:n], x[n:], ca.DM.zeros(n), model.nominal_parameters)[rows]
        self.position = ca.Function("platform", [x], [position]).map(len(self.window))
        self.tangent = ca.Function("platform_tangent", [x, S], [ca.jtimes(position, x, S)]).map(len(self.window))
        self.groups = -(-moves.size // loop.group)
        self.runs = loop.sensitivities.map("pick_place_groups", "thread", self.groups, [0, 2], [])

    def _deviations(self, Y: np.ndarray) -> np.ndarray:
        """Y (samples first) less its mean over the samples, over the square root of their count."""
        return (Y - Y.mean(axis=0)) / np.sqrt(len(self.window))

    def values(self, c) -> np.ndarray:
        """The residual at the coefficients ``c``."""
        R = self.moves.references(c, self.grid)
        X = np.hstack([self.x0[:, None], np.array(self.loop.run(self.x0, R))[:, :-1]])  # the states at the grid
        return self._deviations(np.array(self.position(X[:, self.window])).T).ravel()

    def with_jacobian(self, c) -> tuple[np.ndarray, np.ndarray]:
        """The residual at ``c`` and its Jacobian in c (rows: sample by sample, x, y, z)."""
        R, dR = self.moves.references(c, self.grid), self.moves.reference_derivatives(c, self.grid)
        g, (rows, count), n2 = self.loop.group, R.shape, self.x0.size
        dR = np.pad(dR, ((0, 0), (0, 0), (0, self.groups * g - self.size)))  # whole groups (padding seeds nothing)
        # a group's seeds go sample by sample, g columns each
        seeds = dR.reshape(count, rows, self.groups, g).transpose(1, 2, 0, 3).reshape(rows, -1)
        X, S = self.runs(self.x0, np.zeros((n2, self.groups * g)), R, seeds)
        X = np.hstack([self.x0[:, None], np.array(X)[:, :count - 1]])  # the states at the grid
        S = np.array(S).reshape(n2, self.groups, count, g).transpose(2, 0, 1, 3).reshape(count, n2, -1)
        S = np.concatenate([np.zeros((1, n2, self.groups * g)), S[:-1]])[:, :, :self.size]  # at the grid
        Y = np.array(self.position(X[:, self.window])).T
        dY = np.array(self.tangent(X[:, self.window], np.hstack(list(S[self.window]))))  # 3 x (samples * size)
        dY = dY.reshape(3, len(self.window), self.size).transpose(1, 0, 2)
        return self._deviations(Y).ravel(), self._deviations(dY).reshape(-1, self.size)


def _constrained_step(A, g, c, linear_constraints, accel, accel_jacobian, limit) -> np.ndarray:
    """The step s minimising s'As/2 + g's with linear_constraints(c + s) >= 0 and |accel + J s| <= limit.

    SLSQP starts from an identity Hessian and learns A by BFGS updates, which took it 80 to 95 iterations on
    the planner's steps (0.4 s) and stopped short of the QP's optimum; so it solves for z with s = T z,
    T = L^-T, A = L L', in which the Hessian is the identity: two iterations, the QP's own solution."""
    L = np.linalg.cholesky(A + 1e-12 * np.max(np.diag(A)) * np.eye(len(g)))
    T = scipy.linalg.solve_triangular(L, np.eye(len(g)), lower=True).T
    gz, Jz = T.T @ g, accel_jacobian @ T
    constraints = [
        {"type": "ineq", "fun": lambda z: linear_constraints(c + T @ z)},
        {"type": "ineq", "fun": lambda z: np.concatenate([limit - accel - Jz @ z, limit + accel + Jz @ z]),
         "jac": lambda z: np.vstack([-Jz, Jz])},
    ]
    solution = scipy.optimize.minimize(lambda z: 0.5 * z @ z + gz @ z, np.zeros_like(c), jac=lambda z: z + gz,
                                       method="SLSQP", constraints=constraints, options={"maxiter": 200})
    return T @ solution.x
