"""Forward dynamics by the articulated-body algorithm: O(N) work, O(1) code.

M(q) = sum_i J_i' G_i J_i and h = sum_i J_i' F_i (see closed_form) describe
a serial chain of bodies. Body i moves with the velocity

    nu_i = (o_i' (2), phi_i', omega_in_i, [alpha_i'], f_i'),

its frame origin and angle, the tip-tangent rate of its parent (so that a
rigid joint's rotor, turning with psi_i = phi_i + f_i . root_tangent - that
angle, is a body-local inertia), the rotor angle of a flexible joint, and
its modes. Its own coordinates z_i = (theta_i, [alpha_i], f_i) enter through
nu_i = [T_(i-1) nu_(i-1); 0] + S z_i', with T the 4 x d transfer of the
parent's motion to the child's frame. Velocity products live in F_i, so the
accelerations obey the same linear recursion, and Featherstone's three
passes solve M qdd = Q - h without ever forming M:

1. outward: frame angles, G_i, F_i, T_i (``link_kinematics``);
2. inward: articulated inertias, eliminating z_i'' body by body
   (``link_articulated``);
3. outward: z_i'' from the parent's acceleration (``link_acceleration``).

The same inward/outward passes with G_i + C_i and no bias solve
(M + C) x = y for the implicit integrator's Newton matrix, C holding the
arm's structural damping and stiffness, which are body-local too.

A prescribed joint (its angle, rate and acceleration given) makes the passes
Featherstone's hybrid dynamics: the inward pass eliminates only the body's
unknown coordinates, carrying the known joint acceleration into the bias
(pA + IA e_theta theta''), and the outward pass, which then knows the
body's whole acceleration a, returns the joint's torque e_theta'(IA a + pA)
- Q_theta. That torque acts on theta alone, which the spec ensures
(``flexfmu.spec.planar``: prescribed joints sit between tangent frames).

Each pass calls one small SX template per (mode count, joint kind) and the
Functions here are MX graphs of those calls: the generated C holds every
template once, whatever the number of links (measured: 10 links, 60 states,
a few seconds of gcc instead of minutes for straight-line O(N^3) code).
Non-inertial generalized forces (torques, friction, joint springs) stay in
q-space, computed by the same code as the Model's (forces.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import casadi as ca

from flexfmu.dynamics.body_layout import BodyLayout, small_spd_solve, symmetric_product
from flexfmu.dynamics.planar.closed_form import link_template

FRAME = 4  # o' (2), phi', omega_in: what a body passes to its child
THETA = 2  # the column of nu that the joint angle moves (phi')


@dataclass(frozen=True)
class PlanarBodyLayout(BodyLayout):
    """Where a planar body's quantities sit: constants in pc, velocities in nu (:class:`BodyLayout`).

    ``stiffening``: the link keeps geometric stiffening (three more squares of
    constants, :mod:`flexfmu.dynamics.planar.bodies`); ``prescribed``: its joint angle
    is prescribed (hybrid passes, see the module docstring).
    """

    modes: int
    flexible_joint: bool
    stiffening: bool = False
    prescribed: bool = False

    FRAME: ClassVar[int] = FRAME
    SCALARS: ClassVar[tuple[str, ...]] = ("m", "sx", "sy", "j0", "L", "rot_I", "rotor", "viscous", "spring_k",
                                          "spring_c", "gx", "gy")
    ROWS: ClassVar[tuple[str, ...]] = ("a", "b", "tip_value", "rot_Is", "distal_rotation", "tip_tangent",
                                       "root_tangent")
    SQUARES: ClassVar[tuple[str, ...]] = ("mff", "K", "D", "rot_Iss")
    STIFFENING: ClassVar[tuple[str, ...]] = ("hb", "hd", "hl")

    @property
    def squares(self) -> tuple[str, ...]:
        """Names of the body's square (modes x modes) constants."""
        return self.SQUARES + self.STIFFENING * self.stiffening

    def fields(self) -> list[tuple[str, tuple[int, int]]]:
        """(name, shape) of the body's constants: the scalars, the 1 x modes rows, the modes x modes squares."""
        k = self.modes
        return ([(name, (1, 1)) for name in self.SCALARS] + [(name, (1, k)) for name in self.ROWS]
                + [(name, (k, k)) for name in self.squares])

    @property
    def joint_columns(self) -> list[int]:
        """Position in nu of each z: theta moves phi', then alpha', then f'."""
        return [THETA] + list(range(FRAME, self.velocity))

    @property
    def unknown_columns(self) -> list[int]:
        """The joint columns whose accelerations the passes solve for (all but a prescribed theta)."""
        return self.joint_columns[int(self.prescribed):]

    def name(self, template: str) -> str:
        """C-friendly name of ``template`` for this layout."""
        suffix = "_rotor" * self.flexible_joint + "_stiffened" * self.stiffening + "_prescribed" * self.prescribed
        return f"{template}_{self.modes}{suffix}"

    def encoder_row(self, body: dict) -> ca.SX:
        """psi' over nu: the frame's phi' less the parent's tip-tangent rate, plus the root tangent's share of
        the modal rates; ``body`` is the :meth:`unpack` of the constants."""
        return ca.horzcat(ca.SX([[0, 0, 1, -1]]), ca.SX(1, int(self.flexible_joint)), body["root_tangent"])


