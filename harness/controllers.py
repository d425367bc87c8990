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
