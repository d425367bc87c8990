"""The spatial Model's dynamics as generated C wants them (the FMU's C contract).

As for planar arms (``flexfmu.dynamics.planar.compiled``): parameter-only
quantities are constants c(p) laid out body by body; the right-hand side is
the three articulated-body passes of :mod:`flexfmu.dynamics.spatial.articulated`,
one template call per link and pass, expanded into straight-line code; the
directional derivatives keep the calls; the implicit integrator's Newton
correction and the Rosenbrock step's stage solves (:class:`_PassStages`)
reuse the passes with the structural terms added, so no stiff integrator
needs the closed-form mass matrix (five times the C of the passes for a
7-link chain). Torques,
friction and joint springs stay in q-space, computed by the Model's own
force code. Every Function takes pc = [p; c] as its parameter argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import casadi as ca
import numpy as np

from flexfmu.codegen.ldl import sparse_product
from flexfmu.dynamics.graph_dynamics import mass_form
from flexfmu.dynamics.forces import dissipation, input_matrix, spring_forces
from flexfmu.dynamics.model import CompiledDynamics
from flexfmu.dynamics.spatial.articulated import (
    link_acceleration,
    link_articulated,
    link_inverse_inward,
    link_inverse_outward,
    link_structure,
)
from flexfmu.dynamics.spatial.closed_form import base_acceleration
from flexfmu.dynamics.spatial.templates import FRAME, SpatialBodyLayout, link_kinematics


@dataclass(frozen=True)
class _Link:
    layout: SpatialBodyLayout
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
        """(G, F, T, cs) of every body, outward from the base."""
        mu, a_in, out = ca.MX(FRAME, 1), self.base(pc[:self.npar]), []
        for link in self.links:
            G, F, cs, T, mu, a_in = link_kinematics(link.layout)(
                q[link.indices], qd[link.indices], mu, a_in, self.body_constants(pc, link))
            out.append((G, F, T, cs))
        return out

    def solve(self, bodies: list[tuple[ca.MX, ...]], Q: ca.MX) -> ca.MX:
        """Accelerations qdd of sum J'(G J qdd + F) = Q, inward then outward."""
        Ib, pb, eliminated = ca.MX(FRAME, FRAME), ca.MX(FRAME, 1), []
        for link, (G, F, T, cs) in zip(reversed(self.links), reversed(bodies)):
            Ib, pb, K, zb = link_articulated(link.layout)(G, F, T, cs, Ib, pb, Q[link.indices])
            eliminated.append((K, zb))
        mud, zdd = ca.MX(FRAME, 1), []
        for link, (_, _, T, cs), (K, zb) in zip(self.links, bodies, reversed(eliminated)):
            accel, mud = link_acceleration(link.layout)(mud, cs, K, zb, T)
            zdd.append(accel)
        return ca.vertcat(*zdd)[self.permutation]

    def residual(self, bodies: list[tuple[ca.MX, ...]], qdd: ca.MX) -> ca.MX:
        """sum J'(G J qdd + F) in q order: M qdd + h without the q-space forces (inverse dynamics)."""
        mud, accelerations = ca.MX(FRAME, 1), []
        for link, (_, _, T, cs) in zip(self.links, bodies):
            nud, mud = link_inverse_outward(link.layout)(mud, cs, qdd[link.indices], T)
            accelerations.append(nud)
        w, forces = ca.MX(FRAME, 1), []
        for link, (G, F, T, cs), nud in zip(reversed(self.links), reversed(bodies), reversed(accelerations)):
            own, w = link_inverse_inward(link.layout)(G, F, T, cs, nud, w)
            forces.append(own)
        return ca.vertcat(*reversed(forces))[self.permutation]


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
    directional = _directional(passes, generalized, kinematic, calls, n, nu, npar, offsets, pcm.numel())

    def forces(q_, qd_, u_, pc_):
        return generalized(q_, qd_, u_, pc_[:npar], pc_[offsets[0]:offsets[1]])

    def structure(pc_):
        """(K, D) as MX matrices from their nonzeros in pc."""
        return ca.MX(K.sparsity(), pc_[offsets[1]:offsets[2]]), ca.MX(D.sparsity(), pc_[offsets[2]:offsets[3]])

    newton = _newton_correction(model, passes, forces, structure, pcm.numel())
    stages = partial(_PassStages, passes, forces, structure)
    return CompiledDynamics(constants, rhs, outputs, directional, newton.expand(), mass_form(model, pcm.numel()),
                            stages)


