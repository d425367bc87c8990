"""Rigid kinematics of the Delta robot (paper 003 section 2), re-derived.

Frames (the paper's): base frame at O, Z down. Chain i sits at theta_i =
0, 120, 240 deg; its D-H product (eq. 3, with the printed Ry(-phi_i2) read
as Ry(-(phi1 + phi2)), which keeps the platform's orientation constant) is

    Rz(theta) Tx(rA) Ry(phi1) Tx(L1) Ry(phi2) Rz(phi3) Tx(L2) Rz(-phi3) Ry(-phi1-phi2) Tx(-rB).

The motor angle phi1 turns the upper link about the motor axis t_i = Rz(theta_i) e_y;
with Z down, a positive phi1 lifts the link towards the base (the knee is at
Z = -L1 sin phi1). The upper link frame is R_U = Rz(theta) Ry(phi1), the lower
link frame R_L = Rz(theta) Ry(phi1 + phi2) Rz(phi3), whose z axis z_L is
perpendicular to t_i and to the lower link: the knee B_i and the platform
joint D_i are Hooke joints with the axes t_i and z_L.

Inverse kinematics: in chain i's frame, p = Rz(-theta) P = (x, y, z), the sphere
condition |P - X_i| = L2 (eq. 5) reads l cos phi1 + m sin phi1 = n with
l = 2 L1 (r - x), m = 2 L1 z, n = L2^2 - L1^2 - (x - r)^2 - y^2 - z^2, r = rA - rB
(the printed eq. 8 has sign errors in n). Of its two roots the "elbow out" one
(knee farther from the Z axis) is taken.

Forward kinematics: the intersection of the three spheres of radius L2 about
X_i = B_i - rB e_r,i, in closed form; of its two points the one below the
motors (larger Z) is taken.

Everything symbolic is CasADi; :class:`DeltaKinematics` wraps numeric
evaluation with clear errors outside the workspace and at singular poses.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from flexfmu.dynamics.delta.geometry import chain_rotation, rot_y, unit
from flexfmu.errors import FlexfmuError

BOUNDARY = 1e-12  # relative round-off within which a position on the workspace boundary counts as on it
SINGULAR = 1e-6  # relative size of the smallest singular value below which a pose counts as singular


class KinematicsError(FlexfmuError, ValueError):
    """A platform position or motor angles outside the workspace, or a singular pose."""


@dataclass(frozen=True)
class Dimensions:
    """The Delta's dimensions (numbers or CasADi symbols): rA, rB, L1 (upper), L2 (lower), m."""

    base_radius: object
    platform_radius: object
    upper_length: object
    lower_length: object


def chain_frame(i: int):
    """C_i = Rz(theta_i) of chain ``i`` (0-based) as a CasADi matrix: x from O towards the motor A_i, y the
    motor axis t_i. The functions below take C so one symbolic template serves all three chains."""
    return ca.DM(chain_rotation(i))


def motor_point(C, dims: Dimensions):
    """A, the motor of the chain with frame ``C``."""
    return C[:, 0] * dims.base_radius


def upper_rotation(C, angle):
    """R_U = C Ry(phi1) of the chain with frame ``C`` and motor angle ``angle``; x along A -> B, y the motor
    axis."""
    return ca.mtimes(C, rot_y(angle))


def knee(C, angle, dims: Dimensions):
    """B for the motor angle ``angle`` of the chain with frame ``C``."""
    return motor_point(C, dims) + dims.upper_length * upper_rotation(C, angle)[:, 0]


def platform_joint_offset(C, dims: Dimensions):
    """D - P: the platform joint of the chain with frame ``C`` relative to the platform's centre."""
    return C[:, 0] * dims.platform_radius


def forward_kinematics(theta, dims: Dimensions):
    """P(theta): the platform centre for the three motor angles ``theta`` (sphere intersection, below the
    motors). NaN where the spheres do not meet."""
    c1, c2, c3 = (knee(C, theta[i], dims) - platform_joint_offset(C, dims)
                  for i, C in enumerate(map(chain_frame, range(3))))
    ex = unit(c2 - c1)
    i_ = ca.dot(ex, c3 - c1)
    ey = unit(c3 - c1 - i_ * ex)
    ez = ca.cross(ex, ey)
    d = ca.norm_2(c2 - c1)
    j_ = ca.dot(ey, c3 - c1)
    x = d / 2
    y = (i_**2 + j_**2 - 2 * i_ * x) / (2 * j_)
    height = ca.sqrt(dims.lower_length**2 - x**2 - y**2)
    return c1 + x * ex + y * ey + ca.sign(ez[2]) * height * ez


def inverse_kinematics(P, dims: Dimensions):
    """The three motor angles (rad) that put the platform centre at ``P``, elbow out. NaN where a chain
    cannot reach ``P``."""
    r = dims.base_radius - dims.platform_radius
    L1, L2 = dims.upper_length, dims.lower_length
    angles = []
    for i in range(3):
        x, y, z = ca.vertsplit(ca.mtimes(chain_frame(i).T, P))
        l, m = 2 * L1 * (r - x), 2 * L1 * z
        n = L2**2 - L1**2 - (x - r) ** 2 - y**2 - z**2
        ratio = n / ca.sqrt(l**2 + m**2)
        # on the workspace boundary (a stretched or folded chain, singular) to round-off: a double root
        ratio = ca.if_else(ca.fabs(ratio) <= 1 + BOUNDARY, ca.fmin(ca.fmax(ratio, -1), 1), ratio)
        base, spread = ca.atan2(m, l), ca.acos(ratio)
        a, b = base + spread, base - spread
        root = ca.if_else(ca.cos(a) >= ca.cos(b), a, b)
        angles.append(ca.atan2(ca.sin(root), ca.cos(root)))
    return ca.vertcat(*angles)


