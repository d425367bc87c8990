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

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from flexfmu.control.laws import ControlLaw
from flexfmu.errors import InputError


@dataclass
class HeldInputs:
    """Open loop: piecewise-constant torques from switch points [(t, [u...]), ...],
    each held until the next; also usable as a plain u(t)."""

    switches: list
    outputs: list[str]
    inputs: list[str] = field(default_factory=list)
    open_loop = True

    def __call__(self, t: float, measured: np.ndarray | None = None) -> np.ndarray:
        times = [s[0] for s in self.switches]
        k = int(np.searchsorted(times, t + 1e-12, side="right")) - 1
        return np.asarray(self.switches[max(k, 0)][1], float)

    @classmethod
    def from_csv(cls, path: str | Path, names: list[str]) -> HeldInputs:
        """Switch points from a CSV with a time column and the named inputs
        (headers may carry units, ``tau[1] [N.m]``, as Result.to_csv writes).

        Raises
        ------
        InputError
            If the file cannot be read or lacks a column.
        """
        try:
            with open(path, newline="") as stream:
                rows = [row for row in csv.reader(stream) if row]
        except OSError as error:
            raise InputError(f"inputs {str(path)!r} cannot be read: {error.strerror or error}") from None
        header = [cell.split(" [")[0].strip() for cell in rows[0]] if rows else []
        missing = [name for name in ["time", *names] if name not in header]
        if missing:
            raise InputError(f"{path}: no column {', '.join(missing)} (columns: {', '.join(header)})")
        columns, t = [header.index(name) for name in names], header.index("time")
        try:
            switches = [(float(row[t]), [float(row[c]) for c in columns]) for row in rows[1:]]
        except (ValueError, IndexError) as error:
            raise InputError(f"{path}: not a table of numbers ({error})") from None
        return cls(switches, list(names))


@dataclass
class SampledController:
    """A control law of ``flexfmu.control.laws`` with its gains and reference,
    called at each sample time: tau = law(measured, [theta_d; dtheta_d; ddtheta_d](t), gains)."""

    law: ControlLaw
    gains: np.ndarray
    reference: object
    _samples: dict = field(default_factory=dict, repr=False, compare=False)
    open_loop = False

    @property
    def inputs(self) -> list[str]:
        return list(self.law.measured)

    @property
    def outputs(self) -> list[str]:
        return list(self.law.torques)

    def __call__(self, t: float, measured: np.ndarray) -> np.ndarray:
        return self.law(measured, self.reference_sample(t), self.gains)

    def reference_sample(self, t: float) -> np.ndarray:
        """r = [theta_d; dtheta_d; ddtheta_d] at ``t``, remembered: every run of a cross-check asks for
        the same sample times."""
        if t not in self._samples:
            self._samples[t] = np.concatenate(self.reference(t))
        return self._samples[t]
