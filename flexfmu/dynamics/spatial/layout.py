"""The coordinates q of a spatial arm and the constant rows built on them.

q orders joint angles theta[j], then rotor angles alpha[j] of flexible
joints, then each link's modal coordinates f[i,k], numbered within the link
in the order bending_y, bending_z, torsion, axial (so a planar arm written
as a spatial one, with bending_y only, has the planar q). Bending and axial
modal coordinates are lengths (m), torsion ones angles (rad).

The joint angle an encoder reads, psi_j, is theta_j plus the root rotation
of link j about the joint axis, minus the rotation of link j-1's tip tangent
relative to its distal frame about the same axis (both zero for tangent
frames with clamped roots). Like the planar chain's, these rows are
constant, so torques, friction and springs act through constant rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from flexfmu.dynamics.metadata import Coordinate
from flexfmu.spec.spatial_arm import DEFORMATIONS, SpatialArm

UNITS = {"bending_y": "m", "bending_z": "m", "torsion": "rad", "axial": "m"}


@dataclass(frozen=True)
class SpatialCoordinates:
    """Layout of q: ``records`` (Coordinate of each entry), ``theta`` (index of
    each joint angle), ``rotor`` ({0-based joint: index}), ``modal`` (each
    link's modal indices) and ``blocks`` (each link's {deformation: indices})."""

    records: tuple[Coordinate, ...]
    theta: tuple[int, ...]
    rotor: dict[int, int]
    modal: tuple[tuple[int, ...], ...]
    blocks: tuple[dict[str, tuple[int, ...]], ...]

    @property
    def size(self) -> int:
        return len(self.records)


def coordinate_layout(arm: SpatialArm, dropped=None) -> SpatialCoordinates:
    """Order q of ``arm``: theta[j], alpha[j] (flexible joints), f[i,k] (see the module docstring), without
    the quasi-static ones of ``dropped`` (a ``quasi_static.QuasiStatic``, None for none), whose names the
    others keep: f[i,k] is the same mode with or without them."""
    records = [Coordinate(f"theta[{j}]", "joint", j, "rad") for j in range(1, len(arm.links) + 1)]
    theta = tuple(range(len(records)))
    rotor = {}
    for j, link in enumerate(arm.links):
        if link.joint.kind == "flexible" and not (dropped and j in dropped.joints):
            rotor[j] = len(records)
            records.append(Coordinate(f"alpha[{j + 1}]", "rotor", j + 1, "rad"))
    modal, blocks = [], []
    for i, link in enumerate(arm.links, start=1):
        start, block, k = len(records), {}, 0
        for kind in DEFORMATIONS:
            count = link.count(kind) if link.kind == "flexible" else 0
            if count and not (dropped and kind in dropped.kinds(i - 1)):
                block[kind] = tuple(range(len(records), len(records) + count))
                records += [Coordinate(f"f[{i},{k + m}]", "modal", i, UNITS[kind], k + m) for m in range(1, count + 1)]
            k += count
        modal.append(tuple(range(start, len(records))))
        blocks.append(block)
    return SpatialCoordinates(tuple(records), theta, rotor, tuple(modal), tuple(blocks))


@dataclass(frozen=True)
class SpatialRows:
    """Constant rows over q: ``selections`` (E_i, link i's modes out of q), ``joint_rotations`` (psi_j),
    ``motors`` (rotor angle of a flexible joint, psi_j of a rigid one) and ``springs`` ({joint: row of
    alpha_j - psi_j}); the attributes the shared force code (``flexfmu.dynamics.forces``) reads."""

    selections: list[ca.SX]
    joint_rotations: list[ca.SX]
    motors: list[ca.SX]
    springs: dict[int, ca.SX]


def chain_rows(coords: SpatialCoordinates, root_rows: list[ca.SX], tangent_rows: list[ca.SX]) -> SpatialRows:
    """The rows of :class:`SpatialRows` for the layout ``coords``, given per link the rows (1 x modes,
    symbolic in p) of its root rotation about its own joint axis (``root_rows``) and of its tip tangent's
    rotation relative to its distal frame about the next joint's axis (``tangent_rows``)."""
    n = coords.size
    selections = []
    for idx in coords.modal:
        E = ca.SX(len(idx), n)
        for r, c in enumerate(idx):
            E[r, c] = 1
        selections.append(E)
    psi = []
    for j, theta in enumerate(coords.theta):
        row = ca.SX(1, n)
        row[0, theta] = 1
        if coords.modal[j]:
            row += ca.mtimes(root_rows[j], selections[j])
        if j > 0 and coords.modal[j - 1]:
            row -= ca.mtimes(tangent_rows[j - 1], selections[j - 1])
        psi.append(row)
    motors, springs = [], {}
    for j in range(len(coords.theta)):
        if j in coords.rotor:
            alpha = ca.SX(1, n)
            alpha[0, coords.rotor[j]] = 1
            motors.append(alpha)
            springs[j] = alpha - psi[j]
        else:
            motors.append(psi[j])
    return SpatialRows(selections, psi, motors, springs)

