"""The Delta robot's specification (``kind = "delta"``): plain data and its loader.

A Delta robot (paper 003) has a fixed base, a moving platform and three
identical chains at 0, 120 and 240 degrees about the base's Z axis, each an
upper link driven by a motor at A_i and a lower link from the knee B_i to the
platform joint D_i. The base frame has its origin at the centre O of the
motor circle and **Z pointing down**, towards the platform (the paper's
convention: the platform works at Z ~ +0.5 m, gravity is (0, 0, +9.81)).

Keys of the TOML file (all SI; see ``docs/delta.md``)::

    kind = "delta"
    name, description
    base_radius        rA = |O A_i|
    platform_radius    rB = |P D_i|
    gravity            [gx, gy, gz] in the base frame (default [0, 0, 9.81])
    home               [x, y, z] platform position the arm starts at (FMU start values)
    [upper], [lower]   length, width, height (rectangular solid section; width along
                       the link's y axis, which is the motor axis for the upper link),
                       density, E, G
    [platform]         mass, and either inertia = [Ixx, Iyy, Izz] about P or
                       thickness (a solid disk of radius platform_radius)
    [motor]            rotor_inertia (motor side), gear_ratio, viscous_friction (joint side)
    [elements]         count (per link), approximation ("linear-cubic" or
                       "cubic-quintic"), axial_load (bool), rayleigh = [alpha, beta],
                       reduction ("craig-bampton" or "none"), and either cutoff (rad/s,
                       the fixed-interface modes kept per link) or modes (how many)

This module is the executable form of that list: it reads nested dicts and
lists with the generic checks of :mod:`flexfmu.spec.checks`, collects every
problem, and raises one :class:`~flexfmu.spec.errors.SpecError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from flexfmu.spec.checks import (
    REQUIRED, arm_name_and_description, check_keys, integer, number, show, string, sub_table, type_name, vector,
)
from flexfmu.spec.errors import SpecError
from flexfmu.spec.ranges import DELTA_RANGES

APPROXIMATIONS = ("linear-cubic", "cubic-quintic")
MAX_ELEMENTS = 16

_TOP_KEYS = ("kind", "name", "description", "base_radius", "platform_radius", "gravity", "home",
             "upper", "lower", "platform", "motor", "elements")
_LINK_KEYS = ("length", "width", "height", "density", "E", "G")
_PLATFORM_KEYS = ("mass", "inertia", "thickness")
_MOTOR_KEYS = ("rotor_inertia", "gear_ratio", "viscous_friction")
_ELEMENT_KEYS = ("count", "approximation", "axial_load", "rayleigh", "reduction", "cutoff", "modes")
REDUCTIONS = ("craig-bampton", "none")
DEFAULT_CUTOFF = 1000.0  # rad/s: each link's first bending pair (flexfmu.dynamics.delta.reduction)
MAX_MODES = 200


def torsion_constant(width: float, height: float, terms: int = 50) -> float:
    """Saint-Venant torsion constant J of a solid rectangle (m^4).

    With a >= b the sides: J = a b^3 [1/3 - (64 / pi^5) (b / a) sum over odd n of
    tanh(n pi a / (2 b)) / n^5] (Timoshenko & Goodier); 0.1406 a^4 for a square.

    Parameters
    ----------
    width, height : float
        The sides of the section, m.
    terms : int
        Odd terms of the series (it converges like n^-5).
    """
    a, b = max(width, height), min(width, height)
    series = sum(math.tanh(n * math.pi * a / (2 * b)) / n**5 for n in range(1, 2 * terms, 2))
    return a * b**3 * (1 / 3 - 64 / math.pi**5 * (b / a) * series)


@dataclass(frozen=True)
class DeltaLink:
    """One of the two link types (every chain has one of each): a straight
    uniform beam with a rectangular solid section, ``width`` along the link's
    y axis and ``height`` along its z axis."""

    length: float
    width: float
    height: float
    density: float
    E: float
    G: float

    @property
    def area(self) -> float:
        """Cross-section area A, m^2."""
        return self.width * self.height

    @property
    def Iy(self) -> float:
        """Second moment about the link's y axis (bending w along z), m^4."""
        return self.width * self.height**3 / 12

    @property
    def Iz(self) -> float:
        """Second moment about the link's z axis (bending v along y), m^4."""
        return self.height * self.width**3 / 12

    @property
    def J(self) -> float:
        """Saint-Venant torsion constant (G J is the torsional stiffness), m^4."""
        return torsion_constant(self.width, self.height)

    @property
    def Ip(self) -> float:
        """Polar moment Iy + Iz (rho Ip is the rotary inertia of torsion per length), m^4."""
        return self.Iy + self.Iz

    @property
    def mass(self) -> float:
        """Mass of the link, kg."""
        return self.density * self.area * self.length


