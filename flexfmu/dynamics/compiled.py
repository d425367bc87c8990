"""The Model's dynamics as straight-line code, for C generation.

The Model's ``forward_dynamics`` solves M qdd = B u - h with CasADi's sparse
LDL linsol: quick to build, right for Python and CVODES. Generated C wants
something else: measured here for the two-link arm of paper 000, that path
costs 990 ns per right-hand side; this one 160 ns (and at 10 links 13 us
instead of 19 us, with 9 s of gcc instead of 70 s). Three changes:

1. Parameter-only subexpressions (mass properties, EI / L^3, mode shapes at
   lumped-mass positions, damping coefficients, ...) are hoisted out by
   ``casadi.extract_parametric`` into constants c(p), which an FMU computes
   once per parameter change instead of in every call.
2. Only the lower triangle of M is computed.
3. M qdd = B u - h is solved by an unrolled LDL' factorisation of the
   evaluated M: the numeric algorithm (no pivoting; M is symmetric positive
   definite) written out as straight-line code, not a symbolic inverse.

Every Function here takes pc = [p; c] as its parameter argument.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from flexfmu.dynamics.model import Model


def ldl_solve(M: ca.SX, b: ca.SX) -> ca.SX:
    """Solve M x = b for symmetric positive definite M by an unrolled LDL'."""
    n = M.shape[0]
    L = [[None] * n for _ in range(n)]
    D = [None] * n
    for j in range(n):
        D[j] = M[j, j] - _sum(L[j][k] ** 2 * D[k] for k in range(j))
        for i in range(j + 1, n):
            L[i][j] = (M[i, j] - _sum(L[i][k] * L[j][k] * D[k] for k in range(j))) / D[j]
    y = [None] * n
    for i in range(n):
        y[i] = b[i] - _sum(L[i][k] * y[k] for k in range(i))
    x = [None] * n
    for i in reversed(range(n)):
        x[i] = y[i] / D[i] - _sum(L[k][i] * x[k] for k in range(i + 1, n))
    return ca.vertcat(*x)


def _sum(terms) -> ca.SX:
    total = ca.SX(0)
    for term in terms:
        total = total + term
    return total


@dataclass(frozen=True)
class StraightLineDynamics:
    """Functions of the C contract, in terms of pc = [p; c(p)].

    Attributes
    ----------
    constants : (p) -> c
    state_derivative : (x, u, pc) -> dx/dt
    outputs : (x, u, pc) -> y
    terms : (q, qd, u, pc) -> (M, B u - h)
    structure : (pc) -> (K, D), the structural stiffness (bending, joint
        springs) and damping (modal, spring, viscous) that make arms stiff;
        constant in q, used by the implicit integrator's simplified Newton.
    """

    constants: ca.Function
    state_derivative: ca.Function
    outputs: ca.Function
    terms: ca.Function
    structure: ca.Function

    @property
    def size(self) -> int:
        """Number of constants c."""
        return self.constants.size1_out(0)


def straight_line_dynamics(model: Model) -> StraightLineDynamics:
    """Build the straight-line Functions of ``model``."""
    n, nu, npar = len(model.coordinates), len(model.inputs), len(model.parameters)
    q, qd, u, p = ca.SX.sym("q", n), ca.SX.sym("qd", n), ca.SX.sym("u", nu), ca.SX.sym("p", npar)
    M_lower = ca.tril(model.mass_matrix(q, p))
    force = ca.mtimes(model.input_matrix(q, p), u) - model.bias(q, qd, p)
    K, D = model.structure_matrices(p)
    packed, symbols, parametric = ca.extract_parametric(
        ca.vertcat(M_lower.nz[:], force, ca.vec(K), ca.vec(D)), p
    )
    c = ca.vertcat(*symbols)
    pc = ca.vertcat(p, c)
    nm = M_lower.nnz()
    M = ca.tril2symm(ca.SX(M_lower.sparsity(), packed[:nm]))
    force = packed[nm:nm + n]
    K = ca.reshape(packed[nm + n:nm + n + n * n], n, n)
    D = ca.reshape(packed[nm + n + n * n:], n, n)

    x = ca.vertcat(q, qd)
    xdot = ca.vertcat(qd, ldl_solve(M, force))
    cse = {"cse": True}
    rhs = ca.Function("state_derivative", [x, u, pc], [xdot], ["x", "u", "pc"], ["xdot"], cse)
    # the outputs call the right-hand side for the accelerations instead of
    # repeating its solve, so their derivatives reuse its forward mode too
    kinematic = ca.Function("kinematic_outputs", [q, qd, qdd := ca.SX.sym("qdd", n), pc],
                            [model.kinematic_outputs(q, qd, qdd, p)], cse)
    xm, um, pcm = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("pc", pc.numel())
    ym = kinematic(xm[:n], xm[n:], rhs(xm, um, pcm)[n:], pcm)
    return StraightLineDynamics(
        constants=ca.Function("constants", [p], [ca.vertcat(*parametric)], ["p"], ["c"], cse),
        state_derivative=rhs,
        outputs=ca.Function("outputs", [xm, um, pcm], [ym], ["x", "u", "pc"], ["y"]),
        terms=ca.Function("terms", [q, qd, u, pc], [M, force], ["q", "qd", "u", "pc"], ["M", "f"], cse),
        structure=ca.Function("structure", [pc], [K, D], ["pc"], ["K", "D"]),
    )
