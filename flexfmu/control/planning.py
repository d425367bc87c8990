"""Point-to-point motion planning: joint torques that leave the arm at rest.

Direct collocation (Radau IIA points, ``degree`` per element, ``elements``
elements per hold interval) of the full flexible Model, solved by IPOPT with
exact Hessians. The torques are held
constant over each interval of ``interval`` seconds, a multiple of the
controller sample, so an FMU replays the planned profile sample for sample.
Radau collocation is L-stable: the stiff high modes (the two-link arm of
paper 004 has one at 2,544 rad/s) are resolved where they matter and damped
where the interval cannot resolve them, instead of making the NLP
ill-conditioned. The dynamics enter explicitly (the straight-line right-hand
side with its LDL solve): with the accelerations as extra variables and
M(q) a = B u - h as constraints, IPOPT stalled on the stiff modes (hundreds
of iterations against 17 for this form on the same problem).

Minimised: effort * int |u|^2 dt + smoothness * sum |u_i+1 - u_i|^2 / interval
+ vibration * int |elastic coordinates and rates|^2 dt (joint-spring
deflections alpha - theta and modal coordinates, SI units).
Constrained: start at rest at ``start`` (joint angles; rotors with their
joints, links straight), |u| <= torque limit, and at the move time an
equilibrium at ``goal``: joint angles at the goal, all rates zero and zero
acceleration under a holding torque u_hold (also a variable, within the
limits; zero for an arm without gravity). Residual vibration is therefore
zero in the plan; what an FMU replay leaves is the difference between the
collocation and the FMU's integrator, which the verification measures.

Numerics: each joint's torque is counted in units of its peak in the initial
guess and the objective in units of the guess's effort (unscaled, Canadarm2's
1e4 N m torques never converged); IPOPT's linear solver MUMPS runs with the
settings of :data:`MUMPS`; the dynamics at a collocation point and the two
derivatives IPOPT takes of them are compiled to C (:func:`_point_dynamics`),
and the intervals are evaluated one thread per core.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import ClassVar

import casadi as ca
import numpy as np

from flexfmu.codegen.native import c_compiler, native_functions
from flexfmu.control.laws import rigid_computed_torque, rigid_selection
from flexfmu.control.references import quintic_reference
from flexfmu.errors import FlexfmuError
from flexfmu.integrate import is_multiple
from flexfmu.spec.keys import Key, read_keys


# MUMPS, IPOPT's linear solver, on the KKT systems of a plan: PORD, a fill-reducing ordering 30 times faster
# than its default choice on a 200-interval plan of Canadarm2 (0.4 s against 12 s a factorisation), and a
# relative pivot threshold of 1e-3 (IPOPT's default 1e-6 let tiny pivots miscount the negative eigenvalues, so
# IPOPT regularised a convex step by 1e2 to 1e4 and crawled: Canadarm2 not converged after 300 iterations,
# converged in 43 with 1e-3).
MUMPS = {"ipopt.mumps_pivot_order": 4, "ipopt.mumps_pivtol": 1e-3}


class PlanError(FlexfmuError, ValueError):
    """Planning settings that cannot be used; the message names the setting."""


@dataclass(frozen=True)
class PlanSettings:
    """How a point-to-point move is planned (see the module docstring); :data:`KEYS` declares each setting."""

    start: tuple
    goal: tuple
    move_time: float
    interval: float = 0.01
    degree: int = 3
    elements: int = 1
    torque_limit: tuple | None = None
    effort: float = 1.0
    smoothness: float = 1e-3
    vibration: float = 1.0
    max_iterations: int = 300

    KEYS: ClassVar[tuple[Key, ...]] = (
        Key("start", "numbers", "joint angles at the start, at rest", "rad"),
        Key("goal", "numbers", "joint angles at the goal, at rest", "rad"),
        Key("move_time", "number", "the move time", "s", gt=0),
        Key("interval", "number", "how long each torque is held, a multiple of the sample step", "s",
            required=False, default=0.01, gt=0),
        Key("degree", "integer", "Radau collocation points per element", required=False, default=3, ge=1),
        Key("elements", "integer", "collocation elements per hold interval", required=False, default=1, ge=1),
        Key("torque_limit", "numbers", "|tau| limit per joint (none: unlimited)", "N.m", required=False,
            default=None, gt=0),
        Key("effort", "number", "weight of int |u|^2 dt", required=False, default=1.0, ge=0),
        Key("smoothness", "number", "weight of the torque steps", required=False, default=1e-3, ge=0),
        Key("vibration", "number", "weight of the elastic coordinates and rates", required=False, default=1.0,
            ge=0),
        Key("max_iterations", "integer", "IPOPT's iteration limit", required=False, default=300, ge=1),
    )

    def problems(self) -> list[str]:
        """What is wrong with these settings against :data:`KEYS`, one line each."""
        problems: list[str] = []
        read_keys(problems, {k: v for k, v in asdict(self).items() if v is not None}, "", self.KEYS)
        return problems


@dataclass(frozen=True)
class Plan:
    """Torques ``torques[i]`` held from ``switch_times[i]``; the last row is
    the holding torque from the move time on. ``states`` are the planned
    states at the switch times."""

    switch_times: np.ndarray
    torques: np.ndarray
    states: np.ndarray
    effort: float
    iterations: int
    status: str
    solve_s: float

    def switches(self) -> list[tuple[float, list[float]]]:
        """(switch time, torques) pairs as plain floats, one per row of ``torques``."""
        return [(float(t), list(map(float, u))) for t, u in zip(self.switch_times, self.torques)]


def check_settings(model, settings: PlanSettings, sample_step: float) -> None:
    """Check ``settings`` against ``model`` (one start and goal angle and one torque limit per joint) and the
    controller's ``sample_step`` (the interval and move time must be multiples of it); raise a PlanError
    listing every problem."""
    nj = len(model.inputs)
    if model.drives.prescribed:
        raise PlanError(f"plan finds joint torques; arm {model.arm.name!r} has prescribed joints")
    problems = settings.problems()
    if problems:
        raise PlanError("; ".join(problems))
    for name in ("start", "goal"):
        if len(getattr(settings, name)) != nj:
            problems.append(f"--{'from' if name == 'start' else 'to'} needs {nj} joint angles, "
                            f"got {len(getattr(settings, name))}")
    for name, value in (("interval", settings.interval), ("move time", settings.move_time)):
        if not is_multiple(value, sample_step):
            problems.append(f"the {name} {value!r} s must be a multiple of the sample step {sample_step!r} s")
    if not is_multiple(settings.move_time, settings.interval):
        problems.append(f"the move time {settings.move_time!r} s must be a multiple of the interval "
                        f"{settings.interval!r} s")
    if settings.torque_limit is not None and len(settings.torque_limit) != nj:
        problems.append(f"--torque-limit needs {nj} positive values (or one for all), got {settings.torque_limit!r}")
    if problems:
        raise PlanError("; ".join(problems))


def _collocation(degree: int):
    """Legendre-Gauss collocation: derivative matrix C (C[r, j] = l_r'(tau_j))
    and end weights D (D[r] = l_r(1)) of the Lagrange basis on [0, tau_1..d]."""
    tau = np.concatenate([[0.0], ca.collocation_points(degree, "radau")])
    C, D = np.zeros((degree + 1, degree + 1)), np.zeros(degree + 1)
    for r in range(degree + 1):
        basis = np.poly1d([1.0])
        for s in range(degree + 1):
            if s != r:
                basis *= np.poly1d([1.0, -tau[s]]) / (tau[r] - tau[s])
        D[r] = basis(1.0)
        derivative = np.polyder(basis)
        C[r] = [derivative(t) for t in tau]
    return tau, C, D


def plan_motion(model, settings: PlanSettings, sample_step: float = 1e-3, p=None, progress: bool = False,
                log_file=None) -> Plan:
    """Plan the move of ``settings`` for ``model`` (plant parameters ``p``).

    Parameters
    ----------
    model : Model
    settings : PlanSettings
    sample_step : float
        The controller's sample step, s; the hold interval and move time must be multiples of it.
    p : array, optional
        Plant parameters (the model's nominal ones when None).
    progress : bool
        Print IPOPT's iteration log.
    log_file : str or Path, optional
        Write IPOPT's iteration log to this file.

    Returns
    -------
    Plan

    Raises
    ------
    PlanError
        If the settings are unusable or IPOPT does not converge.
    """
    import time

    check_settings(model, settings, sample_step)
    n, nj = len(model.coordinates), len(model.inputs)
    nx, d = 2 * n, settings.degree
    N = int(round(settings.move_time / settings.interval))
    m = settings.elements
    h = settings.interval / m  # collocation element length
    dynamics = model.compiled
    p = model.nominal_parameters if p is None else np.asarray(p, float)
    pc = np.concatenate([p, np.array(dynamics.constants(p)).ravel()])
    tau, C, D = _collocation(d)

    # one interval: (x_i, collocation states, u) -> (residuals, x_i+1)
    point = _point_dynamics(dynamics, pc)
    xi, Xc, ui = ca.MX.sym("x", nx), ca.MX.sym("Xc", nx, d), ca.MX.sym("u", nj)
    points = ca.horzcat(xi, Xc)
    residuals = [ca.mtimes(points, C[:, j]) - h * point(Xc[:, j - 1], ui) for j in range(1, d + 1)]
    interval = ca.Function("interval", [xi, Xc, ui], [ca.vertcat(*residuals), ca.mtimes(points, D)])
    intervals = interval.map(N * m, "thread", os.cpu_count() or 1)

    limit = np.full(nj, np.inf) if settings.torque_limit is None else np.asarray(settings.torque_limit, float)
    guess = _initial_guess(model, settings, N, m, tau, limit)
    scale = _torque_scale(guess[-nj * (N + 1):].reshape(N + 1, nj))  # U columns, then hold
    X = ca.MX.sym("X", nx, N * m + 1)
    XC = ca.MX.sym("XC", nx, N * m * d)
    V, held_scaled = ca.MX.sym("V", nj, N), ca.MX.sym("hold", nj)
    U, hold = ca.diag(scale) @ V, scale * held_scaled
    held = ca.mtimes(U, ca.sparsify(ca.DM(np.kron(np.eye(N), np.ones((1, m))))))  # U_i over its m elements
    residual, ends = intervals(X[:, :-1], XC, held)
    x_start, x_goal = _rest_state(model, settings.start), _rest_state(model, settings.goal)
    links = model.coordinates_of("joint")
    rest = dynamics.state_derivative(X[:, -1], hold, pc)[n:]  # held at the goal: no acceleration
    constraints = ca.vertcat(
        ca.vec(residual), ca.vec(X[:, 1:] - ends), X[:, 0] - x_start,
        X[links, -1] - x_goal[links], X[n:, -1], rest,
    )
    effort = h * ca.sumsqr(U)
    fast = _fast_coordinates(model)
    motion = h * (ca.sumsqr(ca.mtimes(fast, XC[:n, :])) + ca.sumsqr(ca.mtimes(fast, XC[n:, :]))) / d
    objective = (settings.effort * effort + settings.smoothness * ca.sumsqr(ca.diff(U, 1, 1)) / h
                 + settings.vibration * motion) / (settings.move_time * float(np.mean(scale ** 2)))
    w = ca.vertcat(ca.vec(X), ca.vec(XC), ca.vec(V), held_scaled)

    low = np.concatenate([np.full(nx * (N * m + 1) + nx * N * m * d, -np.inf), np.tile(-limit / scale, N + 1)])
    guess[-nj * (N + 1):] /= np.tile(scale, N + 1)  # the torques in the NLP's units
    options = {"ipopt.max_iter": settings.max_iterations, "ipopt.print_level": 5 if progress else 0,
               "ipopt.sb": "yes", "print_time": False, "ipopt.tol": 1e-8, "ipopt.constr_viol_tol": 1e-10, **MUMPS}
    if log_file is not None:
        options |= {"ipopt.output_file": str(log_file), "ipopt.file_print_level": 5}
    solver = ca.nlpsol("plan", "ipopt", {"x": w, "f": objective, "g": constraints}, options)
    began = time.perf_counter()
    solution = solver(x0=guess, lbx=low, ubx=-low, lbg=0, ubg=0)
    solve_s = time.perf_counter() - began
    stats = solver.stats()
    if not stats["success"]:
        raise PlanError(f"IPOPT did not find a plan: {stats['return_status']} after {stats['iter_count']} "
                        "iterations (try a longer --time or a higher --torque-limit"
                        + (f"; its log: {log_file}" if log_file is not None else "") + ")")
    values = np.array(solution["x"]).ravel()
    states = values[:nx * (N * m + 1)].reshape(N * m + 1, nx)[::m]
    torques = values[-nj * (N + 1):].reshape(N + 1, nj) * scale  # V columns, then hold
    return Plan(switch_times=np.arange(N + 1) * settings.interval, torques=torques, states=states,
                effort=float(settings.interval * np.sum(torques[:N] ** 2)), iterations=int(stats["iter_count"]),
                status=str(stats["return_status"]), solve_s=solve_s)


def _point_dynamics(dynamics, pc) -> ca.Function:
    """(x, u) -> dx/dt at the parameters ``pc``, with the derivatives IPOPT asks of it (the Jacobian, and the
    Jacobian of its reverse derivative for the Lagrangian's Hessian) compiled beside it when a C compiler is
    present (:mod:`flexfmu.codegen.native`; CasADi finds them in the library by their names), else as it is,
    for CasADi's virtual machine.

    At -O0: on Canadarm2 (680,000 operations, most of them the Hessian's) gcc takes 22 s at -O0 and 65 s at
    -O1, and the plan 46 to 52 s warm at -O0, 41 s at -O1, 128 s in the virtual machine."""
    rhs = dynamics.state_derivative
    x, u = ca.SX.sym("x", rhs.size1_in(0)), ca.SX.sym("u", rhs.size1_in(1))
    point = ca.Function("plan_point", [x, u], [rhs(x, u, pc)])
    if c_compiler() is None:
        return point
    adjoint = point.reverse(1)
    return native_functions([point, point.jacobian(), adjoint, adjoint.jacobian()], "plan_point", "-O0")[0]


def _torque_scale(torques: np.ndarray) -> np.ndarray:
    """Per joint, the torque the NLP counts as one: the initial guess's peak, at least a hundredth of the
    largest joint's (a joint the move barely uses), and 1 N m when the guess needs no torque at all."""
    peak = np.max(np.abs(torques), axis=0)
    if not np.any(peak > 0):
        return np.ones_like(peak)
    return np.maximum(peak, 0.01 * np.max(peak))


def _fast_coordinates(model) -> np.ndarray:
    """Rows picking the elastic coordinates: joint-spring deflections
    (alpha - theta) and modal coordinates."""
    n, rows = len(model.layout), []
    joint_of = {c.link: k for k, c in enumerate(model.layout) if c.kind == "joint"}
    for k, coordinate in enumerate(model.layout):
        if coordinate.kind == "joint":
            continue
        row = np.zeros(n)
        row[k] = 1.0
        if coordinate.kind == "rotor":
            row[joint_of[coordinate.link]] = -1.0
        rows.append(row)
    return np.array(rows).reshape(len(rows), n)


def _rest_state(model, angles) -> np.ndarray:
    """x at rest with the joints at ``angles``, rotors with them, links straight."""
    q = rigid_selection(model) @ np.asarray(angles, float)
    return np.concatenate([q, np.zeros_like(q)])


def _initial_guess(model, settings: PlanSettings, N: int, m: int, tau, limit) -> np.ndarray:
    """The rigid quintic move (paper 004's reference) and its computed torque."""
    S = rigid_selection(model)
    reference = quintic_reference(settings.start, settings.goal, settings.move_time)

    def rigid_state(t):
        theta, dtheta, _ = reference(t)
        return np.concatenate([S @ theta, S @ dtheta])

    h = settings.interval / m
    X = [rigid_state(i * h) for i in range(N * m + 1)]
    XC = [rigid_state((i + t) * h) for i in range(N * m) for t in tau[1:]]
    U = np.clip(rigid_computed_torque(model, reference, (np.arange(N + 1) + 0.5) * settings.interval), -limit, limit)
    return np.concatenate([np.ravel(X), np.ravel(XC), np.ravel(U)])


def held_goal_is_stable(model, plan: Plan, p=None) -> bool:
    """Whether the goal is a stable rest under the held torque: all
    eigenvalues of M^-1 K positive, K = -d(B u_hold - h)/dq at the planned
    final pose, where B u_hold = h, so M^-1 K = -d qdd / dq. An arm held
    above the horizontal against gravity is not, and an open-loop replay
    drifts away from it however exact the plan.

    Parameters
    ----------
    model : Model
    plan : Plan
        A plan of :func:`plan_motion`; its last torque row is the holding torque.
    p : array, optional
        Plant parameters (the model's nominal ones when None).
    """
    n = len(model.coordinates)
    p = model.nominal_parameters if p is None else np.asarray(p, float)
    q = ca.MX.sym("q", n)
    qdd = model.forward_dynamics(q, ca.DM.zeros(n), plan.torques[-1], p)
    stiffness = ca.Function("stiffness", [q], [-ca.jacobian(qdd, q)])
    eigenvalues = np.linalg.eigvals(np.array(stiffness(plan.states[-1][:n])))
    return bool(np.all(eigenvalues.real > -1e-9 * np.max(np.abs(eigenvalues))))
