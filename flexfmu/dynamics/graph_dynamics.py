"""The C contract of any Model built from its own graph: the independent implementation of the FMU's scheme.

Each arm kind compiles its dynamics for generated C its own way
(``flexfmu.dynamics.planar.compiled``, ``spatial.compiled``,
``delta.compiled``). :func:`graph_dynamics` builds the same
:class:`~flexfmu.dynamics.model.CompiledDynamics` from the Model's
Functions alone, for every kind, so that a second implementation of the
FMU's discrete system exists to compare against.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics.model import CompiledDynamics


def graph_dynamics(model) -> CompiledDynamics:
    """The C contract's Functions built from the Model's own graph (closed-form or energy M, h and B,
    solved by LDL, or with prescribed joints by ``flexfmu.dynamics.drives``) instead of the
    articulated-body passes, with no constants (pc = p); x over the state coordinates.

    A fixed-step integrator (``flexfmu.integrate.step_function``) over these runs the FMU's discrete
    system through a second implementation: the Python-backed FMU does, so that native vs
    Python-backed compares two implementations of one scheme, which must agree to round-off.

    Parameters
    ----------
    model : Model
    """
    drives, states = model.drives, list(model.drives.states)
    n, nu, npar = len(states), len(model.inputs), len(model.parameters)
    x, u, p, h = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("p", npar), ca.MX.sym("h")
    q, qd, v0 = ca.MX.sym("q", n), ca.MX.sym("qd", n), ca.MX.sym("v0", n)
    dx, du = ca.MX.sym("dx", 2 * n), ca.MX.sym("du", nu)
    xdot = model.state_derivative(x, u, p)
    y = model.outputs(x[:n], x[n:], u, p)
    K, D = model.structure_matrices(p)
    # the prescribed coordinates do not move in the Newton update: the state rows and columns only
    stiff = (h / 2 * D + h**2 / 4 * K)[states, states]
    r = qd - v0 - h / 2 * model.forward_dynamics(q, qd, u, p)
    q_all, _ = drives.coordinates(q, qd, u)
    correction = r - ca.solve(model.mass_matrix(q_all, p)[states, states] + stiff, ca.mtimes(stiff, r), "ldl")
    return CompiledDynamics(
        constants=ca.Function("constants", [p], [ca.MX(0, 1)], ["p"], ["c"]),
        state_derivative=ca.Function("state_derivative", [x, u, p], [xdot], ["x", "u", "pc"], ["xdot"]),
        outputs=ca.Function("outputs", [x, u, p], [y], ["x", "u", "pc"], ["y"]),
        directional=ca.Function("directional", [x, u, p, dx, du],
                                [ca.jtimes(xdot, ca.vertcat(x, u), ca.vertcat(dx, du)),
                                 ca.jtimes(y, ca.vertcat(x, u), ca.vertcat(dx, du))]),
        newton_correction=ca.Function("newton_correction", [q, qd, v0, u, p, h], [correction],
                                      ["q", "qd", "v0", "u", "pc", "h"], ["dw"]),
    )