def lower_frame(C, angle, P, dims: Dimensions):
    """(R_L, B, D) of the chain with frame ``C``, motor angle ``angle`` and the platform at ``P``: the lower
    link frame (x along B -> D, z perpendicular to the motor axis and the link), the knee and the platform
    joint."""
    B = knee(C, angle, dims)
    D = P + platform_joint_offset(C, dims)
    x = unit(D - B)
    z = unit(ca.cross(x, C[:, 1]))
    return ca.horzcat(x, ca.cross(z, x), z), B, D


class DeltaKinematics:
    """Numeric inverse and forward kinematics and the Jacobian of a Delta robot, with clear errors.

    Parameters
    ----------
    dims : Dimensions
        Numeric dimensions (m).
    """

    def __init__(self, dims: Dimensions):
        self.dims = dims
        P, theta = ca.SX.sym("P", 3), ca.SX.sym("theta", 3)
        position = forward_kinematics(theta, dims)
        self._ik = ca.Function("inverse_kinematics", [P], [inverse_kinematics(P, dims)])
        self._fk = ca.Function("forward_kinematics", [theta], [position])
        self._jacobian = ca.Function("jacobian", [theta], [ca.jacobian(position, theta)])
        lines, paths = [], []
        for i, C in enumerate(map(chain_frame, range(3))):
            link = position + platform_joint_offset(C, dims) - knee(C, theta[i], dims)
            R = upper_rotation(C, theta[i])
            knee_velocity = dims.upper_length * ca.cross(R[:, 1], R[:, 0])
            lines.append(unit(link).T)
            paths.append(ca.fabs(ca.dot(unit(link), knee_velocity)) / ca.norm_2(knee_velocity))
        self._regularity = ca.Function("regularity", [theta], [ca.vertcat(*lines), ca.vertcat(*paths)])

    def inverse(self, position) -> np.ndarray:
        """Motor angles (rad) for the platform centre ``position`` (m, base frame).

        Raises
        ------
        KinematicsError
            If a chain cannot reach ``position``, or the pose is singular.
        """
        position = np.asarray(position, float).ravel()
        theta = np.array(self._ik(position)).ravel()
        if not np.all(np.isfinite(theta)):
            chains = [k + 1 for k in range(3) if not np.isfinite(theta[k])]
            raise KinematicsError(f"platform position {_show(position)} m is outside the workspace: chain "
                                  f"{', '.join(map(str, chains))} cannot reach it")
        self._check_regular(theta, f"platform position {_show(position)} m")
        return theta

    def forward(self, theta) -> np.ndarray:
        """Platform centre (m) for the motor angles ``theta`` (rad).

        Raises
        ------
        KinematicsError
            If the lower links cannot meet, or the pose is singular.
        """
        theta = np.asarray(theta, float).ravel()
        position = np.array(self._fk(theta)).ravel()
        if not np.all(np.isfinite(position)):
            raise KinematicsError(f"motor angles {_show(theta)} rad are outside the workspace: the lower links "
                                  "cannot reach a common platform position")
        self._check_regular(theta, f"motor angles {_show(theta)} rad")
        return position

    def jacobian(self, theta) -> np.ndarray:
        """dP/dtheta (m/rad, 3 x 3) at the motor angles ``theta``; raises KinematicsError where it is singular
        or undefined."""
        self.forward(theta)
        return np.array(self._jacobian(np.asarray(theta, float))).reshape(3, 3)

    def _check_regular(self, theta, what: str) -> None:
        """Raise KinematicsError at a type I (a lower link along its knee's path: the motor cannot move the
        platform) or type II singularity (the lower links' lines lose rank: the platform moves with the
        motors held)."""
        lines, paths = (np.array(value) for value in self._regularity(np.asarray(theta, float)))
        self._raise_if_singular(lines, paths.ravel(), what)

    @staticmethod
    def _raise_if_singular(lines: np.ndarray, paths: np.ndarray, what: str) -> None:
        """The checks of :meth:`_check_regular` on the lower links' unit ``lines`` (rows) and the knee paths'
        ``paths`` (|cosine| of each link with its knee's path)."""
        smallest = np.linalg.svd(lines, compute_uv=False)[-1]
        if smallest < SINGULAR:
            raise KinematicsError(f"{what}: singular pose (the lower links are coplanar or parallel; the platform "
                                  "can move with the motors held)")
        worst = int(np.argmin(paths))
        if paths[worst] < SINGULAR:
            raise KinematicsError(f"{what}: singular pose (chain {worst + 1}'s lower link is perpendicular to its "
                                  "knee's path; its motor cannot move the platform)")


def _show(values) -> str:
    return "(" + ", ".join(f"{v:.6g}" for v in values) + ")"
