"""Controllers a scenario runs at a fixed rate with sample and hold.

A controller reads named plant outputs (``inputs``) at each sample time and
returns the plant inputs it drives (``outputs``, the joint torques). The same
objects serve the monolithic reference, the co-simulation master and the
controller FMU, so every run applies the same law. ``open_loop`` controllers
ignore their measurements, which lets the reference integrate runs of equal
inputs in one go.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import casadi as ca
import numpy as np


@dataclass
class HeldInputs:
    """Open loop: piecewise-constant torques from switch points [(t, [u...]), ...]."""

    switches: list
    outputs: list[str]
    inputs: list[str] = field(default_factory=list)
    open_loop = True

    def __call__(self, t: float, measured: np.ndarray) -> np.ndarray:
        times = [s[0] for s in self.switches]
        k = int(np.searchsorted(times, t + 1e-12, side="right")) - 1
        return np.asarray(self.switches[max(k, 0)][1], float)


def circle_reference(center, radius: float, frequency: float, lengths, elbow: float = -1.0):
    """Joint angles and rates that put a rigid two-link arm's tip on a circle.

    x = cx + r cos(2 pi f t), y = cy + r sin(2 pi f t) (paper 000 case 2),
    through the rigid inverse kinematics with the elbow sign ``elbow``
    (-1: elbow as in paper 000's start pose (45 deg, -45 deg)). Rates by the
    inverse Jacobian.
    """
    l1, l2 = lengths
    w = 2 * np.pi * frequency

    def reference(t: float):
        x, y = center[0] + radius * np.cos(w * t), center[1] + radius * np.sin(w * t)
        xd, yd = -radius * w * np.sin(w * t), radius * w * np.cos(w * t)
        c2 = (x * x + y * y - l1 * l1 - l2 * l2) / (2 * l1 * l2)
        t2 = elbow * np.arccos(np.clip(c2, -1.0, 1.0))
        t1 = np.arctan2(y, x) - np.arctan2(l2 * np.sin(t2), l1 + l2 * np.cos(t2))
        J = np.array([[-l1 * np.sin(t1) - l2 * np.sin(t1 + t2), -l2 * np.sin(t1 + t2)],
                      [l1 * np.cos(t1) + l2 * np.cos(t1 + t2), l2 * np.cos(t1 + t2)]])
        return np.array([t1, t2]), np.linalg.solve(J, [xd, yd]), np.zeros(2)

    return reference


def quintic_reference(start, goal, duration: float):
    """theta_d(t) = start + (goal - start)(10 s^3 - 15 s^4 + 6 s^5), s = t / T
    (paper 004, eq. 71), with its rates and accelerations; held after T."""
    start, goal = np.asarray(start, float), np.asarray(goal, float)

    def reference(t: float):
        s = min(max(t / duration, 0.0), 1.0)
        shape = 10 * s**3 - 15 * s**4 + 6 * s**5
        rate = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
        accel = (60 * s - 180 * s**2 + 120 * s**3) / duration**2
        return start + shape * (goal - start), rate * (goal - start), accel * (goal - start)

    return reference


@dataclass
class JointPD:
    """tau = kp (theta_d - theta) + kd (dtheta_d - dtheta) on every joint.

    ``measure`` names the encoders fed back: "joint" (the rotation across each
    joint) or "motor" (the rotor angles of flexible joints, collocated with
    the torque: feeding back the link side of a joint spring is
    non-collocated and destabilises the joint modes).
    """

    kp: float
    kd: float
    reference: object
    joints: int
    measure: str = "joint"
    open_loop = False

    @property
    def inputs(self) -> list[str]:
        return [f"{self.measure}[{j}].{what}" for what in ("angle", "rate") for j in range(1, self.joints + 1)]

    @property
    def outputs(self) -> list[str]:
        return [f"tau[{j}]" for j in range(1, self.joints + 1)]

    def __call__(self, t: float, measured: np.ndarray) -> np.ndarray:
        theta, rate = measured[: self.joints], measured[self.joints:]
        theta_d, rate_d, _ = self.reference(t)
        return self.kp * (theta_d - theta) + self.kd * (rate_d - rate)


class ComputedTorque(JointPD):
    """Computed torque on the rigid part of an arm:
    tau = M_r(theta) (theta_d'' + kd e' + kp e) + h_r(theta, theta').

    M_r and h_r are the arm's dynamics with the links held straight (modal
    coordinates zero) and stiff joints (rotor angle = joint angle, rotor
    inertia added): the model a rigid-body controller is designed on.
    """

    def __init__(self, model, kp: float, kd: float, reference, measure: str = "joint"):
        super().__init__(kp, kd, reference, len(model.inputs), measure)
        n, nj = len(model.coordinates), len(model.inputs)
        theta, rate = ca.SX.sym("theta", nj), ca.SX.sym("rate", nj)
        # q = rigid part: theta, rotors follow theta, modes zero
        S = np.zeros((n, nj))
        for j in range(nj):
            S[model.coordinates.index(f"theta[{j + 1}]"), j] = 1
            if f"alpha[{j + 1}]" in model.coordinates:
                S[model.coordinates.index(f"alpha[{j + 1}]"), j] = 1
        p = model.nominal_parameters
        q, qd = ca.mtimes(S, theta), ca.mtimes(S, rate)
        M_r = ca.mtimes([S.T, model.mass_matrix(q, p), S])
        h_r = ca.mtimes(S.T, model.bias(q, qd, p))
        self._terms = ca.Function("rigid_terms", [theta, rate], [M_r, h_r])

    def __call__(self, t: float, measured: np.ndarray) -> np.ndarray:
        theta, rate = measured[: self.joints], measured[self.joints:]
        theta_d, rate_d, accel_d = self.reference(t)
        M_r, h_r = (np.array(v) for v in self._terms(theta, rate))
        command = accel_d + self.kd * (rate_d - rate) + self.kp * (theta_d - theta)
        return M_r @ command + h_r.ravel()
