"""Quasi-static deformations of a spatial chain: which ones, and their static equilibrium.

A link's torsion or stretch, or a flexible joint's spring, may be
*quasi-static*: its coordinate s carries no inertia and leaves q; it follows
the static equilibrium of the loads the arm's motion puts on it (the
kineto-elastostatic model of mechanism design). With p the coordinates that
stay, the full model's equations split as

    M_pp p'' + M_ps s'' + h_p = B_p u,      M_sp p'' + M_ss s'' + h_s + K_ss s = B_s u.

Quasi-static means s' = s'' = 0 (its kinetic energy terms dropped) with the
loads on s evaluated on the undeformed arm (s = 0 in M and h). Then

- the arm moves as if the deformation were rigid: M_pp p'' + h_p = B_p u
  are the equations of the chain without it (the condensed chain's M, h, B;
  its articulated-body passes are the ordinary ones, O(N));
- s is the static deflection under those loads, d'Alembert's inertial loads
  of the accelerating arm included: K_ss s = -(M_sp p'' + h_s), B_s = 0
  (no joint torque acts on a twist or stretch directly);
- a quasi-static joint spring: the rotor turns with the joint (its inertia
  and friction act on the encoder angle, as for a rigid joint) and the
  spring deflects by delta = (what the link side needs, r_theta) / k.

Static condensation (Guyan) adds nothing to p's mass and stiffness here:
the elastic energy of a link holds no product of a torsion or axial mode
with another deformation, nor with a joint, so the condensation matrix is
[I; 0]. What quasi-static leaves out is the deformation's own dynamics (its
error in s is of order (w / w_s)^2 for loads at frequency w, w_s the
deformation's frequency) and its feedback on the arm's motion through the
geometry (of the order of s itself: a twist turns everything distal, which
the joints' coordinates do not see). Both vanish as the stiffness grows;
tests/test_quasi_static.py measures them, docs/spatial.md reports them.

The rule for a deformation the arm file leaves unsaid (:func:`choose`): it
is quasi-static when it is fast at every pose: its lowest natural frequency
over all joint angles (:func:`first_frequency`: the link clamped at its root,
carrying at its tip the most that lies beyond it can load it with) is at
least :data:`FAST`, 0.3 rad per millisecond: the fastest motion one RK4 step
of 1 ms follows accurately, so a faster deformation would set the step of a
1 kHz real-time model. A deformation that is fast only in some poses stays
dynamic: a twist that carries a folded distal chain is one of the arm's
slow modes. Joint springs stay dynamic unless the file asks.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np
import scipy.linalg

from flexfmu.dynamics.body_layout import small_spd_solve
from flexfmu.dynamics.metadata import Coordinate
from flexfmu.dynamics.spatial import bodies as B
from flexfmu.dynamics.spatial.articulated import (
    link_inverse_inward,
    link_inverse_outward,
)
from flexfmu.dynamics.spatial.closed_form import base_acceleration
from flexfmu.dynamics.spatial.templates import FRAME, link_kinematics
from flexfmu.modes import ModeSet
from flexfmu.spec.spatial_arm import CONDENSABLE, SpatialArm, SpatialFlexibleLink

FAST = 300.0  # rad/s: a deformation at least this fast is quasi-static unless the arm file says otherwise


@dataclass(frozen=True)
class QuasiStatic:
    """Which parts of a spatial chain are quasi-static: ``deformations`` (per link, 0-based, the set of its
    deformation kinds) and ``joints`` (0-based indices of flexible joints whose spring is)."""

    deformations: tuple[frozenset[str], ...]
    joints: frozenset[int] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.joints) or any(self.deformations)

    def kinds(self, link: int) -> frozenset[str]:
        """The quasi-static deformation kinds of link ``link`` (0-based)."""
        return self.deformations[link]


def choose(arm: SpatialArm, sets: list[dict[str, ModeSet]]) -> QuasiStatic:
    """What is quasi-static in ``arm``: what its file says, and by the rule of the module docstring the
    torsion and stretch it leaves unsaid (``sets``: each link's mode sets, ``bodies.link_mode_sets``)."""
    deformations = []
    for i, link in enumerate(arm.links):
        kinds = set()
        for d in getattr(link, "deformations", ()):
            if d.kind in CONDENSABLE and (d.quasi_static or (d.quasi_static is None and
                                                             first_frequency(arm, i, d.kind, sets[i]) >= FAST)):
                kinds.add(d.kind)
        deformations.append(frozenset(kinds))
    joints = frozenset(j for j, link in enumerate(arm.links) if link.joint.quasi_static)
    return QuasiStatic(tuple(deformations), joints)


def first_frequency(arm: SpatialArm, i: int, kind: str, sets: dict[str, ModeSet]) -> float:
    """The lowest natural frequency (rad/s) that the torsion or stretch (``kind``) of link ``i`` (0-based) of
    ``arm`` can have at any pose, in its own assumed modes (``sets``): the link clamped at its root, carrying
    what lies beyond its tip as a rigid load at its tip: rho L int phi phi' + load phi(1) phi(1)' against
    stiffness / L int phi' phi''. A stretch carries everything beyond the tip, whatever the pose; a twist
    carries :func:`twist_load`, the most the distal chain can put about the link's axis."""
    link: SpatialFlexibleLink = arm.links[i]
    shapes = sets[B.SHORT[kind]]
    if kind == "torsion":
        own, load = link.polar_inertia_per_length * link.length, twist_load(arm, i)
    else:
        own, load = link.mass_per_length * link.length, B.distal_load(arm, i, np.eye(3)[0])[0]
    tip = np.asarray(shapes.tip_value)
    M = own * np.asarray(shapes.int_phi_phi) + load * np.outer(tip, tip)
    K = link.deformation(kind).stiffness / link.length * np.asarray(shapes.int_slope_slope)
    return float(np.sqrt(np.min(scipy.linalg.eigh(K, M, eigvals_only=True))))


def twist_load(arm: SpatialArm, i: int) -> float:
    """The largest rotary inertia (kg m^2) about the axis of link ``i`` (0-based) of ``arm``, through its tip,
    of what a twist of the link turns, over all joint angles: what is fixed to the tip (lumped masses there,
    the payload of the last link) about the axis, and each body beyond the next joint with its mass as far
    from the axis as the chain can reach and its largest principal inertia. Rotors do not turn with a twist
    (their kinetic energy follows the joint angles, which a twist does not change).

    A straight chain puts only its links' polar inertia about the axis, a folded one its whole length: the
    7-link test chain's first link twists at 413 rad/s straight and at 5 rad/s folded (tests)."""
    axis = np.eye(3)[0]
    links, load = arm.links, 0.0
    for lumped in arm.lumped_masses:
        if lumped.link - 1 == i and lumped.position == 1.0:
            load += axis @ np.array(lumped.inertia) @ axis
    if i + 1 == len(links):
        return load + axis @ np.array(arm.payload.inertia) @ axis

    def largest(inertia) -> float:
        return float(np.max(np.linalg.eigvalsh(np.array(inertia))))

    reach = 0.0  # the farthest the next body's joint can be from the axis
    for k in range(i + 1, len(links)):
        link = links[k]
        reach += float(np.linalg.norm(link.joint.offset))
        if isinstance(link, SpatialFlexibleLink):
            mass = link.mass_per_length * link.length
            load += mass * link.length**2 / 12 + mass * (reach + link.length / 2) ** 2  # a rod, however turned
        else:
            load += largest(link.inertia) + link.mass * (reach + float(np.linalg.norm(link.com))) ** 2
        for lumped in arm.lumped_masses:
            if lumped.link - 1 == k:
                load += largest(lumped.inertia) + lumped.mass * (reach + lumped.position * link.length) ** 2
        reach += link.length
    return load + largest(arm.payload.inertia) + arm.payload.mass * reach**2


def condensed_layout(full_records, kept_records) -> tuple[Coordinate, ...]:
    """The coordinates of the full chain (``full_records``) that are not in the condensed one
    (``kept_records``): what the Model reports as quasi-static."""
    kept = set(kept_records)
    return tuple(c for c in full_records if c not in kept)


def inverse_dynamics(parts, q, qd, qdd) -> ca.SX:
    """sum J'(G J qdd + F) of the chain ``parts`` (a ``chain.ChainParts``) at ``q``, ``qd``, ``qdd``, in q
    order: M qdd + h without the q-space forces (torques, springs, friction, damping), by recursive
    Newton-Euler over the per-link templates (O(N), SX)."""
    mu, a_in, bodies = ca.SX(FRAME, 1), base_acceleration(parts), []
    for layout, indices, constants in zip(parts.layouts, parts.link_indices, parts.constants):
        G, F, cs, T, mu, a_in = link_kinematics(layout)(q[indices], qd[indices], mu, a_in, constants)
        bodies.append((G, F, T, cs))
    mud, accelerations = ca.SX(FRAME, 1), []
    for layout, indices, (_, _, T, cs) in zip(parts.layouts, parts.link_indices, bodies):
        nud, mud = link_inverse_outward(layout)(mud, cs, qdd[indices], T)
        accelerations.append(nud)
    r, w = ca.SX(q.numel(), 1), ca.SX(FRAME, 1)
    for layout, indices, (G, F, T, cs), nud in zip(reversed(parts.layouts), reversed(parts.link_indices),
                                                    reversed(bodies), reversed(accelerations)):
        own, w = link_inverse_inward(layout)(G, F, T, cs, nud, w)
        r[indices] = own
    return r


def equilibrium(full, kept, q, qd, qdd) -> tuple[ca.SX, ca.SX, ca.SX]:
    """(q, qd, qdd) of the full chain ``full`` (every coordinate) for the condensed chain ``kept`` at its own
    ``q``, ``qd``, ``qdd``: its coordinates as they are, each quasi-static one at its static equilibrium
    (module docstring) with zero rate and acceleration; a quasi-static joint's rotor turns with the joint."""
    n = full.coords.size
    position = {c: k for k, c in enumerate(kept.coords.records)}
    pick = [position.get(c) for c in full.coords.records]
    q0, qd0, qdd0 = (ca.vertcat(*[x[k] if k is not None else ca.SX(0) for k in pick]) for x in (q, qd, qdd))
    r = inverse_dynamics(full, q0, qd0, qdd0)
    static, follow = ca.SX(n, 1), ca.SX(n, n)
    for i, (st, props) in enumerate(zip(full.structures, full.bodies)):
        for kind in sorted(kept.quasi_static.kinds(i)):
            short = B.SHORT[kind]
            index = list(full.coords.modal[i])[st.block(short)]
            static[index] = -small_spd_solve(props[f"K_{short}"], r[index])
    for j in sorted(kept.quasi_static.joints):
        rotor = full.coords.rotor[j]
        static[rotor] = r[full.coords.theta[j]] / full.P[f"joint[{j + 1}].stiffness"]
        follow[rotor, :] = full.rows.joint_rotations[j]
    return q0 + static + ca.mtimes(follow, q0), qd0 + ca.mtimes(follow, qd0), qdd0 + ca.mtimes(follow, qdd0)
