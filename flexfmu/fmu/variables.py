"""The FMU's variables as plain data, decided once for XML and C alike.

Value references come from a category block plus an index (see
``c/ffmu_model.h``), so they depend only on the arm's structure and stay
stable across rebuilds. States are x = [q; qd] named after the coordinates:
``theta[1]`` and ``der(theta[1])``; the accelerations are ``der(theta[1],2)``.
"""

from __future__ import annotations

from dataclasses import dataclass

VR_BLOCK = 100_000
VR_PARAMETER, VR_STATE, VR_ACCELERATION, VR_INPUT, VR_OUTPUT = (k * VR_BLOCK for k in range(1, 6))

# geometry: changing it mid-run would move bodies discontinuously
GEOMETRIC_SUFFIXES = (".length", ".com.x", ".com.y", ".position")


@dataclass(frozen=True)
class Variable:
    """One ScalarVariable. ``derivative_of`` is the 1-based index of the state
    this variable is the derivative of, or None."""

    name: str
    vr: int
    causality: str
    variability: str
    unit: str
    description: str
    start: float | None = None
    initial: str | None = None
    derivative_of: int | None = None


def is_tunable(parameter_name: str) -> bool:
    """Physical parameters can change between steps; geometry cannot."""
    return not parameter_name.endswith(GEOMETRIC_SUFFIXES)


def coordinate_unit(name: str) -> str:
    return "m" if name.startswith("f[") else "rad"


def fmu_variables(model) -> list[Variable]:
    """All variables in ScalarVariable order: parameters, states,
    accelerations, inputs, outputs."""
    rows: list[Variable] = []
    for k, par in enumerate(model.parameter_table):
        rows.append(Variable(
            par.name, VR_PARAMETER + k, "parameter", "tunable" if is_tunable(par.name) else "fixed",
            par.unit, par.description, start=par.value,
        ))
    nq = len(model.coordinates)
    first_state = len(rows) + 1
    for k, name in enumerate(model.coordinates):
        rows.append(Variable(name, VR_STATE + k, "local", "continuous", coordinate_unit(name),
                             f"coordinate {name}", start=0.0, initial="exact"))
    for k, name in enumerate(model.coordinates):
        rows.append(Variable(f"der({name})", VR_STATE + nq + k, "local", "continuous",
                             coordinate_unit(name) + "/s", f"rate of {name}", start=0.0, initial="exact",
                             derivative_of=first_state + k))
    for k, name in enumerate(model.coordinates):
        rows.append(Variable(f"der({name},2)", VR_ACCELERATION + k, "local", "continuous",
                             coordinate_unit(name) + "/s2", f"acceleration of {name}",
                             derivative_of=first_state + nq + k))
    for k, name in enumerate(model.inputs):
        rows.append(Variable(name, VR_INPUT + k, "input", "continuous", "N.m",
                             f"torque of joint {k + 1} (joint side of the gear)", start=0.0))
    for k, (name, unit) in enumerate(zip(model.output_names, model.output_units)):
        rows.append(Variable(name, VR_OUTPUT + k, "output", "continuous", unit, f"measured {name}"))
    return rows