def _embed(G: ca.SX, F: ca.SX, layout: PlanarBodyLayout) -> tuple[ca.SX, ca.SX]:
    """Place the closed form's (o', phi', f') terms into nu."""
    index = [0, 1, 2] + layout.modal_columns
    d = layout.velocity
    G_nu, F_nu = ca.SX(d, d), ca.SX(d, 1)
    for r, i in enumerate(index):
        F_nu[i] = F[r]
        for c, j in enumerate(index):
            G_nu[i, j] = G[r, c]
    return G_nu, F_nu


def _structure(body: dict, layout: PlanarBodyLayout) -> tuple[ca.SX, ca.SX]:
    """Body-local structural stiffness and damping in nu (see Model.structure_matrices)."""
    d, modal = layout.velocity, layout.modal_columns
    K, D = ca.SX(d, d), ca.SX(d, d)
    for r, i in enumerate(modal):
        for c, j in enumerate(modal):
            K[i, j], D[i, j] = body["K"][r, c], body["D"][r, c]
    motor, spring = layout.rows(body)
    D += body["viscous"] * ca.mtimes(motor.T, motor)
    if layout.flexible_joint:
        K += body["spring_k"] * ca.mtimes(spring.T, spring)
        D += body["spring_c"] * ca.mtimes(spring.T, spring)
    return K, D


@lru_cache(maxsize=None)
def link_kinematics(layout: PlanarBodyLayout) -> ca.Function:
    """(z, z', phi_in, phi_in', o_vp, c) -> (G, F, T, phi_out, phi_out', o_vp_out).

    phi_in is the parent's distal frame angle (0 at the base), o_vp the
    velocity-product acceleration of this body's origin; the outputs with
    ``_out`` are the same for the child.
    """
    sym, k = ca.SX.sym, layout.modes
    z, zd = sym("z", layout.coordinates), sym("zd", layout.coordinates)
    phi_in, phid_in, o_vp, c = sym("phi_in"), sym("phid_in"), sym("o_vp", 2), sym("c", layout.size)
    body = layout.unpack(c)
    f, fd = z[layout.coordinates - k:], zd[layout.coordinates - k:]
    phi, phid = phi_in + z[0], phid_in + zd[0]
    shortening = [body[name] for name in layout.STIFFENING] if layout.stiffening else []
    G, F, dtip, tip_jacobian, o_vp_out = link_template(k, layout.stiffening)(
        phi, phid, f, fd, o_vp, ca.vertcat(body["gx"], body["gy"]), body["m"], body["sx"], body["sy"],
        body["j0"], body["a"].T, body["b"].T, body["mff"], body["K"], body["tip_value"], body["L"],
        body["rot_I"], body["rot_Is"], body["rot_Iss"], *shortening,
    )
    G, F = _embed(G, F, layout)
    motor, _ = layout.rows(body)
    G += body["rotor"] * ca.mtimes(motor.T, motor)
    T = ca.SX(FRAME, layout.velocity)
    T[0, 0] = T[1, 1] = T[2, 2] = T[3, 2] = 1
    T[0:2, 2] = dtip
    modal = layout.modal_columns
    T[0:2, modal] = tip_jacobian
    T[2, modal] = body["distal_rotation"]
    T[3, modal] = body["distal_rotation"] + body["tip_tangent"]
    turn = ca.mtimes(body["distal_rotation"], f) if k else 0
    turn_rate = ca.mtimes(body["distal_rotation"], fd) if k else 0
    return ca.Function(
        layout.name("link_kinematics"),
        [z, zd, phi_in, phid_in, o_vp, c], [G, F, T, phi + turn, phid + turn_rate, o_vp_out],
        {"cse": True},
    )


