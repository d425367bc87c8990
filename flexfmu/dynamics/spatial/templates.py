"""Per-link terms of the spatial chain: body equations and the transfer to the next joint.

Body i moves with the velocity (all in its own axes)

    nu_i = (V_i (3), w_i (3), w_in (1), [alpha_i'], f_i'),

its origin's velocity, its angular velocity, the joint-axis component of
the angular velocity of its parent's tip tangent (so that the encoder angle
psi_i, and a rigid joint's rotor turning with it, is body-local:
psi_i' = a . w_i + a . root rotation rate - w_in), the rotor rate of a
flexible joint, and its modal rates. Its parent hands it mu_i, the velocity
(V, w, w_in) of the joint frame (the link frame at theta_i = 0), and the
joint turns that frame: V_i = R' mu_V, w_i = R' mu_w + a theta_i', R =
Rot(a, theta_i), a the joint axis in link axes.

Body equations. With the body's kinetic energy T_b(V, w, f, f')
(:func:`flexfmu.dynamics.spatial.bodies.body_kinetic_energy`) and its
momenta p = dT_b/d(V, w, f'), Lagrange's equations in these body-frame
velocities (Euler-Poincare) read

    d/dt p_V + w x p_V,    d/dt p_w + w x p_w + V x p_V,    d/dt p_f - dT_b/df + K f,

which is G nu_i' + F with G = d2T_b/dnu2 and F the velocity products and
stiffness; gravity enters as an upward acceleration of the base. G and F are
formed here by differentiating T_b within the link (a few lines instead of
a page of hand-expanded terms); the chain's projection (M = sum J'G J,
h = sum J'F, closed_form) and the transfer below are written out. The
energy derivation shares only T_b's mass integrals and so checks all of it.

Transfer. The next joint frame sits at rho = r_tip(f) + R_d offset, turned
by R_d(f) R_f (tip slopes and twist, then the joint's fixed rotation), so

    mu_next = T(f) nu_i,   and its acceleration  T nu_i' + (dT/df f') nu_i.

Every template is one SX Function per :class:`SpatialBodyLayout` (mode counts,
frames, joint kind and the joint axes, which are numbers: a coordinate axis
keeps its zeros); the closed form calls it with p-expressions, the
articulated-body passes with constants read from c.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import casadi as ca
import numpy as np

from flexfmu.dynamics.body_layout import BodyLayout
from flexfmu.dynamics.spatial import bodies as B
from flexfmu.dynamics.spatial.rotations import axis_rotation, zyx_body_rate, zyx_rotation

FRAME = 7  # V (3), w (3), w_in: what a body hands its child
JOINT_FIELDS = (("rotor", (1, 1)), ("viscous", (1, 1)), ("spring_k", (1, 1)), ("spring_c", (1, 1)))


def part(v, start: int, stop: int):
    """``v``[``start``:``stop``] as a column, 0 x 1 when empty (CasADi slices a 1 x 1 to a 1 x 0 row)."""
    return v[start:stop] if stop > start else ca.SX(0, 1)


def digest(value) -> str:
    """Eight hex digits naming ``value`` (a layout) in generated code, stable across runs."""
    return hashlib.sha1(repr(value).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class SpatialBodyLayout(BodyLayout):
    """Structure of one body in the chain (:class:`BodyLayout`): ``structure`` (its modes and frames),
    ``flexible_joint``, ``axis`` (its joint's axis in its own axes), and for all but the last link the next
    joint's fixed rotation ``next_rotation`` (row-major 3 x 3) and axis ``next_axis`` (both in this link's
    distal frame)."""

    structure: B.BodyStructure
    flexible_joint: bool
    axis: tuple[float, float, float]
    next_rotation: tuple[float, ...] | None = None
    next_axis: tuple[float, float, float] | None = None

    FRAME: ClassVar[int] = FRAME

    @property
    def modes(self) -> int:
        """Number of the body's modal coordinates."""
        return self.structure.modes

    def fields(self) -> list[tuple[str, tuple[int, int]]]:
        """(name, shape) of the body's constants, in packing order."""
        out = self.structure.fields() + list(JOINT_FIELDS)
        return out + [("offset_next", (3, 1))] if self.next_rotation is not None else out

    def name(self, template: str) -> str:
        """C-friendly name of ``template`` for this layout (unique per layout, the same in every run)."""
        counts = "".join(f"{x}{n}" for x, n in zip("yztu", self.structure.counts) if n)
        return f"{template}_{counts or 'rigid'}{'_rotor' * self.flexible_joint}_{digest(self)}"

    def joint_matrix(self) -> np.ndarray:
        """S (velocity x coordinates): how z' enters nu (theta' along the axis in w, alpha', f')."""
        S = np.zeros((self.velocity, self.coordinates))
        S[3:6, 0] = self.axis
        for c, row in enumerate(range(FRAME, self.velocity), start=1):
            S[row, c] = 1.0
        return S

    def encoder_row(self, body: dict) -> ca.SX:
        """psi' over nu: the body's angular velocity along the joint axis, less the parent's tip-tangent rate
        w_in, plus the root rotation rate about the axis; ``body`` is the :meth:`unpack` of the constants."""
        fd = ca.SX.sym("fd", self.modes)
        root = ca.jacobian(ca.dot(ca.DM(self.axis), B.root_rotation(body, self.structure, fd)), fd)
        return ca.horzcat(ca.SX(1, 3), ca.SX(ca.DM(self.axis).T), ca.SX([[-1]]), ca.SX(1, int(self.flexible_joint)),
                          root if self.modes else ca.SX(1, 0))