@dataclass(frozen=True)
class Platform:
    """The rigid moving platform (end-effector): mass and principal inertia
    about its centre P along the base axes X, Y, Z."""

    mass: float
    inertia: tuple[float, float, float]


@dataclass(frozen=True)
class Motor:
    """The three identical motors at A_i: rotor inertia on the motor side
    (reflected as gear_ratio^2 * rotor_inertia), viscous friction on the joint side."""

    rotor_inertia: float = 0.0
    gear_ratio: float = 1.0
    viscous_friction: float = 0.0


@dataclass(frozen=True)
class Elements:
    """Finite elements per link: ``count`` elements, the ``approximation``
    (paper 003 section 5.2: ``linear-cubic`` = linear axial and torsion, cubic
    bending; ``cubic-quintic`` = cubic axial and torsion, quintic bending),
    ``axial_load`` (geometric stiffness of the axial force, section 3.4) and
    Rayleigh damping ``alpha M + beta K`` of the links' deformation rates; how the links are reduced
    (``reduction``: ``craig-bampton`` keeps each link's joint values and its fixed-interface modes up to
    ``cutoff`` rad/s, or the ``modes`` lowest when given; ``none`` keeps every nodal value)."""

    count: int = 1
    approximation: str = "linear-cubic"
    axial_load: bool = True
    rayleigh: tuple[float, float] = (0.0, 0.0)
    reduction: str = "craig-bampton"
    cutoff: float = DEFAULT_CUTOFF
    modes: int | None = None


@dataclass(frozen=True)
class DeltaArm:
    """A Delta robot with flexible links (see the module docstring)."""

    kind = "delta"

    name: str
    base_radius: float
    platform_radius: float
    upper: DeltaLink
    lower: DeltaLink
    platform: Platform
    home: tuple[float, float, float]
    motor: Motor = Motor()
    elements: Elements = Elements()
    gravity: tuple[float, float, float] = (0.0, 0.0, 9.81)
    description: str = ""


def disk_inertia(mass: float, radius: float, thickness: float) -> tuple[float, float, float]:
    """Principal inertia (Ixx, Iyy, Izz) of a solid disk of ``mass``, ``radius`` and ``thickness`` with its
    axis along Z, about its centre, kg m^2."""
    side = mass * (3 * radius**2 + thickness**2) / 12
    return side, side, mass * radius**2 / 2


def delta_arm_from_dict(data: Mapping, source: str = "<dict>") -> DeltaArm:
    """Validate a Delta robot specification given as nested dicts (parsed TOML, without its ``kind``).

    Parameters
    ----------
    data : Mapping
        The specification (see the module docstring for its keys).
    source : str, optional
        Where ``data`` came from; used as the header of the error message.

    Returns
    -------
    DeltaArm

    Raises
    ------
    SpecError
        Listing every problem found.
    """
    problems: list[str] = []
    if not isinstance(data, Mapping):
        raise SpecError([f"the specification must be a table, got {show(data)}"], source)
    check_keys(problems, data, "", _TOP_KEYS)
    name, description = arm_name_and_description(problems, data)
    base_radius = _ranged(problems, data, "base_radius", "", "radius")
    platform_radius = _ranged(problems, data, "platform_radius", "", "radius")
    gravity = _ranged_vector(problems, data, "gravity", "", ("gravity",) * 3, (0.0, 0.0, 9.81))
    home = _ranged_vector(problems, data, "home", "", ("position",) * 3)
    upper = _link(problems, data, "upper")
    lower = _link(problems, data, "lower")
    platform = _platform(problems, data, platform_radius)
    motor = _motor(problems, data)
    elements = _elements(problems, data)
    if problems:
        raise SpecError(problems, source)
    arm = DeltaArm(name=name, base_radius=base_radius, platform_radius=platform_radius, upper=upper, lower=lower,
                   platform=platform, home=home, motor=motor, elements=elements, gravity=gravity,
                   description=description)
    reach = _home_problem(arm)
    if reach:
        raise SpecError([reach], source)
    return arm


def _link(problems, data, key):
    table = sub_table(problems, data, key, "", required=True)
    if table is None:
        return None
    check_keys(problems, table, key, _LINK_KEYS)
    kinds = {"length": "length", "width": "section", "height": "section", "density": "density", "E": "modulus",
             "G": "modulus"}
    values = {name: _ranged(problems, table, name, key, kinds[name]) for name in _LINK_KEYS}
    return None if None in values.values() else DeltaLink(**values)


def _platform(problems, data, radius):
    table = sub_table(problems, data, "platform", "", required=True)
    if table is None:
        return None
    check_keys(problems, table, "platform", _PLATFORM_KEYS)
    mass = _ranged(problems, table, "mass", "platform", "mass")
    if "inertia" in table and "thickness" in table:
        problems.append("platform.inertia and platform.thickness are both given; give one (thickness makes the "
                        "platform a solid disk of radius platform_radius)")
        return None
    if "inertia" in table:
        inertia = _ranged_vector(problems, table, "inertia", "platform", ("inertia",) * 3)
    else:
        thickness = _ranged(problems, table, "thickness", "platform", "thickness",
                            missing=" (or give platform.inertia = [Ixx, Iyy, Izz])")
        inertia = None if None in (mass, radius, thickness) else disk_inertia(mass, radius, thickness)
    return None if None in (mass, inertia) else Platform(mass, inertia)


