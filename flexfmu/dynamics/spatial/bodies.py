"""Mass properties of spatial links, symbolic in p, and the deformed link's geometry.

A point at x along a flexible link sits, in the link frame, at

    r(x) = (x + u(x) + u_c(x), v(x), w(x)),   u_c(x) = -1/2 int_0^x (v'^2 + w'^2) ds,

u = Phi_u f_u (axial), v = Phi_y f_y, w = Phi_z f_z (bending along y and z),
and its cross section is twisted by alpha = Phi_t f_t. u_c is the
foreshortening of the bent, inextensible centre line (geometric stiffening;
zero when the link turns it off). Everything the dynamics needs from a link
reduces to integrals over its mass (beam, lumped masses and payload alike),
kept to second order in (f, f'):

    m,  s(f) = int r dm,  Sigma(f) = int r r' dm,  P(f, f') = int r' r'^T dm ... (see relative_moment)

with the constant integrals a = int Phi dm, b = int x Phi dm, M = int Phi'Phi dm
per deformation, cross products M_uy, M_uz, M_yz, and the stiffening
integrals Hb = int H dm, Dg = int x H dm, HL = H(L) of H(x) = int_0^x Phi'^T
Phi' ds. Rotary inertias (the section's polar inertia rho Ip, lumped
masses', the payload's) turn with the link frame plus the local rotation
Gamma f' = (alpha, -w', v') f': they enter as the sums rot_I, rot_IG = sum
I Gamma and rot_GIG = sum Gamma' I Gamma.

A body's properties are a dict of named SX entries (:class:`BodyStructure`
lists the names and shapes), so the same functions serve the Model, built
from p, and the per-link C templates, which read them from a constants
vector. A rigid link is a body without modes.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from flexfmu.dynamics.parameters import ParameterSymbols
from flexfmu.dynamics.spatial.integrals import mass_product, partial_slope_product, slope_products
from flexfmu.dynamics.spatial.rotations import rotation_vector
from flexfmu.modes import ModeSet, mode_set
from flexfmu.modes.families import FAMILIES
from flexfmu.modes.rod import fixed_free_rod
from flexfmu.spec.spatial_arm import DEFORMATIONS, SpatialArm, SpatialFlexibleLink

SHORT = {"bending_y": "y", "bending_z": "z", "torsion": "t", "axial": "u"}
TRANSLATING = ("y", "z", "u")  # deformations that move the centre line
BENDS = ("y", "z")


@dataclass(frozen=True)
class BodyStructure:
    """What a body's property dict holds: mode ``counts`` per deformation (bending_y, bending_z, torsion,
    axial), whether each bending plane is ``tangent`` framed (else chord), and whether the link keeps
    geometric ``stiffening``."""

    counts: tuple[int, int, int, int] = (0, 0, 0, 0)
    tangent: tuple[bool, bool] = (True, True)
    stiffening: bool = False

    @property
    def modes(self) -> int:
        return sum(self.counts)

    def count(self, short: str) -> int:
        """Modes of the deformation ``short`` (``y``, ``z``, ``t`` or ``u``)."""
        return self.counts["yztu".index(short)]

    def block(self, short: str) -> slice:
        """Where the deformation ``short``'s modes sit among the link's."""
        start = sum(self.counts[:"yztu".index(short)])
        return slice(start, start + self.count(short))

    def present(self, shorts=("y", "z", "t", "u")) -> list[str]:
        """The deformations among ``shorts`` the body has modes of."""
        return [x for x in shorts if self.count(x)]

    def stiffened(self) -> list[str]:
        """The bending planes whose foreshortening is kept."""
        return self.present(BENDS) if self.stiffening else []

    def fields(self) -> list[tuple[str, tuple[int, int]]]:
        """(name, shape) of every property, in packing order."""
        k = self.modes
        out = [("m", (1, 1)), ("L", (1, 1)), ("s0", (3, 1)), ("sigma0", (3, 3)), ("rot_I", (3, 3)),
               ("rot_IG", (3, k)), ("rot_GIG", (k, k))]
        for x in self.present(TRANSLATING):
            n = self.count(x)
            out += [(f"a_{x}", (n, 1)), (f"b_{x}", (n, 1)), (f"M_{x}", (n, n))]
        for x in self.present():
            n = self.count(x)
            out += [(f"K_{x}", (n, n)), (f"D_{x}", (n, 1)), (f"tip_{x}", (n, 1))]
        for x in self.present(BENDS):
            out += [(f"slope_{x}", (self.count(x), 1)), (f"root_{x}", (self.count(x), 1))]
        for first, second in (("u", "y"), ("u", "z"), ("y", "z")):
            if self.count(first) and self.count(second):
                out.append((f"M_{first}{second}", (self.count(first), self.count(second))))
        for x in self.stiffened():
            n = self.count(x)
            out += [(f"Hb_{x}", (n, n)), (f"Dg_{x}", (n, n)), (f"HL_{x}", (n, n))]
        return out


def split(f, structure: BodyStructure) -> dict:
    """The modal vector ``f`` of a body of ``structure`` cut into its deformations' parts (empty ones too)."""
    return {x: f[structure.block(x)] for x in "yztu"}


