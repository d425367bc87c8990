"""A function of time with named parameters, written once for Python and for generated C.

A scenario's reference (t -> theta_d, dtheta_d, ddtheta_d) and the motion
of its prescribed joints are profiles: one CasADi expression of the time t
and of parameters a (a circle's radius, a move's goal), from which the
rates and accelerations follow by automatic differentiation unless the
profile gives them in closed form. Python calls a profile at the values its
scenario gives (``profile(t)``); the closed-loop FMU compiles the same
Function with a as tunable parameters (``flexfmu.control.loop_system``), so
a sweep may vary a circle's frequency like a gain.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

import casadi as ca
import numpy as np

from flexfmu.codegen.buffered import BufferedFunction
from flexfmu.errors import FlexfmuError
from flexfmu.spec.checks import as_number


class ProfileError(FlexfmuError, ValueError):
    """A profile that is not finite where it is evaluated (a path outside the arm's workspace)."""


@dataclass(frozen=True)
class Profile:
    """t -> (position, rate, acceleration), each with ``size`` entries.

    Attributes
    ----------
    function : casadi.Function
        (t, a) -> (position, rate, acceleration), a the parameters.
    parameters : dict
        The parameters' names (``radius``, ``center[1]``: a table's keys, vector entries 1-based) and values,
        in the order of a.
    what : str
        What it is, for messages (``the circle reference``).
    sources : dict
        Each parameter's key in the table it was made from (``center[1]`` -> ``center``).
    keys : dict
        The table's Key records by key name, when attached (:meth:`checked_by`): their bounds check new
        values of the parameters.
    explain : callable, optional
        t -> why the profile is not finite at the time t (a point out of reach), or None: the message of a
        ProfileError.
    """

    function: ca.Function
    parameters: dict[str, float]
    what: str
    sources: dict[str, str] = field(default_factory=dict)
    keys: dict = field(default_factory=dict)
    explain: Callable | None = field(default=None, compare=False)

    @property
    def size(self) -> int:
        return self.function.size1_out(0)

    @property
    def values(self) -> np.ndarray:
        """a at the profile's own values."""
        return np.array(list(self.parameters.values()), float)

    @cached_property
    def _numeric(self) -> BufferedFunction:
        return BufferedFunction(self.function)

    def __call__(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(position, rate, acceleration) at the time ``t`` (s), as arrays.

        Raises
        ------
        ProfileError
            If a value is not finite there.
        """
        values = self._numeric.results(float(t), self.values)
        if not all(np.all(np.isfinite(v)) for v in values):
            why = self.explain(float(t)) if self.explain is not None else None
            raise ProfileError(why or f"{self.what} is not finite at t = {float(t):g} s (a path outside the arm's "
                                      f"workspace?)")
        return values

    def explained_by(self, explain: Callable) -> Profile:
        """This profile with ``explain`` (t -> why it is not finite there, or None) attached."""
        return replace(self, explain=explain)

    def checked_by(self, keys) -> Profile:
        """This profile with the table's ``keys`` (Key records, :mod:`flexfmu.spec.keys`) attached."""
        return replace(self, keys={key.name: key for key in keys})

    def problems(self, values: dict, path: str) -> list[str]:
        """What is wrong with new ``values`` of parameters (by name), as the table at ``path`` checks them: each
        a number within the bounds of its key."""
        problems: list[str] = []
        for name, value in values.items():
            key = self.keys.get(self.sources.get(name))
            bounds = {"unit": key.unit, **key.bounds} if key is not None and key.type != "vector" else {}
            as_number(problems, value, f"{path}.{name}", **bounds)
        return problems


def profile(values: dict, what: str, expression: Callable, derivatives: bool = True) -> Profile:
    """The Profile of ``expression`` with the numbers and number lists of ``values`` as its parameters.

    Parameters
    ----------
    values : dict
        A scenario table's checked values by key; numbers and lists of numbers become parameters (a list's
        entries named ``key[1]``, ``key[2]``, ...), the rest is passed on as given.
    what : str
        For messages.
    expression : callable
        (t, values) -> the position (``derivatives``) or (position, rate, acceleration), with ``values``
        holding CasADi symbols where ``values`` held numbers.
    derivatives : bool
        Whether the rate and acceleration follow by automatic differentiation of the position.
    """
    t = ca.SX.sym("t")
    symbols, entries, numbers, sources = {}, [], [], {}
    for key, value in values.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            parts = [ca.SX.sym(key)]
            symbols[key] = parts[0]
            numbers.append(float(value))
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, float)) for v in value):
            parts = [ca.SX.sym(f"{key}[{k + 1}]") for k in range(len(value))]
            symbols[key] = ca.vertcat(*parts)
            numbers += [float(v) for v in value]
        else:
            symbols[key], parts = value, []
        entries += parts
        sources |= {part.name(): key for part in parts}
    result = expression(t, symbols)
    if derivatives:
        position = ca.vertcat(result)
        rate = ca.jacobian(position, t)
        result = (position, rate, ca.jacobian(rate, t))
    a = ca.vertcat(*entries) if entries else ca.SX(0, 1)
    function = ca.Function("profile", [t, a], [ca.densify(ca.vertcat(entry)) for entry in result], ["t", "a"],
                           ["position", "rate", "acceleration"])
    return Profile(function, dict(zip((e.name() for e in entries), numbers)), what, sources)