def _motor(problems, data):
    table = sub_table(problems, data, "motor", "")
    if table is None:
        return None
    check_keys(problems, table, "motor", _MOTOR_KEYS)
    return Motor(rotor_inertia=_ranged(problems, table, "rotor_inertia", "motor", "rotor_inertia", 0.0),
                 gear_ratio=_ranged(problems, table, "gear_ratio", "motor", "gear_ratio", 1.0),
                 viscous_friction=_ranged(problems, table, "viscous_friction", "motor", "viscous_friction", 0.0))


def _elements(problems, data):
    table = sub_table(problems, data, "elements", "")
    if table is None:
        return None
    check_keys(problems, table, "elements", _ELEMENT_KEYS)
    count = integer(problems, table, "count", "elements", 1, MAX_ELEMENTS, 1)
    approximation = string(problems, table, "approximation", "elements", "linear-cubic", APPROXIMATIONS)
    axial_load = table.get("axial_load", True)
    if not isinstance(axial_load, bool):
        problems.append(f"elements.axial_load must be true or false, got {show(axial_load)} ({type_name(axial_load)})")
    rayleigh = _ranged_vector(problems, table, "rayleigh", "elements", ("alpha", "beta"), (0.0, 0.0))
    reduction = string(problems, table, "reduction", "elements", "craig-bampton", REDUCTIONS)
    cutoff = _ranged(problems, table, "cutoff", "elements", "cutoff", DEFAULT_CUTOFF)
    modes = integer(problems, table, "modes", "elements", 0, MAX_MODES, None)
    if "cutoff" in table and "modes" in table:
        problems.append(f"elements: give cutoff or modes, not both (got cutoff = {show(table['cutoff'])} and "
                        f"modes = {show(table['modes'])})")
    if reduction == "none" and ("cutoff" in table or "modes" in table):
        problems.append("elements: cutoff and modes apply to reduction = \"craig-bampton\", not \"none\"")
    if None in (count, approximation, rayleigh, reduction, cutoff) or not isinstance(axial_load, bool):
        return None
    return Elements(count, approximation, axial_load, rayleigh, reduction, cutoff, modes)


def _ranged(problems, table, key, path, kind, default=REQUIRED, missing=""):
    """The number at ``table[key]`` checked against ``DELTA_RANGES[kind]`` (:mod:`flexfmu.spec.ranges`);
    ``problems``, ``table``, ``key``, ``path``, ``default`` and ``missing`` as for
    :func:`flexfmu.spec.checks.number`."""
    allowed = DELTA_RANGES[kind]
    return number(problems, table, key, path, default, missing=missing, unit=allowed.unit, **allowed.bounds)


def _ranged_vector(problems, table, key, path, kinds, default=REQUIRED):
    """The vector at ``table[key]`` of ``len(kinds)`` numbers, each checked against ``DELTA_RANGES`` of its kind
    (``problems``, ``table``, ``key``, ``path`` and ``default`` as for :func:`flexfmu.spec.checks.vector`)."""
    values = vector(problems, table, key, path, len(kinds), default)
    if values is None:
        return None
    where = f"{path}.{key}" if path else key
    ranges = [DELTA_RANGES[kind] for kind in kinds]
    bad = [f"{where}[{k + 1}] must be {allowed.text()} {allowed.unit}, got {show(value)}"
           for k, (allowed, value) in enumerate(zip(ranges, values)) if not allowed.low <= value <= allowed.high]
    problems.extend(bad)
    return None if bad else values


def _home_problem(arm: DeltaArm) -> str | None:
    """Why the platform cannot reach ``arm.home`` (None if every chain reaches it): the sphere condition of
    each chain, paper 003 eq. (5)-(8), must have a real solution."""
    x0, y0, z0 = arm.home
    r = arm.base_radius - arm.platform_radius
    L1, L2 = arm.upper.length, arm.lower.length
    for i in range(3):
        angle = 2 * math.pi * i / 3
        x = math.cos(angle) * x0 + math.sin(angle) * y0
        y = -math.sin(angle) * x0 + math.cos(angle) * y0
        n = L2**2 - L1**2 - (x - r) ** 2 - y**2 - z0**2
        if abs(n) >= math.hypot(2 * L1 * (r - x), 2 * L1 * z0):
            return (f"home = {list(arm.home)} is outside the workspace: chain {i + 1} cannot reach it with "
                    f"upper.length {L1:g} and lower.length {L2:g}")
    return None
