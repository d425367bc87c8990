"""Controllers a scenario runs at a fixed rate with sample and hold.

A controller reads named plant outputs (``inputs``) at each sample time and
returns the plant inputs it drives (``outputs``, the joint torques). The laws
themselves are casadi.Functions (``flexfmu.control.laws``), the same ones
tuning differentiates. The same
objects serve the monolithic reference, the co-simulation master and the
controller FMU, so every run applies the same law. ``open_loop`` controllers
ignore their measurements, which lets the reference integrate runs of equal
inputs in one go.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexfmu.control.laws import ControlLaw


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
class SampledController:
    """A control law of ``flexfmu.control.laws`` with its gains and reference,
    called at each sample time: tau = law(measured, [theta_d; dtheta_d; ddtheta_d](t), gains)."""

    law: ControlLaw
    gains: np.ndarray
    reference: object
    open_loop = False

    @property
    def inputs(self) -> list[str]:
        return list(self.law.measured)

    @property
    def outputs(self) -> list[str]:
        return [f"tau[{j}]" for j in range(1, self.law.function.size1_out(0) + 1)]

    def __call__(self, t: float, measured: np.ndarray) -> np.ndarray:
        return self.law(measured, np.concatenate(self.reference(t)), self.gains)
