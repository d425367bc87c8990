"""Frames of a spatial chain by accumulation, in the base frame.

Link j's frame is its parent's distal frame moved to the joint's offset,
turned about the joint axis (given in that distal frame) by theta_j, then by
the joint's fixed rotation:

    R_j = R_d,j-1 Rot(a_j, theta_j) R_f,j,     o_j = o_d,j-1 + R_d,j-1 offset_j,

and the distal frame of link j sits at its deflected tip, turned by the tip
slopes and twist: R_d,j = R_j Rz Ry Rx (bodies.distal_angles), o_d,j = o_j +
R_j r_tip(f_j). The per-link templates write the same joint rotation the
other way round, R_f Rot(R_f' a, theta); the energy derivation, which uses
this module, therefore checks that identity too.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from flexfmu.dynamics.spatial import bodies as B
from flexfmu.dynamics.spatial.rotations import axis_rotation, zyx_body_rate, zyx_rotation


@dataclass(frozen=True)
class Joint:
    """Where joint j sits and what it turns about, in its parent's distal frame: ``axis`` (unit, numbers),
    ``rotation`` (the fixed rotation R_f, numbers) and ``offset`` (3-vector, symbolic in p)."""

    axis: tuple[float, float, float]
    rotation: tuple[tuple[float, float, float], ...]
    offset: ca.SX


@dataclass(frozen=True)
class Frames:
    """Every link's frame (``rotations``, ``origins``), its distal frame (``distal_rotations``,
    ``distal_origins``), all in the base frame."""

    rotations: list[ca.SX]
    origins: list[ca.SX]
    distal_rotations: list[ca.SX]
    distal_origins: list[ca.SX]


def link_coordinates(q: ca.SX, modal: tuple[int, ...]) -> ca.SX:
    """The modal coordinates of one link, picked from ``q`` at the indices ``modal`` (empty for a rigid link)."""
    return q[list(modal)] if modal else ca.SX(0, 1)


def frames(joints: list[Joint], structures: list[B.BodyStructure], bodies: list[dict], coords, q) -> Frames:
    """The :class:`Frames` of the chain of ``joints``, link ``structures`` and property dicts ``bodies`` with
    layout ``coords`` (SpatialCoordinates) at ``q``."""
    R, o = ca.SX.eye(3), ca.SX(3, 1)
    out = Frames([], [], [], [])
    for j, (joint, st, props) in enumerate(zip(joints, structures, bodies)):
        o = o + ca.mtimes(R, joint.offset)
        R = ca.mtimes([R, axis_rotation(joint.axis, q[coords.theta[j]]), ca.SX(ca.DM(joint.rotation))])
        out.rotations.append(R)
        out.origins.append(o)
        f = link_coordinates(q, coords.modal[j])
        o = o + ca.mtimes(R, B.tip_position(props, st, f))
        R = ca.mtimes(R, zyx_rotation(B.distal_angles(props, st, f)))
        out.distal_rotations.append(R)
        out.distal_origins.append(o)
    return out


def _rates(expression: ca.SX, values: ca.SX, rates: ca.SX) -> ca.SX:
    """d ``expression`` / dt when its arguments ``values`` change at ``rates`` (0 for no arguments)."""
    return ca.jtimes(expression, values, rates) if values.numel() else ca.SX(*expression.shape)


def tip_motion(joints: list[Joint], structures: list[B.BodyStructure], bodies: list[dict], coords, q, qd, qdd):
    """Position, velocity and acceleration (base frame) of the deflected tip of the last link, at ``q``,
    ``qd``, ``qdd``, for the chain of ``joints``, link ``structures`` and property dicts ``bodies`` with
    layout ``coords``.

    Propagated outward with angular velocities w and accelerations al (base frame), not by
    differentiating the frames twice: a point fixed at r in a frame moving with (v, a, w, al) moves with
    v + w x r and a + al x r + w x (w x r); a joint adds R axis theta' to w and
    w x (R axis theta') + R axis theta'' to al; within a link the tip moves by r_tip(f) and its frame
    turns by the tip slopes and twist (zyx angles) at the local rates.
    """
    R, o = ca.SX.eye(3), ca.SX(3, 1)
    v, a, w, al = (ca.SX(3, 1) for _ in range(4))
    for j, (joint, st, props) in enumerate(zip(joints, structures, bodies)):
        arm = ca.mtimes(R, joint.offset)
        o, v, a = o + arm, v + ca.cross(w, arm), a + ca.cross(al, arm) + ca.cross(w, ca.cross(w, arm))
        spin_axis = ca.mtimes(R, ca.DM(joint.axis))
        k = coords.theta[j]
        spin = spin_axis * qd[k]
        al = al + ca.cross(w, spin) + spin_axis * qdd[k]
        w = w + spin
        R = ca.mtimes([R, axis_rotation(joint.axis, q[k]), ca.SX(ca.DM(joint.rotation))])
        f, fd, fdd = (link_coordinates(x, coords.modal[j]) for x in (q, qd, qdd))
        tip = B.tip_position(props, st, f)
        tip_rate = _rates(tip, f, fd)
        tip_acceleration = _rates(tip_rate, ca.vertcat(f, fd), ca.vertcat(fd, fdd))
        r, r_rate, r_acc = ca.mtimes(R, tip), ca.mtimes(R, tip_rate), ca.mtimes(R, tip_acceleration)
        o = o + r
        a = a + ca.cross(al, r) + ca.cross(w, ca.cross(w, r)) + 2 * ca.cross(w, r_rate) + r_acc
        v = v + ca.cross(w, r) + r_rate
        angles = B.distal_angles(props, st, f)
        R = ca.mtimes(R, zyx_rotation(angles))
        body_rate = zyx_body_rate(angles, _rates(angles, f, fd))
        turn = ca.mtimes(R, body_rate)
        w = w + turn
        al = al + ca.cross(w, turn) + ca.mtimes(R, _rates(body_rate, ca.vertcat(f, fd), ca.vertcat(fd, fdd)))
    return o, v, a
