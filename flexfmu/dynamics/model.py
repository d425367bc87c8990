"""The Model: an arm's dynamics as named casadi.Functions.

This is the public contract of DESIGN.md: everything downstream (integrators,
code generation, FMUs, harness, tuning) consumes these Functions and names,
never the arm description or the derivation.

M, h, B and the forward dynamics are built with the Model; the energy, the
outputs and the Coriolis matrix are built on first use (each costs as much
again as M and h, and many uses never need them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import casadi as ca
import numpy as np

from flexfmu.dynamics.chain import Coordinates, LinkBody, coordinate_layout, link_bodies, link_mode_sets
from flexfmu.dynamics.closed_form import closed_form_dynamics
from flexfmu.dynamics.energy import energies, energy_dynamics
from flexfmu.dynamics.forces import input_matrix
from flexfmu.dynamics.frames import ChainRows, chain_rows
from flexfmu.dynamics.outputs import output_expressions
from flexfmu.dynamics.parameters import Parameter, ParameterSymbols, arm_parameters
from flexfmu.spec.arm import Arm

DERIVATIONS = {"closed_form": closed_form_dynamics, "energy": energy_dynamics}


@dataclass(frozen=True)
class _Graph:
    """What the lazily built Functions need from the build."""

    coords: Coordinates
    rows: ChainRows
    bodies: list[LinkBody]
    P: ParameterSymbols
    q: ca.SX
    qd: ca.SX


@dataclass(frozen=True)
class Model:
    """Dynamics M(q) qdd + h(q, qd) = B(q) u of one arm, with names.

    Attributes
    ----------
    coordinates : list of str
        Names of q in order (``theta[1]``, ``alpha[1]``, ``f[1,1]``, ...).
    parameters : dict
        Ordered ``{name: nominal value}``; p follows this order.
    parameter_table : list of Parameter
        The same with units and descriptions.
    inputs, output_names, output_units : list of str
    mass_matrix, bias, input_matrix, forward_dynamics, energy, outputs,
    state_derivative, coriolis : casadi.Function
        See DESIGN.md; ``state_derivative`` maps (x = [q; qd], u, p) to dx/dt.
    """

    arm: Arm
    method: str
    coordinates: list[str]
    parameter_table: list[Parameter]
    inputs: list[str]
    mass_matrix: ca.Function
    bias: ca.Function
    input_matrix: ca.Function
    forward_dynamics: ca.Function
    state_derivative: ca.Function
    _graph: _Graph = field(repr=False, compare=False)

    @property
    def parameters(self) -> dict[str, float]:
        return {row.name: row.value for row in self.parameter_table}

    @property
    def nominal_parameters(self) -> np.ndarray:
        """p at the arm's nominal values."""
        return np.array([row.value for row in self.parameter_table])

    def parameter_vector(self, overrides: dict[str, float] | None = None) -> np.ndarray:
        """p at nominal values with the entries named in ``overrides`` replaced."""
        p = self.nominal_parameters
        index = {name: k for k, name in enumerate(self.parameters)}
        for name, value in (overrides or {}).items():
            if name not in index:
                raise KeyError(f"unknown parameter {name!r}")
            p[index[name]] = value
        return p

    @cached_property
    def energy(self) -> ca.Function:
        """(q, qd, p) -> [kinetic; potential] (gravity, bending, joint springs)."""
        g = self._graph
        T, V = energies(g.coords, g.rows, g.bodies, g.P, g.q, g.qd)
        return ca.Function("energy", [g.q, g.qd, g.P.vector], [ca.vertcat(T, V)], ["q", "qd", "p"], ["E"])

    @cached_property
    def _output_graph(self):
        g = self._graph
        qdd = ca.SX.sym("qdd", g.coords.size)
        names, units, y = output_expressions(g.coords, g.rows, g.bodies, g.q, g.qd, qdd)
        function = ca.Function("kinematic_outputs", [g.q, g.qd, qdd, g.P.vector], [y], ["q", "qd", "qdd", "p"], ["y"])
        return names, units, function

    @property
    def kinematic_outputs(self) -> ca.Function:
        """(q, qd, qdd, p) -> y: the outputs given the accelerations."""
        return self._output_graph[2]

    @cached_property
    def structure_matrices(self) -> ca.Function:
        """p -> (K, D): structural stiffness (bending, joint springs) and
        damping (modal, spring, viscous friction), constant in q. These are
        the terms that make arms stiff; implicit integrators use them."""
        g = self._graph
        n = g.coords.size
        K, D = ca.SX(n, n), ca.SX(n, n)
        for E, body in zip(g.rows.selections, g.bodies):
            if body.modes:
                K += ca.mtimes([E.T, body.stiffness, E])
                D += ca.mtimes([E.T, body.damping, E])
        for j, row in g.rows.springs.items():
            K += g.P[f"joint[{j + 1}].stiffness"] * ca.mtimes(row.T, row)
            D += g.P[f"joint[{j + 1}].spring_damping"] * ca.mtimes(row.T, row)
        for j, row in enumerate(g.rows.motors):
            D += g.P[f"joint[{j + 1}].viscous_friction"] * ca.mtimes(row.T, row)
        return ca.Function("structure_matrices", [g.P.vector], [K, D], ["p"], ["K", "D"])

    @property
    def output_names(self) -> list[str]:
        return self._output_graph[0]

    @property
    def output_units(self) -> list[str]:
        return self._output_graph[1]

    @cached_property
    def outputs(self) -> ca.Function:
        """(q, qd, u, p) -> y; accelerations come from the forward dynamics."""
        n, nu, npar = len(self.coordinates), len(self.inputs), len(self.parameter_table)
        q, qd, u, p = ca.MX.sym("q", n), ca.MX.sym("qd", n), ca.MX.sym("u", nu), ca.MX.sym("p", npar)
        y = self.kinematic_outputs(q, qd, self.forward_dynamics(q, qd, u, p), p)
        return ca.Function("outputs", [q, qd, u, p], [y], ["q", "qd", "u", "p"], ["y"])

    @cached_property
    def coriolis(self) -> ca.Function:
        """C(q, qd, p) from the Christoffel symbols of M (paper 002 Theorem 1):
        C = 1/2 (dM/dt + J - J'), J = d(M qd)/dq, so dM/dt - 2C = J' - J."""
        q, qd, p = self._graph.q, self._graph.qd, self._graph.P.vector
        M = self.mass_matrix(q, p)
        J = ca.jacobian(ca.mtimes(M, qd), q)
        C = 0.5 * (ca.jtimes(M, q, qd) + J - J.T)
        return ca.Function("coriolis", [q, qd, p], [C], ["q", "qd", "p"], ["C"])


