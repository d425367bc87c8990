"""The straight-line code of flexfmu.codegen.ldl: LDL' factor, solve and sparse product agree with dense
linear algebra on a symmetric positive definite matrix with the sparsity of a chain-like system (blocks coupled
only through the first coordinates), and on a matrix whose sparsity lies strictly inside the pattern."""

from __future__ import annotations

import casadi as ca
import numpy as np

from flexfmu.codegen.ldl import ldl_functions, sparse_product


def coupled_pattern(n: int = 9) -> ca.Sparsity:
    """Two diagonal blocks coupled only through the first three coordinates (as the Delta's motors couple its
    chains)."""
    rows, columns = [], []
    blocks = [range(0, 3), range(3, 6), range(6, n)]
    for a in range(n):
        for b in range(n):
            same = any(a in block and b in block for block in blocks)
            if same or a < 3 or b < 3:
                rows.append(a)
                columns.append(b)
    return ca.Sparsity.triplet(n, n, rows, columns)


def test_factor_solve_and_product_agree_with_dense_algebra():
    pattern = coupled_pattern()
    rng = np.random.default_rng(2)
    mask = np.array(ca.DM(pattern, 1.0))
    A = rng.normal(size=mask.shape) * mask
    A = A @ A.T * mask + 10.0 * np.eye(len(A))  # symmetric, positive definite, within the pattern
    b = rng.normal(size=len(A))
    ldl = ldl_functions(pattern)
    Am, bm = ca.MX.sym("A", pattern), ca.MX.sym("b", len(A))
    factors = ldl.factors(Am)
    f = ca.Function("f", [Am, bm], [ldl.solve(*factors, bm), sparse_product(Am, bm)])
    x, product = (np.ravel(v.full()) for v in f(A, b))
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-12)
    np.testing.assert_allclose(product, A @ b, rtol=1e-13)


def test_a_matrix_sparser_than_the_pattern_is_projected_onto_it():
    pattern = coupled_pattern()
    diagonal = ca.Sparsity.diag(pattern.size1())
    ldl = ldl_functions(pattern)
    d = ca.MX.sym("d", diagonal)
    b = ca.MX.sym("b", pattern.size1())
    f = ca.Function("f", [d, b], [ldl.solve(*ldl.factors(d), b), sparse_product(d, b)])
    values = np.arange(1.0, pattern.size1() + 1.0)  # the diagonal's nonzeros
    rhs = np.ones(pattern.size1())
    x, product = (np.ravel(v.full()) for v in f(values, rhs))
    np.testing.assert_allclose(x, rhs / values, rtol=1e-14)
    np.testing.assert_allclose(product, values, rtol=1e-14)