@lru_cache(maxsize=None)
def body_terms(structure: B.BodyStructure) -> ca.Function:
    """(V, w, f, f', constants) -> (G_b, F_b) of a body of ``structure``: G_b = d2T_b/dnu_b2 and the
    Euler-Poincare velocity products plus stiffness (see the module docstring), nu_b = (V, w, f')."""
    k = structure.modes
    V, w, f, fd = ca.SX.sym("V", 3), ca.SX.sym("w", 3), ca.SX.sym("f", k), ca.SX.sym("fd", k)
    fields = structure.fields()
    c = ca.SX.sym("c", sum(r * n for _, (r, n) in fields))
    props, at = {}, 0
    for name, (r, n) in fields:
        props[name], at = ca.reshape(c[at:at + r * n], r, n), at + r * n
    nu = ca.vertcat(V, w, fd)
    T = B.body_kinetic_energy(props, structure, V, w, f, fd)
    p = ca.gradient(T, nu)
    G = ca.hessian(T, nu)[0]
    dp = ca.jtimes(p, f, fd) if k else ca.SX(6, 1)
    F = ca.vertcat(dp[0:3] + ca.cross(w, p[0:3]), dp[3:6] + ca.cross(w, p[3:6]) + ca.cross(V, p[0:3]))
    if k:
        K, _ = B.modal_stiffness(props, structure)
        F = ca.vertcat(F, dp[6:] - ca.gradient(T, f) + ca.mtimes(K, f))
    return ca.Function(f"body_terms_{digest(structure)}", [V, w, f, fd, c], [G, F], {"cse": True})


def _embed(G: ca.SX, F: ca.SX, layout: SpatialBodyLayout) -> tuple[ca.SX, ca.SX]:
    """Place the body's (V, w, f') terms into nu."""
    index = list(range(6)) + layout.modal_columns
    d = layout.velocity
    G_nu, F_nu = ca.SX(d, d), ca.SX(d, 1)
    for r, i in enumerate(index):
        F_nu[i] = F[r]
        for c, j in enumerate(index):
            G_nu[i, j] = G[r, c]
    return G_nu, F_nu


def _next_frame(body: dict, layout: SpatialBodyLayout, nu, f, fd):
    """mu_next(nu, f) (linear in nu): the next joint frame's (V, w, w_in), its axes."""
    st = layout.structure
    V, w, modal = nu[0:3], nu[3:6], part(nu, FRAME + layout.flexible_joint, layout.velocity)
    angles = B.distal_angles(body, st, f)
    Rd = zyx_rotation(angles)
    w_d = zyx_body_rate(angles, B.distal_angles(body, st, modal) if layout.modes else ca.SX(3, 1))
    Rf = ca.SX(ca.DM(np.reshape(layout.next_rotation, (3, 3))))
    Rj = ca.mtimes(Rd, Rf)
    offset = body["offset_next"]
    rho = B.tip_position(body, st, f) + ca.mtimes(Rd, offset)
    tip_rate = ca.jtimes(B.tip_position(body, st, f), f, modal) if layout.modes else ca.SX(3, 1)
    V_next = ca.mtimes(Rj.T, V + ca.cross(w, rho) + tip_rate + ca.mtimes(Rd, ca.cross(w_d, offset)))
    w_next = ca.mtimes(Rj.T, w) + ca.mtimes(Rf.T, w_d)
    axis = np.asarray(layout.next_axis)
    own_axis = np.reshape(layout.next_rotation, (3, 3)).T @ axis  # the next joint's axis in its link axes
    tangent = B.tip_tangent(body, st, modal) if layout.modes else ca.SX(3, 1)
    w_in = ca.dot(ca.DM(own_axis), w_next) + ca.dot(ca.DM(axis), tangent)
    return ca.vertcat(V_next, w_next, w_in)


