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
    docstring.

    Raises
    ------
    EquilibriumError
        If Newton's method does not converge (naming the arm).
    """
    p = model.nominal_parameters if p is None else np.asarray(p, float)
    layout, n = model.layout, len(model.layout)
    q0 = np.asarray(model.start_coordinates, float).copy()
    for name, value in (pose or {}).items():
        q0[model.coordinates.index(name)] = value
    free = [k for k, c in enumerate(layout) if c.kind != "joint" and not c.prescribed]
    q, qd = ca.SX.sym("q", n), ca.SX.zeros(n)
    joints = model.input_matrix.size2_out(0)
    tau = ca.SX.sym("tau", joints)
    residual = model.bias(q, qd, p) - ca.mtimes(model.input_matrix(q, p), tau)
    unknowns = ca.vertcat(*(q[k] for k in free), tau)  # not q[free]: CasADi reads q[[]] of a 1 x 1 q as 1 x 0
    system = ca.Function("equilibrium", [q, tau], [residual, ca.jacobian(residual, unknowns)])
    q_now, tau_now = q0.copy(), np.zeros(joints)
    for _ in range(ITERATIONS):
        value, jacobian = (np.array(m) for m in system(q_now, tau_now))
        if not (np.all(np.isfinite(value)) and np.all(np.isfinite(jacobian))):
            raise EquilibriumError(f"arm {model.arm.name!r}: no static equilibrium found at its start pose (the "
                                   "dynamics are not finite there)")
        step = np.linalg.lstsq(jacobian, -value.ravel(), rcond=None)[0]
        q_now[free] += step[:len(free)]
        tau_now += step[len(free):]
        if np.max(np.abs(step[:len(free)]), initial=0.0) <= TOLERANCE * max(1.0, np.abs(q_now).max()) \
                and np.max(np.abs(step[len(free):]), initial=0.0) <= TOLERANCE * max(1.0, np.abs(tau_now).max()):
            _check_balanced(model, q_now, tau_now, p)
            return q_now, tau_now
    raise EquilibriumError(f"arm {model.arm.name!r}: no static equilibrium found at its start pose (Newton did "
                           f"not converge in {ITERATIONS} steps; the arm may buckle or fall under its load)")


def _check_balanced(model, q: np.ndarray, tau: np.ndarray, p: np.ndarray) -> None:
    """Raise EquilibriumError unless h(q, 0) = B(q) tau to :data:`UNBALANCED` of the largest term: where the
    equations have no solution (a coordinate nothing stiff holds against its load) the least-squares step
    vanishes at the best compromise, which is not a state at rest."""
    n = len(model.layout)
    load = np.array(model.bias(q, np.zeros(n), p)).ravel()
    held = (np.array(model.input_matrix(q, p)) @ tau).ravel()
    unbalanced = np.abs(load - held)
    scale = max(1.0, np.abs(load).max(initial=0.0), np.abs(held).max(initial=0.0))
    if unbalanced.max(initial=0.0) > UNBALANCED * scale:
        names = [c.name for c, force in zip(model.layout, unbalanced) if force > UNBALANCED * scale]
        raise EquilibriumError(f"arm {model.arm.name!r}: no static equilibrium at its start pose: forces of up to "
                               f"{unbalanced.max():.3g} (N or N m) stay unbalanced on {', '.join(names)} (nothing "
                               "stiff holds them against the load: is a stiffness zero?)")


def rest_state(model, initial: dict | None = None, p=None) -> np.ndarray:
    """x0 = [q0; 0] over the state coordinates of ``model``: the arm at rest, its joints at the angles named in
    ``initial`` (state name -> value; the others at the start pose) and every other coordinate at the static
    equilibrium there under the parameters ``p`` (nominal when None), unless ``initial`` names it too (a rate
    or a mode's value given outright). With no ``initial`` it is ``model.start_state``: where an FMU starts.
    The names must be state coordinates of ``model`` (callers check them, to name their own source)."""
    initial = initial or {}
    states = model.states
    joints = {c.name for c in model.layout if c.kind == "joint"}
    q, _ = holding_equilibrium(model, {name: value for name, value in initial.items() if name in joints}, p)
    x0 = np.concatenate([q[list(model.drives.states)], np.zeros(len(states))])
    for name, value in initial.items():
        x0[states.index(name)] = value
    return x0
