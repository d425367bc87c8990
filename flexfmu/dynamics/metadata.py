"""What a Model's vectors hold, as data: coordinates, inputs, outputs, parameters.

Everything outside ``flexfmu/dynamics`` learns the structure of an arm from
these records (which coordinates are joint angles, rotor angles or modes,
which outputs are encoders, deflections or the tip, which parameters may
change while running, and every unit), never by reading names. Names follow
the FMI structured naming convention and are for people and files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flexfmu.spec.ranges import Range

COORDINATE_KINDS = ("joint", "rotor", "modal", "elastic")  # elastic: finite-element global variables (Delta)

# Output groups, in the order the planar chain lists them.
JOINT_ANGLE, JOINT_RATE = "joint_angle", "joint_rate"      # encoders on the joints
MOTOR_ANGLE, MOTOR_RATE = "motor_angle", "motor_rate"      # encoders on the rotors of flexible joints
MODE, MODE_RATE = "mode", "mode_rate"                      # modal coordinates and rates
LINK_TIP = "link_tip"                                      # every link's deflected tip
DEFLECTION = "deflection"                                  # each flexible link's tip deflection
TIP_POSITION, TIP_VELOCITY, TIP_ACCELERATION = "tip_position", "tip_velocity", "tip_acceleration"
# parallel robots (the Delta): the platform's position and (small) orientation, and their
# elastic deviation from the rigid robot's pose
PLATFORM_POSITION, PLATFORM_ORIENTATION = "platform_position", "platform_orientation"
ELASTIC_DEVIATION = "elastic_deviation"
TWIST, STRETCH = "twist", "stretch"                        # spatial links: tip torsion angle, tip axial displacement
ENVELOPE = "envelope"            # quantities bounded by the model's validity (a Signal.limit each)
ENVELOPE_FLAG = "envelope_flag"  # 1 while any envelope quantity is beyond its limit, else 0
OUTPUT_GROUPS = (JOINT_ANGLE, JOINT_RATE, MOTOR_ANGLE, MOTOR_RATE, MODE, MODE_RATE, LINK_TIP, DEFLECTION,
                 TIP_POSITION, TIP_VELOCITY, TIP_ACCELERATION, TWIST, STRETCH, PLATFORM_POSITION,
                 PLATFORM_ORIENTATION, ELASTIC_DEVIATION, ENVELOPE, ENVELOPE_FLAG)
ENCODERS = {"joint": (JOINT_ANGLE, JOINT_RATE), "motor": (MOTOR_ANGLE, MOTOR_RATE)}

# Input groups: a joint is driven by its torque, or by a prescribed motion
# (its angle, rate and acceleration are inputs; its torque is an output).
TORQUE = "torque"
PRESCRIBED_ANGLE, PRESCRIBED_RATE = "prescribed_angle", "prescribed_rate"
PRESCRIBED_ACCELERATION = "prescribed_acceleration"
PRESCRIBED = (PRESCRIBED_ANGLE, PRESCRIBED_RATE, PRESCRIBED_ACCELERATION)
INPUT_GROUPS = (TORQUE, *PRESCRIBED)
JOINT_TORQUE = "joint_torque"  # output: the torque a prescribed joint applies (the outputs' last group)
OUTPUT_GROUPS += (JOINT_TORQUE,)


@dataclass(frozen=True)
class Coordinate:
    """One entry of q.

    Attributes
    ----------
    name : str
        ``theta[j]``, ``alpha[j]`` or ``f[i,k]``.
    kind : str
        ``"joint"`` (joint angle), ``"rotor"`` (rotor angle of a flexible
        joint, link side of the gear), ``"modal"`` (modal coordinate) or
        ``"elastic"`` (a finite-element global variable of a Delta robot:
        a nodal value, a joint rotation or the platform's small motion).
    link : int
        The 1-based link (and joint) the coordinate belongs to; for a Delta
        robot the chain (0 for the platform).
    unit : str
        ``"rad"`` or ``"m"``; an elastic nodal slope is ``"1"``, a curvature
        ``"1/m"``, a twist rate ``"rad/m"``.
    mode : int or None
        The 1-based mode number of a modal coordinate.
    prescribed : bool
        True for the angle of a prescribed joint: an input of the model,
        not a state (its rate and acceleration are inputs too).
    """

    name: str
    kind: str
    link: int
    unit: str
    mode: int | None = None
    prescribed: bool = False


@dataclass(frozen=True)
class Signal:
    """One input or output.

    Attributes
    ----------
    name : str
        ``tau[1]``, ``joint[1].angle``, ``tip.x``, ...
    unit : str
    group : str
        What it measures or drives (the constants of this module: output
        groups, and for inputs ``torque`` or one of :data:`PRESCRIBED`); the
        members of a group are listed in link order.
    description : str
    link : int or None
        The 1-based link (or joint) it belongs to, if any.
    limit : str or None
        For an envelope quantity: the name of the parameter that bounds its magnitude (the model is valid
        while ``|value| <= limit``); None otherwise.
    """

    name: str
    unit: str
    group: str
    description: str
    link: int | None = None
    limit: str | None = None


@dataclass(frozen=True)
class Parameter:
    """One entry of p.

    Attributes
    ----------
    name : str
        Structured name, e.g. ``link[2].EI``.
    value : float
        Nominal value.
    unit : str
    description : str
    tunable : bool
        True when it may change while the model runs (masses, stiffnesses,
        friction, gravity); False for geometry (lengths, positions, centres
        of mass), which would move bodies discontinuously.
    range : Range or None
        The physical range of its values, as the arm file's number it comes from is checked
        (:mod:`flexfmu.spec.ranges`); values set on a Model (a sweep's points) are checked against it, and a
        fit (``flexfmu identify``) stays within it.
    field : str or None
        Where the arm file sets it, as a field path of ``docs/spec.md``
        (``link[1].EI``, ``link[2].modes.damping_ratio[1]``,
        ``link[1].joint.viscous_friction``, ``gravity[2]``): what a
        calibrated arm file rewrites (``flexfmu.spec.write``). None when
        the file has no single field for it.
    """

    name: str
    value: float
    unit: str
    description: str
    tunable: bool = True
    range: Range | None = None
    field: str | None = None

    def problem(self, value) -> str | None:
        """Why ``value`` cannot be this parameter's (not a finite number, or outside its range), or None."""
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"{self.name} must be a finite number, got {value!r}"
        allowed = self.range
        if allowed is not None and not allowed.low <= value <= allowed.high:
            return (f"{self.name} = {value:g} {self.unit} is not {allowed.text()} {allowed.unit} (the range of "
                    f"{allowed.applies}: {allowed.reason})")
        return None


@dataclass(frozen=True)
class ReducedBody:
    """One flexible body of a reduced Model (each of a Delta robot's upper links, say), as data.

    Attributes
    ----------
    body : str
        What it is (``upper link``).
    interface : int
        The interface values kept as coordinates (the joints' displacements and rotations).
    modes : tuple
        (field, frequency rad/s, kept) of every fixed-interface mode, lowest first: kept ones are coordinates,
        dropped ones are left out (their static response stays, through the interface's constraint modes).
    """

    body: str
    interface: int
    modes: tuple[tuple[str, float, bool], ...]


@dataclass(frozen=True)
class ReductionSummary:
    """How a Model's flexible bodies were reduced: ``method`` (``craig-bampton`` or ``none``), a
    ``description`` for people, and each body's :class:`ReducedBody`."""

    method: str
    description: str
    bodies: tuple[ReducedBody, ...]
