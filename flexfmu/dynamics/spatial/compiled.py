"""The spatial Model's dynamics as generated C wants them (the FMU's C contract).

As for planar arms (``flexfmu.dynamics.compiled``): parameter-only
quantities are constants c(p) laid out body by body; the right-hand side is
the three articulated-body passes of :mod:`flexfmu.dynamics.spatial.articulated`,
one template call per link and pass, expanded into straight-line code; the
directional derivatives keep the calls; the implicit integrator's Newton
correction reuses the passes with the structural terms added. Torques,
friction and joint springs stay in q-space, computed by the Model's own
force code. Every Function takes pc = [p; c] as its parameter argument.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from flexfmu.dynamics.compiled import CompiledDynamics
from flexfmu.dynamics.forces import dissipation, input_matrix, spring_forces
from flexfmu.dynamics.spatial.articulated import link_acceleration, link_articulated, link_structure
from flexfmu.dynamics.spatial.closed_form import base_acceleration
from flexfmu.dynamics.spatial.templates import FRAME, BodyLayout, link_kinematics


@dataclass(frozen=True)
class _Link:
    layout: BodyLayout
    indices: list[int]  # z = (theta, [alpha], f) in q
    offset: int  # first of the body's constants in pc


class _Passes:
    """MX graphs of the articulated-body passes over the links of one Model."""

    def __init__(self, links: list[_Link], n: int, base: ca.Function, npar: int):
        self.links, self.base, self.npar = links, base, npar
        order = [k for link in links for k in link.indices]
        self.permutation = [order.index(k) for k in range(n)]  # z-order -> q-order

    def body_constants(self, pc: ca.MX, link: _Link) -> ca.MX:
        return pc[link.offset:link.offset + link.layout.size]

    def kinematics(self, q: ca.MX, qd: ca.MX, pc: ca.MX) -> list[tuple[ca.MX, ...]]:
        """(G, F, T, Rt) of every body, outward from the base."""
        mu, a_in, out = ca.MX(FRAME, 1), self.base(pc[:self.npar]), []
        for link in self.links:
            G, F, Rt, T, mu, a_in = link_kinematics(link.layout)(
                q[link.indices], qd[link.indices], mu, a_in, self.body_constants(pc, link))
            out.append((G, F, T, Rt))
        return out

    def solve(self, bodies: list[tuple[ca.MX, ...]], Q: ca.MX) -> ca.MX:
        """Accelerations qdd of sum J'(G J qdd + F) = Q, inward then outward."""
        Ib, pb, eliminated = ca.MX(FRAME, FRAME), ca.MX(FRAME, 1), []
        for link, (G, F, T, Rt) in zip(reversed(self.links), reversed(bodies)):
            Ib, pb, K, zb = link_articulated(link.layout)(G, F, T, Rt, Ib, pb, Q[link.indices])
            eliminated.append((K, zb))
        mud, zdd = ca.MX(FRAME, 1), []
        for link, (_, _, T, Rt), (K, zb) in zip(self.links, bodies, reversed(eliminated)):
            accel, mud = link_acceleration(link.layout)(mud, Rt, K, zb, T)
            zdd.append(accel)
        return ca.vertcat(*zdd)[self.permutation]


