"""The arm at rest at its start pose: the static equilibrium its FMU starts from, and the inputs that hold it.

An FMU left with its inputs at their start values should sit still. So the
start state is the static equilibrium at the start pose and the input start
values are the torques that hold it there: the joint angles (coordinates of
kind ``joint``) stay at their start values, every other coordinate (modes,
rotors behind joint springs, a Delta's elastic coordinates) settles where
gravity, springs and the links' strain balance, and the torques of the
torque-driven joints, with the torques of the prescribed joints (whose
motion is held: angle at its start, rate and acceleration zero), balance the
rest: with q = q0 on the joints and qd = qdd = 0,

    h(q, 0) = B(q) tau,   unknowns: the free coordinates and every joint's torque tau,

n equations in n unknowns, solved by Newton's method from the undeformed
pose (without gravity the solution is that pose and zero torques).
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from flexfmu.dynamics.definiteness import unit_diagonal
from flexfmu.errors import FlexfmuError

TOLERANCE = 1e-12  # relative size of the last Newton step
ITERATIONS = 50
# forces left unbalanced where the step has vanished, relative to the largest generalized force of the balance:
# more means the least-squares step stopped at the best it could do, not at an equilibrium
UNBALANCED = 1e-8


class EquilibriumError(FlexfmuError, ValueError):
    """The arm has no static equilibrium near its undeformed start pose (it buckles or falls through)."""


def holding_equilibrium(model, pose: dict | None = None, p=None) -> tuple[np.ndarray, np.ndarray]:
    """(q, tau): every coordinate and every joint's torque (B's columns) at the static equilibrium of
    ``model`` at its start pose (``model.start_coordinates``), the joint angles named in ``pose``
    (coordinate name -> rad) moved there, with the parameters ``p`` (nominal when None); see the module
    docstring. The parameters are folded into the Newton system as numbers: the cheapest system to build
    for the one solve most callers need.

    Raises
    ------
    EquilibriumError
        If Newton's method does not converge (naming the arm).
    """
    p = model.nominal_parameters if p is None else np.asarray(p, float)
    load, held, jacobian, q, tau = _newton_system(model, p)
    system = ca.Function("equilibrium", [q, tau], [load, held, jacobian])

    def evaluate(q_now, tau_now):
        *forces, slope = system(q_now[0], tau_now[0])
        return *(np.array(force).T for force in forces), np.array(slope)[None]

    solved_q, solved_tau = _newton(model, evaluate, [p], pose)
    return solved_q[0], solved_tau[0]


def holding_equilibria(model, ps, pose: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(Q, TAU), one row per parameter vector of ``ps``: the :func:`holding_equilibrium` of ``model`` at its start
    pose with the joint angles of ``pose`` under each, equal to it to round-off. For many parameter sets (a
    sweep's points): one Newton system with the parameters as inputs, built once and evaluated for every set
    at once per iteration, where the single solve builds a system per call (most of its time for a small arm).

    Raises
    ------
    EquilibriumError
        If Newton's method does not converge for one of them (naming the arm; ``error.index`` is the set's).
    ValueError
        If a parameter vector is not as long as ``model.parameters``.
    """
    ps = np.asarray(ps, float)
    if not ps.size:
        return np.zeros((0, len(model.layout))), np.zeros((0, model.input_matrix.size2_out(0)))
    ps = np.atleast_2d(ps)
    if ps.shape[1] != len(model.parameters):
        raise ValueError(f"arm {model.arm.name!r}: a parameter vector has {len(model.parameters)} entries, "
                         f"not {ps.shape[1]}")
    p = ca.SX.sym("p", ps.shape[1])
    load, held, jacobian, q, tau = _newton_system(model, p)
    system = ca.Function("equilibria", [q, tau, p], [load, held, jacobian]).map(len(ps))
    n = len(model.layout)

    def evaluate(q_now, tau_now):
        *forces, slope = system(q_now.T, tau_now.T, ps.T)
        return *(np.array(force).T for force in forces), np.array(slope).reshape(n, len(ps), -1).transpose(1, 0, 2)

    return _newton(model, evaluate, ps, pose)


