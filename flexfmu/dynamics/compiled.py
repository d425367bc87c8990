"""The Model's dynamics as generated C wants them (the FMU's C contract).

The Model's ``forward_dynamics`` forms M(q) = sum J' G J and solves it with
CasADi's sparse LDL: quick to build, right for Python and CVODES, and the
independent reference. Generated C wants O(N) work and compact code, so here
the accelerations come from the articulated-body passes of
``flexfmu.dynamics.articulated``, assembled as MX graphs of per-link
template calls:

- parameter-only quantities (mass properties, mode-shape integrals,
  stiffness, rotor and friction coefficients) are constants c(p), computed
  once per parameter change, laid out body by body;
- the right-hand side is three passes over the links, one template call per
  link and pass, expanded into straight-line code: O(N) operations, and
  measured faster than the calls (10 links: 2.5 us against 4.1 us per
  right-hand side; two links: 0.25 us against 0.5 us);
- the directional derivatives (forward AD, called rarely) keep the calls,
  so their generated C holds each template's derivative once;
- the implicit integrator's Newton correction reuses the same passes with
  the structural damping and stiffness added to each body's inertia, also
  expanded (measured: the implicit 1 ms doStep of subudhi_morris_2link
  3.1 us expanded against 11.5 us with the calls; of 10 links 18 us
  against 36 us, for 2.3 s more gcc);
- prescribed joints make the passes hybrid (``articulated``): their known
  accelerations enter the inward pass and the outward pass returns their
  torques, still O(N), so x = [q; qd] over the state coordinates and u
  carries the prescribed motion, as for the Model (``drives``).

Every Function here takes pc = [p; c] as its parameter argument.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from flexfmu.dynamics.articulated import (
    FRAME, BodyLayout, link_acceleration, link_articulated, link_kinematics, link_structure,
)
from flexfmu.dynamics.chain import Coordinates, LinkBody
from flexfmu.dynamics.closed_form import rotary_sums
from flexfmu.dynamics.drives import Drives
from flexfmu.dynamics.forces import dissipation, rotor_inertias, spring_forces


@dataclass(frozen=True)
class CompiledDynamics:
    """Functions of the C contract, in terms of pc = [p; c(p)].

    Attributes
    ----------
    constants : (p) -> c
    state_derivative : (x, u, pc) -> dx/dt
    outputs : (x, u, pc) -> y
    directional : (x, u, pc, dx, du) -> (dxdot, dy), forward AD of both
    newton_correction : (q, qd, v0, u, pc, h) -> dw, the simplified Newton
        step (M + h/2 D + h^2/4 K)^-1 M r of the implicit midpoint rule, with
        r = qd - v0 - h/2 qdd(q, qd, u) and D, K the structural damping and
        stiffness (see flexfmu.integrate.implicit_midpoint_step).
    mass_form : (x, u, pc) -> (M, f, K, D), the equations of motion as
        M(q) qdd = f(q, qd, u) with the structural stiffness K and damping D
        at q (see flexfmu.integrate.rosenbrock_step).

    x, q, qd and v0 hold the state coordinates (``Model.states``).
    """

    constants: ca.Function
    state_derivative: ca.Function
    outputs: ca.Function
    directional: ca.Function
    newton_correction: ca.Function
    mass_form: ca.Function

    @property
    def size(self) -> int:
        """Number of constants c."""
        return self.constants.size1_out(0)


@dataclass(frozen=True)
class _Link:
    layout: BodyLayout
    indices: list[int]  # z = (theta, [alpha], f) in q
    offset: int  # first of the body's constants in pc


def _body_constants(j: int, body: LinkBody, layout: BodyLayout, P, rotor) -> ca.SX:
    pre = f"joint[{j + 1}]"
    rot_I, rot_Is, rot_Iss = rotary_sums(body)
    spring = (P[f"{pre}.stiffness"], P[f"{pre}.spring_damping"]) if layout.flexible_joint else (0, 0)
    shortening = {"hb": body.hb, "hd": body.hd, "hl": body.hl} if layout.stiffening else {}
    return layout.pack(shortening | {
        "m": body.mass, "sx": body.sx, "sy": body.sy, "j0": body.j0, "L": body.length, "rot_I": rot_I,
        "rotor": rotor, "viscous": P[f"{pre}.viscous_friction"], "spring_k": spring[0], "spring_c": spring[1],
        "gx": P["gravity.x"], "gy": P["gravity.y"], "a": body.a, "b": body.b, "tip_value": body.tip_value,
        "rot_Is": rot_Is, "distal_rotation": body.distal_rotation, "tip_tangent": body.tip_tangent,
        "root_tangent": body.root_tangent, "mff": body.mff, "K": body.stiffness, "D": body.damping,
        "rot_Iss": rot_Iss,
    })


def _links(coords: Coordinates, bodies: list[LinkBody], offset: int) -> list[_Link]:
    links = []
    for i, body in enumerate(bodies):
        prescribed = coords.records[coords.theta[i]].prescribed
        layout = BodyLayout(body.modes, i in coords.rotor, body.stiffening, prescribed)
        rotor = [coords.rotor[i]] if i in coords.rotor else []
        links.append(_Link(layout, [coords.theta[i], *rotor, *coords.modal[i]], offset))
        offset += layout.size
    return links


class _Passes:
    """MX graphs of the articulated-body passes over the links of one Model."""

    def __init__(self, links: list[_Link], drives: Drives):
        self.links, self.drives = links, drives
        order = [k for link in links for k in link.indices]
        self.permutation = [order.index(k) for k in range(drives.size)]  # z-order -> q-order

    def body_constants(self, pc: ca.MX, link: _Link) -> ca.MX:
        return pc[link.offset:link.offset + link.layout.size]

    def coordinates(self, q: ca.MX, qd: ca.MX, u: ca.MX) -> tuple[ca.MX, ca.MX, list[ca.MX]]:
        """(q, qd) of every coordinate and the prescribed accelerations per link (None where free), from the
        state coordinates' ``q``, ``qd`` and the inputs ``u``."""
        q_all, qd_all = self.drives.coordinates(q, qd, u)
        known = dict(zip(self.drives.prescribed, (u[k] for k in self.drives.accelerations)))
        return q_all, qd_all, [known.get(link.indices[0]) for link in self.links]

    def kinematics(self, q: ca.MX, qd: ca.MX, pc: ca.MX) -> list[tuple[ca.MX, ca.MX, ca.MX]]:
        """(G, F, T) of every body, outward from the base (``q``, ``qd`` of every coordinate)."""
        phi, phid, o_vp, out = ca.MX(1, 1), ca.MX(1, 1), ca.MX(2, 1), []
        for link in self.links:
            G, F, T, phi, phid, o_vp = link_kinematics(link.layout)(
                q[link.indices], qd[link.indices], phi, phid, o_vp, self.body_constants(pc, link))
            out.append((G, F, T))
        return out

    def solve(self, bodies: list[tuple[ca.MX, ca.MX, ca.MX]], Q: ca.MX, known: list) -> tuple[ca.MX, ca.MX]:
        """Accelerations qdd (every coordinate) of sum J'(G J qdd + F) = Q + B_p tau_p, inward then
        outward, with the ``known`` accelerations of prescribed joints (per link, None where free), and the
        torques tau_p of the prescribed joints."""
        Ib, pb, eliminated = ca.MX(FRAME, FRAME), ca.MX(FRAME, 1), []
        for link, (G, F, T), theta_dd in zip(reversed(self.links), reversed(bodies), reversed(known)):
            extra = [theta_dd] if link.layout.prescribed else []
            Ib, pb, *rest = link_articulated(link.layout)(G, F, T, Ib, pb, Q[link.indices], *extra)
            eliminated.append(extra + rest)
        Vdot, zdd, torques = ca.MX(FRAME, 1), [], []
        for link, (_, _, T), parts in zip(self.links, bodies, reversed(eliminated)):
            if link.layout.prescribed:
                theta_dd, K, zb, row, remainder = parts
                accel, Vdot, tau = link_acceleration(link.layout)(Vdot, K, zb, T, theta_dd, row, remainder)
                torques.append(tau)
            else:
                K, zb = parts
                accel, Vdot = link_acceleration(link.layout)(Vdot, K, zb, T)
            zdd.append(accel)
        return ca.vertcat(*zdd)[self.permutation], ca.vertcat(*torques) if torques else ca.MX(0, 1)


