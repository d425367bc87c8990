"""Pick the math functions that suit the type of a shape argument.

Mode shapes are evaluated at plain floats and numpy arrays (quadrature,
plotting) and at CasADi symbols (a lumped mass whose position is a symbolic
parameter). Writing every shape once against a small namespace keeps both
paths identical instead of maintaining a numeric and a symbolic copy.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import casadi as ca
import numpy as np

_CASADI_TYPES = (ca.SX, ca.MX, ca.DM)

_NUMPY = SimpleNamespace(
    sin=np.sin,
    cos=np.cos,
    exp=np.exp,
    sinh=np.sinh,
    cosh=np.cosh,
    tan=np.tan,
    tanh=np.tanh,
    sqrt=np.sqrt,
    log=np.log,
    fabs=np.abs,
)

_CASADI = SimpleNamespace(
    sin=ca.sin,
    cos=ca.cos,
    exp=ca.exp,
    sinh=ca.sinh,
    cosh=ca.cosh,
    tan=ca.tan,
    tanh=ca.tanh,
    sqrt=ca.sqrt,
    log=ca.log,
    fabs=ca.fabs,
)


def is_casadi(xi: Any) -> bool:
    """Return True when ``xi`` is a CasADi matrix type (SX, MX or DM).

    Used to decide whether results must stay symbolic.
    """
    return isinstance(xi, _CASADI_TYPES)


def math_for(xi: Any) -> SimpleNamespace:
    """Return the namespace of elementary functions to apply to ``xi``.

    CasADi functions for CasADi arguments so the result stays a graph node;
    numpy functions for floats and arrays so evaluation is vectorised.
    """
    return _CASADI if is_casadi(xi) else _NUMPY


def as_argument(xi: Any) -> Any:
    """Return ``xi`` ready for arithmetic: CasADi types unchanged, anything
    else as a float64 numpy value (so lists and ints behave like arrays)."""
    if is_casadi(xi):
        return xi
    return np.asarray(xi, dtype=float)


def broadcast_like(value: Any, xi: Any) -> Any:
    """Give ``value`` the shape and type of ``xi``.

    A derivative that turned out constant (``6`` from ``xi**3``) would
    otherwise come back as a Python number regardless of the argument; adding
    ``0 * xi`` makes it an array or a CasADi expression like the others.
    """
    if is_casadi(xi):
        return value + 0 * xi
    return np.zeros_like(xi, dtype=float) + value
