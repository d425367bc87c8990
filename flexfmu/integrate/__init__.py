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
- ``rosenbrock``: the linearly implicit Rosenbrock-W method ROS2, second
  order for any approximation of the Jacobian and L-stable with the exact
  one: two evaluations of the dynamics and one factorisation of
  M + c D + c^2 K per step, no iteration, so its cost does not depend on
  the state. It follows the modes well below 1/h and damps the stiff ones
  (axial and torsion modes nobody wants) instead of resolving them: the
  integrator for stiff arms at the communication step.
"""

from __future__ import annotations

import math

import casadi as ca
import numpy as np

from flexfmu.codegen.ldl import ldl_functions, sparse_product
from flexfmu.dynamics.model import CompiledDynamics

INTEGRATORS = ("rk4", "implicit", "rosenbrock")
RK4_ACCURACY = 0.3  # h * omega_max for the default RK4 step
# Largest h * omega for which an undamped mode stays bounded: RK4's stability region meets the imaginary axis
# at 2 sqrt(2) (|R(i y)|^2 = 1 - y^6/72 + y^8/576); the implicit midpoint rule is A-stable.
STABILITY_LIMITS = {"rk4": 2.0 * math.sqrt(2.0), "implicit": math.inf, "rosenbrock": math.inf}
NEWTON_ITERATIONS = 3
# gamma of ROS2 (Verwer et al. 1999): both roots of gamma^2 - 2 gamma + 1/2 give an L-stable second-order
# method; Verwer's 1 + 1/sqrt(2) damps a mode at h omega = 0.115 by 4 % of its amplitude per period, this one
# by 4e-5 (and its phase error is 30 times smaller), which a model whose modes matter needs
ROS2_GAMMA = 1.0 - 1.0 / math.sqrt(2.0)
# RK4 stays the default while its accurate step needs at most this many substeps per communication step;
# beyond, the arm is stiff and the Rosenbrock step at the communication step is the default (a ROS2 step
# costs about as much as two RK4 substeps)
MAX_RK4_SUBSTEPS = 16
# ... or while its right-hand side costs at most this many operations per second simulated: 100 us of a 1 ms
# step at the one operation per nanosecond of generated straight-line code on a modest core, a tenth of real
# time. The example arms need at most 3e7 (Canadarm2); spatial chains of three links and more, whose torsion
# needs 7 to 10 substeps, take 1.4e8 to 6.6e8 and step 8 times faster with ROS2 (benchmarks/quasi_static.py)
MAX_RK4_OPERATIONS = 1e8


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


def rosenbrock_step(dynamics: CompiledDynamics, name: str = "step") -> ca.Function:
    """One step of the Rosenbrock-W method ROS2 (Verwer, Spee, Blom and Hundsdorfer 1999).

    With y = [q; v] and F(y) = [v; M^-1 f], ROS2 is
    (I - gamma h J) k1 = F(y0), (I - gamma h J) k2 = F(y0 + h k1) - 2 k1,
    y1 = y0 + h (3/2 k1 + 1/2 k2), gamma = 1 - 1/sqrt(2) (:data:`ROS2_GAMMA`): second
    order for any matrix J (a W-method), L-stable when J is the Jacobian. Here J is that of
    M qdd = f - K q - D v linearised in the structure alone (K and D at the
    step's start), so a stage solves, with c = gamma h,
    (M + c D + c^2 K) k_v = M r_v - c K r_q and k_q = r_q + c k_v: two solves
    with one matrix W = M + c D + c^2 K (``dynamics.linear_stages``: an LDL'
    factor of the mass form, or a kind's own passes, :mod:`flexfmu.dynamics.stages`),
    and one more evaluation of the dynamics (``dynamics.state_derivative`` at y0 + h k1).

    Parameters
    ----------
    dynamics : CompiledDynamics
        The model's compiled dynamics (``model.compiled``).
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
    stages = dynamics.linear_stages(x, u, pc, ROS2_GAMMA * h)
    k1q, k1v = stages.forced(v0)  # r_v = M^-1 f, so M r_v = f
    a2 = rhs(ca.vertcat(q0 + h * k1q, v0 + h * k1v), u, pc)[n:]
    k2q, k2v = stages.massed(v0 + h * k1v - 2 * k1q, a2 - 2 * k1v)
    x_next = ca.vertcat(q0 + h * (1.5 * k1q + 0.5 * k2q), v0 + h * (1.5 * k1v + 0.5 * k2v))
    return ca.Function(name, [x, u, pc, h], [x_next], ["x", "u", "pc", "h"], ["x_next"])


def rosenbrock_tangent(dynamics: CompiledDynamics, directions: int, name: str = "step_tangent") -> ca.Function:
    """The forward derivatives of one :func:`rosenbrock_step` in ``directions`` directions at once, exact.

    Differentiating the step's formulas (see :func:`rosenbrock_step`), with W = M + c D + c^2 K and its
    LDL' factor at y0 computed once for every direction:
    dk1_v = W^-1 (df - c dK v0 - c K dv0 - dW k1_v), da2 = M2^-1 (df2 - dM2 a2) at y2 = y0 + h k1,
    dk2_v = W^-1 (dM r_v + M dr_v - c dK r_q - c K dr_q - dW k2_v), and the linear combinations around them.
    dM, df, dK, dD are the forward derivatives of ``dynamics.mass_form`` (generated by CasADi, one direction
    per call); no factorisation is differentiated, and a direction costs two of them and three solves with
    the step's factors, about a third of what CasADi's derivative of the whole step costs.

    Parameters
    ----------
    dynamics : CompiledDynamics
        The model's compiled dynamics (``model.compiled``).
    directions : int
        How many directions (columns of dX and dU).
    name : str
        The Function's name.

    Returns
    -------
    casadi.Function
        (x, u, pc, h, dX, dU) -> dX_next, dX the state's derivatives (2n x directions), dU the input's.
    """
    mass_form, rhs = dynamics.mass_form, dynamics.state_derivative
    x, u, pc, h = _symbols(rhs)
    n, nu = x.numel() // 2, u.numel()
    v0, c = x[n:], ROS2_GAMMA * h
    # the step's own quantities, once for every direction
    M, f, K, D = mass_form(x, u, pc)
    W = M + c * D + c**2 * K
    ldl_w = ldl_functions(W.sparsity())
    Dw, Lw = ldl_w.factors(W)
    k1v = ldl_w.solve(Dw, Lw, f - c * sparse_product(K, v0))
    k1q = v0 + c * k1v
    x2 = ca.vertcat(x[:n] + h * k1q, v0 + h * k1v)
    M2, f2, K2, D2 = mass_form(x2, u, pc)
    ldl_2 = ldl_functions(M2.sparsity())
    D2f, L2f = ldl_2.factors(M2)
    a2 = ldl_2.solve(D2f, L2f, f2)  # the step's a2 = rhs(x2), from the mass form and factor computed here anyway
    rq, rv = v0 + h * k1v - 2 * k1q, a2 - 2 * k1v
    k2v = ldl_w.solve(Dw, Lw, sparse_product(M, rv) - c * sparse_product(K, rq))
    values = dict(M=M, f=f, K=K, D=D, Dw=Dw, Lw=Lw, k1v=k1v, x2=x2, M2=M2, f2=f2, K2=K2, D2=D2, D2f=D2f, L2f=L2f,
                  a2=a2, rq=rq, rv=rv, k2v=k2v)
    held = {key: ca.MX.sym(key, value.sparsity()) for key, value in values.items()}

    # one direction, with the step's quantities held
    forward = mass_form.forward(1)
    dx, du = ca.MX.sym("dx", 2 * n), ca.MX.sym("du", nu)
    dv0, H = dx[n:], held
    dM, df, dK, dD = forward(x, u, pc, H["M"], H["f"], H["K"], H["D"], dx, du, 0)
    dW = dM + c * dD + c**2 * dK

    def solve_w(b):
        return ldl_w.solve(H["Dw"], H["Lw"], b)

    dk1v = solve_w(df - c * sparse_product(dK, v0) - c * sparse_product(H["K"], dv0) - sparse_product(dW, H["k1v"]))
    dk1q = dv0 + c * dk1v
    dx2 = dx + h * ca.vertcat(dk1q, dk1v)
    dM2, df2, _, _ = forward(H["x2"], u, pc, H["M2"], H["f2"], H["K2"], H["D2"], dx2, du, 0)
    da2 = ldl_2.solve(H["D2f"], H["L2f"], df2 - sparse_product(dM2, H["a2"]))
    drq, drv = dv0 + h * dk1v - 2 * dk1q, da2 - 2 * dk1v
    dk2v = solve_w(sparse_product(dM, H["rv"]) + sparse_product(H["M"], drv) - c * sparse_product(dK, H["rq"])
                   - c * sparse_product(H["K"], drq) - sparse_product(dW, H["k2v"]))
    dk2q = drq + c * dk2v
    dx_next = dx + h * ca.vertcat(1.5 * dk1q + 0.5 * dk2q, 1.5 * dk1v + 0.5 * dk2v)
    nominal = [x, u, pc, h, *held.values()]
    one = ca.Function(f"{name}_direction", [*nominal, dx, du], [dx_next])
    every = one.map(f"{name}_directions", "serial", directions, list(range(len(nominal))), [])
    dX, dU = ca.MX.sym("dX", 2 * n, directions), ca.MX.sym("dU", nu, directions)
    return ca.Function(name, [x, u, pc, h, dX, dU], [every(x, u, pc, h, *values.values(), dX, dU)],
                       ["x", "u", "pc", "h", "dX", "dU"], ["dX_next"])


STEP_BUILDERS = {"rk4": rk4_step, "implicit": implicit_midpoint_step, "rosenbrock": rosenbrock_step}


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
    fastest mode above ~30 %). Rosenbrock: the communication step itself,
    always: it is chosen to damp the modes above 1/h rather than follow them.

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
    if integrator == "rosenbrock" or omega_max <= 0:
        return communication_step
    limit = RK4_ACCURACY if integrator == "rk4" else 2.0
    substeps = max(1, math.ceil(communication_step * omega_max / limit - 1e-12))
    return communication_step / substeps


def rk4_substeps(omega_max: float, communication_step: float) -> int:
    """How many default RK4 steps (:func:`default_internal_step`) one ``communication_step`` takes for the
    highest frequency ``omega_max`` (rad/s)."""
    return round(communication_step / default_internal_step(omega_max, "rk4", communication_step))


def is_stiff(omega_max: float, communication_step: float) -> bool:
    """Whether RK4's accurate step needs more than :data:`MAX_RK4_SUBSTEPS` substeps of ``communication_step``
    for the highest frequency ``omega_max`` (rad/s): its fastest modes are better damped than followed."""
    return rk4_substeps(omega_max, communication_step) > MAX_RK4_SUBSTEPS


def right_hand_side_operations(dynamics: CompiledDynamics) -> int:
    """The operations of one evaluation of the generated state derivative of ``dynamics`` (its instructions as
    straight-line code: CasADi's count of the expanded Function)."""
    rhs = dynamics.state_derivative
    return (rhs if rhs.is_a("SXFunction") else rhs.expand()).n_instructions()


def default_integrator(omega_max: float, communication_step: float, dynamics: CompiledDynamics | None = None) -> str:
    """The integrator an export uses unless told, for the highest frequency ``omega_max`` (rad/s): ``rk4``, or
    ``rosenbrock`` where the arm is stiff (:func:`is_stiff`) or RK4 is dear: more than two substeps per
    ``communication_step`` and more than :data:`MAX_RK4_OPERATIONS` operations of ``dynamics``' right-hand
    side per second simulated (a ROS2 step costs about two RK4 substeps, and damps the fast modes RK4's
    substeps follow). Without ``dynamics`` only stiffness counts."""
    substeps = rk4_substeps(omega_max, communication_step)
    if is_stiff(omega_max, communication_step):
        return "rosenbrock"
    if dynamics is None or substeps <= 2:
        return "rk4"
    per_second = 4 * substeps * right_hand_side_operations(dynamics) / communication_step
    return "rosenbrock" if per_second > MAX_RK4_OPERATIONS else "rk4"


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
    """Highest linearised natural frequency (rad/s) of ``model`` at its start pose, undeformed, with parameters
    ``p`` (nominal when None), its prescribed joints held; 0 for an arm with no oscillating coordinate.

    This sets an exported FMU's internal step, so it is the frequency of the dynamics the FMU integrates,
    linearised at the start pose, not about a loaded equilibrium: it adds no geometric stiffness of an axial
    preload that the Model's dynamics leave out (geometric stiffening off), because an explicit integrator is
    stable or not for what it integrates. :func:`flexfmu.dynamics.linear.held_frequencies` gives the physical
    frequencies about the sag, with that stiffness."""
    from flexfmu.dynamics.linear import natural_frequencies

    held = [c.name for c in model.layout if c.prescribed]
    omega = natural_frequencies(model, p=p, locked=held)
    return float(np.max(omega)) if omega.size else 0.0