def compiled_dynamics(g, model) -> CompiledDynamics:
    """Build the Functions of the C contract for ``model`` from its planar
    chain ``g`` (:class:`flexfmu.dynamics.planar.PlanarChain`); use
    ``model.compiled``, which caches the result."""
    drives = model.drives
    n, ns, nu, npar = len(model.coordinates), len(drives.states), len(model.inputs), len(model.parameters)
    links = _links(g.coords, g.bodies, npar)
    for link, joint in zip(links, range(len(links))):
        if link.layout.prescribed and not _acts_on_theta_alone(g.rows.motors[joint], link.indices[0]):
            raise ValueError(f"joint {joint + 1} is prescribed but its torque does not act on its angle alone "
                             "(the spec allows prescribed joints only between tangent frames)")
    rotors = rotor_inertias(g.rows, g.P)
    bodies = [_body_constants(j, body, link.layout, g.P, rotors[j][0])
              for j, (body, link) in enumerate(zip(g.bodies, links))]

    # torques, friction and springs (q-space) and the outputs, with their
    # parameter-only parts (damping from ratios, tangents over lengths, ...)
    # hoisted into constants like the bodies'; K and D are constants whole
    u, qdd = ca.SX.sym("u", nu), ca.SX.sym("qdd", n)
    torque_rows = [g.rows.motors[j].T for j in drives.torque_joints]
    applied = ca.mtimes(ca.horzcat(*torque_rows), u[list(drives.torques)]) if torque_rows else ca.SX(n, 1)
    force = applied - spring_forces(g.rows, g.P, g.q) - dissipation(g.rows, g.bodies, g.P, g.qd)
    y = model.kinematic_outputs(g.q, g.qd, qdd, g.P.vector)
    packed, symbols, parametric = ca.extract_parametric(ca.vertcat(force, y), g.P.vector)
    hoisted = ca.vertcat(*symbols)
    K, D = model.structure_matrices(g.P.vector)
    c = ca.vertcat(*bodies, *parametric, K.nz[:], D.nz[:])
    constants = ca.Function("constants", [g.P.vector], [ca.densify(c)], ["p"], ["c"], {"cse": True})
    offsets = np.cumsum([npar + sum(link.layout.size for link in links), hoisted.numel(), K.nnz(), D.nnz()])
    generalized = ca.Function("generalized_forces", [g.q, g.qd, u, g.P.vector, hoisted], [packed[:n]], {"cse": True})
    kinematic = ca.Function("kinematic_outputs", [g.q, g.qd, qdd, g.P.vector, hoisted], [packed[n:]], {"cse": True})

    passes = _Passes(links, drives)
    xm, um, pcm = ca.MX.sym("x", 2 * ns), ca.MX.sym("u", nu), ca.MX.sym("pc", npar + c.numel())
    p, s = pcm[:npar], pcm[offsets[0]:offsets[1]]
    q, qd, known = passes.coordinates(xm[:ns], xm[ns:], um)
    accelerations, torques = passes.solve(passes.kinematics(q, qd, pcm), generalized(q, qd, um, p, s), known)
    states = list(drives.states)
    calls = ca.Function("motion", [xm, um, pcm], [accelerations, torques], ["x", "u", "pc"], ["qdd", "tau"])
    expanded = calls.expand()
    qdd_all, tau = expanded(xm, um, pcm)
    rhs = ca.Function("state_derivative", [xm, um, pcm], [ca.vertcat(xm[ns:], qdd_all[states])],
                      ["x", "u", "pc"], ["xdot"])
    outputs = ca.Function("outputs", [xm, um, pcm], [ca.vertcat(kinematic(q, qd, qdd_all, p, s), tau)],
                          ["x", "u", "pc"], ["y"])
    qdd_all, tau = calls(xm, um, pcm)
    xdot = ca.vertcat(xm[ns:], qdd_all[states])
    y = ca.vertcat(kinematic(q, qd, qdd_all, p, s), tau)
    dx, du = ca.MX.sym("dx", 2 * ns), ca.MX.sym("du", nu)
    seeds = ca.jtimes(ca.vertcat(xdot, y), ca.vertcat(xm, um), ca.vertcat(dx, du))
    directional = ca.Function("directional", [xm, um, pcm, dx, du], [seeds[:2 * ns], seeds[2 * ns:]],
                              ["x", "u", "pc", "dx", "du"], ["dxdot", "dy"])

    def structure(pc: ca.MX) -> tuple[ca.MX, ca.MX]:
        return (ca.MX(K.sparsity(), pc[offsets[1]:offsets[2]]), ca.MX(D.sparsity(), pc[offsets[2]:offsets[3]]))

    def forces(q, qd, u, pc):
        return generalized(q, qd, u, pc[:npar], pc[offsets[0]:offsets[1]])

    newton = _newton_correction(passes, nu, forces, structure, pcm.numel())
    return CompiledDynamics(constants, rhs, outputs, directional, newton.expand(), mass_form(model, pcm.numel()))


