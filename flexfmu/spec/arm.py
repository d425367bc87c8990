"""Plain-data description of a planar manipulator.

These dataclasses are what an arm specification (TOML) loads into. They hold
numbers and names only, import no CasADi, and are cheap to build, so the CLI,
the harness and MATLAB tooling can read arms without building any dynamics.

Conventions (see ``docs/spec.md``): SI units, angles in rad, links are
numbered from 1 at the base, joint ``j`` drives link ``j``, positions along a
link are given as ``xi = x / L`` in ``[0, 1]`` measured from the link's root.
"""

from __future__ import annotations

from dataclasses import dataclass, field

JOINT_KINDS = ("rigid", "flexible")
FRAMES = ("tangent", "chord")  # the link frames a mode family may use


@dataclass(frozen=True)
class Modes:
    """Assumed-mode discretisation of one flexible link.

    ``damping`` holds one value per mode: a modal damping ratio (``ratio``) or
    a modal damping coefficient in N s/m (``coefficient``). ``shapes`` holds
    the sympy expressions in ``xi`` of a ``user`` family. ``tip_mass`` and
    ``tip_inertia`` override the distal load used by the ``clamped-mass``
    frequency equation; ``None`` means "compute from everything distal".
    ``frame`` is the link frame of a ``user`` family: ``tangent`` (x along the
    root tangent, shapes need phi(0) = phi'(0) = 0) or ``chord`` (x through
    both ends, shapes need phi(0) = phi(1) = 0); other families imply theirs.
    """

    family: str
    count: int
    damping_kind: str = "ratio"
    damping: tuple[float, ...] = ()
    shapes: tuple[str, ...] = ()
    tip_mass: float | None = None
    tip_inertia: float | None = None
    frame: str | None = None


@dataclass(frozen=True)
class Joint:
    """Revolute joint at the root of a link.

    A ``rigid`` joint has one coordinate, the joint angle. A ``flexible`` joint
    adds the rotor angle (link side of the gear) as a coordinate, joined to the
    link by a torsional spring ``stiffness`` with damping ``spring_damping``.
    The rotor's reflected inertia is ``gear_ratio**2 * rotor_inertia``.
    Friction acts on the motor side (rotor angle for a flexible joint, joint
    angle for a rigid one): ``viscous_friction * rate`` plus
    ``coulomb_friction * tanh(rate / coulomb_velocity)``.
    A ``prescribed`` joint (rigid only) is driven by its motion: its angle,
    rate and acceleration are inputs of the model and its torque an output,
    as a position-controlled servo or a spin-up test rig drives it.
    ``start_angle`` is the joint's angle in the arm's start pose, where its
    FMU starts at rest (the static equilibrium there).
    """

    kind: str = "rigid"
    stiffness: float = 0.0
    spring_damping: float = 0.0
    rotor_inertia: float = 0.0
    gear_ratio: float = 1.0
    viscous_friction: float = 0.0
    coulomb_friction: float = 0.0
    coulomb_velocity: float = 0.01
    start_angle: float = 0.0
    prescribed: bool = False


@dataclass(frozen=True)
class RigidLink:
    """Rigid link: distal joint at ``(length, 0)`` in the link frame,
    centre of mass at ``com`` (m, link frame), rotary inertia ``inertia``
    about the centre of mass (kg m^2)."""

    length: float
    mass: float
    com: tuple[float, float]
    inertia: float
    joint: Joint = field(default_factory=Joint)

    kind = "rigid"


@dataclass(frozen=True)
class FlexibleLink:
    """Uniform Euler-Bernoulli beam of ``length`` (m), ``mass_per_length``
    (kg/m) and bending stiffness ``EI`` (N m^2), discretised by ``modes``.
    ``geometric_stiffening`` keeps the foreshortening of the bent beam (second
    order in the deflection), which stiffens a link under centrifugal or
    axial load; without it a link spun above its first bending frequency
    diverges (``docs/dynamics.md``)."""

    length: float
    mass_per_length: float
    EI: float
    modes: Modes
    joint: Joint = field(default_factory=Joint)
    geometric_stiffening: bool = True

    kind = "flexible"


@dataclass(frozen=True)
class LumpedMass:
    """Point mass with rotary inertia on link ``link`` (1-based) at
    ``position`` = x / L (0 at the link's root, 1 at its tip)."""

    link: int
    position: float
    mass: float
    inertia: float = 0.0


@dataclass(frozen=True)
class Payload:
    """Mass and rotary inertia carried at the tip of the last link."""

    mass: float = 0.0
    inertia: float = 0.0


@dataclass(frozen=True)
class Arm:
    """A planar serial manipulator.

    ``gravity`` is the gravity vector in the plane of motion (m/s^2, base
    frame): ``(0, -9.81)`` for an arm moving in a vertical plane with y up,
    ``(0, 0)`` for a horizontal-plane arm.
    """

    kind = "planar"

    name: str
    links: tuple[RigidLink | FlexibleLink, ...]
    description: str = ""
    lumped_masses: tuple[LumpedMass, ...] = ()
    payload: Payload = field(default_factory=Payload)
    gravity: tuple[float, float] = (0.0, 0.0)
