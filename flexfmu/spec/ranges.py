"""Physical ranges of the planar spec's numbers and sizes, each with its reason.

Every number of an arm file is checked against a range: a value outside it
is a typing slip or a unit mistake (a length in mm, a stiffness in N mm), and
at the extremes the model's products (L^4, G^2 Ir, m L^2) leave the range in
which double precision keeps an arm's mass matrix positive definite. The
ranges are wide enough for anything from a millimetre micro-manipulator to a
space arm moving a shuttle-sized payload. ``docs/spec.md`` prints this table
(its block runs :func:`table`), so the documentation cannot drift from it.

The sizes are bounded for time: building the Model grows as the cube of the
number of coordinates (measured: 100 rigid links 1.8 s, 200 links 16 s, 400
links 160 s) and compiling an FMU as the size of the generated C (an arm of
120 coordinates takes about 90 s), so a larger arm is refused up front.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """Allowed values of one kind of number: ``low <= value <= high``, in ``unit``, for the keys
    ``applies`` lists, because of ``reason``."""

    low: float
    high: float
    unit: str
    applies: str
    reason: str

    @property
    def bounds(self) -> dict:
        """The keyword bounds of :func:`flexfmu.spec.checks.number`."""
        return {"ge": self.low, "le": self.high}

    def text(self) -> str:
        """The range as written in messages and docs: "in [0.001, 100]"."""
        return f"in [{self.low:g}, {self.high:g}]"


RANGES = {
    "length": Range(1e-3, 100.0, "m", "link `length`",
                    "a millimetre micro-manipulator to a 100 m boom (space arms are under 20 m)"),
    "mass": Range(1e-6, 1e6, "kg", "link `mass`", "a milligram to a thousand tonnes"),
    "added_mass": Range(0.0, 1e6, "kg", "`lumped_mass.mass`, `payload.mass`, `modes.tip_mass`",
                        "none to a thousand tonnes (a space arm's payload is about 100 t)"),
    "mass_per_length": Range(1e-6, 1e5, "kg/m", "`mass_per_length`, also as `mass / length`",
                             "a thread to a solid steel bar 4 m across"),
    "EI": Range(1e-6, 1e12, "N.m2", "`EI`, also as `E * I`", "a thin plastic strip to a bridge girder"),
    "E": Range(1e3, 1e13, "Pa", "`E`", "a soft gel to ten times diamond"),
    "I": Range(1e-24, 1.0, "m4", "`I`", "a 10 um fibre to a beam a metre deep"),
    "inertia": Range(1e-15, 1e8, "kg.m2", "rigid link `inertia`",
                     "a rigid body's own inertia is positive (m L^2/12 of the smallest link is 8e-14) and at most "
                     "that of a 100 m link of 1000 t"),
    "added_inertia": Range(0.0, 1e8, "kg.m2", "`lumped_mass.inertia`, `payload.inertia`, `modes.tip_inertia`",
                           "none to the largest link's"),
    "com": Range(-10.0, 10.0, "link lengths", "each component of `com`",
                 "within ten link lengths of the joint: counterweights and offsets, not typing slips"),
    "gravity": Range(-1e3, 1e3, "m/s2", "each component of `gravity`", "up to 100 g (centrifuge tests)"),
    "stiffness": Range(1e-3, 1e9, "N.m/rad", "`joint.stiffness`",
                       "a rubber coupling to beyond the stiffest harmonic drives"),
    "spring_damping": Range(0.0, 1e6, "N.m.s/rad", "`joint.spring_damping`", "none to far beyond critical"),
    "rotor_inertia": Range(0.0, 1e3, "kg.m2", "`joint.rotor_inertia` (rigid joint)",
                           "no rotor to a large motor with a flywheel"),
    "flexible_rotor_inertia": Range(1e-12, 1e3, "kg.m2", "`joint.rotor_inertia` (flexible joint)",
                                    "the rotor angle is a coordinate, so its inertia must be positive"),
    "gear_ratio": Range(1e-2, 1e4, "1", "`joint.gear_ratio`", "a 1:100 speed-up to a four-stage 10000:1 reduction"),
    "viscous_friction": Range(0.0, 1e6, "N.m.s/rad", "`joint.viscous_friction`", "none to a joint that barely moves"),
    "coulomb_friction": Range(0.0, 1e6, "N.m", "`joint.coulomb_friction`", "none to the largest brakes"),
    "coulomb_velocity": Range(1e-6, 1e3, "rad/s", "`joint.coulomb_velocity`",
                              "a sharp switch (a stiff ODE, small steps) to a gentle one"),
    "damping_coefficient": Range(0.0, 1e6, "N.s/m", "`modes.damping_coefficient`", "none to far beyond critical"),
    "start_angle": Range(-2 * math.pi, 2 * math.pi, "rad", "`joint.start_angle`", "at most a turn either way"),
}
# spatial arms (kind = "spatial") use the ranges above for the keys they share and these for their own
RANGES.update({
    "rigid_length": Range(0.0, 100.0, "m", "spatial rigid link `length`",
                          "0 for a body that only turns (a wrist roll) to a 100 m boom"),
    "polar_inertia_per_length": Range(0.0, 1e6, "kg.m", "`polar_inertia_per_length` (rho Ip)",
                                      "none to a solid steel bar 4 m across (2e5)"),
    "GJ": Range(1e-6, 1e12, "N.m2", "`torsion.GJ`", "as `EI`: a thin plastic strip to a bridge girder"),
    "EA": Range(1e-3, 1e13, "N", "`axial.EA`", "a thread (E A about 10 N) to a solid steel bar 4 m across (2.5e12)"),
    "tensor_entry": Range(-1e8, 1e8, "kg.m2", "each entry of a spatial `inertia` tensor",
                          "at most the largest link's inertia (the tensor must also be physical)"),
    "offset": Range(-100.0, 100.0, "m", "each component of `joint.offset`", "within the largest link's length"),
    "rotation": Range(-10.0, 10.0, "rad", "each component of `joint.rotation`",
                      "a rotation vector longer than pi repeats a shorter one; beyond 10 rad is an angle in degrees"),
    "axis": Range(-1e3, 1e3, "1", "each component of `joint.axis` (normalised)",
                  "any direction; huge components are slips that would overflow the norm"),
})
# the Delta robot's numbers (kind = "delta", flexfmu.spec.delta)
DELTA_RANGES = {
    "radius": Range(1e-3, 100.0, "m", "`base_radius`, `platform_radius`", "as a link length"),
    "length": RANGES["length"],
    "section": Range(1e-5, 1.0, "m", "link `width`, `height`", "a 10 um wire to a beam a metre deep"),
    "density": Range(1.0, 1e5, "kg/m3", "link `density`", "a foam to three times osmium"),
    "modulus": Range(1e3, 1e13, "Pa", "link `E`, `G`", "as `E` of a planar link"),
    "mass": Range(1e-6, 1e6, "kg", "`platform.mass`", "as a link mass"),
    "inertia": RANGES["added_inertia"],
    "thickness": Range(1e-5, 10.0, "m", "`platform.thickness`", "a foil to a 10 m block"),
    "position": Range(-100.0, 100.0, "m", "each component of `home`", "within a 100 m robot's reach"),
    "gravity": RANGES["gravity"],
    "rotor_inertia": RANGES["rotor_inertia"],
    "gear_ratio": RANGES["gear_ratio"],
    "viscous_friction": RANGES["viscous_friction"],
    "alpha": Range(0.0, 1e4, "1/s", "`elements.rayleigh[1]` (alpha)", "none to critical damping at 5000 rad/s"),
    "beta": Range(0.0, 1.0, "s", "`elements.rayleigh[2]` (beta)", "none to critical damping at 2 rad/s"),
    "cutoff": Range(1.0, 1e8, "rad/s", "`elements.cutoff`", "below any link's first mode to above any element's"),
}
DAMPING_RATIO = Range(0.0, 1.0, "1", "`modes.damping_ratio`", "underdamped modes: 1 or more is no oscillation")
# numbers of a Model that no arm file holds directly: they get ranges of their own for the checks of values
# set on a Model (a sweep's points)
LUMPED_POSITION = Range(0.0, 1.0, "1", "`lumped.position` (x/L)", "on its link, from the joint to the tip")
ENVELOPE_LIMIT = Range(1e-6, 10.0, "1", "`envelope.*` limits (Model parameters)",
                       "a positive relative deflection or spring angle, small for the model to hold")


def com_range(length: float) -> Range:
    """The range of a centre-of-mass component in m on a link of ``length`` m: within ten link lengths
    (:data:`RANGES` ``com``)."""
    allowed = RANGES["com"]
    return Range(allowed.low * length, allowed.high * length, "m", allowed.applies, allowed.reason)

MAX_LINKS = 20
MAX_LUMPED_MASSES = 100
MAX_COORDINATES = 100
MAX_MODES = 20  # modes of one link (or of one deformation of a spatial link)
SIZES = {
    "links": (MAX_LINKS, "the FMU benchmark covers 1..10 links; the C code grows with every link"),
    "lumped masses": (MAX_LUMPED_MASSES, "more point masses than any arm carries; each adds terms to every link "
                                         "beyond it"),
    "coordinates": (MAX_COORDINATES, "joint angles, rotor angles and modes together: the Model builds in about a "
                                     "second at 100 (n^3: 16 s at 200, 160 s at 400) and its FMU compiles in "
                                     "about a minute"),
}


def table() -> str:
    """The ranges and size limits as a Markdown table (what docs/spec.md shows)."""
    rows = ["| applies to | range | unit | why |", "|---|---|---|---|"]
    rows += [f"| {r.applies} | [{r.low:g}, {r.high:g}] | {r.unit} | {r.reason} |" for r in RANGES.values()]
    rows.append(f"| {DAMPING_RATIO.applies} | [0, 1) | 1 | {DAMPING_RATIO.reason} |")
    rows += [f"| number of {what} | at most {limit} | - | {reason} |" for what, (limit, reason) in SIZES.items()]
    return "\n".join(rows)
