"""Symmetric solves as SX Functions: LDL' factors, solves and sparse products that generate straight-line C.

CasADi's ``solve(A, b, "ldl")`` on MX is a linear-solver node: in generated
C a generic sparse factorisation with index loops (about 64,000
instructions for the Delta robot's 39 x 39 mass matrix), repeated at every
solve. The symbolic LDL' of a matrix of known sparsity (``casadi.ldl`` on
SX, with an approximate minimum degree ordering) is plain arithmetic
instead (about 23,000 instructions for the same matrix), and a factor
computed once serves several solves. The price is code: its C grows with the
factor's fill, so it suits a matrix factored in every step of an integrator,
not every function of a model (a derivative through it would double it
again). No pivoting: for positive definite matrices (M + c D + c^2 K with
c > 0).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import casadi as ca


@dataclass(frozen=True)
class LdlFunctions:
    """``factor``: A -> (D, LT); ``solve``: (D, LT, b) -> A^-1 b, for matrices of one symmetric sparsity."""

    factor: ca.Function
    solve: ca.Function

    def factors(self, A):
        """(D, LT) of ``A`` (MX, its nonzeros within the pattern), projected to the pattern only where its
        sparsity differs: a projection copies every nonzero in each call."""
        pattern = self.factor.sparsity_in(0)
        return self.factor(A if A.sparsity() == pattern else ca.project(A, pattern))


def ldl_functions(sparsity: ca.Sparsity) -> LdlFunctions:
    """The :class:`LdlFunctions` for matrices whose nonzeros lie within ``sparsity`` (made symmetric) and
    right-hand side vectors: one pair per pattern, shared by every graph that solves with it (so generated C
    holds it once). Factor a matrix with :meth:`LdlFunctions.factors`."""
    pattern = sparsity + sparsity.T
    return _for_pattern(pattern.serialize())


@lru_cache(maxsize=None)
def _for_pattern(serialized: str) -> LdlFunctions:
    pattern = ca.Sparsity.deserialize(serialized)
    name = f"ldl_{hashlib.sha256(serialized.encode()).hexdigest()[:8]}"  # the same in every run
    A = ca.SX.sym("A", pattern)
    D, LT, permutation = ca.ldl(A, True)
    factor = ca.Function(f"{name}_factor", [A], [D, LT], ["A"], ["D", "LT"], {"cse": True})
    Ds, LTs, b = ca.SX.sym("D", D.sparsity()), ca.SX.sym("LT", LT.sparsity()), ca.SX.sym("b", pattern.size1())
    solve = ca.Function(f"{name}_solve", [Ds, LTs, b], [ca.ldl_solve(b, Ds, LTs, permutation)], ["D", "LT", "b"],
                        ["x"], {"cse": True})
    return LdlFunctions(factor, solve)


def sparse_product(A, b):
    """A b for an MX matrix ``A`` and vector ``b``, as a call of straight-line code for A's sparsity (one
    Function per sparsity, shared like the factors): CasADi's product of MX matrices loops over index arrays,
    about three times the instructions (the Delta's Rosenbrock step takes three products with 921 nonzeros)."""
    return _product_for(A.sparsity().serialize())(A, b)


@lru_cache(maxsize=None)
def _product_for(serialized: str) -> ca.Function:
    sparsity = ca.Sparsity.deserialize(serialized)
    A, b = ca.SX.sym("A", sparsity), ca.SX.sym("b", sparsity.size2())
    name = f"product_{hashlib.sha256(serialized.encode()).hexdigest()[:8]}"
    return ca.Function(name, [A, b], [ca.mtimes(A, b)], ["A", "b"], ["Ab"])
