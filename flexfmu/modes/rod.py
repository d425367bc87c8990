"""Eigenfunctions of a uniform fixed-free rod: torsion and axial stretch.

A rod twisted (or stretched) with the root held and the tip free obeys the
wave equation; its modes are phi_k(xi) = sqrt(2) sin(lambda_k xi) with
lambda_k = (2k - 1) pi / 2, normalised so that int_0^1 phi_k^2 dxi = 1 and
phi_k(1) > 0 (alternating sign fixed by (-1)^(k+1)). The frequencies are
lambda_k / L sqrt(GJ / (rho Ip)) for torsion and lambda_k / L sqrt(EA / (rho A))
for stretch; as assumed modes these shapes reproduce them exactly.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from flexfmu.modes._backend import as_argument, math_for
from flexfmu.modes.modeset import ModeSet, build_mode_set


def rod_eigenvalues(count: int) -> np.ndarray:
    """lambda_k = (2k - 1) pi / 2 for k = 1..``count``."""
    return (2 * np.arange(1, count + 1) - 1) * np.pi / 2


class FixedFreeRodShapes:
    """The first ``count`` fixed-free rod modes (see the module docstring)."""

    def __init__(self, count: int):
        self.lambdas = rod_eigenvalues(count)

    def derivative(self, xi: Any, order: int) -> list[Any]:
        """d^``order`` phi_k / dxi^order at ``xi`` (float, array or CasADi) for every mode."""
        xi = as_argument(xi)
        m = math_for(xi)
        out = []
        for k, lam in enumerate(self.lambdas):
            sign = (-1.0) ** k  # makes phi_k(1) = sqrt(2) > 0
            value = m.sin(lam * xi) if order % 2 == 0 else m.cos(lam * xi)
            flip = -1.0 if order % 4 in (2, 3) else 1.0
            out.append(sign * flip * math.sqrt(2.0) * lam**order * value)
        return out


def fixed_free_rod(count: int) -> ModeSet:
    """The ModeSet of ``count`` fixed-free rod modes (family ``clamped-free``, tangent frame, ``beta`` the
    eigenvalues lambda_k)."""
    shapes = FixedFreeRodShapes(count)
    return build_mode_set("clamped-free", "tangent", shapes, count, tuple(map(float, shapes.lambdas)))