def _dot(a, b):
    return ca.dot(a, b) if a.numel() else 0


def _quad(f, M, g):
    return ca.mtimes([f.T, M, g]) if f.numel() else 0


def first_moment(props: dict, structure: BodyStructure, f) -> ca.SX:
    """s(f) = int r dm (link frame) of the body with properties ``props`` and ``structure`` at modal
    coordinates ``f``."""
    parts, st = split(f, structure), structure
    x = _dot(props["a_u"], parts["u"]) if st.count("u") else 0
    for b in st.stiffened():
        x -= 0.5 * _quad(parts[b], props[f"Hb_{b}"], parts[b])
    y = _dot(props["a_y"], parts["y"]) if st.count("y") else 0
    z = _dot(props["a_z"], parts["z"]) if st.count("z") else 0
    return props["s0"] + ca.vertcat(x, y, z)


def first_moment_rate(props: dict, structure: BodyStructure, f, fd) -> ca.SX:
    """d s / dt = int r' dm of the body (``props``, ``structure``) at modal coordinates ``f`` and rates
    ``fd`` (exact: s is quadratic in f)."""
    parts, rates, st = split(f, structure), split(fd, structure), structure
    x = _dot(props["a_u"], rates["u"]) if st.count("u") else 0
    for b in st.stiffened():
        x -= _quad(parts[b], props[f"Hb_{b}"], rates[b])
    y = _dot(props["a_y"], rates["y"]) if st.count("y") else 0
    z = _dot(props["a_z"], rates["z"]) if st.count("z") else 0
    return ca.vertcat(x, y, z)


def _cross(props, structure, first, second):
    """M_first,second (rows: ``first``'s modes), from the stored upper product."""
    key = f"M_{first}{second}"
    return props[key] if key in props else props[f"M_{second}{first}"].T


def second_moment(props: dict, structure: BodyStructure, f) -> ca.SX:
    """Sigma(f) = int r r^T dm (link frame) of the body (``props``, ``structure``) at modal coordinates
    ``f``, to second order in f."""
    parts, st = split(f, structure), structure
    entry = {}
    xx = 0
    if st.count("u"):
        xx += 2 * _dot(props["b_u"], parts["u"]) + _quad(parts["u"], props["M_u"], parts["u"])
    for b in st.stiffened():
        xx -= _quad(parts[b], props[f"Dg_{b}"], parts[b])
    entry["xx"] = xx
    for b, key in (("y", "xy"), ("z", "xz")):
        value = 0
        if st.count(b):
            value = _dot(props[f"b_{b}"], parts[b])
            if st.count("u"):
                value += _quad(parts["u"], _cross(props, st, "u", b), parts[b])
        entry[key] = value
    entry["yy"] = _quad(parts["y"], props["M_y"], parts["y"]) if st.count("y") else 0
    entry["zz"] = _quad(parts["z"], props["M_z"], parts["z"]) if st.count("z") else 0
    entry["yz"] = _quad(parts["y"], _cross(props, st, "y", "z"), parts["z"]) if st.count("y") and st.count("z") else 0
    S = ca.vertcat(ca.horzcat(entry["xx"], entry["xy"], entry["xz"]),
                   ca.horzcat(entry["xy"], entry["yy"], entry["yz"]),
                   ca.horzcat(entry["xz"], entry["yz"], entry["zz"]))
    return props["sigma0"] + S


