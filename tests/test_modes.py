"""Tests of the assumed-mode families against independent beam facts.

Expected values come from closed forms, published eigenvalues, limiting
frequency equations or symbolic differentiation, never from the code itself.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from scipy.optimize import brentq

from flexfmu.modes import ModeSet, cantilever_betas, clamped_mass_betas, mode_set
from flexfmu.spec.arm import Modes

# Cantilever eigenvalues beta_k L (Blevins; 1 + cos b cosh b = 0).
CANTILEVER = (1.875104068711961, 4.694091132974175, 7.854757438237613, 10.99554073487547)
SAMPLE_XI = (0.0, 0.013, 0.21, 0.5, 0.77, 0.999, 1.0)


def cantilever(count: int) -> ModeSet:
    return mode_set(Modes(family="clamped-free", count=count))


# --- eigenvalues ----------------------------------------------------------


def test_cantilever_betas_match_published_values():
    np.testing.assert_allclose(cantilever_betas(4), CANTILEVER, rtol=1e-10, atol=0)


def test_cantilever_betas_satisfy_equation_and_asymptote():
    b = cantilever_betas(20)
    # Residual of 1 + cos b cosh b, divided by cosh b to stay bounded.
    np.testing.assert_allclose(np.cos(b) + 1 / np.cosh(b), 0, atol=1e-14)
    k = np.arange(6, 21)
    np.testing.assert_allclose(b[5:], (2 * k - 1) * np.pi / 2, atol=1e-6, rtol=0)
    assert np.all(np.diff(b) > 0)


def test_clamped_mass_unit_tip_mass_first_eigenvalue():
    # Blevins, cantilever with tip mass M = rho L: beta_1 L = 1.24792.
    assert clamped_mass_betas(1, 1.0, 0.0)[0] == pytest.approx(1.24792, rel=5e-6)


def test_clamped_mass_without_load_is_cantilever():
    np.testing.assert_allclose(clamped_mass_betas(12, 0.0, 0.0), cantilever_betas(12),
                               rtol=1e-13, atol=0)
    loaded = mode_set(Modes(family="clamped-mass", count=6))
    free = cantilever(6)
    np.testing.assert_allclose(loaded.beta, free.beta, rtol=1e-13)
    for a, b in zip(loaded.values(np.linspace(0, 1, 41)), free.values(np.linspace(0, 1, 41))):
        np.testing.assert_allclose(a, b, atol=1e-11)


def test_clamped_mass_heavy_load_limits():
    big = 1e8
    # Heavy tip mass: the tip barely moves, so b_2.. tend to clamped-pinned
    # (tan b = tanh b) and b_1 to the mass-on-spring value (3 / mu)^(1/4).
    b = clamped_mass_betas(2, big, 0.0)
    assert b[0] == pytest.approx((3 / big) ** 0.25, rel=1e-6)
    assert b[1] == pytest.approx(brentq(lambda x: np.tan(x) - np.tanh(x), 3.5, 4.5), rel=1e-6)
    # Heavy rotary inertia: tip slope held, shear free, so b_2 tends to the
    # clamped-sliding root of tan b + tanh b = 0 and b_1 to (1 / j)^(1/4).
    b = clamped_mass_betas(2, 0.0, big)
    assert b[0] == pytest.approx(big ** -0.25, rel=1e-6)
    assert b[1] == pytest.approx(brentq(lambda x: np.tan(x) + np.tanh(x), 2.0, 3.0), rel=1e-6)


def test_negative_load_rejected():
    with pytest.raises(ValueError):
        clamped_mass_betas(2, -1.0, 0.0)


# --- pinned-pinned --------------------------------------------------------


def test_sine_integrals_closed_forms():
    n = 8
    ms = mode_set(Modes(family="pinned-pinned", count=n))
    k = np.arange(1, n + 1)
    kp = k * np.pi
    sign = (-1.0) ** k
    assert ms.frame == "chord"
    np.testing.assert_allclose(ms.beta, kp, rtol=1e-15)
    # int sin(k pi xi) = (1 - cos k pi) / (k pi); by parts,
    # int xi sin(k pi xi) = -cos(k pi) / (k pi).
    np.testing.assert_allclose(ms.int_phi, (1 - sign) / kp, atol=1e-14)
    np.testing.assert_allclose(ms.int_xi_phi, -sign / kp, atol=1e-14)
    np.testing.assert_allclose(ms.int_phi_phi, np.eye(n) / 2, atol=1e-14)
    np.testing.assert_allclose(ms.int_curv_curv / kp[:, None] ** 2 / kp[None, :] ** 2,
                               np.eye(n) / 2, atol=1e-13)
    np.testing.assert_allclose(ms.root_slope, kp, rtol=1e-15)
    np.testing.assert_allclose(ms.tip_slope, kp * sign, rtol=1e-14)
    np.testing.assert_allclose(ms.tip_value, 0, atol=1e-14)


# --- clamped-free ---------------------------------------------------------


@pytest.mark.parametrize("count", [10, 20])
def test_cantilever_orthonormal(count):
    ms = cantilever(count)
    b = np.array(ms.beta)
    assert ms.frame == "tangent" and ms.family == "clamped-free"
    tol = 1e-12 if count <= 10 else 1e-10
    np.testing.assert_allclose(ms.int_phi_phi, np.eye(count), atol=tol)
    # Stiffness orthogonality, relative to beta_j^2 beta_k^2.
    np.testing.assert_allclose(ms.int_curv_curv / np.outer(b**2, b**2), np.eye(count), atol=tol)


def test_cantilever_closed_forms():
    ms = cantilever(10)
    b = np.array(ms.beta)
    # Textbook form phi = cosh - cos - sigma (sinh - sin) has phi(1) =
    # 2 sin b cosh b / sinh b = 2 sign(sin b) at a root; flipping to phi(1) > 0
    # multiplies it by s = sign(sin b).
    s = np.sign(np.sin(b))
    sigma = (np.sinh(b) - np.sin(b)) / (np.cosh(b) + np.cos(b))
    np.testing.assert_allclose(ms.tip_value, 2.0, atol=1e-12)
    # int phi = 2 sigma / b; int xi phi = phi''(0) / b^4 = 2 / b^2 (from
    # phi'''' = b^4 phi integrated by parts with phi''(1) = phi'''(1) = 0).
    np.testing.assert_allclose(ms.int_phi, s * 2 * sigma / b, atol=1e-12)
    np.testing.assert_allclose(ms.int_xi_phi, s * 2 / b**2, atol=1e-12)
    np.testing.assert_allclose(ms.root_slope, 0, atol=1e-12)
    # Free end of the textbook form: phi'(1) = b (sinh + sin - sigma (cosh - cos)),
    # put over a common denominator to avoid cancellation of cosh b ~ 1e13.
    slope = 2 * b * (np.sinh(b) * np.cos(b) + np.sin(b) * np.cosh(b)) / (np.cosh(b) + np.cos(b))
    np.testing.assert_allclose(ms.tip_slope, s * slope, rtol=1e-12)


def test_cantilever_twenty_modes_bounded():
    ms = cantilever(20)
    xi = np.linspace(0, 1, 2001)
    for name in ("values", "slopes", "curvatures"):
        for k, f in enumerate(getattr(ms, name)(xi)):
            assert np.all(np.isfinite(f)), (name, k)
    values = np.array(ms.values(xi))
    assert np.abs(values).max() <= 2.0 + 1e-9
    np.testing.assert_allclose(values[:, 0], 0, atol=1e-12)


# --- clamped-mass ---------------------------------------------------------


@pytest.mark.parametrize("mu, j", [(1.0, 0.0), (0.7, 0.05), (5.0, 0.3)])
def test_clamped_mass_orthogonality_with_tip(mu, j):
    ms = mode_set(Modes(family="clamped-mass", count=8), mu, j)
    assert ms.frame == "tangent"
    mass = (ms.int_phi_phi + mu * np.outer(ms.tip_value, ms.tip_value)
            + j * np.outer(ms.tip_slope, ms.tip_slope))
    off = ~np.eye(ms.count, dtype=bool)
    np.testing.assert_allclose(mass[off], 0, atol=1e-10)
    b = np.array(ms.beta)
    np.testing.assert_allclose((ms.int_curv_curv / np.outer(b**2, b**2))[off], 0, atol=1e-10)
    # Rayleigh quotient of each mode is its eigenvalue b^4.
    np.testing.assert_allclose(np.diag(ms.int_curv_curv) / np.diag(mass), b**4, rtol=1e-10)
    np.testing.assert_allclose(np.diag(ms.int_phi_phi), 1, atol=1e-12)
    assert np.all(ms.tip_value > 0)


def test_clamped_mass_boundary_conditions_by_symbolic_derivative():
    mu, j = 0.8, 0.1
    ms = mode_set(Modes(family="clamped-mass", count=5), mu, j)
    x = ca.SX.sym("x")
    for k, (phi, dphi, curv) in enumerate(zip(ms.values(x), ms.slopes(x), ms.curvatures(x))):
        b4 = ms.beta[k] ** 4
        third = ca.jacobian(curv, x)
        fourth = ca.jacobian(third, x)
        f = ca.Function("f", [x], [phi, dphi, curv, third, fourth])
        p0, d0, _, _, _ = (float(v) for v in f(0.0))
        p1, d1, c1, t1, _ = (float(v) for v in f(1.0))
        scale = b4
        assert abs(p0) < 1e-12 and abs(d0) < 1e-12
        assert c1 == pytest.approx(j * b4 * d1, abs=1e-10 * scale)
        assert t1 == pytest.approx(-mu * b4 * p1, abs=1e-10 * scale)
        for xi in (0.2, 0.6):
            p, _, _, _, q = (float(v) for v in f(xi))
            assert q == pytest.approx(b4 * p, abs=1e-9 * scale)


# --- numpy and CasADi agree -----------------------------------------------


@pytest.mark.parametrize("family, count", [("pinned-pinned", 4), ("clamped-free", 12),
                                           ("clamped-mass", 5)])
@pytest.mark.parametrize("sym", [ca.SX, ca.MX])
def test_casadi_matches_numpy(family, count, sym):
    ms = mode_set(Modes(family=family, count=count), 0.5, 0.02)
    x = sym.sym("x")
    xi = np.array(SAMPLE_XI)
    for name in ("values", "slopes", "curvatures"):
        exprs = getattr(ms, name)(x)
        assert all(isinstance(e, sym) for e in exprs)
        f = ca.Function("f", [x], [ca.vertcat(*exprs)])
        symbolic = np.array(f(ca.DM(xi).T))
        numeric = np.array(getattr(ms, name)(xi))
        scale = np.abs(numeric).max(axis=1, keepdims=True)
        np.testing.assert_allclose(symbolic, numeric, atol=1e-13 * scale.max(), rtol=1e-12)
        # A float argument gives the same numbers too.
        np.testing.assert_allclose([float(v) for v in getattr(ms, name)(0.37)],
                                   np.array(f(0.37)).ravel(), rtol=1e-12, atol=1e-12)


# --- user shapes ----------------------------------------------------------


def test_user_polynomials_exact_integrals():
    ms = mode_set(Modes(family="user", count=2, shapes=("xi**2", "xi**3"), frame="tangent"))
    assert ms.beta is None and ms.frame == "tangent"
    np.testing.assert_allclose(ms.int_phi, [1 / 3, 1 / 4], rtol=1e-14)
    np.testing.assert_allclose(ms.int_xi_phi, [1 / 4, 1 / 5], rtol=1e-14)
    np.testing.assert_allclose(ms.int_phi_phi, [[1 / 5, 1 / 6], [1 / 6, 1 / 7]], rtol=1e-14)
    # (2)(2) = 4, (2)(6 xi) -> 6, (6 xi)^2 -> 12.
    np.testing.assert_allclose(ms.int_curv_curv, [[4, 6], [6, 12]], rtol=1e-14)
    np.testing.assert_allclose(ms.root_slope, [0, 0], atol=0)
    np.testing.assert_allclose(ms.tip_value, [1, 1], rtol=1e-15)
    np.testing.assert_allclose(ms.tip_slope, [2, 3], rtol=1e-15)


def test_user_constant_derivative_broadcasts():
    ms = mode_set(Modes(family="user", count=1, shapes=("xi**2",), frame="tangent"))
    xi = np.linspace(0, 1, 5)
    assert np.shape(ms.curvatures(xi)[0]) == (5,)
    np.testing.assert_allclose(ms.curvatures(xi)[0], 2.0)
    x = ca.SX.sym("x")
    curv = ms.curvatures(x)[0]
    assert isinstance(curv, ca.SX)
    assert float(ca.Function("f", [x], [curv])(0.3)) == 2.0


def test_user_transcendental_shape_on_both_backends():
    # Chord-frame shape phi = sin(pi xi) exp(xi), int phi = pi (e + 1) / (1 + pi^2).
    ms = mode_set(Modes(family="user", count=1, shapes=("sin(pi*xi)*exp(xi)",), frame="chord"))
    assert ms.int_phi[0] == pytest.approx(np.pi * (np.e + 1) / (1 + np.pi**2), rel=1e-13)
    x = ca.SX.sym("x")
    f = ca.Function("f", [x], [ca.vertcat(*ms.values(x), *ms.slopes(x), *ms.curvatures(x))])
    xi = 0.41
    s, c, e = np.sin(np.pi * xi), np.cos(np.pi * xi), np.exp(xi)
    expected = [s * e, (np.pi * c + s) * e, (2 * np.pi * c + (1 - np.pi**2) * s) * e]
    np.testing.assert_allclose(np.array(f(xi)).ravel(), expected, rtol=1e-13)


@pytest.mark.parametrize("shapes, frame", [(("xi",), "tangent"), (("xi**2",), "chord"),
                                           (("a*xi**2",), "tangent")])
def test_user_bad_shapes_rejected(shapes, frame):
    with pytest.raises(ValueError):
        mode_set(Modes(family="user", count=1, shapes=shapes, frame=frame))


def test_user_count_must_match_shapes():
    with pytest.raises(ValueError):
        mode_set(Modes(family="user", count=2, shapes=("xi**2",), frame="tangent"))


def test_unknown_family_rejected():
    with pytest.raises(ValueError):
        mode_set(Modes(family="free-free", count=2))


@pytest.mark.parametrize("family", ["pinned-pinned", "clamped-free", "clamped-mass"])
def test_zero_modes_give_empty_set(family):
    ms = mode_set(Modes(family=family, count=0), 1.0, 0.1)
    assert ms.count == 0 and ms.int_phi_phi.shape == (0, 0) and ms.values(0.5) == []
