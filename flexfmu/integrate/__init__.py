"""Fixed-step integrators as casadi.Functions, and the choice of their step.

A step Function maps (x, u, pc, h) to the state after one step of size h
with the input held, pc = [p; c(p)] (see flexfmu.dynamics.model.CompiledDynamics). It calls
the compiled right-hand side rather than expanding it, so generated C
holds the right-hand side once and a step is a few calls of it.

- ``rk4``: classic explicit Runge-Kutta, fourth order. Accurate when
  h * omega_max <= 0.3 for the arm's highest linearised frequency.
- ``implicit``: implicit midpoint rule, second order, A-stable and symplectic
  (no numerical damping of the modes), solved with a fixed number of
  simplified Newton iterations whose matrix holds the arm's structural
  stiffness and damping, so the cost of a step is bounded (real-time
  targets need that more than they need a converged residual).
"""

from __future__ import annotations

import math

import casadi as ca
import numpy as np

from flexfmu.dynamics.model import CompiledDynamics

INTEGRATORS = ("rk4", "implicit")
RK4_ACCURACY = 0.3  # h * omega_max for the default RK4 step
# Largest h * omega for which an undamped mode stays bounded: RK4's stability region meets the imaginary axis
# at 2 sqrt(2) (|R(i y)|^2 = 1 - y^6/72 + y^8/576); the implicit midpoint rule is A-stable.
STABILITY_LIMITS = {"rk4": 2.0 * math.sqrt(2.0), "implicit": math.inf}
NEWTON_ITERATIONS = 3


def _symbols(rhs: ca.Function):
    nx, nu, npc = (rhs.size1_in(k) for k in range(3))
    return ca.MX.sym("x", nx), ca.MX.sym("u", nu), ca.MX.sym("pc", npc), ca.MX.sym("h")


def rk4_step(dynamics: CompiledDynamics, name: str = "step") -> ca.Function:
    """One classic RK4 step of dx/dt = f(x, u, pc).

    Parameters
    ----------
    dynamics : CompiledDynamics
        The model's compiled dynamics (``model.compiled``); its ``state_derivative`` is f.
    name : str
        The Function's name (the C symbol prefix when generated).

    Returns
    -------
    casadi.Function
        (x, u, pc, h) -> x_next.
    """
    rhs = dynamics.state_derivative
    x, u, pc, h = _symbols(rhs)
    k1 = rhs(x, u, pc)
    k2 = rhs(x + h / 2 * k1, u, pc)
    k3 = rhs(x + h / 2 * k2, u, pc)
    k4 = rhs(x + h * k3, u, pc)
    return ca.Function(name, [x, u, pc, h], [x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)], ["x", "u", "pc", "h"], ["x_next"])


def implicit_midpoint_step(
    dynamics: CompiledDynamics, iterations: int = NEWTON_ITERATIONS, name: str = "step"
) -> ca.Function:
    """One implicit midpoint step with a simplified Newton iteration.

    With x = [q; v] and the midpoint velocity w, the step solves
    F(w) = M(qm) (w - v0) - h/2 (B u - h)(qm, w) = 0 with qm = q0 + h/2 w,
    then q1 = q0 + h w and v1 = 2 w - v0. Newton uses the iteration matrix
    S = M + h/2 D + h^2/4 K with the structural damping D and stiffness K
    (the stiff part of the arm) instead of the full Jacobian, so no
    derivative of the dynamics is generated; ``iterations`` is fixed, which
    bounds the cost of a step. The predictor is an explicit Euler half step.
    The correction S^-1 F is ``dynamics.newton_correction``.

    Parameters
    ----------
    dynamics : CompiledDynamics
        The model's compiled dynamics (``model.compiled``).
    iterations : int
        Number of simplified Newton iterations.
    name : str
        The Function's name (the C symbol prefix when generated).

    Returns
    -------
    casadi.Function
        (x, u, pc, h) -> x_next.
    """
    rhs = dynamics.state_derivative
    x, u, pc, h = _symbols(rhs)
    n = x.numel() // 2
    q0, v0 = x[:n], x[n:]
    w = v0 + h / 2 * rhs(x, u, pc)[n:]
    for _ in range(iterations):
        w = w - dynamics.newton_correction(q0 + h / 2 * w, w, v0, u, pc, h)
    return ca.Function(name, [x, u, pc, h], [ca.vertcat(q0 + h * w, 2 * w - v0)], ["x", "u", "pc", "h"], ["x_next"])


STEP_BUILDERS = {"rk4": rk4_step, "implicit": implicit_midpoint_step}


def step_function(dynamics: CompiledDynamics, integrator: str, name: str = "step") -> ca.Function:
    """The step Function (x, u, pc, h) -> x_next of the named integrator.

    Parameters
    ----------
    dynamics : CompiledDynamics
        The model's compiled dynamics (``model.compiled``).
    integrator : str
        One of :data:`INTEGRATORS`.
    name : str
        The Function's name (the C symbol prefix when generated).

    Raises
    ------
    ValueError
        For an unknown integrator.
    """
    if integrator not in STEP_BUILDERS:
        raise ValueError(f"integrator must be one of {', '.join(INTEGRATORS)}, got {integrator!r}")
    return STEP_BUILDERS[integrator](dynamics, name=name)


def default_internal_step(omega_max: float, integrator: str, communication_step: float) -> float:
    """The largest step that divides ``communication_step`` and is accurate.

    RK4: h * omega_max <= 0.3 (RK4 at h * omega = 1.2 is stable but damps a
    mode away within a fraction of a second). Implicit midpoint: stable for
    any h and free of numerical damping, so the communication step itself,
    refined only where h * omega_max would exceed 2 (phase error of the
    fastest mode above ~30 %).

    Parameters
    ----------
    omega_max : float
        The arm's highest natural frequency, rad/s (see :func:`highest_frequency`); 0 or less returns
        ``communication_step``.
    integrator : str
        One of :data:`INTEGRATORS`.
    communication_step : float
        The co-simulation (or controller sample) step, s.
    """
    limit = RK4_ACCURACY if integrator == "rk4" else 2.0
    if omega_max <= 0:
        return communication_step
    substeps = max(1, math.ceil(communication_step * omega_max / limit - 1e-12))
    return communication_step / substeps


def stable_step(omega_max: float, integrator: str) -> float:
    """The largest step of ``integrator`` (one of :data:`INTEGRATORS`) that keeps an undamped mode of
    ``omega_max`` rad/s bounded: :data:`STABILITY_LIMITS` over ``omega_max`` (inf for the implicit rule or an
    arm that does not oscillate)."""
    limit = STABILITY_LIMITS[integrator]
    return limit / omega_max if omega_max > 0 and math.isfinite(limit) else math.inf


def is_multiple(value: float, step: float) -> bool:
    """Whether ``value`` is a whole number (>= 1) of ``step``, to 1e-9 relative."""
    n = round(value / step)
    return n >= 1 and abs(n * step - value) <= 1e-9 * value


def highest_frequency(model, p=None) -> float:
    """Highest linearised natural frequency (rad/s) of ``model`` at the pose q = 0, with parameters ``p``
    (nominal when None), its prescribed joints held; 0 for an arm with no oscillating coordinate."""
    from flexfmu.dynamics.linear import natural_frequencies

    held = [c.name for c in model.layout if c.prescribed]
    omega = natural_frequencies(model, p=p, locked=held)
    return float(np.max(omega)) if omega.size else 0.0
