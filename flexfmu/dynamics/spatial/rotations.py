"""Rotations in 3-D for CasADi graphs and numbers alike.

Small, dependency-free helpers for the kinematics of spatial chains (and of
anything else that superimposes small elastic rotations on a large rigid
motion). Every function takes CasADi (SX, MX, DM) or plain numbers and
returns CasADi: SX where an input is symbolic, DM for numbers
(``numpy.array(...)`` turns a DM into an array).

Conventions: a rotation matrix R maps frame coordinates to parent
coordinates (x_parent = R x_frame). Its body angular velocity w (in frame
coordinates) satisfies R' dR/dt = skew(w).

- :func:`skew`, :func:`vee`: the cross-product matrix of a 3-vector and back.
- :func:`axis_rotation`: Rodrigues' rotation about a fixed unit axis, by an
  angle or by its cosine and sine.
- :func:`elementary`: rotation about a coordinate axis.
- :func:`rotation_vector`: the rotation exp(skew(v)) of a numeric rotation
  vector v (axis times angle).
- :func:`zyx_rotation`, :func:`zyx_body_rate`: Rz(a) Ry(b) Rx(c) of three
  angles and its body angular velocity; exact and smooth at zero, which is
  how small elastic rotations (a beam's tip slopes and twist) enter a frame.
"""

from __future__ import annotations

import casadi as ca
import numpy as np


def _vector(v) -> ca.SX | ca.DM:
    if isinstance(v, (ca.SX, ca.MX, ca.DM)):
        return v
    return ca.DM(np.asarray(v, float).reshape(-1, 1))


def skew(v) -> ca.SX:
    """The matrix S with S x = v x x (cross product) of the 3-vector ``v``."""
    v = _vector(v)
    zero = 0 * v[0]
    return ca.vertcat(ca.horzcat(zero, -v[2], v[1]), ca.horzcat(v[2], zero, -v[0]), ca.horzcat(-v[1], v[0], zero))


def vee(S) -> ca.SX:
    """The 3-vector of the skew-symmetric part of the 3 x 3 matrix ``S`` (inverse of :func:`skew`)."""
    return 0.5 * ca.vertcat(S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1])


def axis_rotation(axis, angle=None, cos_sin=None) -> ca.SX:
    """Rodrigues' rotation about the fixed unit vector ``axis`` (numbers) by ``angle``, or by the
    angle whose cosine and sine are ``cos_sin`` (a pair; saves recomputing them).

    R = c I + s skew(a) + (1 - c) a a'. With a numeric axis along a coordinate
    axis, the structural zeros stay zeros in the graph.
    """
    a = np.asarray(axis, float).reshape(3)
    c, s = (ca.cos(angle), ca.sin(angle)) if cos_sin is None else cos_sin
    K = skew(a)
    outer = np.outer(a, a)
    rows = []
    for i in range(3):
        row = []
        for j in range(3):
            entry = (1 - c) * outer[i, j] if outer[i, j] else 0
            entry = entry + c if i == j else entry
            entry = entry + s * float(K[i, j]) if float(K[i, j]) else entry
            row.append(entry)
        rows.append(ca.horzcat(*row))
    return ca.vertcat(*rows)


def elementary(index: int, angle) -> ca.SX:
    """Rotation by ``angle`` about the coordinate axis ``index`` (0: x, 1: y, 2: z)."""
    return axis_rotation(np.eye(3)[index], angle)


def rotation_vector(v) -> np.ndarray:
    """The rotation matrix exp(skew(``v``)) of a numeric rotation vector (axis times angle, rad)."""
    v = np.asarray(v, float).reshape(3)
    angle = float(np.linalg.norm(v))
    if angle == 0.0:
        return np.eye(3)
    return np.array(axis_rotation(v / angle, angle), dtype=float)


def zyx_rotation(angles) -> ca.SX:
    """Rz(a) Ry(b) Rx(c) for ``angles`` = (a, b, c) about z, y and x."""
    return ca.mtimes([elementary(2, angles[0]), elementary(1, angles[1]), elementary(0, angles[2])])


def zyx_body_rate(angles, rates) -> ca.SX:
    """Body angular velocity of :func:`zyx_rotation` at ``angles`` = (a, b, c) with ``rates`` (da, db, dc):
    Rx(c)' Ry(b)' e_z da + Rx(c)' e_y db + e_x dc."""
    Rx, Ry = elementary(0, angles[2]), elementary(1, angles[1])
    about_z = ca.mtimes([Rx.T, Ry.T, ca.DM([0, 0, 1])]) * rates[0]
    about_y = ca.mtimes(Rx.T, ca.DM([0, 1, 0])) * rates[1]
    return about_z + about_y + ca.vertcat(rates[2], 0, 0)