def relative_moment(props: dict, structure: BodyStructure, f, fd) -> ca.SX:
    """P(f, f') = int r'(x) r(x)^T dm (rows: velocity components) of the body (``props``, ``structure``)
    at modal coordinates ``f`` and rates ``fd``, to second order in (f, f').

    Its symmetric part is d Sigma / dt / 2; its skew part gives the angular
    momentum of the deformation, int r x r' dm.
    """
    parts, rates, st = split(f, structure), split(fd, structure), structure
    P = [[0] * 3 for _ in range(3)]
    index = {"u": 0, "y": 1, "z": 2}
    for b in st.present(TRANSLATING):  # velocity of b along its axis times position along x
        row = index[b]
        P[row][0] += _dot(props[f"b_{b}"], rates[b])
        if st.count("u") and b != "u":
            P[row][0] += _quad(parts["u"], _cross(props, st, "u", b), rates[b])
        for c in st.present(TRANSLATING):  # times the other transverse (or axial) displacements
            if c == "u":
                continue
            P[row][index[c]] += _quad(parts[c], _cross(props, st, c, b) if c != b else props[f"M_{b}"], rates[b])
    if st.count("u"):
        P[0][0] += _quad(parts["u"], props["M_u"], rates["u"])
    for b in st.stiffened():
        P[0][0] -= _quad(parts[b], props[f"Dg_{b}"], rates[b])
    return ca.vertcat(*[ca.horzcat(*row) for row in P])


def modal_mass(props: dict, structure: BodyStructure) -> ca.SX:
    """int Phi^T Phi dm over the modes of the body (``props``, ``structure``): blocks of bending and
    axial; torsion has its inertia in the rotary sums."""
    k, M = structure.modes, ca.SX(structure.modes, structure.modes)
    for x in structure.present(TRANSLATING):
        block = structure.block(x)
        M[block, block] = props[f"M_{x}"]
    return M if k else ca.SX(0, 0)


def modal_stiffness(props: dict, structure: BodyStructure) -> tuple[ca.SX, ca.SX]:
    """Structural stiffness and (diagonal) damping over the modes of the body (``props``, ``structure``)."""
    k = structure.modes
    K, D = ca.SX(k, k), ca.SX(k, k)
    for x in structure.present():
        block = structure.block(x)
        K[block, block] = props[f"K_{x}"]
        D[block, block] = ca.diag(props[f"D_{x}"])
    return K, D


def tip_position(props: dict, structure: BodyStructure, f) -> ca.SX:
    """The deflected tip (where the next joint's frame starts, link frame) of the body (``props``,
    ``structure``) at modal coordinates ``f``."""
    parts, st = split(f, structure), structure
    x = props["L"] + (_dot(props["tip_u"], parts["u"]) if st.count("u") else 0)
    for b in st.stiffened():
        x -= 0.5 * _quad(parts[b], props[f"HL_{b}"], parts[b])
    y = _dot(props["tip_y"], parts["y"]) if st.count("y") else 0
    z = _dot(props["tip_z"], parts["z"]) if st.count("z") else 0
    return ca.vertcat(x, y, z)