def _newton_system(model, p):
    """(h(q, 0), B(q) tau, the Jacobian of their difference in the unknowns, q, tau): the balance
    h(q, 0) = B(q) tau at the parameters ``p`` (numbers or a symbol)."""
    n = len(model.layout)
    free = _free(model)
    q, qd = ca.SX.sym("q", n), ca.SX.zeros(n)
    tau = ca.SX.sym("tau", model.input_matrix.size2_out(0))
    load, held = model.bias(q, qd, p), ca.mtimes(model.input_matrix(q, p), tau)
    unknowns = ca.vertcat(*(q[k] for k in free), tau)  # not q[free]: CasADi reads q[[]] of a 1 x 1 q as 1 x 0
    return load, held, ca.jacobian(load - held, unknowns), q, tau


def _free(model) -> list[int]:
    """The coordinates that settle: neither joint angles nor prescribed."""
    return [k for k, c in enumerate(model.layout) if c.kind != "joint" and not c.prescribed]


def _newton(model, evaluate, ps, pose: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method on every parameter set of ``ps`` from the undeformed pose: ``evaluate(Q, TAU)`` gives
    the loads h(q, 0) and held forces B(q) tau (sets x n) and the Jacobians of their difference in the unknowns
    (sets x n x (free coordinates + torques)) at every set's iterate; each set takes least-squares steps until
    its own step vanishes, has its balance checked at the next evaluation, and stays where it is while the
    others go on."""
    free = _free(model)
    q0 = np.asarray(model.start_coordinates, float).copy()
    for name, value in (pose or {}).items():  # a posed joint's rotor with it: the spring starts relaxed
        index = model.coordinates.index(name)
        for k, c in enumerate(model.layout):
            if k == index or (c.kind == "rotor" and c.link == model.layout[index].link):
                q0[k] = value
    count, joints = len(ps), model.input_matrix.size2_out(0)
    q_now, tau_now = np.tile(q0, (count, 1)), np.zeros((count, joints))
    going, settled = set(range(count)), set()
    for iteration in range(ITERATIONS + 1):  # the last evaluation only checks the balance after the last step
        load, held, jacobian = evaluate(q_now, tau_now)
        value = load - held
        finite = np.isfinite(value).all(axis=1) & np.isfinite(jacobian).all(axis=(1, 2))
        for k in sorted(going):
            if not finite[k]:
                raise _failed(model, k, "no static equilibrium found at its start pose (the dynamics are not finite "
                                        "there)")
            if k in settled:
                unbalanced = _unbalanced(load[k], held[k], model.layout)
                if unbalanced:
                    raise _failed(model, k, unbalanced)
                going.discard(k)
            elif iteration < ITERATIONS:
                step = np.linalg.lstsq(jacobian[k], -value[k], rcond=None)[0]
                q_now[k, free] += step[:len(free)]
                tau_now[k] += step[len(free):]
                if _vanished(step[:len(free)], q_now[k]) and _vanished(step[len(free):], tau_now[k]):
                    settled.add(k)
        if not going:
            _check_mass(model, q_now, ps)
            return q_now, tau_now
    raise _failed(model, min(going), f"no static equilibrium found at its start pose (Newton did not converge in "
                                     f"{ITERATIONS} steps; the arm may buckle or fall under its load)")


def _check_mass(model, q: np.ndarray, ps) -> None:
    """Raise for a set whose mass matrix at its equilibrium ``q`` (sets x n) is not positive definite over the
    state coordinates (scaled to a unit diagonal as the build's check is, :func:`unit_diagonal`): there the arm
    has no dynamics to start from (its accelerations are not defined by its forces), as when an assumed-modes
    link is bent beyond what its modes represent (the second-order terms of their kinetic energy outweigh the
    first)."""
    count, n = q.shape
    states = list(model.drives.states)
    masses = np.array(model.mass_matrix.map(count)(q.T, np.asarray(ps, float).T)).reshape(n, count, n)
    masses = masses.transpose(1, 0, 2)[:, states][:, :, states]
    scaled = unit_diagonal(masses)
    sound = np.isfinite(scaled).all(axis=(1, 2))
    lowest = np.full(count, -np.inf)
    lowest[sound] = np.linalg.eigvalsh(scaled[sound]).min(axis=1)
    for k in np.flatnonzero(~(lowest > 0.0)):
        unscaled = np.linalg.eigvalsh(masses[k]).min() if np.isfinite(masses[k]).all() else float("nan")
        bendings = [i for i in _free(model) if model.layout[i].kind != "rotor"] or _free(model)
        bent = sorted(bendings, key=lambda i: -abs(q[k, i]))[:3]
        raise _failed(model, int(k), (
            f"its mass matrix is not positive definite at its static equilibrium (smallest eigenvalue "
            f"{unscaled:.3g}): the deflections there ("
            f"{', '.join(f'{model.layout[i].name} = {q[k, i]:.3g}' for i in bent)}) are beyond what its modes "
            f"represent; start it where gravity bends it less (another start pose or initial joint angles)"))


def _vanished(step: np.ndarray, values: np.ndarray) -> bool:
    """Whether ``step`` is below :data:`TOLERANCE` of the ``values`` it changes (of 1 when they are smaller)."""
    return np.max(np.abs(step), initial=0.0) <= TOLERANCE * max(1.0, np.max(np.abs(values), initial=0.0))


def _failed(model, index: int, reason: str) -> EquilibriumError:
    """The error of the parameter set at ``index``, which it carries for the caller to name the set in its own
    terms (a sweep's point by its values)."""
    error = EquilibriumError(f"arm {model.arm.name!r}: {reason}")
    error.index = index
    return error


def _unbalanced(load: np.ndarray, held: np.ndarray, layout) -> str:
    """Why the ``load`` h(q, 0) and the ``held`` forces B(q) tau of a state (coordinates ``layout``) leave it not
    at rest ("" if they do): they must agree to :data:`UNBALANCED` of the largest term. Where the equations
    have no solution (a coordinate nothing stiff holds against its load) the least-squares step vanishes at the
    best compromise, which is not a state at rest."""
    unbalanced = np.abs(load - held)
    scale = max(1.0, np.abs(load).max(initial=0.0), np.abs(held).max(initial=0.0))
    if unbalanced.max(initial=0.0) <= UNBALANCED * scale:
        return ""
    names = [c.name for c, force in zip(layout, unbalanced) if force > UNBALANCED * scale]
    return (f"no static equilibrium at its start pose: forces of up to {unbalanced.max():.3g} (N or N m) stay "
            f"unbalanced on {', '.join(names)} (nothing stiff holds them against the load: is a stiffness zero?)")


def rest_state(model, initial: dict | None = None, p=None) -> np.ndarray:
    """x0 = [q0; 0] over the state coordinates of ``model``: the arm at rest, its joints at the angles named in
    ``initial`` (state name -> value; the others at the start pose) and every other coordinate at the static
    equilibrium there under the parameters ``p`` (nominal when None), unless ``initial`` names it too (a rate
    or a mode's value given outright). With no ``initial`` it is ``model.start_state``: where an FMU starts.
    The names must be state coordinates of ``model`` (callers check them, to name their own source)."""
    initial = initial or {}
    q, _ = holding_equilibrium(model, _joint_angles(model, initial), p)
    return _at_rest(model, q, initial)


def rest_states(model, ps, initial: dict | None = None) -> np.ndarray:
    """One row per parameter vector of ``ps``: the :func:`rest_state` of ``model`` with the values of
    ``initial`` under each, solved together (:func:`holding_equilibria`)."""
    initial = initial or {}
    q, _ = holding_equilibria(model, ps, _joint_angles(model, initial))
    return np.array([_at_rest(model, row, initial) for row in q])


def _joint_angles(model, initial: dict) -> dict:
    """The joint angles ``initial`` names."""
    joints = {c.name for c in model.layout if c.kind == "joint"}
    return {name: value for name, value in initial.items() if name in joints}


def _at_rest(model, q: np.ndarray, initial: dict) -> np.ndarray:
    """[q; 0] over the state coordinates, with the values ``initial`` gives outright."""
    states = model.states
    x0 = np.concatenate([q[list(model.drives.states)], np.zeros(len(states))])
    for name, value in initial.items():
        x0[states.index(name)] = value
    return x0