def build_model(arm: Arm, method: str = "closed_form") -> Model:
    """Build the Model of ``arm`` with the chosen derivation.

    Parameters
    ----------
    arm : Arm
        From ``flexfmu.load_arm``.
    method : {"closed_form", "energy"}
        ``closed_form`` (default, fastest to build) projects the link mass
        properties through recursive Jacobians; ``energy`` differentiates the
        Lagrangian with CasADi AD. Both give the same M and h to round-off.
    """
    if method not in DERIVATIONS:
        raise ValueError(f"method must be one of {sorted(DERIVATIONS)}, got {method!r}")
    table = arm_parameters(arm)
    P = ParameterSymbols(table)
    coords = coordinate_layout(arm)
    bodies = link_bodies(arm, P, link_mode_sets(arm))
    rows = chain_rows(coords, bodies)
    n, nu = coords.size, len(arm.links)
    q, qd, p = ca.SX.sym("q", n), ca.SX.sym("qd", n), P.vector

    M, h = DERIVATIONS[method](coords, rows, bodies, P, q, qd)
    mass_matrix = ca.Function("mass_matrix", [q, p], [M], ["q", "p"], ["M"])
    bias = ca.Function("bias", [q, qd, p], [h], ["q", "qd", "p"], ["h"])
    input_fn = ca.Function("input_matrix", [q, p], [input_matrix(rows)], ["q", "p"], ["B"])

    # Accelerations by a numeric LDL solve of the evaluated M (not a symbolic
    # solve, which dominates the graph and the generated C).
    qm, qdm, um, pm = (ca.MX.sym(k, s) for k, s in (("q", n), ("qd", n), ("u", nu), ("p", p.numel())))
    rhs = ca.mtimes(input_fn(qm, pm), um) - bias(qm, qdm, pm)
    qddm = ca.solve(mass_matrix(qm, pm), rhs, "ldl")
    forward = ca.Function("forward_dynamics", [qm, qdm, um, pm], [qddm], ["q", "qd", "u", "p"], ["qdd"])
    xm = ca.MX.sym("x", 2 * n)
    state_derivative = ca.Function(
        "state_derivative", [xm, um, pm],
        [ca.vertcat(xm[n:], forward(xm[:n], xm[n:], um, pm))], ["x", "u", "p"], ["xdot"],
    )
    return Model(
        arm=arm, method=method, coordinates=list(coords.names), parameter_table=table,
        inputs=[f"tau[{j}]" for j in range(1, nu + 1)],
        mass_matrix=mass_matrix, bias=bias, input_matrix=input_fn, forward_dynamics=forward,
        state_derivative=state_derivative, _graph=_Graph(coords, rows, bodies, P, q, qd),
    )
