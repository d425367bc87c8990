"""Frequency equations of uniform clamped Euler-Bernoulli beams.

A mode ``phi(xi) sin(omega t)`` of a beam clamped at ``xi = 0`` solves
``phi'''' = b**4 phi`` with ``b = beta L`` and ``beta**4 = rho omega**2 / EI``.
It is written in the bounded basis

    phi = c1 cos(b xi) + c2 sin(b xi) + c3 exp(-b xi) + c4 exp(-b (1 - xi))

whose functions never exceed 1 on [0, 1], so nothing of size ``exp(b)``
appears and 20 or more modes stay accurate (the textbook form
``cosh - cos - sigma (sinh - sin)`` cancels terms of size 1e27 at b ~ 62).
With ``D_n = phi^(n) / b**n`` the boundary conditions are

* clamped root: ``D_0(0) = 0`` and ``D_1(0) = 0``;
* tip of mass ratio ``mu = M / (rho L)`` and inertia ratio
  ``j = J / (rho L**3)``: ``phi''(1) = j b**4 phi'(1)`` (moment balances the
  rotary inertia) and ``phi'''(1) = -mu b**4 phi(1)`` (shear balances the
  mass), i.e. ``D_2 - j b**3 D_1 = 0`` and ``D_3 + mu b D_0 = 0`` at 1.

The root conditions give ``c3 = -c1 - E c4`` and ``c2 = -c1 - 2 E c4`` with
``E = exp(-b)``; substituted into the tip conditions they leave a 2x2 system
in ``(c1, c4)``. Its determinant is the frequency function. The elimination
is unimodular and the basis change to cos/sin/cosh/sinh is invertible for
``b > 0``, so its positive roots are exactly the eigenvalues.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

_XTOL = 1e-15


def tip_matrix(b: np.ndarray | float, mass_ratio: float, inertia_ratio: float) -> np.ndarray:
    """Return the reduced 2x2 tip boundary-condition matrix in ``(c1, c4)``.

    Each row is divided by a positive factor (``1 + j b**3`` and
    ``1 + mu b``) so its entries stay of order one for any load; this does
    not move the roots of the determinant.

    Parameters
    ----------
    b : float or numpy.ndarray
        Dimensionless eigenvalue(s) ``beta L`` (> 0).
    mass_ratio, inertia_ratio : float
        Tip ``mu = M / (rho L)`` and ``j = J / (rho L**3)``.

    Returns
    -------
    numpy.ndarray
        Shape ``b.shape + (2, 2)``; rows are the moment and shear conditions.
    """
    b = np.asarray(b, dtype=float)
    c, s, e = np.cos(b), np.sin(b), np.exp(-b)
    jb3 = inertia_ratio * b**3
    mub = mass_ratio * b
    # Full rows over (c1, c2, c3, c4) at xi = 1, from D_n listed in the module doc.
    moment = np.stack(
        [-c + jb3 * s, -s - jb3 * c, e * (1.0 + jb3), 1.0 - jb3], axis=-1
    ) / (1.0 + jb3)[..., None]
    shear = np.stack(
        [s + mub * c, -c + mub * s, e * (mub - 1.0), 1.0 + mub], axis=-1
    ) / (1.0 + mub)[..., None]
    rows = np.stack([moment, shear], axis=-2)
    r1, r2, r3, r4 = (rows[..., i] for i in range(4))
    col_c1 = r1 - r2 - r3
    col_c4 = r4 - e[..., None] * (2.0 * r2 + r3)
    return np.stack([col_c1, col_c4], axis=-1)


def frequency_function(b: np.ndarray | float, mass_ratio: float, inertia_ratio: float) -> np.ndarray:
    """Return the determinant of :func:`tip_matrix`, zero at eigenvalues.

    Bounded for all ``b > 0``; without a tip load it equals
    ``-4 exp(-b) (1 + cos b cosh b)``, the cantilever equation scaled.

    Parameters
    ----------
    b : float or numpy.ndarray
        Dimensionless eigenvalue(s) ``beta L`` (> 0).
    mass_ratio, inertia_ratio : float
        Tip ``mu = M / (rho L)`` and ``j = J / (rho L**3)``.
    """
    m = tip_matrix(b, mass_ratio, inertia_ratio)
    return m[..., 0, 0] * m[..., 1, 1] - m[..., 0, 1] * m[..., 1, 0]


def _scan_grid(upper: float) -> np.ndarray:
    """Grid on which sign changes of the frequency function are sought.

    Geometric near zero, where a heavy tip load pushes the first root, and
    uniform (step 2e-3, far below the ~pi root spacing) above 1.
    """
    low = np.geomspace(1e-4, 1.0, 400, endpoint=False)
    high = np.arange(1.0, upper, 2e-3)
    return np.concatenate([low, high])


def clamped_mass_betas(count: int, mass_ratio: float = 0.0, inertia_ratio: float = 0.0) -> np.ndarray:
    """Return the first ``count`` eigenvalues ``beta_k L`` of a clamped beam
    carrying a tip mass and rotary inertia.

    The frequency function is scanned for sign changes and each bracket is
    refined with Brent's method to about 1e-15 absolute.

    Parameters
    ----------
    count : int
        Number of eigenvalues wanted (>= 0).
    mass_ratio : float
        ``M_tip / (rho L)`` (>= 0).
    inertia_ratio : float
        ``J_tip / (rho L**3)`` (>= 0).

    Returns
    -------
    numpy.ndarray
        Increasing positive eigenvalues, length ``count``.

    Raises
    ------
    ValueError
        For a negative count or load ratio.
    """
    if count < 0:
        raise ValueError(f"mode count must be >= 0, got {count}")
    if mass_ratio < 0 or inertia_ratio < 0:
        raise ValueError("tip mass and inertia ratios must be >= 0")
    roots: list[float] = []
    # A tip load only lowers eigenvalues, so the cantilever value
    # ~ (k - 1/2) pi bounds root k; the loop is a safety net.
    upper = (count + 1) * np.pi
    while len(roots) < count:
        grid = _scan_grid(upper)
        f = frequency_function(grid, mass_ratio, inertia_ratio)
        roots = []
        for i in np.nonzero(np.sign(f[:-1]) * np.sign(f[1:]) <= 0)[0]:
            a, b = grid[i], grid[i + 1]
            if f[i] == 0.0:
                root = a
            elif f[i + 1] == 0.0:
                continue  # found as the left end of the next bracket
            else:
                root = brentq(frequency_function, a, b, args=(mass_ratio, inertia_ratio),
                              xtol=_XTOL, rtol=4 * np.finfo(float).eps, maxiter=200)
            roots.append(root)
            if len(roots) == count:
                break
        upper *= 2.0
    return np.array(roots[:count], dtype=float)


def cantilever_betas(count: int) -> np.ndarray:
    """Return the first ``count`` roots of ``1 + cos b cosh b = 0``.

    Solved in the bounded form ``cos b + 1 / cosh b = 0``, which has exactly
    one root in each interval ``[(k - 1) pi, k pi]``; this is independent of
    :func:`clamped_mass_betas` and serves as its zero-load check.

    Parameters
    ----------
    count : int
        Number of eigenvalues wanted (>= 0).

    Returns
    -------
    numpy.ndarray
        ``beta_k L`` for the clamped-free beam, increasing.
    """
    if count < 0:
        raise ValueError(f"mode count must be >= 0, got {count}")

    def f(b: float) -> float:
        return np.cos(b) + 1.0 / np.cosh(b)

    return np.array(
        [brentq(f, (k - 1) * np.pi, k * np.pi, xtol=_XTOL, rtol=4 * np.finfo(float).eps,
                maxiter=200) for k in range(1, count + 1)],
        dtype=float,
    )
