"""User mode shapes: parsed and checked in this one place.

A shape is a string in ``xi`` (``"xi^2"``, ``"1 - cos(pi*xi/2)"``). The spec
loader reports why a shape is unusable (:func:`shape_problem`) and the mode
builder turns a valid one into a sympy expression (:func:`parse_shape`); both
go through the same tokenizer and parser, so what the loader accepts the
dynamics can build.

Why a tokenizer before sympy: ``sympify`` evaluates its input as Python, so
restricting the characters and names is what keeps a spec file from running
code; it also rules out ``E`` and ``I``, which sympy reads as constants.
"""

from __future__ import annotations

import math
import re

XI_NAME = "xi"
NAMES = ("xi", "pi", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin",
         "acos", "atan", "asinh", "acosh", "atanh", "exp", "log", "sqrt")
TOKEN = re.compile(
    r"\s+|(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_]\w*)|\*\*|[-+*/^()]"
)
BOUNDARY_TOLERANCE = 1e-12  # end values, relative to the shape's size on [0, 1] (at least 1)
LARGEST = 1e6  # |phi|, |phi'|, |phi''| on [0, 1]: shapes are meant to be of order one
CONDITIONS = {
    "tangent": (("phi(0) = 0", 0, 0), ("phi'(0) = 0 (tangent frame)", 1, 0)),
    "chord": (("phi(0) = 0", 0, 0), ("phi(1) = 0 (chord frame)", 0, 1)),
}


def xi_symbol():
    """The sympy symbol every shape is written in (real)."""
    import sympy

    return sympy.Symbol(XI_NAME, real=True)


def _token_problem(text: str) -> str | None:
    """Why ``text`` cannot be tokenized into allowed pieces, or None."""
    position = depth = 0
    for token in TOKEN.finditer(text):
        if token.start() != position:
            break
        position = token.end()
        name = token.group("name")
        if name is not None and name not in NAMES:
            return f"uses the unknown name {name!r}; only {', '.join(NAMES)} may appear"
        depth += {"(": 1, ")": -1}.get(token.group(), 0)
        if depth < 0:
            break
    if position != len(text) and depth >= 0:
        return f"has the character {text[position]!r}, which an expression in xi cannot contain"
    if depth != 0:
        return "has unbalanced parentheses"
    return None


def _parse(text: str):
    """(expression, None) or (None, why not)."""
    if not isinstance(text, str):
        return None, f"must be a string, got {type(text).__name__}"
    problem = _token_problem(text)
    if problem:
        return None, problem
    import sympy  # deferred: loading arms without user shapes stays fast

    xi = xi_symbol()
    names = {name: getattr(sympy, name) for name in NAMES if name != XI_NAME}
    try:
        phi = sympy.sympify(text, locals={XI_NAME: xi, **names}, convert_xor=True)
    except Exception as exc:  # sympify raises many types; all mean "unparseable"
        cause = getattr(exc, "base_exc", None) or exc  # SympifyError wraps the real one
        detail = (str(cause).splitlines() or [""])[0]
        return None, f"does not parse as an expression in xi ({type(cause).__name__}: {detail})"
    if not isinstance(phi, sympy.Expr) or phi.free_symbols - {xi}:
        return None, "is not an expression in xi alone"
    if phi.is_zero:
        return None, "is identically zero"
    return phi, None


def parse_shape(text: str):
    """The sympy expression of a shape given as ``text`` in ``xi`` (``^`` is a power, as in the spec).

    Raises
    ------
    ValueError
        Naming why the text is not a usable expression in ``xi``.
    """
    phi, problem = _parse(text)
    if problem:
        raise ValueError(f"mode shape {text!r} {problem}")
    return phi


def shape_problem(text: str, frame: str) -> str | None:
    """Why the shape ``text`` is unusable in ``frame``, or None if it is fine.

    Checks, in order: it parses as an expression in ``xi`` alone; it meets
    its frame's end conditions to 1e-12 of its size (phi(0) = 0 always,
    phi'(0) = 0 for the tangent frame, phi(1) = 0 for the chord frame; end
    values are substituted, not taken as limits, since the dynamics evaluate
    shapes at the ends); it and its first two derivatives are finite and
    below 1e6 in magnitude on [0, 1], where the dynamics integrate them.
    """
    phi, problem = _parse(text)
    if problem:
        return problem
    import numpy as np
    import sympy

    xi = xi_symbol()
    derivatives = [phi, sympy.diff(phi, xi), sympy.diff(phi, xi, 2)]
    grid = np.linspace(0.0, 1.0, 201)
    samples = [_sample(expr, xi, grid) for expr in derivatives]
    size = max(1.0, float(np.max(np.abs(samples[0][np.isfinite(samples[0])]), initial=0.0)))
    for label, order, at in CONDITIONS[frame]:
        value = _end_value(derivatives[order], xi, at)
        lhs = label.split(" = ")[0]
        if not (math.isfinite(value.real) and math.isfinite(value.imag)):
            return f"violates {label}: {lhs} is not a finite number"
        if abs(value) > BOUNDARY_TOLERANCE * size:
            shown = f"{value.real:.6g}" if value.imag == 0 else f"{value:.6g}"
            return f"violates {label}: {lhs} = {shown}"
    for order, values in enumerate(samples):
        bad = ~np.isfinite(values) | (np.abs(values) > LARGEST)
        if bad.any():
            k = int(np.argmax(bad))
            what = "not finite" if not np.isfinite(values[k]) else f"{values[k]:.3g}"
            derivative = "phi" + "'" * order
            return (f"is not usable on [0, 1]: {derivative} is {what} at xi = {grid[k]:g} "
                    f"(a shape and its first two derivatives must stay finite and below {LARGEST:g})")
    return None


def _sample(expr, xi, grid):
    """``expr`` on ``grid`` as floats (nan where undefined or complex)."""
    import numpy as np
    import sympy

    function = sympy.lambdify(xi, expr, modules="numpy")
    with np.errstate(all="ignore"):
        values = np.asarray(function(grid), dtype=complex) + np.zeros_like(grid)
    return np.where(values.imag == 0, values.real, np.nan)


def _end_value(expr, xi, at):
    """``expr`` at ``xi = at`` by substitution, as complex (nan if undefined)."""
    try:
        return complex(expr.subs(xi, at).evalf())
    except (TypeError, ValueError):  # zoo, nan and friends
        return complex("nan")
