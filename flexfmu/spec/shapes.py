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
from functools import lru_cache

XI_NAME = "xi"
NAMES = ("xi", "pi", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin",
         "acos", "atan", "asinh", "acosh", "atanh", "exp", "log", "sqrt")
TOKEN = re.compile(
    r"\s+|(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_]\w*)|\*\*|[-+*/^()]"
)
BOUNDARY_TOLERANCE = 1e-12  # end values, relative to the shape's size on [0, 1] (at least 1)
LARGEST = 1e6  # |phi|, |phi'|, |phi''| on [0, 1]: shapes are meant to be of order one
DEPENDENCE_TOLERANCE = 1e-9  # smallest eigenvalue of the shapes' correlation matrix
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


def shape_problem(text: str, frame: str | None) -> str | None:
    """Why the shape ``text`` is unusable in ``frame``, or None if it is fine (``frame`` None: a frame that
    is itself invalid, so the end conditions are not checked).

    Checks, in order: it parses as an expression in ``xi`` alone; it meets
    its frame's end conditions to 1e-12 of its size (phi(0) = 0 always,
    phi'(0) = 0 for the tangent frame, phi(1) = 0 for the chord frame; end
    values are substituted, not taken as limits, since the dynamics evaluate
    shapes at the ends); it and its first two derivatives are finite and
    below 1e6 in magnitude on [0, 1] (on a uniform grid and on the
    quadrature nodes where the dynamics integrate them), and so are its
    modal integrals (of phi^2 and phi''^2).
    """
    problem = _parse(text)[1]
    if problem:
        return problem
    import numpy as np

    derivatives, grid, samples = _sampled(text)
    size = max(1.0, float(np.max(np.abs(samples[0][np.isfinite(samples[0])]), initial=0.0)))
    for label, order, at in CONDITIONS.get(frame, ()):
        value = _end_value(derivatives[order], at)
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
            return (f"is not usable on [0, 1]: {derivative} is {what} at xi = {grid[k]:.6g} "
                    f"(a shape and its first two derivatives must stay finite and below {LARGEST:g})")
    _, weights = _unit_rule()
    nodes = slice(grid.size - weights.size, None)
    for name, order in (("phi^2", 0), ("phi''^2", 2)):
        integral = float(samples[order][nodes] ** 2 @ weights)
        if not (math.isfinite(integral) and integral > 0):
            return f"is not usable on [0, 1]: the integral of {name} is {integral:.3g} (must be finite and > 0)"
    return None


def shape_set_problem(texts) -> str | None:
    """Why the shapes ``texts`` (each usable alone, see :func:`shape_problem`) cannot serve together, or
    None: they must be linearly independent on [0, 1], or the modal mass matrix, and with it the arm's
    mass matrix, would be singular. Their correlation matrix (the modal mass matrix scaled to a unit
    diagonal) must have no eigenvalue below 1e-9."""
    if len(texts) < 2:
        return None
    import numpy as np

    _, weights = _unit_rule()
    values = np.array([_sampled(text)[2][0][-weights.size:] for text in texts])
    gram = (values * weights) @ values.T
    scale = 1.0 / np.sqrt(np.diag(gram))
    eigenvalues, vectors = np.linalg.eigh(gram * np.outer(scale, scale))
    if eigenvalues[0] >= DEPENDENCE_TOLERANCE:
        return None
    k = int(np.argmax(np.abs(vectors[:, 0])))
    return (f"shape {k + 1} ({texts[k]!r}) is a linear combination of the others (the smallest eigenvalue of "
            f"their correlation matrix is {max(eigenvalues[0], 0.0):.1g}, below {DEPENDENCE_TOLERANCE:g}): "
            f"the shapes must be linearly independent, or the mass matrix is singular")


@lru_cache(maxsize=256)
def _sampled(text: str):
    """(phi, phi', phi'') as sympy expressions and their values on a uniform grid of 201 points followed by
    the quadrature nodes of :func:`_unit_rule` (nan where undefined or complex): (derivatives, points,
    samples). ``text`` must parse."""
    import numpy as np
    import sympy

    phi = parse_shape(text)
    xi = xi_symbol()
    derivatives = (phi, sympy.diff(phi, xi), sympy.diff(phi, xi, 2))
    points = np.concatenate([np.linspace(0.0, 1.0, 201), _unit_rule()[0]])
    samples = tuple(_sample(expr, xi, points) for expr in derivatives)
    for array in (points, *samples):
        array.setflags(write=False)
    return derivatives, points, samples


@lru_cache(maxsize=1)
def _unit_rule():
    """Nodes and weights of the composite Gauss-Legendre rule on [0, 1] that the dynamics integrate shapes
    with (flexfmu.modes.quadrature: 32 panels of 24 nodes)."""
    import numpy as np

    x, w = np.polynomial.legendre.leggauss(24)
    left = np.arange(32) / 32
    return (left[:, None] + (x[None, :] + 1.0) / 64).ravel(), np.tile(w / 64, 32)


def _sample(expr, xi, grid):
    """``expr`` on ``grid`` as floats (nan where undefined or complex)."""
    import numpy as np
    import sympy

    function = sympy.lambdify(xi, expr, modules="numpy")
    with np.errstate(all="ignore"):
        values = np.asarray(function(grid), dtype=complex) + np.zeros_like(grid)
    return np.where(values.imag == 0, values.real, np.nan)


def _end_value(expr, at):
    """``expr`` at ``xi = at`` by substitution, as complex (nan if undefined)."""
    try:
        return complex(expr.subs(xi_symbol(), at).evalf())
    except (TypeError, ValueError, OverflowError):  # zoo, nan and friends
        return complex("nan")