def compiled_dynamics(chain, model) -> CompiledDynamics:
    """Build the Functions of the C contract for ``model`` from its spatial ``chain``
    (:class:`flexfmu.dynamics.spatial.chain.SpatialChain`); use ``model.compiled``, which caches it."""
    n, nu, npar = len(model.coordinates), len(model.inputs), len(model.parameters)
    P, q, qd = chain.P, chain.q, chain.qd
    links, offset = [], npar
    for layout, indices in zip(chain.layouts, chain.link_indices):
        links.append(_Link(layout, indices, offset))
        offset += layout.size

    u, qdd = ca.SX.sym("u", nu), ca.SX.sym("qdd", n)
    force = ca.mtimes(input_matrix(chain.rows), u) - spring_forces(chain.rows, P, q) \
        - dissipation(chain.rows, chain.damped_bodies, P, qd)
    y = model.kinematic_outputs(q, qd, qdd, P.vector)
    packed, symbols, parametric = ca.extract_parametric(ca.vertcat(force, y), P.vector)
    hoisted = ca.vertcat(*symbols)
    K, D = model.structure_matrices(P.vector)
    c = ca.vertcat(*chain.constants, *parametric, K.nz[:], D.nz[:])
    constants = ca.Function("constants", [P.vector], [ca.densify(c)], ["p"], ["c"], {"cse": True})
    offsets = np.cumsum([offset, hoisted.numel(), K.nnz(), D.nnz()])
    generalized = ca.Function("generalized_forces", [q, qd, u, P.vector, hoisted], [packed[:n]], {"cse": True})
    kinematic = ca.Function("kinematic_outputs", [q, qd, qdd, P.vector, hoisted], [packed[n:]], {"cse": True})
    base = ca.Function("base_acceleration", [P.vector], [base_acceleration(chain)])

    passes = _Passes(links, n, base, npar)
    xm, um, pcm = ca.MX.sym("x", 2 * n), ca.MX.sym("u", nu), ca.MX.sym("pc", npar + c.numel())
    qm, qdm, p, s = xm[:n], xm[n:], pcm[:npar], pcm[offsets[0]:offsets[1]]
    accelerations = passes.solve(passes.kinematics(qm, qdm, pcm), generalized(qm, qdm, um, p, s))
    calls = ca.Function("state_derivative", [xm, um, pcm], [ca.vertcat(qdm, accelerations)],
                        ["x", "u", "pc"], ["xdot"])
    rhs = calls.expand()
    outputs = ca.Function("outputs", [xm, um, pcm], [kinematic(qm, qdm, rhs(xm, um, pcm)[n:], p, s)],
                          ["x", "u", "pc"], ["y"])
    xdot = calls(xm, um, pcm)
    dx, du = ca.MX.sym("dx", 2 * n), ca.MX.sym("du", nu)
    seeds = ca.jtimes(ca.vertcat(xdot, kinematic(qm, qdm, xdot[n:], p, s)), ca.vertcat(xm, um), ca.vertcat(dx, du))
    directional = ca.Function("directional", [xm, um, pcm, dx, du], [seeds[:2 * n], seeds[2 * n:]],
                              ["x", "u", "pc", "dx", "du"], ["dxdot", "dy"])

    def forces(q_, qd_, u_, pc_):
        return generalized(q_, qd_, u_, pc_[:npar], pc_[offsets[0]:offsets[1]])

    K_nz, D_nz = (K.sparsity(), D.sparsity())
    newton = _newton_correction(model, passes, forces, lambda pc_: (ca.MX(K_nz, pc_[offsets[1]:offsets[2]]),
                                                                    ca.MX(D_nz, pc_[offsets[2]:offsets[3]])),
                                pcm.numel())
    return CompiledDynamics(constants, rhs, outputs, directional, newton.expand())


def _newton_correction(model, passes: _Passes, forces, structure, size: int) -> ca.Function:
    """(q, qd, v0, u, pc, h) -> (M + h/2 D + h^2/4 K)^-1 M r, r = qd - v0 - h/2 qdd: the simplified Newton
    step of the implicit midpoint rule (see flexfmu.dynamics.compiled.CompiledDynamics), by the passes."""
    n, nu = len(model.coordinates), len(model.inputs)
    q, qd, v0, u = (ca.MX.sym(name, k) for name, k in (("q", n), ("qd", n), ("v0", n), ("u", nu)))
    pc, h = ca.MX.sym("pc", size), ca.MX.sym("h")
    bodies = passes.kinematics(q, qd, pc)
    r = qd - v0 - h / 2 * passes.solve(bodies, forces(q, qd, u, pc))
    K, D = structure(pc)
    stiffened = [(G + link_structure(link.layout)(passes.body_constants(pc, link), h), ca.MX(G.shape[0], 1), T, Rt)
                 for link, (G, _, T, Rt) in zip(passes.links, bodies)]
    correction = r - passes.solve(stiffened, ca.mtimes(h / 2 * D + h**2 / 4 * K, r))
    return ca.Function("newton_correction", [q, qd, v0, u, pc, h], [correction],
                       ["q", "qd", "v0", "u", "pc", "h"], ["dw"])
