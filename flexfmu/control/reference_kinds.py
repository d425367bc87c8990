"""The table of scenario references: what ``[controller.reference]`` may name, its keys, and what it builds.

A closed-loop scenario's controller tracks a reference, t -> (theta_d,
dtheta_d, ddtheta_d) of the arm's joints. Its ``kind`` picks a row of
:data:`REFERENCES`; the row declares the keys its table takes (checked when
the scenario loads, :mod:`flexfmu.spec.keys`), says what an arm must offer
to follow it (read from the Model's metadata, not from its kind) and builds
the reference for a Model. Joint-space references (``quintic``) fit any arm
with joint torques; task-space ones go through an inverse kinematics: the
planar two-link tip (``circle``) or a Delta robot's platform
(``platform_circle``, ``inverted_u``). Each arm kind lists the references
its scenarios may use (``flexfmu.kinds``).

Adding a reference: its function in :mod:`flexfmu.control.references`, one
row here, and the row in the references of the kinds that can follow it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flexfmu.control.profile import Profile, profile
from flexfmu.control.references import (
    circle_angles,
    circle_reach,
    inverted_u_expression,
    platform_circle,
    quintic_angles,
)
from flexfmu.dynamics.metadata import PLATFORM_POSITION, TIP_POSITION, TORQUE
from flexfmu.spec.keys import Key, check_row


@dataclass(frozen=True)
class ReferenceKind:
    """One kind of reference.

    Attributes
    ----------
    name : str
        The ``kind`` of a ``[controller.reference]`` table.
    summary : str
        One line for docs and messages.
    keys : tuple of Key
        The other keys of its table.
    fits : callable
        (model) -> None when the arm of ``model`` can follow it, else why not (one phrase).
    build : callable
        (values, model) -> the reference t -> (theta_d, dtheta_d, ddtheta_d) as a Profile
        (:mod:`flexfmu.control.profile`), from the table's checked ``values`` ({key: value}) for ``model``;
        its numbers are the profile's parameters.
    move_end : callable, optional
        (values) -> the time (s) from which the reference holds still: the end of a move, after which a
        closed loop settles; None for a reference that keeps moving (a circle).
    """

    name: str
    summary: str
    keys: tuple[Key, ...]
    fits: Callable
    build: Callable
    move_end: Callable | None = None

    def __post_init__(self):
        check_row("REFERENCES", self.name, self.keys, fits=self.fits, build=self.build)

    def reference(self, values: dict, model) -> Profile:
        """The reference of the checked table ``values`` for ``model``: :attr:`build`'s Profile with this row's
        keys attached, whose bounds check new values of its parameters (a sweep's)."""
        return self.build(values, model).checked_by(self.keys)


def delta_dimensions(model):
    """The Dimensions of a Delta robot's ``model`` at its nominal values."""
    from flexfmu.dynamics.delta.kinematics import Dimensions

    values = model.parameters
    return Dimensions(*(values[name] for name in ("base.radius", "platform.radius", "upper.length", "lower.length")))


def delta_kinematics(model):
    """The DeltaKinematics of a Delta robot's ``model`` at its nominal dimensions."""
    from flexfmu.dynamics.delta.kinematics import DeltaKinematics

    return DeltaKinematics(delta_dimensions(model))


def _torque_driven(model) -> str | None:
    return None if model.inputs_of(TORQUE) else "the arm has no torque-driven joint"


def _planar_two_link(model) -> str | None:
    joints, tip = len(model.inputs_of(TORQUE)), len(model.outputs_of(TIP_POSITION))
    if joints == 2 and tip == 2 and len(model.inputs) == 2:
        return None
    return (f"the circle reference is the inverse kinematics of a planar two-link arm; arm {model.arm.name!r} has "
            f"{len(model.inputs)} joints and a tip in {tip} dimensions")


def _platform(model) -> str | None:
    if model.outputs_of(PLATFORM_POSITION):
        return None
    return f"a platform path needs a Delta robot; arm {model.arm.name!r} has no platform"


def _circle(values: dict, model):
    lengths = [model.parameters[f"link[{j}].length"] for j in (1, 2)]
    reference = profile(values, "the circle reference",
                        lambda t, v: circle_angles(t, v["center"], v["radius"], v["frequency"], lengths))
    return reference.explained_by(lambda t: circle_reach(t, values["center"], values["radius"], values["frequency"],
                                                         lengths))


def _quintic(values: dict, model):
    return profile(values, "the quintic reference", lambda t, v: quintic_angles(t, v["start"], v["goal"],
                                                                                v["move_time"]))


def _platform_profile(values: dict, model, what: str, path) -> Profile:
    """The Profile of the motor angles of a Delta robot's platform on ``path`` (t, values -> P), by inverse
    kinematics; where it is not finite, the robot's kinematics say which chain cannot reach the point."""
    from flexfmu.dynamics.delta.kinematics import KinematicsError, inverse_kinematics

    dims = delta_dimensions(model)

    def explain(t: float) -> str | None:
        try:
            delta_kinematics(model).inverse(path(t, values))
        except KinematicsError as error:
            return f"{what} at t = {t:g} s: {error}"
        return None

    return profile(values, what, lambda t, v: inverse_kinematics(path(t, v), dims)).explained_by(explain)


def _platform_circle(values: dict, model):
    return _platform_profile(values, model, "the platform circle reference",
                             lambda t, v: platform_circle(t, v["center"], v["radius"], v["frequency"]))


def _inverted_u(values: dict, model):
    return _platform_profile(values, model, "the inverted-U reference",
                             lambda t, v: inverted_u_expression(t, v["start"], v["travel"], v["times"]))


def _circle_keys(axes: str) -> tuple[Key, ...]:
    """The keys of a circle whose centre has the coordinates ``axes``."""
    return (Key("center", "vector", f"the circle's centre ({', '.join(axes)}) in the base frame", "m", size=len(axes)),
            Key("radius", "number", "the circle's radius", "m", gt=0),
            Key("frequency", "number", "revolutions per second", "Hz", gt=0))


CIRCLE = ReferenceKind(
    "circle", "the tip of a planar two-link arm on a circle, by rigid inverse kinematics (paper 000)",
    _circle_keys("xy"), _planar_two_link, _circle)
QUINTIC = ReferenceKind(
    "quintic", "a rest-to-rest quintic in joint space, held after the move (paper 004)",
    (Key("start", "numbers", "joint angles at t = 0", "rad", per_joint=True),
     Key("goal", "numbers", "joint angles from the move time on", "rad", per_joint=True),
     Key("move_time", "number", "the move time", "s", gt=0)),
    _torque_driven, _quintic, move_end=lambda values: values["move_time"])
PLATFORM_CIRCLE = ReferenceKind(
    "platform_circle", "a Delta robot's platform on a horizontal circle, by inverse kinematics (paper 003)",
    _circle_keys("xyz"), _platform, _platform_circle)
INVERTED_U = ReferenceKind(
    "inverted_u", "a Delta robot's pick-and-place: the platform on paper 003's inverted U, septic blends",
    (Key("start", "vector", "the platform's start (x, y, z)", "m", size=3),
     Key("travel", "vector", "the move (dx, dy, dz): x and y across, z up and back", "m", size=3),
     Key("times", "vector", "the set-point times t0, t1, t2, t3, tf", "s", size=5, ge=0, increasing=True)),
    _platform, _inverted_u, move_end=lambda values: values["times"][-1])

REFERENCES: dict[str, ReferenceKind] = {row.name: row for row in (CIRCLE, QUINTIC, PLATFORM_CIRCLE, INVERTED_U)}
