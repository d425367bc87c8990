"""Small 3-D rotation helpers on CasADi and numpy values alike (the Delta's frames).

Kept to what the Delta robot needs (rotations about y and z, the skew
matrix, a unit vector); the spatial serial chains may bring a fuller set.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

CHAIN_ANGLES = (0.0, 2 * np.pi / 3, 4 * np.pi / 3)  # theta_i of paper 003 eq. (3): where the chains sit


def rot_y(angle):
    """Rotation matrix about y by ``angle`` (rad), as paper 003 eq. (2) with its second row read as (0, 1, 0)."""
    c, s = ca.cos(angle), ca.sin(angle)
    return ca.vertcat(ca.horzcat(c, 0, s), ca.horzcat(0, 1, 0), ca.horzcat(-s, 0, c))


def rot_z(angle):
    """Rotation matrix about z by ``angle`` (rad)."""
    c, s = ca.cos(angle), ca.sin(angle)
    return ca.vertcat(ca.horzcat(c, -s, 0), ca.horzcat(s, c, 0), ca.horzcat(0, 0, 1))


def skew(v):
    """The matrix [v]x with [v]x a = v x a, for a 3-vector ``v``."""
    return ca.vertcat(ca.horzcat(0, -v[2], v[1]), ca.horzcat(v[2], 0, -v[0]), ca.horzcat(-v[1], v[0], 0))


def unit(v):
    """``v`` divided by its length."""
    return v / ca.norm_2(v)


def chain_rotation(i: int) -> np.ndarray:
    """Rz(theta_i) of chain ``i`` (0-based) as numbers: its x axis points from O to the motor A_i, its y axis
    is the motor axis t_i."""
    c, s = np.cos(CHAIN_ANGLES[i]), np.sin(CHAIN_ANGLES[i])
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