def distal_angles(props: dict, structure: BodyStructure, f) -> ca.SX:
    """Angles (about z, y, x) of the distal frame in the link frame, turned as
    :func:`flexfmu.dynamics.spatial.rotations.zyx_rotation`: the tip slopes of tangent-framed bending and the tip
    twist of the body (``props``, ``structure``), linear in its modal coordinates ``f``."""
    parts, st = split(f, structure), structure
    about_z = _dot(props["slope_y"], parts["y"]) if st.count("y") and st.tangent[0] else 0
    about_y = -_dot(props["slope_z"], parts["z"]) if st.count("z") and st.tangent[1] else 0
    about_x = _dot(props["tip_t"], parts["t"]) if st.count("t") else 0
    return ca.vertcat(about_z, about_y, about_x)


def tip_tangent(props: dict, structure: BodyStructure, f) -> ca.SX:
    """Rotation vector of the tip tangent relative to the distal frame: the tip slopes of chord-framed
    bending (what the next joint's encoder sees besides the joint angle) of the body (``props``,
    ``structure``) at modal coordinates ``f``."""
    parts, st = split(f, structure), structure
    y = -_dot(props["slope_z"], parts["z"]) if st.count("z") and not st.tangent[1] else 0
    z = _dot(props["slope_y"], parts["y"]) if st.count("y") and not st.tangent[0] else 0
    return ca.vertcat(0, y, z)


def root_rotation(props: dict, structure: BodyStructure, f) -> ca.SX:
    """Rotation vector of the root tangent relative to the link frame of the body (``props``,
    ``structure``) at modal coordinates ``f`` (nonzero for chord frames; the fixed-free torsion modes
    vanish at the root)."""
    parts, st = split(f, structure), structure
    y = -_dot(props["root_z"], parts["z"]) if st.count("z") else 0
    z = _dot(props["root_y"], parts["y"]) if st.count("y") else 0
    return ca.vertcat(0, y, z)


def body_kinetic_energy(props: dict, structure: BodyStructure, V, w, f, fd) -> ca.SX:
    """Kinetic energy of the body (``props``, ``structure``) with origin velocity ``V`` and angular
    velocity ``w`` (both in link axes) and modal coordinates and rates ``f``, ``fd``:

    T = m V.V/2 + V.(w x s + s') + w'J w/2 + w.int r x r' dm + f''M f'/2 + rotary,

    J = tr(Sigma) I - Sigma the inertia about the origin.
    """
    s = first_moment(props, structure, f)
    Sigma = second_moment(props, structure, f)
    J = ca.trace(Sigma) * ca.SX.eye(3) - Sigma
    P = relative_moment(props, structure, f, fd)
    spin = ca.vertcat(P[2, 1] - P[1, 2], P[0, 2] - P[2, 0], P[1, 0] - P[0, 1])  # int r x r' dm
    T = 0.5 * props["m"] * ca.dot(V, V) + ca.dot(V, ca.cross(w, s) + first_moment_rate(props, structure, f, fd))
    T += 0.5 * ca.mtimes([w.T, J + props["rot_I"], w]) + ca.dot(w, spin)
    if structure.modes:
        T += ca.mtimes([w.T, props["rot_IG"], fd])
        T += 0.5 * ca.mtimes([fd.T, modal_mass(props, structure) + props["rot_GIG"], fd])
    return T


# ---------------------------------------------------------------- building the bodies from an arm

def link_mode_sets(arm: SpatialArm) -> list[dict[str, ModeSet]]:
    """Per link of ``arm``, the mode sets of its deformations ({``y``, ``z``, ``t``, ``u``: ModeSet}); a
    bending family solved for a tip load gets the spec's, or else the :func:`distal_load` about the
    plane's normal."""
    sets = []
    for i, link in enumerate(arm.links):
        found = {}
        if isinstance(link, SpatialFlexibleLink):
            for d in link.deformations:
                short = SHORT[d.kind]
                if short in TRANSLATING[:2]:
                    found[short] = _bending_set(arm, i, link, d.modes, normal=2 if short == "y" else 1)
                else:
                    found[short] = fixed_free_rod(d.modes.count)
        sets.append(found)
    return sets


