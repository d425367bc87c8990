"""User-supplied assumed-mode shapes given as sympy expressions in ``xi``.

Each shape is parsed once, differentiated symbolically, and turned into two
callables per derivative order: one on numpy (quadrature, plotting) and one on
CasADi (symbolic positions). Shapes must be smooth functions of ``xi`` alone;
anything sympy cannot print for both back ends is rejected when parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import casadi as ca
import numpy as np
import sympy as sp
from sympy.printing.numpy import NumPyPrinter

from flexfmu.modes._backend import as_argument, broadcast_like, is_casadi

XI = sp.Symbol("xi", real=True)

# Names printed by sympy's NumPyPrinter (both numpy and math spellings, as
# the printer uses either depending on the function) mapped to CasADi.
_CASADI_NAMES = {
    "sin": ca.sin, "cos": ca.cos, "tan": ca.tan,
    "arcsin": ca.asin, "arccos": ca.acos, "arctan": ca.atan, "arctan2": ca.atan2,
    "asin": ca.asin, "acos": ca.acos, "atan": ca.atan, "atan2": ca.atan2,
    "sinh": ca.sinh, "cosh": ca.cosh, "tanh": ca.tanh,
    "arcsinh": ca.asinh, "arccosh": ca.acosh, "arctanh": ca.atanh,
    "asinh": ca.asinh, "acosh": ca.acosh, "atanh": ca.atanh,
    "exp": ca.exp, "log": ca.log, "sqrt": ca.sqrt, "power": ca.power,
    "sign": ca.sign, "absolute": ca.fabs, "fabs": ca.fabs,
    "pi": float(np.pi), "e": float(np.e),
}


def _printer() -> NumPyPrinter:
    """Printer producing bare function names, resolved in our namespaces."""
    return NumPyPrinter({"fully_qualified_modules": False, "inline": True,
                         "allow_unknown_functions": False})


def parse_shape(text: str | sp.Expr) -> sp.Expr:
    """Parse one shape into a sympy expression in the symbol :data:`XI`.

    Parameters
    ----------
    text : str or sympy.Expr
        Expression such as ``"xi**2"`` or ``"1 - cos(pi*xi/2)"``.

    Returns
    -------
    sympy.Expr

    Raises
    ------
    ValueError
        If it cannot be parsed or depends on a symbol other than ``xi``.
    """
    try:
        if isinstance(text, sp.Basic):
            expr = text.subs(sp.Symbol("xi"), XI)
        else:
            expr = sp.parse_expr(str(text), local_dict={"xi": XI})
    except (sp.SympifyError, SyntaxError, TypeError) as exc:
        raise ValueError(f"cannot parse mode shape {text!r}: {exc}") from exc
    extra = expr.free_symbols - {XI}
    if extra:
        names = ", ".join(sorted(str(s) for s in extra))
        raise ValueError(f"mode shape {text!r} depends on {names}; only xi is allowed")
    return expr


def _compile(expr: sp.Expr) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """Return (numpy, casadi) callables of ``expr`` in ``xi``."""
    try:
        numeric = sp.lambdify(XI, expr, modules=[{"pi": np.pi, "e": np.e}, "numpy"])
        symbolic = sp.lambdify(XI, expr, modules=[_CASADI_NAMES], printer=_printer())
    except Exception as exc:  # sympy raises several printer-specific types
        raise ValueError(f"mode shape term {expr} cannot be evaluated: {exc}") from exc
    return numeric, symbolic


class UserShapes:
    """Mode shapes from sympy expressions, with derivatives on demand.

    Parameters
    ----------
    shapes : sequence of str or sympy.Expr
        One expression in ``xi`` per mode.
    """

    def __init__(self, shapes: Sequence[str | sp.Expr]):
        self.expressions = tuple(parse_shape(s) for s in shapes)
        self._compiled: dict[int, list[tuple[Callable, Callable]]] = {}
        for order in range(3):  # fail early on anything that will not print
            self._callables(order)

    def _callables(self, order: int) -> list[tuple[Callable, Callable]]:
        """Compiled (numpy, casadi) callables of the ``order``-th derivatives."""
        if order not in self._compiled:
            self._compiled[order] = [_compile(sp.diff(e, XI, order)) for e in self.expressions]
        return self._compiled[order]

    def derivative(self, xi: Any, order: int) -> list[Any]:
        """Return ``d^order phi_k / dxi^order`` at ``xi`` for every mode.

        Parameters
        ----------
        xi : float, numpy.ndarray or casadi.SX/MX/DM
            Position(s) along the link, ``x / L``.
        order : int
            Derivative order, >= 0.

        Returns
        -------
        list
            One entry per mode, of the same kind and shape as ``xi`` (constant
            derivatives are broadcast).
        """
        xi = as_argument(xi)
        pick = 1 if is_casadi(xi) else 0
        return [broadcast_like(funcs[pick](xi), xi) for funcs in self._callables(order)]
