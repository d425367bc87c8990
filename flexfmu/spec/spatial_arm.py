"""Plain-data description of a spatial (3-D) manipulator.

What a ``kind = "spatial"`` specification loads into (see ``docs/spec.md``).
Like the planar dataclasses these hold numbers and names only.

Frames: every link has a frame at its root, x along the link (the neutral
axis of a flexible link), y and z across it. Joint ``j`` sits at ``offset``
in the distal frame of link ``j-1`` (the base frame for link 1) and turns
link ``j`` about ``axis`` (a unit vector in that distal frame) by the angle
``theta[j]``; at ``theta[j] = 0`` link ``j``'s frame is the distal frame
turned by the rotation vector ``rotation``. The distal frame of a rigid link
is its frame moved to ``(length, 0, 0)``; that of a flexible link sits at the
deflected tip and, for tangent-framed bending, turns with the tip slopes and
the tip twist.

A flexible link deforms in up to four ways, each with its own modes:
``bending_y`` (deflection v along y, bending stiffness EI about z),
``bending_z`` (deflection w along z, EI about y), ``torsion`` (twist about x,
stiffness GJ) and ``axial`` (stretch along x, stiffness EA).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flexfmu.spec.arm import Joint, Modes

DEFORMATIONS = ("bending_y", "bending_z", "torsion", "axial")
BENDING = ("bending_y", "bending_z")
CONDENSABLE = ("torsion", "axial")  # deformations that may be declared quasi-static
ROD_FAMILIES = ("clamped-free",)  # torsion and axial: fixed-free rod eigenfunctions

ZERO3 = (0.0, 0.0, 0.0)
ZERO33 = (ZERO3, ZERO3, ZERO3)


@dataclass(frozen=True)
class SpatialJoint(Joint):
    """A revolute joint of a spatial arm: the planar joint's fields (kind,
    spring, rotor, gear, friction) plus where it sits and what it turns about.

    ``axis`` is a unit 3-vector and ``offset`` a position (m), both in the
    parent's distal frame; ``rotation`` is the rotation vector (rad) of the
    link frame relative to that frame at zero joint angle. ``quasi_static``
    (flexible joints only) makes the spring's deflection follow its static
    equilibrium instead of being a coordinate (docs/spatial.md).
    """

    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    offset: tuple[float, float, float] = ZERO3
    rotation: tuple[float, float, float] = ZERO3
    quasi_static: bool = False


@dataclass(frozen=True)
class Deformation:
    """One way a flexible link deforms: ``kind`` (one of :data:`DEFORMATIONS`),
    its ``stiffness`` (EI in N m^2 for bending, GJ in N m^2 for torsion, EA in
    N for axial) and its ``modes``. ``quasi_static`` (torsion and axial only):
    True makes the deformation follow its static equilibrium instead of being
    a coordinate, False keeps it dynamic, None (not given) leaves the choice to
    the default rule (docs/spatial.md)."""

    kind: str
    stiffness: float
    modes: Modes
    quasi_static: bool | None = None


@dataclass(frozen=True)
class SpatialRigidLink:
    """Rigid link: distal joint at ``(length, 0, 0)`` (``length`` may be 0),
    centre of mass ``com`` (m, link frame), inertia tensor ``inertia`` about
    the centre of mass in link axes (kg m^2, symmetric 3 x 3)."""

    length: float
    mass: float
    com: tuple[float, float, float]
    inertia: tuple[tuple[float, float, float], ...]
    joint: SpatialJoint = field(default_factory=SpatialJoint)

    kind = "rigid"


@dataclass(frozen=True)
class SpatialFlexibleLink:
    """Uniform beam of ``length`` (m) and ``mass_per_length`` (kg/m) along the
    link's x axis. ``polar_inertia_per_length`` (kg m, rho Ip) is the cross
    section's inertia about the axis, which a roll joint turns and torsion
    twists. ``deformations`` holds a :class:`Deformation` for each way it
    deforms, in the order of :data:`DEFORMATIONS`. ``geometric_stiffening`` keeps the
    foreshortening of the bent beam (second order in the bending deflections),
    which makes a spinning link stiffen."""

    length: float
    mass_per_length: float
    polar_inertia_per_length: float
    deformations: tuple[Deformation, ...]
    geometric_stiffening: bool = True
    joint: SpatialJoint = field(default_factory=SpatialJoint)

    kind = "flexible"

    def deformation(self, kind: str) -> Deformation | None:
        """The :class:`Deformation` of ``kind``, None if the link does not model it."""
        return next((d for d in self.deformations if d.kind == kind), None)

    def count(self, kind: str) -> int:
        """Number of modes of the deformation ``kind`` (0 if the link does not model it)."""
        entry = self.deformation(kind)
        return entry.modes.count if entry is not None else 0


@dataclass(frozen=True)
class SpatialLumpedMass:
    """Point mass on link ``link`` (1-based) at ``position`` = x / L, with an
    inertia tensor ``inertia`` (kg m^2, link axes) that turns with the local
    slopes and twist."""

    link: int
    position: float
    mass: float
    inertia: tuple[tuple[float, float, float], ...] = ZERO33


@dataclass(frozen=True)
class SpatialPayload:
    """Mass and inertia tensor (about the tip, link axes) carried at the tip of the last link."""

    mass: float = 0.0
    inertia: tuple[tuple[float, float, float], ...] = ZERO33


@dataclass(frozen=True)
class SpatialArm:
    """A spatial serial manipulator; ``gravity`` is a 3-vector in the base frame (m/s^2)."""

    kind = "spatial"

    name: str
    links: tuple[SpatialRigidLink | SpatialFlexibleLink, ...]
    description: str = ""
    lumped_masses: tuple[SpatialLumpedMass, ...] = ()
    payload: SpatialPayload = field(default_factory=SpatialPayload)
    gravity: tuple[float, float, float] = ZERO3
