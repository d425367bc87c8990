"""The FMU's variables and their dependencies as plain data, for every target.

Value references come from a category block plus an index (see
``c/ffmu_model.h``), so they depend only on the arm's structure and stay
stable across rebuilds. States are x = [q; qd] named after the state
coordinates: ``theta[1]`` and ``der(theta[1])``; the accelerations are
``der(theta[1],2)``. A prescribed joint's angle is not a state: its
``theta[j]``, ``der(theta[j])`` and ``der(theta[j],2)`` are inputs, and its
torque ``tau[j]`` an output (the last ones).
Units, descriptions and whether a parameter is tunable come from the Model's
metadata records. The model description of every FMI version, the C model
data and the Python-backed FMU are written from these rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

# exponents of kg, m, s, rad of every unit flexfmu writes
UNITS = {
    "m": {"m": 1}, "m/s": {"m": 1, "s": -1}, "m/s2": {"m": 1, "s": -2},
    "rad": {"rad": 1}, "rad/s": {"rad": 1, "s": -1}, "rad/s2": {"rad": 1, "s": -2},
    "kg": {"kg": 1}, "kg/m": {"kg": 1, "m": -1}, "kg.m2": {"kg": 1, "m": 2},
    "N.m": {"kg": 1, "m": 2, "s": -2}, "N.m2": {"kg": 1, "m": 3, "s": -2},
    "N.m/rad": {"kg": 1, "m": 2, "s": -2, "rad": -1}, "N.m.s/rad": {"kg": 1, "m": 2, "s": -1, "rad": -1},
    "N.s/m": {"kg": 1, "s": -1},
    "N": {"kg": 1, "m": 1, "s": -2}, "kg.m": {"kg": 1, "m": 1}, "1/s": {"s": -1}, "s": {"s": 1},
    "1/m": {"m": -1}, "rad/m": {"rad": 1, "m": -1},
}

VR_BLOCK = 100_000
VR_PARAMETER, VR_STATE, VR_ACCELERATION, VR_INPUT, VR_OUTPUT = (k * VR_BLOCK for k in range(1, 6))


@dataclass(frozen=True)
class Variable:
    """One scalar variable. ``derivative_of`` is the 1-based index of the
    state this variable is the derivative of, or None."""

    name: str
    vr: int
    causality: str
    variability: str
    unit: str
    description: str
    start: float | None = None
    initial: str | None = None
    derivative_of: int | None = None


@dataclass(frozen=True)
class Structure:
    """1-based variable indices: derivatives in state order with the indices
    they depend on, outputs likewise, and the initial unknowns."""

    derivatives: list[tuple[int, list[int]]]
    outputs: list[tuple[int, list[int]]]
    initial_unknowns: list[int]


def fmu_variables(model) -> list[Variable]:
    """All variables of ``model`` in declaration order: parameters, states,
    accelerations, inputs, outputs."""
    rows: list[Variable] = []
    for k, par in enumerate(model.parameter_table):
        rows.append(Variable(par.name, VR_PARAMETER + k, "parameter", "tunable" if par.tunable else "fixed",
                             par.unit, par.description, start=par.value))
    states = model.state_layout
    nq = len(states)
    first_state = len(rows) + 1
    start = model.start_state
    for k, c in enumerate(states):
        rows.append(Variable(c.name, VR_STATE + k, "local", "continuous", c.unit,
                             f"coordinate {c.name}", start=float(start[k]), initial="exact"))
    for k, c in enumerate(states):
        rows.append(Variable(f"der({c.name})", VR_STATE + nq + k, "local", "continuous", c.unit + "/s",
                             f"rate of {c.name}", start=0.0, initial="exact", derivative_of=first_state + k))
    for k, c in enumerate(states):
        rows.append(Variable(f"der({c.name},2)", VR_ACCELERATION + k, "local", "continuous", c.unit + "/s2",
                             f"acceleration of {c.name}", derivative_of=first_state + nq + k))
    held = model.start_inputs
    for k, signal in enumerate(model.input_table):
        rows.append(Variable(signal.name, VR_INPUT + k, "input", "continuous", signal.unit, signal.description,
                             start=float(held[k])))
    for k, signal in enumerate(model.output_table):
        rows.append(Variable(signal.name, VR_OUTPUT + k, "output", "continuous", signal.unit, signal.description))
    return rows


def model_structure(model, variables: list[Variable]) -> Structure:
    """Dependencies of derivatives and outputs on states and inputs, from the
    Jacobian sparsity of the Functions of ``model``; ``variables`` are its
    :func:`fmu_variables`, whose 1-based positions the indices refer to."""
    n, nu = len(model.state_layout), len(model.input_table)
    index = {v.vr: k + 1 for k, v in enumerate(variables)}
    state_index = [index[VR_STATE + k] for k in range(2 * n)]
    input_index = [index[VR_INPUT + k] for k in range(nu)]
    known = state_index + input_index
    x, u, p = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("p", len(model.parameter_table))
    f = ca.Function("f", [ca.vertcat(x, u), p], [model.state_derivative(x, u, p), model.outputs(x[:n], x[n:], u, p)])

    def rows(out: int):
        pattern = f.jac_sparsity(out, 0).T
        return [[known[c] for c in pattern.row()[pattern.colind()[r]:pattern.colind()[r + 1]]]
                for r in range(pattern.size2())]

    derivative_vars = [index[VR_STATE + n + k] for k in range(n)] + [index[VR_ACCELERATION + k] for k in range(n)]
    output_vars = [index[VR_OUTPUT + k] for k in range(len(model.output_table))]
    return Structure(
        derivatives=list(zip(derivative_vars, rows(0))),
        outputs=list(zip(output_vars, rows(1))),
        initial_unknowns=sorted(output_vars + derivative_vars[n:]),
    )
