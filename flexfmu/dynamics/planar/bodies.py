"""Planar chain: coordinates and per-link mass properties, symbolic in p.

Each link carries a frame at its root, turned by the joint angle theta[j]
relative to the distal frame of the previous link. A point at x along a
flexible link sits at r(x) = (x, w(x)) in that frame, w = phi(x/L) . f.
Everything the dynamics needs from a link reduces to a few integrals over
its mass (beam, lumped masses and payload alike):

    m = int dm,  s = int r dm = (sx, sy + a.f),  J0 = int |r|^2 dm = j0 + f'Mff f,
    a = int phi dm,  b = int x phi dm,  Mff = int phi phi' dm,

plus rotary inertias that turn with the frame and a local slope. Both
derivations (closed form and energy) start from these, so the mode-shape
integrals are computed once and checked once (tests/test_modes.py).

With geometric stiffening the bent beam foreshortens: the point at x moves
to r(x) = (x - 1/2 f'H(x)f, w(x)), H(x) = int_0^x Phi'^T Phi' ds, which adds

    hb = int H dm,  hd = int x H dm,  hl = H(L),

so that s = (sx - 1/2 f'hb f, sy + a.f), J0 = j0 + f'(Mff - hd)f to second
order, and the next joint sits at (L - 1/2 f'hl f, w(L)) (docs/dynamics.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import casadi as ca

from flexfmu.dynamics.metadata import Coordinate
from flexfmu.dynamics.parameters import ParameterSymbols
from flexfmu.modes import ModeSet, mode_set
from flexfmu.modes.families import FAMILIES
from flexfmu.spec.arm import Arm, FlexibleLink
from flexfmu.spec.errors import SpecError


@dataclass(frozen=True)
class Coordinates:
    """Layout of q: joint angles, then rotor angles, then modal coordinates.

    ``records`` describes every entry (:class:`~flexfmu.dynamics.metadata.Coordinate`);
    the index tuples are the same layout as the derivations use it
    (0-based links and positions in q).
    """

    records: tuple[Coordinate, ...]
    theta: tuple[int, ...]
    rotor: dict[int, int]
    modal: tuple[tuple[int, ...], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.records)

    @property
    def size(self) -> int:
        return len(self.records)


def coordinate_layout(arm: Arm) -> Coordinates:
    """Order q of ``arm`` as docs/architecture.md says: theta[j], alpha[j] (flexible joints), f[i,k]; the
    angle of a prescribed joint is marked (an input, not a state)."""
    records = [Coordinate(f"theta[{j}]", "joint", j, "rad", prescribed=link.joint.prescribed)
               for j, link in enumerate(arm.links, start=1)]
    theta = tuple(range(len(records)))
    rotor = {}
    for j, link in enumerate(arm.links):
        if link.joint.kind == "flexible":
            rotor[j] = len(records)
            records.append(Coordinate(f"alpha[{j + 1}]", "rotor", j + 1, "rad"))
    modal = []
    for i, link in enumerate(arm.links):
        count = link.modes.count if isinstance(link, FlexibleLink) else 0
        modal.append(tuple(range(len(records), len(records) + count)))
        records += [Coordinate(f"f[{i + 1},{k}]", "modal", i + 1, "m", k) for k in range(1, count + 1)]
    return Coordinates(tuple(records), theta, rotor, tuple(modal))


@dataclass
class RotaryInertia:
    """Rotary inertia turning with the link frame plus ``slope . f``."""

    inertia: ca.SX
    slope: ca.SX  # row (1 x modes): local slope d w / d x per modal coordinate


@dataclass
class LinkBody:
    """Mass properties and geometry of one link in its own frame."""

    length: ca.SX
    mass: ca.SX
    sx: ca.SX
    sy: ca.SX
    j0: ca.SX
    a: ca.SX  # column, modes
    b: ca.SX  # column, modes
    mff: ca.SX  # modes x modes
    stiffness: ca.SX  # modes x modes
    damping: ca.SX  # modes x modes
    tip_value: ca.SX  # row: w(L) per modal coordinate
    distal_rotation: ca.SX  # row: distal frame turn per modal coordinate
    tip_tangent: ca.SX  # row: tip tangent relative to the distal frame
    root_tangent: ca.SX  # row: root tangent relative to the link frame
    rotary: list[RotaryInertia] = field(default_factory=list)
    stiffening: bool = False  # geometric stiffening (foreshortening) kept
    hb: ca.SX | None = None  # modes x modes: int H dm (kg/m)
    hd: ca.SX | None = None  # modes x modes: int x H dm (kg), the rotating beam's geometric stiffness
    hl: ca.SX | None = None  # modes x modes: H(L) (1/m), the tip's foreshortening

    @property
    def modes(self) -> int:
        return self.a.shape[0]

    def add_point_mass(self, mass, x, phi_row, slope_row, inertia, shortening=None) -> None:
        """Add a point mass at (x, phi_row . f) with a rotary inertia turning
        with the local slope ``slope_row . f``: ``mass`` at ``x`` along the link
        (m), ``phi_row`` the mode shapes' values there (1 x modes), ``slope_row``
        their slopes d w / d x, ``inertia`` its rotary inertia (kg m^2), and
        ``shortening`` = H(x) (modes x modes, 1/m), needed when the link keeps
        geometric stiffening."""
        self.mass += mass
        self.sx += mass * x
        self.j0 += mass * x**2
        if self.modes:
            self.a += mass * phi_row.T
            self.b += mass * x * phi_row.T
            self.mff += mass * ca.mtimes(phi_row.T, phi_row)
            if self.stiffening:
                self.hb += mass * shortening
                self.hd += mass * x * shortening
        self.rotary.append(RotaryInertia(inertia, slope_row))


def _zeros_row(n: int) -> ca.SX:
    return ca.SX(1, n)  # structural zeros: products with it vanish from the graph


def _rigid_body(link_index: int, P: ParameterSymbols) -> LinkBody:
    pre = f"link[{link_index}]"
    m, cx, cy = P[f"{pre}.mass"], P[f"{pre}.com.x"], P[f"{pre}.com.y"]
    empty = ca.SX.zeros(0, 1)
    return LinkBody(
        length=P[f"{pre}.length"], mass=m, sx=m * cx, sy=m * cy,
        j0=P[f"{pre}.inertia"] + m * (cx**2 + cy**2),
        a=empty, b=empty, mff=ca.SX.zeros(0, 0), stiffness=ca.SX.zeros(0, 0),
        damping=ca.SX.zeros(0, 0), tip_value=_zeros_row(0),
        distal_rotation=_zeros_row(0), tip_tangent=_zeros_row(0), root_tangent=_zeros_row(0),
    )


def _flexible_body(link_index: int, link: FlexibleLink, shapes: ModeSet, P: ParameterSymbols) -> LinkBody:
    pre = f"link[{link_index}]"
    L, rho, EI = P[f"{pre}.length"], P[f"{pre}.mass_per_length"], P[f"{pre}.EI"]
    n = shapes.count
    mff = rho * L * ca.SX(shapes.int_phi_phi)
    stiffness = EI / L**3 * ca.SX(shapes.int_curv_curv)
    if link.modes.damping_kind == "ratio":
        coeffs = [
            2 * P[f"{pre}.damping_ratio[{k + 1}]"] * ca.sqrt(stiffness[k, k] * mff[k, k]) for k in range(n)
        ]
    else:
        coeffs = [P[f"{pre}.damping_coefficient[{k + 1}]"] for k in range(n)]
    tip_slope = ca.SX(shapes.tip_slope).T / L
    tangent_frame = shapes.frame == "tangent"
    stiffening = link.geometric_stiffening and n > 0
    shortening = {}
    if stiffening:
        shortening = dict(hb=rho * ca.SX(shapes.int_tail_slope_slope),
                          hd=rho * L * ca.SX(shapes.int_moment_slope_slope),
                          hl=ca.SX(shapes.int_slope_slope) / L)
    return LinkBody(
        length=L, mass=rho * L, sx=rho * L**2 / 2, sy=ca.SX(0), j0=rho * L**3 / 3,
        a=rho * L * ca.SX(shapes.int_phi), b=rho * L**2 * ca.SX(shapes.int_xi_phi),
        mff=mff, stiffness=stiffness, damping=ca.diag(ca.vertcat(*coeffs)),
        tip_value=ca.SX(shapes.tip_value).T,
        distal_rotation=tip_slope if tangent_frame else _zeros_row(n),
        tip_tangent=_zeros_row(n) if tangent_frame else tip_slope,
        # a tangent frame's x axis is the root tangent (the shapes' root slopes are round-off)
        root_tangent=_zeros_row(n) if tangent_frame else ca.SX(shapes.root_slope).T / L,
        stiffening=stiffening, **shortening,
    )


def distal_load(arm: Arm, link_index: int) -> tuple[float, float]:
    """Mass and rotary inertia (about the tip) of everything beyond the tip of
    link ``link_index`` (0-based) of ``arm``, with the arm stretched straight (theta = 0).

    This is the tip load of the clamped-mass frequency equation (paper 004,
    eq. 47-48): distal links and lumped masses, the payload, lumped masses at
    the link's own tip, and the reflected rotor inertias of distal joints. The
    first-moment coupling (MD in paper 004) is left out, as the paper does.
    """
    mass, inertia, offset = 0.0, 0.0, 0.0

    def point(m, I, x, y=0.0):
        nonlocal mass, inertia
        mass += m
        inertia += I + m * (x * x + y * y)

    for lumped in arm.lumped_masses:
        if lumped.link - 1 == link_index and lumped.position == 1.0:
            point(lumped.mass, lumped.inertia, 0.0)
    for j in range(link_index + 1, len(arm.links)):
        link = arm.links[j]
        point(0.0, link.joint.gear_ratio**2 * link.joint.rotor_inertia, 0.0)
        if isinstance(link, FlexibleLink):
            m = link.mass_per_length * link.length
            point(m, m * link.length**2 / 12, offset + link.length / 2)
        else:
            point(link.mass, link.inertia, offset + link.com[0], link.com[1])
        for lumped in arm.lumped_masses:
            if lumped.link - 1 == j:
                point(lumped.mass, lumped.inertia, offset + lumped.position * link.length)
        offset += link.length
    point(arm.payload.mass, arm.payload.inertia, offset)
    return mass, inertia


def link_mode_sets(arm: Arm) -> list[ModeSet | None]:
    """Mode sets of every link of ``arm`` (None for rigid links) at its nominal values; a family with a tip
    load gets the spec's tip mass and inertia, or else the :func:`distal_load`.

    Raises
    ------
    SpecError
        Naming the link whose shapes cannot be built (a tip load so heavy that the frequency equation's
        first root is out of reach, or a numerical failure of the shapes)."""
    sets = []
    for i, link in enumerate(arm.links):
        if not isinstance(link, FlexibleLink):
            sets.append(None)
            continue
        tip_mass, tip_inertia = link.modes.tip_mass, link.modes.tip_inertia
        if FAMILIES[link.modes.family].tip_load and (tip_mass is None or tip_inertia is None):
            load_mass, load_inertia = distal_load(arm, i)
            tip_mass = load_mass if tip_mass is None else tip_mass
            tip_inertia = load_inertia if tip_inertia is None else tip_inertia
        rho_l = link.mass_per_length * link.length
        try:
            sets.append(mode_set(link.modes, tip_mass_ratio=(tip_mass or 0.0) / rho_l,
                                 tip_inertia_ratio=(tip_inertia or 0.0) / (rho_l * link.length**2)))
        except (ValueError, ArithmeticError) as error:
            raise SpecError([f"link[{i + 1}].modes: the mode shapes cannot be built: {error}"],
                            f"arm {arm.name!r}") from None
    return sets


def link_bodies(arm: Arm, P: ParameterSymbols, shapes: list[ModeSet | None]) -> list[LinkBody]:
    """Mass properties of every link of ``arm``, lumped masses and payload included, symbolic in the
    parameter symbols ``P``; ``shapes`` are the links' mode sets (:func:`link_mode_sets`)."""
    bodies = []
    for i, link in enumerate(arm.links, start=1):
        if isinstance(link, FlexibleLink):
            bodies.append(_flexible_body(i, link, shapes[i - 1], P))
        else:
            bodies.append(_rigid_body(i, P))
    for k, lumped in enumerate(arm.lumped_masses, start=1):
        pre = f"lumped_mass[{k}]"
        body = bodies[lumped.link - 1]
        xi = P[f"{pre}.position"]
        ms = shapes[lumped.link - 1]
        shortening = None
        if ms is None:
            phi_row, slope_row = _zeros_row(0), _zeros_row(0)
        else:
            phi_row = ca.horzcat(*ms.values(xi))
            slope_row = ca.horzcat(*ms.slopes(xi)) / body.length
            if body.stiffening:
                shortening = ms.slope_products_to(xi) / body.length
        body.add_point_mass(P[f"{pre}.mass"], xi * body.length, phi_row, slope_row, P[f"{pre}.inertia"], shortening)
    last = bodies[-1]
    last.add_point_mass(
        P["payload.mass"], last.length, last.tip_value,
        last.distal_rotation + last.tip_tangent, P["payload.inertia"], last.hl,
    )
    return bodies
