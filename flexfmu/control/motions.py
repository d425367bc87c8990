"""The table of motion profiles: what a scenario's ``[motion]`` table may name for prescribed joints.

An arm with prescribed joints (their angle, rate and acceleration are
inputs, ``docs/spec.md``) runs a scenario whose ``[motion]`` table names a
profile of :data:`MOTIONS` by its ``kind``. The row declares the profile's
keys (checked when the scenario loads, :mod:`flexfmu.spec.keys`; a sweep or
``--motion`` may replace them) and builds t -> (angles, rates,
accelerations) for the prescribed joints, every one following the same
profile.

Adding a profile: its function in :mod:`flexfmu.control.references` and one
row here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flexfmu.control.profile import Profile
from flexfmu.control.references import spinup_reference
from flexfmu.spec.keys import Key, check_row


@dataclass(frozen=True)
class MotionProfile:
    """One motion profile.

    Attributes
    ----------
    name : str
        The ``kind`` of a ``[motion]`` table.
    summary : str
        One line for docs and messages.
    keys : tuple of Key
        The other keys of its table (numbers a sweep may vary).
    build : callable
        (values, joints) -> t -> (angles, rates, accelerations) of ``joints`` prescribed joints as a Profile
        (:mod:`flexfmu.control.profile`), from the table's ``values`` ({key: value}), its parameters.
    """

    name: str
    summary: str
    keys: tuple[Key, ...]
    build: Callable

    def __post_init__(self):
        check_row("MOTIONS", self.name, self.keys, build=self.build)

    def motion(self, values: dict, joints: int) -> Profile:
        """The motion of ``joints`` prescribed joints from the checked table ``values``: :attr:`build`'s Profile
        with this row's keys attached, whose bounds check new values of its parameters (a sweep's)."""
        return self.build(values, joints).checked_by(self.keys)


def _spinup(values: dict, joints: int):
    return spinup_reference(values["w0"], values["ramp_time"], joints)


SPINUP = MotionProfile(
    "spinup", "paper 001's spin-up: the rate rises smoothly from 0 to w0 over the ramp time, then holds",
    (Key("w0", "number", "the final rate", "rad/s", gt=0), Key("ramp_time", "number", "the ramp time", "s", gt=0)),
    _spinup)

MOTIONS: dict[str, MotionProfile] = {row.name: row for row in (SPINUP,)}
