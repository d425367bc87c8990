"""Controllers a scenario runs at a fixed rate with sample and hold.

A controller reads named plant outputs (``inputs``) at each sample time and
returns the plant inputs it drives (``outputs``, the joint torques). The laws
themselves are casadi.Functions (``flexfmu.control.laws``), the same ones
tuning differentiates. The same
objects serve the monolithic reference, the co-simulation master and the
controller FMU, so every run applies the same law. ``open_loop`` controllers
ignore their measurements, which lets the reference integrate runs of equal
inputs in one go.

Each controller also writes itself as a CasADi expression (``expression``)
of the sample time, its measurements and its parameters (``parameters``:
gains, a reference's or a motion's numbers, by the names the closed-loop FMU
gives them), which the closed-loop FMU compiles
(``flexfmu.control.loop_system``).

What a scenario's ``[controller]`` may name is the table :data:`CONTROLLERS`:
held torques (``held``, open loop) and every control law of
:data:`flexfmu.control.laws.LAWS` (closed loop, following the scenario's
``[controller.reference]``), each with the keys its table takes.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import casadi as ca
import numpy as np

from flexfmu.control.laws import LAWS, ControlLaw, LawKind
from flexfmu.dynamics import metadata as md
from flexfmu.errors import InputError
from flexfmu.spec.keys import Key


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

    @property
    def parameters(self) -> dict[str, float]:
        """None: the switch points are fixed."""
        return {}

    def problems(self, values: dict) -> list[str]:
        """None: held torques have no parameters (``values`` is empty)."""
        return []

    def expression(self, t, measured, a):
        """(u, None): the torques held at the time ``t`` (a CasADi expression), as :meth:`__call__`; they read
        neither ``measured`` nor ``a`` (the loop's measurements and parameters, for the other controllers)."""
        u = ca.DM(self.switches[0][1])
        for time, torques in self.switches[1:]:
            u = ca.if_else(t + 1e-12 >= time, ca.DM(torques), u)
        return u, None

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

    @property
    def parameters(self) -> dict[str, float]:
        """The gains (``controller.kp``) and the reference's numbers (``reference.radius``), in that order."""
        gains = {f"controller.{name}": float(value) for name, value in zip(self.law.gains, self.gains)}
        return gains | {f"reference.{name}": value for name, value in self.reference.parameters.items()}

    def problems(self, values: dict) -> list[str]:
        """What is wrong with new ``values`` of :attr:`parameters` (by name): a gain must be a finite number, a
        reference's number what its table's key allows (``controller.reference.radius must be > 0``)."""
        problems: list[str] = []
        prefix = "reference."
        for name, value in values.items():
            if not name.startswith(prefix) and not (isinstance(value, (int, float)) and math.isfinite(value)):
                problems.append(f"{name} must be a finite number, got {value!r}")
        references = {name.removeprefix(prefix): value for name, value in values.items() if name.startswith(prefix)}
        return problems + self.reference.problems(references, "controller.reference")

    def expression(self, t, measured, a):
        """(u, theta_d): the law's torques and the reference angles at the time ``t`` from the ``measured``
        outputs and the parameters ``a`` (CasADi expressions, ``a`` in the order of :attr:`parameters`);
        the reference must be a Profile (``flexfmu.control.profile``)."""
        count = len(self.law.gains)
        r = ca.vertcat(*self.reference.function(t, a[count:]))
        return self.law.function(measured, r, a[:count]), r[:len(self.law.torques)]

    def reference_sample(self, t: float) -> np.ndarray:
        """r = [theta_d; dtheta_d; ddtheta_d] at ``t``, remembered: every run of a cross-check asks for
        the same sample times."""
        if t not in self._samples:
            self._samples[t] = np.concatenate(self.reference(t))
        return self._samples[t]


@dataclass
class PrescribedInputs:
    """Open loop for an arm with prescribed joints: their motion from a
    profile (the reference the harness feeds to the prescribed inputs) and
    the torques of the other joints held as given, in the model's input order.

    Attributes
    ----------
    motion : callable
        t -> (angles, rates, accelerations), one entry per prescribed joint in joint order.
    torques : HeldInputs
        The torque-driven joints' torques.
    outputs : list of str
        The model's inputs, in u order.
    sources : list of (str, int)
        For each input, its group (``flexfmu.dynamics.metadata``) and its position within that group.
    """

    motion: object
    torques: HeldInputs
    outputs: list[str]
    sources: list[tuple[str, int]]
    inputs: list[str] = field(default_factory=list)
    open_loop = True

    @classmethod
    def for_model(cls, model, motion, torques: HeldInputs) -> PrescribedInputs:
        """The inputs of ``model`` from the prescribed ``motion`` (t -> (angles, rates, accelerations))
        and the held ``torques``; which input is which comes from the input records' groups."""
        seen: dict[str, int] = {}
        sources = []
        for signal in model.input_table:
            sources.append((signal.group, seen.get(signal.group, 0)))
            seen[signal.group] = seen.get(signal.group, 0) + 1
        return cls(motion, torques, list(model.inputs), sources)

    def __call__(self, t: float, measured: np.ndarray | None = None) -> np.ndarray:
        return np.array(self._inputs(self.motion(t), self.torques(t)), float)

    def _inputs(self, motion, torques) -> list:
        """u in the model's input order from the ``motion`` (angles, rates, accelerations) and the held
        ``torques``, numbers or CasADi expressions."""
        angles, rates, accelerations = motion
        values = {md.TORQUE: torques, md.PRESCRIBED_ANGLE: angles, md.PRESCRIBED_RATE: rates,
                  md.PRESCRIBED_ACCELERATION: accelerations}
        return [values[group][k] for group, k in self.sources]

    @property
    def parameters(self) -> dict[str, float]:
        """The motion's numbers (``motion.w0``)."""
        return {f"motion.{name}": value for name, value in self.motion.parameters.items()}

    def problems(self, values: dict) -> list[str]:
        """What is wrong with new ``values`` of :attr:`parameters` (by name), as the ``[motion]`` table's keys
        check them."""
        return self.motion.problems({name.removeprefix("motion."): value for name, value in values.items()}, "motion")

    def expression(self, t, measured, a):
        """(u, None) at the time ``t`` (a CasADi expression) with the motion's parameters ``a``; the motion
        must be a Profile (``flexfmu.control.profile``); ``measured`` is not read (the motion is open loop)."""
        torques, _ = self.torques.expression(t, measured, a)
        return ca.vertcat(*self._inputs(self.motion.function(t, a), torques)), None


@dataclass(frozen=True)
class ControllerKind:
    """One kind of controller a scenario's ``[controller]`` table may name.

    Attributes
    ----------
    name : str
        The ``kind``.
    summary : str
        One line for docs and messages.
    keys : tuple of Key
        The other keys of the table (``reference`` aside).
    gains : tuple of str
        Which keys are gains (overridable per run, tunable).
    follows_reference : bool
        Whether it closes the loop on a ``[controller.reference]`` (a control law) or holds given torques.
    fits : callable
        (model, values) -> None when it can drive the arm of ``model`` with the checked ``values``, else why not.
    """

    name: str
    summary: str
    keys: tuple[Key, ...]
    gains: tuple[str, ...]
    follows_reference: bool
    fits: Callable


def _law_fits(law: LawKind, model, values) -> str | None:
    prescribed = model.inputs_of(md.PRESCRIBED_ANGLE)
    if prescribed:
        return (f"control laws drive joint torques; arm {model.arm.name!r} has prescribed joints "
                f"({', '.join(prescribed)}): use controller.kind = \"held\"")
    return law.fits(model, values)


HELD = ControllerKind(
    "held", "switched joint torques, each held until the next switch (open loop)",
    (Key("switches", "schedule", "[time, [torque per joint]] pairs, each held until the next", "N.m",
         per_joint=True),),
    (), False, lambda model, values: None)

CONTROLLERS: dict[str, ControllerKind] = {row.name: row for row in (HELD, *(
    ControllerKind(law.name, law.summary, law.keys, law.gains, True, partial(_law_fits, law))
    for law in LAWS.values()))}
