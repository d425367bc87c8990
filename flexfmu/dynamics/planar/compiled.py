"""The planar Model's dynamics as generated C wants them (the FMU's C contract).

The Model's ``forward_dynamics`` forms M(q) = sum J' G J and solves it with
CasADi's sparse LDL: quick to build, right for Python and CVODES, and the
independent reference. Generated C wants O(N) work and compact code, so here
the accelerations come from the articulated-body passes of
``flexfmu.dynamics.planar.articulated``, assembled as MX graphs of per-link
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

from flexfmu.dynamics.drives import Drives
from flexfmu.dynamics.forces import dissipation, rotor_inertias, spring_forces
from flexfmu.dynamics.graph_dynamics import mass_form
from flexfmu.dynamics.model import CompiledDynamics
from flexfmu.dynamics.planar.articulated import (
    FRAME,
    PlanarBodyLayout,
    link_acceleration,
    link_articulated,
    link_kinematics,
    link_structure,
)
from flexfmu.dynamics.planar.bodies import Coordinates, LinkBody
from flexfmu.dynamics.planar.closed_form import rotary_sums


@dataclass(frozen=True)
class _Link:
    layout: PlanarBodyLayout
    indices: list[int]  # z = (theta, [alpha], f) in q
    offset: int  # first of the body's constants in pc


def _body_constants(j: int, body: LinkBody, layout: PlanarBodyLayout, P, rotor) -> ca.SX:
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
        layout = PlanarBodyLayout(body.modes, i in coords.rotor, body.stiffening, prescribed)
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
