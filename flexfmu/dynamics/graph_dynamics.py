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
        mass_form=mass_form(model, npar),
    )


def mass_form(model, size: int) -> ca.Function:
    """(x, u, pc) -> (M, f, K, D) over the state coordinates of ``model`` from its own graph (closed-form or
    energy M, h and B; pc = [p; c] of ``size`` entries, only p read): M qdd = f = B u - h, less the inertial
    load of the prescribed joints' known accelerations (their torques act on their own angles alone, so
    they leave the state rows), with the stiffness K and damping D of ``Model.stiffness_at``.

    Raises
    ------
    ValueError
        If a prescribed joint's torque acts on a state coordinate (no mass form over the states).
    """
    drives, states = model.drives, list(model.drives.states)
    n, nu, npar = len(states), len(model.inputs), len(model.parameters)
    pattern = model.input_matrix.sparsity_out(0)
    if any(pattern.has_nz(row, column) for row in states for column in drives.prescribed_joints):
        raise ValueError("a prescribed joint's torque acts on state coordinates: no mass form M qdd = f over the "
                         "states (the spec allows prescribed joints only between tangent frames)")
    x, u, pc = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("pc", size)
    p = pc[:npar]
    q_all, qd_all = drives.coordinates(x[:n], x[n:], u)
    M = model.mass_matrix(q_all, p)
    B = model.input_matrix(q_all, p)
    f = -model.bias(q_all, qd_all, p)
    if drives.torques:
        f += ca.mtimes(B[:, list(drives.torque_joints)], u[list(drives.torques)])
    if drives.prescribed:
        f -= ca.mtimes(M[:, list(drives.prescribed)], u[list(drives.accelerations)])
    K, D = model.stiffness_at(q_all, p)
    return ca.Function("mass_form", [x, u, pc], [M[states, states], f[states], K[states, states], D[states, states]],
                       ["x", "u", "pc"], ["M", "f", "K", "D"])
