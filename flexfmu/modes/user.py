"""User-supplied assumed-mode shapes given as expressions in ``xi``.

Each shape is parsed once (by :mod:`flexfmu.spec.shapes`, the parser the
spec loader checks with), differentiated symbolically, and turned into two
callables per derivative order: one on numpy (quadrature, plotting) and one on
CasADi (symbolic positions). Shapes must be smooth functions of ``xi`` alone;
anything sympy cannot print for both back ends is rejected when parsed.
sympy is imported only when an arm has user shapes: it takes about half a
second, which every other process (a command, a campaign's worker) would
pay for nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import casadi as ca
import numpy as np

from flexfmu.modes._backend import as_argument, broadcast_like, is_casadi
from flexfmu.spec.shapes import parse_shape, shape_problem, xi_symbol

if TYPE_CHECKING:
    import sympy

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


def _printer():
    """Printer producing bare function names, resolved in our namespaces."""
    from sympy.printing.numpy import NumPyPrinter

    return NumPyPrinter({"fully_qualified_modules": False, "inline": True,
                         "allow_unknown_functions": False})


def _compile(expr: sympy.Expr) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """Return (numpy, casadi) callables of ``expr`` in ``xi``."""
    import sympy

    xi = xi_symbol()
    try:
        numeric = sympy.lambdify(xi, expr, modules=[{"pi": np.pi, "e": np.e}, "numpy"])
        symbolic = sympy.lambdify(xi, expr, modules=[_CASADI_NAMES], printer=_printer())
    except Exception as exc:  # sympy raises several printer-specific types
        raise ValueError(f"mode shape term {expr} cannot be evaluated: {exc}") from exc
    return numeric, symbolic


class UserShapes:
    """Mode shapes from sympy expressions, with derivatives on demand.

    Parameters
    ----------
    shapes : sequence of str
        One expression in ``xi`` per mode, as in a spec file
        (:func:`flexfmu.spec.shapes.parse_shape`).
    """

    def __init__(self, shapes: Sequence[str]):
        self.expressions = tuple(parse_shape(s) for s in shapes)
        self._compiled: dict[int, list[tuple[Callable, Callable]]] = {}
        for order in range(3):  # fail early on anything that will not print
            self._callables(order)

    def _callables(self, order: int) -> list[tuple[Callable, Callable]]:
        """Compiled (numpy, casadi) callables of the ``order``-th derivatives."""
        if order not in self._compiled:
            self._compiled[order] = [_compile(e.diff(xi_symbol(), order)) for e in self.expressions]
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


def user_shapes(modes, tip_mass_ratio: float = 0.0, tip_inertia_ratio: float = 0.0):
    """Builder of the ``user`` family: the spec's shapes (no eigenvalues).

    ``modes`` is the link's :class:`flexfmu.spec.arm.Modes` (count, shapes
    and frame). ``tip_mass_ratio`` and ``tip_inertia_ratio`` are ignored:
    the user's shapes are fixed.

    Raises
    ------
    ValueError
        If the number of shapes is not ``modes.count`` or a shape is unusable
        in ``modes.frame`` (:func:`flexfmu.spec.shapes.shape_problem`).
    """
    if len(modes.shapes) != modes.count:
        raise ValueError(f"user modes: count is {modes.count} but {len(modes.shapes)} shapes given")
    for k, text in enumerate(modes.shapes, start=1):
        problem = shape_problem(text, modes.frame)
        if problem:
            raise ValueError(f"user mode {k} {text!r} {problem}")
    return UserShapes(modes.shapes), None