@lru_cache(maxsize=None)
def link_kinematics(layout: SpatialBodyLayout) -> ca.Function:
    """(z, z', mu, a_in, c) -> (G, F, cs, T, mu_next, a_next) of one body.

    ``mu`` and ``a_in`` are the joint frame's velocity and velocity-product
    acceleration (FRAME each, joint-frame axes; a_in holds -g at the base);
    G and F are the body's generalized inertia and forces over nu, the
    latter with the velocity-product acceleration of nu included; cs =
    (cos, sin) of theta (see :func:`joint_turn`); T (FRAME x velocity) maps nu to the next joint frame's
    velocity mu_next, whose velocity-product acceleration is a_next (all
    zero for the last link).
    """
    sym, k, nz, d = ca.SX.sym, layout.modes, layout.coordinates, layout.velocity
    z, zd, mu, a_in, c = sym("z", nz), sym("zd", nz), sym("mu", FRAME), sym("a_in", FRAME), sym("c", layout.size)
    body = layout.unpack(c)
    st = layout.structure
    f, fd = part(z, nz - k, nz), part(zd, nz - k, nz)
    axis = ca.DM(layout.axis)
    cs = ca.vertcat(ca.cos(z[0]), ca.sin(z[0]))
    Rt = joint_turn(layout, cs)
    spin = axis * zd[0]
    V, w = ca.mtimes(Rt, mu[0:3]), ca.mtimes(Rt, mu[3:6]) + spin
    nu = ca.vertcat(V, w, mu[6], part(zd, 1, nz))
    # d/dt Rt = -skew(spin) Rt: the joint's turn of the handed velocity
    a_vp = ca.vertcat(ca.mtimes(Rt, a_in[0:3]) - ca.cross(spin, V),
                      ca.mtimes(Rt, a_in[3:6]) - ca.cross(spin, ca.mtimes(Rt, mu[3:6])), a_in[6])

    structure_constants = ca.vertcat(*[ca.vec(body[name]) for name, _ in st.fields()])
    G_b, F_b = body_terms(st)(V, w, f, fd, structure_constants)
    G, F = _embed(G_b, F_b, layout)
    motor, _ = layout.rows(body)
    G += body["rotor"] * ca.mtimes(motor.T, motor)
    F += ca.mtimes(G[:, :FRAME], a_vp)

    if layout.next_rotation is None:
        T, mu_next, a_next = ca.SX(FRAME, d), ca.SX(FRAME, 1), ca.SX(FRAME, 1)
    else:
        nu_s, f_s, fd_s = sym("nu", d), sym("f", k), sym("fd", k)
        mu_s = _next_frame(body, layout, nu_s, f_s, fd_s)
        T_s = ca.jacobian(mu_s, nu_s)
        product = ca.jtimes(mu_s, f_s, fd_s) if k else ca.SX(FRAME, 1)
        transfer = ca.Function("transfer", [nu_s, f_s, fd_s, c], [T_s, product])
        T, product = transfer(nu, f, fd, c)
        a_nu = ca.vertcat(a_vp, ca.SX(d - FRAME, 1))
        mu_next = ca.mtimes(T, nu)
        a_next = ca.mtimes(T, a_nu) + product
    return ca.Function(layout.name("link_kinematics"), [z, zd, mu, a_in, c],
                       [G, F, cs, T, mu_next, a_next], {"cse": True})


def joint_turn(layout: SpatialBodyLayout, cs) -> ca.SX:
    """Rot(a, theta)' of the joint of ``layout`` from ``cs`` = (cos theta, sin theta), with the zeros of a
    coordinate axis kept."""
    return axis_rotation(layout.axis, cos_sin=(cs[0], cs[1])).T