def _bending_set(arm, i, link, modes, normal) -> ModeSet:
    tip_mass, tip_inertia = modes.tip_mass, modes.tip_inertia
    if FAMILIES[modes.family].tip_load and (tip_mass is None or tip_inertia is None):
        load_mass, load_inertia = distal_load(arm, i, np.eye(3)[normal])
        tip_mass = load_mass if tip_mass is None else tip_mass
        tip_inertia = load_inertia if tip_inertia is None else tip_inertia
    rho_l = link.mass_per_length * link.length
    return mode_set(modes, tip_mass_ratio=(tip_mass or 0.0) / rho_l,
                    tip_inertia_ratio=(tip_inertia or 0.0) / (rho_l * link.length**2))


def distal_load(arm: SpatialArm, link_index: int, normal: np.ndarray) -> tuple[float, float]:
    """Mass, and rotary inertia about the axis ``normal`` (link axes) through the tip, of everything beyond
    the tip of link ``link_index`` (0-based) of ``arm`` with all joint angles zero: distal links (flexible ones as
    slender rods), lumped masses (those at this link's own tip too), the payload, and the reflected rotor
    inertias of distal joints about their axes. The planar chain's load (paper 004, eq. 47-48) is the
    case of every axis along z."""
    e = np.asarray(normal, float)
    mass, inertia = 0.0, 0.0

    def point(m, I, where):
        nonlocal mass, inertia
        mass += m
        inertia += float(e @ I @ e) + m * (float(where @ where) - float(where @ e) ** 2)

    def lumped_on(j, origin, R, length):
        for lumped in arm.lumped_masses:
            if lumped.link - 1 == j and (j != link_index or lumped.position == 1.0):
                point(lumped.mass, R @ np.array(lumped.inertia) @ R.T, origin + R @ [lumped.position * length, 0, 0])

    lumped_on(link_index, np.array([-arm.links[link_index].length, 0.0, 0.0]), np.eye(3), arm.links[link_index].length)
    origin, R = np.zeros(3), np.eye(3)
    for j in range(link_index + 1, len(arm.links)):
        link = arm.links[j]
        axis = R @ np.array(link.joint.axis)
        point(0.0, link.joint.gear_ratio**2 * link.joint.rotor_inertia * np.outer(axis, axis), np.zeros(3))
        origin = origin + R @ np.array(link.joint.offset)
        R = R @ rotation_vector(link.joint.rotation)
        if isinstance(link, SpatialFlexibleLink):
            m = link.mass_per_length * link.length
            rod = np.diag([link.polar_inertia_per_length * link.length, m * link.length**2 / 12,
                           m * link.length**2 / 12])
            point(m, R @ rod @ R.T, origin + R @ [link.length / 2, 0, 0])
        else:
            point(link.mass, R @ np.array(link.inertia) @ R.T, origin + R @ np.array(link.com))
        lumped_on(j, origin, R, link.length)
        origin = origin + R @ [link.length, 0, 0]
    point(arm.payload.mass, R @ np.array(arm.payload.inertia) @ R.T, origin)
    return mass, inertia


def _tensor(P: ParameterSymbols, prefix: str) -> ca.SX:
    xx, yy, zz, xy, xz, yz = (P[f"{prefix}.{c}"] for c in ("xx", "yy", "zz", "xy", "xz", "yz"))
    return ca.vertcat(ca.horzcat(xx, xy, xz), ca.horzcat(xy, yy, yz), ca.horzcat(xz, yz, zz))


def body_structure(link, dropped: frozenset[str] = frozenset()) -> BodyStructure:
    """The :class:`BodyStructure` of a spatial ``link`` without the deformation kinds ``dropped``."""
    if not isinstance(link, SpatialFlexibleLink):
        return BodyStructure()
    tangent = []
    for kind in ("bending_y", "bending_z"):
        d = link.deformation(kind)
        frame = None if d is None else (FAMILIES[d.modes.family].frame or d.modes.frame)
        tangent.append(frame != "chord")
    return BodyStructure(tuple(0 if kind in dropped else link.count(kind) for kind in DEFORMATIONS), tuple(tangent),
                         link.geometric_stiffening)