def _acts_on_theta_alone(motor_row: ca.SX, theta: int) -> bool:
    """Whether the motor row of a joint is the unit row of its angle ``theta`` (structurally)."""
    return motor_row.nnz() == 1 and motor_row.sparsity().get_col() == [theta] and motor_row[theta].is_one()


def _newton_correction(passes: _Passes, nu: int, forces, structure, size: int) -> ca.Function:
    drives = passes.drives
    n, states = len(drives.states), list(drives.states)
    q, qd, v0, u = (ca.MX.sym(name, k) for name, k in (("q", n), ("qd", n), ("v0", n), ("u", nu)))
    pc, h = ca.MX.sym("pc", size), ca.MX.sym("h")
    q_all, qd_all, known = passes.coordinates(q, qd, u)
    bodies = passes.kinematics(q_all, qd_all, pc)
    r = qd - v0 - h / 2 * passes.solve(bodies, forces(q_all, qd_all, u, pc), known)[0][states]
    K, D = structure(pc)
    stiffened = [(G + link_structure(link.layout)(passes.body_constants(pc, link), h), ca.MX(G.shape[0], 1), T)
                 for link, (G, _, T) in zip(passes.links, bodies)]
    at_rest = [None if theta_dd is None else ca.MX(1, 1) for theta_dd in known]  # prescribed rows stay put
    r_all = drives.merge(r, ca.MX(len(drives.prescribed), 1))
    correction = r - passes.solve(stiffened, ca.mtimes(h / 2 * D + h**2 / 4 * K, r_all), at_rest)[0][states]
    return ca.Function("newton_correction", [q, qd, v0, u, pc, h], [correction],
                       ["q", "qd", "v0", "u", "pc", "h"], ["dw"])


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
    they leave the state rows), with the structural stiffness K and damping D."""
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
