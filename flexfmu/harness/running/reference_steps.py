"""The reference's adaptive steps: DOP853 for arms that are not stiff, ROS34PW2 for stiff ones.

Each builder turns a Model into one casadi.Function
(x, u, p, h, rtol, atol) -> (x_next, error norm), compiled to C with the
driver of ``flexfmu.harness.running.compiled_reference``; a step is accepted
when its norm is below 1, and the next step size is the last one times
(1 / norm)^(1 / order) (with a safety factor), ``order`` being the power of
h the error estimate goes with. Both integrate the Model's own graph
(``model.state_derivative``: the closed-form M, h and B with an LDL solve),
not the FMU's C, so the reference stays an independent implementation.

**DOP853** (Dormand and Prince's explicit Runge-Kutta pair of order 8 with
error estimators of orders 5 and 3; coefficients read from
``scipy.integrate.DOP853``): twelve evaluations a step and no linear algebra,
the best choice while the arm's fastest mode does not bound its step.

**ROS34PW2** (Rang and Angermann, BIT 45, 2005), for stiff arms: the Delta
robot's links have axial modes near 17,000 rad/s that the sampled torques
excite at every sample, and DOP853 must follow them (16 steps per 1 ms
sample in ``delta_pick_place``). ROS34PW2 is a Rosenbrock-W method of four stages:

    (I - gamma h J) k_i = h F(y0 + sum_j alpha_ij k_j) + h J sum_j gamma_ij k_j,
    y1 = y0 + sum_i b_i k_i,

one factorisation of I - gamma h J a step, four evaluations of F, no Newton
iteration. Why this method:

- *Order 3 for any J (the W property).* Its coefficients satisfy the order
  conditions of W-methods, whose trees keep J apart from F's derivative, up
  to order 3 (and the embedded b-hat up to order 2): an approximate J changes
  the error constant, not the order. So J need not be the Jacobian of the
  graph (which would double the generated C and break the reference's
  independence from hand-written structure): it is that of
  M(q0) qdd = -K(q0) q - D(q0) v, the Model's mass matrix with the stiffness
  and damping the stiff integrators hold (``model.stiffness_at``: the stiff
  part of the Jacobian). J only decides stability; the accuracy of the result
  is that of the error estimate, which integrates F itself.
  ``tests/test_reference_steps.py`` checks the third order with J = 0, with
  a wrong J and, on a stiff problem, with the stiff part of the Jacobian.
- *L-stable and stiffly accurate* (b_i = alpha_4i + gamma_4i, stability
  function 0 at infinity): a mode far beyond 1/h is damped out, not
  followed and not amplified, so the step is set by the error of the modes
  that matter, not by the axial ones' stability.
- *One-step*: as for DOP853, a jump of the held input at a sample is just the
  start of the next step (the module docstring of
  ``flexfmu.harness.running.compiled_reference`` says why a multistep method
  is not).

With y = [q; v], F = [v; M^-1 f] and that J, a stage solve (I - c J) k = r
with c = gamma h is (M0 + c D + c^2 K) k_v = M0 r_v - c K r_q,
k_q = r_q + c k_v: one symmetric positive definite matrix a step, factored
once by the straight-line LDL of ``flexfmu.codegen.ldl`` and solved four
times (the form ``flexfmu.integrate.rosenbrock_step`` uses for the FMU's ROS2,
built here from the Model's graph rather than the FMU's compiled contract).
The stages are written in Hairer and Wanner's form without matrix-vector
products with J (Solving ODEs II, IV.7, eq. 7.25): u_i = sum_j gamma_ij k_j,
(I - c J) u_i = c F(y0 + sum_j a_ij u_j) + gamma sum_j c_ij u_j,
y1 = y0 + sum_i m_i u_i, with a = alpha Gamma^-1, C = diag(1 / gamma) -
Gamma^-1, m = b Gamma^-1. The coefficients are the published ones.

The error is controlled on the positions only (:func:`ros34pw2_function`
says why), at rtol 1e-9 and atol 1e-11: on the whole ``delta_pick_place``
that is 10 steps per sample, 1.6 times fewer than DOP853's and each about
half as dear, and the compared outputs stay within 6e-8 of DOP853 at rtol
1e-10 (the scenario's tolerances are 1.5e-4 and 3e-4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import casadi as ca
import numpy as np
import scipy.integrate

from flexfmu.dynamics.stages import stage_solver
from flexfmu.integrate import highest_frequency, is_stiff


def dop853_step(model) -> ca.Function:
    """(x, u, p, h, rtol, atol) -> (x_next, error norm) of one DOP853 step of ``model``'s state
    derivative; the norm is scipy's: the fifth-order estimate damped by the third-order one, scaled by
    atol + rtol max(|x|, |x_next|)."""
    f = model.state_derivative
    x, u, p = (ca.MX.sym(name, f.size1_in(k)) for k, name in enumerate("xup"))
    h, rtol, atol = ca.MX.sym("h"), ca.MX.sym("rtol"), ca.MX.sym("atol")
    nx = x.numel()
    method = scipy.integrate.DOP853

    def combine(weights, stages):
        return sum(w * k for w, k in zip(weights, stages) if w != 0.0)

    stages = [f(x, u, p)]
    for s in range(1, method.n_stages):
        stages.append(f(x + h * combine(method.A[s, :s], stages), u, p))
    x_next = x + h * combine(method.B, stages)
    stages.append(f(x_next, u, p))
    scale = atol + rtol * ca.fmax(ca.fabs(x), ca.fabs(x_next))
    e5, e3 = (ca.sumsqr(combine(weights, stages) / scale) for weights in (method.E5, method.E3))
    error = ca.fabs(h) * e5 / ca.sqrt((e5 + 0.01 * e3) * nx + 1e-300)
    return ca.Function("ffref_step", [x, u, p, h, rtol, atol], [x_next, error])


# ROS34PW2 (Rang and Angermann 2005, Table 4.2 of their paper): gamma, alpha_ij, gamma_ij (i > j), b, b-hat
ROS34PW2_GAMMA = 0.435866521508459
ROS34PW2_ALPHA = np.array([[0.0, 0.0, 0.0, 0.0],
                           [0.87173304301691801, 0.0, 0.0, 0.0],
                           [0.84457060015369423, -0.11299064236484185, 0.0, 0.0],
                           [0.0, 0.0, 1.0, 0.0]])
ROS34PW2_GAMMAS = np.array([[0.0, 0.0, 0.0, 0.0],
                            [-0.87173304301691801, 0.0, 0.0, 0.0],
                            [-0.90338057013044082, 0.054180672388095326, 0.0, 0.0],
                            [0.24212380706095346, -1.2232505839045147, 0.54526025533510214, 0.0]])
ROS34PW2_B = np.array([0.24212380706095346, -1.2232505839045147, 1.5452602553351020, 0.435866521508459])
ROS34PW2_B_HAT = np.array([0.37810903145819369, -0.096042292212423178, 0.5, 0.2179332607542295])


def transformed_tableau():
    """(a, C, m, m_hat) of ROS34PW2 in Hairer and Wanner's variables u_i = sum_j gamma_ij k_j (see the module
    docstring)."""
    gamma = ROS34PW2_GAMMAS + ROS34PW2_GAMMA * np.eye(4)
    inverse = np.linalg.inv(gamma)
    return (ROS34PW2_ALPHA @ inverse, np.diag(1.0 / np.diag(gamma)) - inverse, ROS34PW2_B @ inverse,
            ROS34PW2_B_HAT @ inverse)


def state_blocks(model) -> ca.Function:
    """(x, u, p) -> (M, K, D) of ``model`` over its state coordinates (prescribed joints' angles from u): the
    mass matrix and the held stiffness and damping (``model.stiffness_at``) that make the W-method's J."""
    f = model.state_derivative
    x, u, p = (ca.MX.sym(name, f.size1_in(k)) for k, name in enumerate("xup"))
    n = x.numel() // 2
    drives = model.drives
    q_all = drives.coordinates(x[:n], ca.MX.zeros(n), u)[0]
    states = list(drives.states)
    K, D = model.stiffness_at(q_all, p)
    M = model.mass_matrix(q_all, p)
    return ca.Function("state_blocks", [x, u, p], [M[states, states], K[states, states], D[states, states]])


def ros34pw2_function(f: ca.Function, blocks: ca.Function) -> ca.Function:
    """(x, u, p, h, rtol, atol) -> (x_next, error norm) of one ROS34PW2 step of dx/dt = ``f``(x, u, p),
    x = [q; v], with J = [0, I; -M^-1 K, -M^-1 D] from ``blocks``: (x, u, p) -> (M, K, D) at the step's
    start (see the module docstring). The norm is the root mean square over the positions q of the difference
    of the third- and second-order results, scaled by atol + rtol max(|q|, |q_next|): the velocities of
    modes far beyond 1/h, which the method damps instead of following, would rule a norm over the
    velocities too while their positions (velocity over frequency) lie far below any tolerance; a velocity
    error of the modes that matter shows in the positions of the following steps."""
    x, u, p = (ca.MX.sym(name, f.size1_in(k)) for k, name in enumerate("xup"))
    h, rtol, atol = ca.MX.sym("h"), ca.MX.sym("rtol"), ca.MX.sym("atol")
    n = x.numel() // 2
    a, C, m, m_hat = transformed_tableau()
    M, K, D = blocks(x, u, p)
    c = ROS34PW2_GAMMA * h
    stage = stage_solver(M, K, D, c)

    def solve(r):
        """(I - c J)^-1 r for r = [r_q; r_v]."""
        return ca.vertcat(*stage(r[:n], ca.mtimes(M, r[n:])))

    stages = []
    for i in range(4):
        y = x + sum(a[i, j] * stages[j] for j in range(i) if a[i, j] != 0.0)
        r = c * f(y, u, p) + ROS34PW2_GAMMA * sum(C[i, j] * stages[j] for j in range(i) if C[i, j] != 0.0)
        stages.append(solve(r))
    x_next = x + sum(m[i] * stages[i] for i in range(4))
    estimate = sum((m[i] - m_hat[i]) * stages[i] for i in range(4))[:n]
    scale = atol + rtol * ca.fmax(ca.fabs(x[:n]), ca.fabs(x_next[:n]))
    error = ca.sqrt(ca.sumsqr(estimate / scale) / n)
    return ca.Function("ffref_step", [x, u, p, h, rtol, atol], [x_next, error])


def ros34pw2_step(model) -> ca.Function:
    """The ROS34PW2 step (:func:`ros34pw2_function`) of ``model``'s state derivative, J from
    :func:`state_blocks`."""
    return ros34pw2_function(model.state_derivative, state_blocks(model))


@dataclass(frozen=True)
class ReferenceIntegrator:
    """One of the reference's adaptive steps: its name (printed in reports), its step builder (Model ->
    Function), the power of h its error estimate goes with (the step size controller's exponent is its
    inverse) and its default relative and absolute tolerances."""

    name: str
    step: Callable
    error_order: int
    rtol: float
    atol: float


REFERENCE_INTEGRATORS = {integrator.name: integrator for integrator in (
    ReferenceIntegrator("DOP853", dop853_step, 8, 1e-10, 1e-12),
    ReferenceIntegrator("ROS34PW2", ros34pw2_step, 3, 1e-9, 1e-11),
)}


def reference_integrator(model, sample_step: float) -> ReferenceIntegrator:
    """The reference's integrator for ``model`` sampled every ``sample_step`` s: ROS34PW2 where the arm is stiff
    at that step (its highest frequency makes RK4, and so DOP853, take its step for stability:
    ``flexfmu.integrate.is_stiff``), DOP853 otherwise."""
    return REFERENCE_INTEGRATORS["ROS34PW2" if is_stiff(highest_frequency(model), sample_step) else "DOP853"]
