"""The linear algebra of one stage of a Rosenbrock-W step, in the two forms the arm kinds can offer it.

A Rosenbrock-W step of M(q) qdd = f(q, v, u) linearised in its structure
(stiffness K, damping D; ``flexfmu.integrate.rosenbrock_step``) solves
(I - c J) [k_q; k_v] = [r_q; r_v] at the step's start y0 = [q0; v0], which is

    W k_v = M r_v - c K r_q,   k_q = r_q + c k_v,   W = M + c D + c^2 K.

Its first stage has r_v = M^-1 f, so its right-hand side is f - c K r_q and
needs no M^-1. A :class:`LinearStages` gives both kinds of stage at y0:

- :class:`MassFormStages`, from the mass form (M, f, K, D) of
  ``CompiledDynamics.mass_form``: one straight-line LDL' factor of W per step
  (:mod:`flexfmu.codegen.ldl`), two solves. The Delta robot's and the planar
  chains' step, and the Model-graph implementation of every kind.
- a kind's own, from its recursive passes (the spatial chain's
  articulated-body passes with the structure added to each body's inertia,
  :mod:`flexfmu.dynamics.spatial.compiled`): O(links) work per solve and no
  matrix at all, where a closed-form mass matrix would be the largest code
  of the FMU.
"""

from __future__ import annotations

from typing import Protocol

import casadi as ca

from flexfmu.codegen.ldl import ldl_functions, sparse_product


class LinearStages(Protocol):
    """The stage solves of one Rosenbrock-W step at its start y0 (MX graphs; see the module docstring)."""

    def forced(self, r_q) -> tuple:
        """(k_q, k_v) with W k_v = f(y0, u) - c K ``r_q``: the first stage, r_v = M^-1 f."""

    def massed(self, r_q, r_v) -> tuple:
        """(k_q, k_v) with W k_v = M(q0) ``r_v`` - c K ``r_q``."""


def stage_solver(M, K, D, c):
    """One LDL' of W = M + c D + c^2 K (``flexfmu.codegen.ldl``) and a function (r_q, M r_v) -> (k_q, k_v)
    with k_v = W^-1 (M r_v - c K r_q) and k_q = r_q + c k_v. It takes M r_v rather than r_v: where
    r_v = M^-1 f that product is f itself.

    Parameters
    ----------
    M, K, D : casadi.MX
        Mass, stiffness and damping matrices at the step's start.
    c : casadi.MX
        gamma h of the method.
    """
    W = M + c * D + c**2 * K
    ldl = ldl_functions(W.sparsity())
    factors = ldl.factors(W)

    def solve(r_q, mass_times_r_v):
        k_v = ldl.solve(*factors, mass_times_r_v - c * sparse_product(K, r_q))
        return r_q + c * k_v, k_v

    return solve


class MassFormStages:
    """:class:`LinearStages` from a ``mass_form`` (x, u, pc) -> (M, f, K, D), evaluated once at y0 = ``x``
    with the inputs ``u`` and ``pc`` = [p; c(p)], for ``c`` = gamma h."""

    def __init__(self, mass_form: ca.Function, x, u, pc, c):
        self.M, self.f, K, D = mass_form(x, u, pc)
        self._solve = stage_solver(self.M, K, D, c)

    def forced(self, r_q) -> tuple:
        """(k_q, k_v) with W k_v = f - c K ``r_q``."""
        return self._solve(r_q, self.f)

    def massed(self, r_q, r_v) -> tuple:
        """(k_q, k_v) with W k_v = M ``r_v`` - c K ``r_q``."""
        return self._solve(r_q, sparse_product(self.M, r_v))