class _PassStages:
    """The Rosenbrock-W stage solves (:class:`flexfmu.dynamics.stages.LinearStages`) at x by the passes:
    W = M + c D + c^2 K is each body's G plus its structure (``link_structure`` at h = 2c, which gives
    c D + c^2 K), so a solve is one inward and one outward pass; M r_v is the inverse-dynamics passes
    without bias; the kinematics at x serve every pass. ``forces``: (q, qd, u, pc) -> the q-space forces
    Q; ``structure``: pc -> (K, D) as MX matrices."""

    def __init__(self, passes: _Passes, forces, structure, x, u, pc, c):
        n = x.numel() // 2
        q, qd = x[:n], x[n:]
        self.passes, self.c, self.K = passes, c, structure(pc)[0]
        self.bodies = passes.kinematics(q, qd, pc)
        added = [link_structure(link.layout)(passes.body_constants(pc, link), 2 * c) for link in passes.links]
        self.stiffened = [(G + S, F, T, cs) for (G, F, T, cs), S in zip(self.bodies, added)]
        self.forces = forces(q, qd, u, pc)

    def _unbiased(self, bodies):
        return [(G, ca.MX(G.shape[0], 1), T, cs) for G, _, T, cs in bodies]

    def _stage(self, r_q, k_v):
        return r_q + self.c * k_v, k_v

    def forced(self, r_q) -> tuple:
        return self._stage(r_q, self.passes.solve(self.stiffened, self.forces - self.c * sparse_product(self.K, r_q)))

    def massed(self, r_q, r_v) -> tuple:
        mass_times = self.passes.residual(self._unbiased(self.bodies), r_v)
        return self._stage(r_q, self.passes.solve(self._unbiased(self.stiffened),
                                                  mass_times - self.c * sparse_product(self.K, r_q)))


def _directional(passes: _Passes, generalized, kinematic, state_derivative, n, nu, npar, offsets, size) -> ca.Function:
    """(x, u, pc, dx, du) -> (dxdot, dy): forward derivatives of the state derivative and the outputs.
    With qdd fixed, differentiate the inverse-dynamics residual r = M qdd + h - Q(q, qd, u); then
    dqdd = -M^-1 dr, M^-1 by the passes without bias (see :mod:`flexfmu.dynamics.spatial.articulated`)."""
    x, u, pc, dx, du = (ca.MX.sym(name, k) for name, k in (("x", 2 * n), ("u", nu), ("pc", size), ("dx", 2 * n),
                                                           ("du", nu)))
    q, qd, p, s = x[:n], x[n:], pc[:npar], pc[offsets[0]:offsets[1]]
    qdd_fixed = ca.MX.sym("qdd", n)  # held fixed while differentiating, then set to qdd(x, u)
    bodies = passes.kinematics(q, qd, pc)
    residual = passes.residual(bodies, qdd_fixed) - generalized(q, qd, u, p, s)
    dr = ca.jtimes(residual, ca.vertcat(x, u), ca.vertcat(dx, du))
    dqdd = -passes.solve([(G, ca.MX(G.shape[0], 1), T, cs) for G, _, T, cs in bodies], dr)
    dy = ca.jtimes(kinematic(q, qd, qdd_fixed, p, s), ca.vertcat(x, qdd_fixed), ca.vertcat(dx, dqdd))
    qdd = state_derivative(x, u, pc)[n:]
    dqdd, dy = ca.substitute([dqdd, dy], [qdd_fixed], [qdd])
    return ca.Function("directional", [x, u, pc, dx, du], [ca.vertcat(dx[n:], dqdd), dy],
                       ["x", "u", "pc", "dx", "du"], ["dxdot", "dy"])


def _newton_correction(model, passes: _Passes, forces, structure, size: int) -> ca.Function:
    """(q, qd, v0, u, pc, h) -> (M + h/2 D + h^2/4 K)^-1 M r, r = qd - v0 - h/2 qdd: the simplified Newton
    step of the implicit midpoint rule (see flexfmu.dynamics.model.CompiledDynamics), by the passes."""
    n, nu = len(model.coordinates), len(model.inputs)
    q, qd, v0, u = (ca.MX.sym(name, k) for name, k in (("q", n), ("qd", n), ("v0", n), ("u", nu)))
    pc, h = ca.MX.sym("pc", size), ca.MX.sym("h")
    bodies = passes.kinematics(q, qd, pc)
    r = qd - v0 - h / 2 * passes.solve(bodies, forces(q, qd, u, pc))
    K, D = structure(pc)
    stiffened = [(G + link_structure(link.layout)(passes.body_constants(pc, link), h), ca.MX(G.shape[0], 1), T, cs)
                 for link, (G, _, T, cs) in zip(passes.links, bodies)]
    correction = r - passes.solve(stiffened, ca.mtimes(h / 2 * D + h**2 / 4 * K, r))
    return ca.Function("newton_correction", [q, qd, v0, u, pc, h], [correction],
                       ["q", "qd", "v0", "u", "pc", "h"], ["dw"])