def _zeros(structure: BodyStructure) -> dict:
    return {name: ca.SX(*shape) for name, shape in structure.fields()}


def _flexible_props(i: int, link: SpatialFlexibleLink, st: BodyStructure, sets: dict, P,
                    undamped: frozenset[str]) -> dict:
    pre = f"link[{i}]"
    L, rho, polar = P[f"{pre}.length"], P[f"{pre}.mass_per_length"], P[f"{pre}.polar_inertia_per_length"]
    props = _zeros(st)
    props.update(m=rho * L, L=L, s0=ca.vertcat(rho * L**2 / 2, 0, 0), sigma0=ca.diag(ca.vertcat(rho * L**3 / 3, 0, 0)),
                 rot_I=ca.diag(ca.vertcat(polar * L, 0, 0)))
    for short in st.present():
        ms, kind = sets[short], next(k for k, s in SHORT.items() if s == short)
        n, block = ms.count, st.block(short)
        stiffness = P[f"{pre}.{kind}.{_STIFFNESS_NAME[kind]}"]
        if short in TRANSLATING:
            props[f"a_{short}"] = rho * L * ca.SX(ms.int_phi)
            props[f"b_{short}"] = rho * L**2 * ca.SX(ms.int_xi_phi)
            props[f"M_{short}"] = rho * L * ca.SX(ms.int_phi_phi)
            modal = props[f"M_{short}"]
        else:  # torsion: the section's polar inertia
            props["rot_IG"][0, block] = polar * L * ca.SX(ms.int_phi).T
            props["rot_GIG"][block, block] = polar * L * ca.SX(ms.int_phi_phi)
            modal = props["rot_GIG"][block, block]
        if short in BENDS:
            props[f"K_{short}"] = stiffness / L**3 * ca.SX(ms.int_curv_curv)
            props[f"slope_{short}"] = ca.SX(ms.tip_slope) / L
            # tangent frames: phi'(0) = 0 by construction (numerically ~1e-16, which would only add zeros)
            tangent = st.tangent[BENDS.index(short)]
            props[f"root_{short}"] = ca.SX(ms.count, 1) if tangent else ca.SX(ms.root_slope) / L
        else:
            props[f"K_{short}"] = stiffness / L * ca.SX(slope_products(ms)["hL"])
        props[f"tip_{short}"] = ca.SX(ms.tip_value)
        damping = link.deformation(kind).modes
        if kind in undamped:  # quasi-static: no rate, no damping parameters
            props[f"D_{short}"] = ca.SX(n, 1)
        elif damping.damping_kind == "ratio":
            props[f"D_{short}"] = ca.vertcat(*[
                2 * P[f"{pre}.{kind}.damping_ratio[{k + 1}]"] * ca.sqrt(props[f"K_{short}"][k, k] * modal[k, k])
                for k in range(n)])
        else:
            props[f"D_{short}"] = ca.vertcat(*[P[f"{pre}.{kind}.damping_coefficient[{k + 1}]"] for k in range(n)])
    for first, second in (("u", "y"), ("u", "z"), ("y", "z")):
        if st.count(first) and st.count(second):
            props[f"M_{first}{second}"] = rho * L * ca.SX(mass_product(sets[first], sets[second]))
    for b in st.stiffened():
        products = slope_products(sets[b])
        props[f"Hb_{b}"] = rho * ca.SX(products["hbar"])
        props[f"Dg_{b}"] = rho * L * ca.SX(products["dmat"])
        props[f"HL_{b}"] = ca.SX(products["hL"]) / L
    return props


_STIFFNESS_NAME = {"bending_y": "EI", "bending_z": "EI", "torsion": "GJ", "axial": "EA"}


def _rigid_props(i: int, P) -> dict:
    pre = f"link[{i}]"
    m = P[f"{pre}.mass"]
    c = ca.vertcat(P[f"{pre}.com.x"], P[f"{pre}.com.y"], P[f"{pre}.com.z"])
    Ic = _tensor(P, f"{pre}.inertia")
    props = _zeros(BodyStructure())
    props.update(m=m, L=P[f"{pre}.length"], s0=m * c,
                 sigma0=m * ca.mtimes(c, c.T) + 0.5 * ca.trace(Ic) * ca.SX.eye(3) - Ic)
    return props