@lru_cache(maxsize=None)
def link_structure(layout: PlanarBodyLayout) -> ca.Function:
    """(c, h) -> C = h/2 D + h^2/4 K, the body's part of the Newton matrix."""
    c, h = ca.SX.sym("c", layout.size), ca.SX.sym("h")
    K, D = _structure(layout.unpack(c), layout)
    return ca.Function(layout.name("link_structure"), [c, h],
                       [h / 2 * D + h**2 / 4 * K], {"cse": True})


@lru_cache(maxsize=None)
def link_articulated(layout: PlanarBodyLayout) -> ca.Function:
    """Inward pass: (G, F, T, Ib_child, pb_child, Q[, theta'']) -> (Ib, pb, K, zb[, row, rest]).

    Articulated inertia IA = G + T' Ib_child T and bias pA = F + T' pb_child;
    eliminating the unknown z'' = zb - K Vdot (Vdot the frame acceleration
    handed down by the parent) leaves Ib and pb, what the parent sees of this
    subtree. A prescribed joint adds its known theta'' to the bias first and
    returns the torque's parts, tau = row . a + rest (a the body's
    acceleration, known in the outward pass).
    """
    sym, d, nz = ca.SX.sym, layout.velocity, layout.coordinates
    G, F, T = sym("G", d, d), sym("F", d), sym("T", FRAME, d)
    Ib_child, pb_child, Q = sym("Ib", FRAME, FRAME), sym("pb", FRAME), sym("Q", nz)
    IA = G + symmetric_product(T, ca.mtimes(Ib_child, T))
    pA = F + ca.mtimes(T.T, pb_child)
    inputs, extra = [G, F, T, Ib_child, pb_child, Q], []
    if layout.prescribed:
        known = sym("theta_dd")
        inputs.append(known)
        extra = [IA[THETA, :], pA[THETA] - Q[0]]
        pA = pA + IA[:, THETA] * known
    cols = layout.unknown_columns
    U = IA[:, cols]
    forces = Q[int(layout.prescribed):] - pA[cols]
    if cols:
        solved = small_spd_solve(U[cols, :], ca.horzcat(U[:FRAME, :].T, forces))
    else:
        solved = ca.SX(0, FRAME + 1)
    K, zb = solved[:, :FRAME], solved[:, FRAME]
    Ib = IA[:FRAME, :FRAME] - symmetric_product(U[:FRAME, :].T, K)
    pb = pA[:FRAME] + ca.mtimes(U[:FRAME, :], zb)
    return ca.Function(layout.name("link_articulated"), inputs, [Ib, pb, K, zb, *extra], {"cse": True})


@lru_cache(maxsize=None)
def link_acceleration(layout: PlanarBodyLayout) -> ca.Function:
    """Outward pass: (Vdot, K, zb, T[, theta'', row, rest]) -> (z'', Vdot_child[, tau])."""
    sym, nu = ca.SX.sym, len(layout.unknown_columns)
    Vdot, K, zb, T = sym("Vdot", FRAME), sym("K", nu, FRAME), sym("zb", nu), sym("T", FRAME, layout.velocity)
    inputs = [Vdot, K, zb, T]
    zdd = zb - ca.mtimes(K, Vdot)
    if layout.prescribed:
        known, row, rest = sym("theta_dd"), sym("row", 1, layout.velocity), sym("rest")
        inputs += [known, row, rest]
        zdd = ca.vertcat(known, zdd)
    a = ca.SX(layout.velocity, 1)
    a[:FRAME] = Vdot
    for r, i in enumerate(layout.joint_columns):
        a[i] += zdd[r]
    outputs = [zdd, ca.mtimes(T, a)]
    if layout.prescribed:
        outputs.append(ca.mtimes(row, a) + rest)
    return ca.Function(layout.name("link_acceleration"), inputs, outputs, {"cse": True})