def add_point_mass(props: dict, st: BodyStructure, sets: dict, mass, xi, inertia) -> None:
    """Add to the body ``props`` (of structure ``st``, mode sets ``sets``) a point ``mass`` at ``xi`` = x / L
    on the centre line (1.0: the tip) with the inertia tensor ``inertia`` (link axes) turning with the local
    rotation (twist, slopes)."""
    L = props["L"]
    x = xi * L
    props["m"] += mass
    props["s0"] += ca.vertcat(mass * x, 0, 0)
    props["sigma0"][0, 0] += mass * x**2
    at_tip = isinstance(xi, float) and xi == 1.0
    values = {s: (ca.SX(sets[s].tip_value) if at_tip else ca.vertcat(*sets[s].values(xi))) for s in st.present()}
    slopes = {s: (ca.SX(sets[s].tip_slope) if at_tip else ca.vertcat(*sets[s].slopes(xi))) / L
              for s in st.present(BENDS)}
    for s in st.present(TRANSLATING):
        props[f"a_{s}"] += mass * values[s]
        props[f"b_{s}"] += mass * x * values[s]
        props[f"M_{s}"] += mass * ca.mtimes(values[s], values[s].T)
    for first, second in (("u", "y"), ("u", "z"), ("y", "z")):
        if st.count(first) and st.count(second):
            props[f"M_{first}{second}"] += mass * ca.mtimes(values[first], values[second].T)
    for b in st.stiffened():
        H = ca.SX(slope_products(sets[b])["hL"]) if at_tip else partial_slope_product(sets[b], xi)
        props[f"Hb_{b}"] += mass * H / L
        props[f"Dg_{b}"] += mass * x * H / L
    Gamma = ca.SX(3, st.modes)
    if st.count("t"):
        Gamma[0, st.block("t")] = values["t"].T
    if st.count("z"):
        Gamma[1, st.block("z")] = -slopes["z"].T
    if st.count("y"):
        Gamma[2, st.block("y")] = slopes["y"].T
    props["rot_I"] += inertia
    if st.modes:
        props["rot_IG"] += ca.mtimes(inertia, Gamma)
        props["rot_GIG"] += ca.mtimes([Gamma.T, inertia, Gamma])


def link_bodies(arm: SpatialArm, P: ParameterSymbols, sets: list[dict], quasi_static: tuple[frozenset[str], ...],
                drop: bool) -> tuple[list[BodyStructure], list[dict]]:
    """Structures and property dicts of every link of ``arm`` (lumped masses and payload included),
    symbolic in the parameter symbols ``P``; ``sets`` are the links' mode sets (:func:`link_mode_sets`),
    ``quasi_static`` each link's quasi-static deformation kinds: left out of the structures when ``drop``,
    kept undamped otherwise (the full chain a condensed one's outputs are evaluated on)."""
    structures = [body_structure(link, kinds if drop else frozenset()) for link, kinds in zip(arm.links, quasi_static)]
    bodies = []
    for i, (link, st) in enumerate(zip(arm.links, structures), start=1):
        if isinstance(link, SpatialFlexibleLink):
            bodies.append(_flexible_props(i, link, st, sets[i - 1], P, quasi_static[i - 1]))
        else:
            bodies.append(_rigid_props(i, P))
    for k, lumped in enumerate(arm.lumped_masses, start=1):
        j = lumped.link - 1
        add_point_mass(bodies[j], structures[j], sets[j], P[f"lumped_mass[{k}].mass"],
                       P[f"lumped_mass[{k}].position"], _tensor(P, f"lumped_mass[{k}].inertia"))
    add_point_mass(bodies[-1], structures[-1], sets[-1], P["payload.mass"], 1.0, _tensor(P, "payload.inertia"))
    return structures, bodies
