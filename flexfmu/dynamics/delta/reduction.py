"""Bases of the Delta's flexible links: the full nodal values, or a Craig-Bampton reduction.

A link touches the rest of the robot only at its joint nodes (the upper
link at the knee B, the lower link at B and at the platform joint D; the
motor clamps the upper link at A). Component mode synthesis keeps those
interface values as coordinates and replaces the link's inner nodal values
by

* one static constraint mode per interface value: the link's static shape
  for a unit value there and zero at the other interface values, so a link
  loaded only at its joints deforms exactly as the full model;
* the link's fixed-interface normal modes (joints clamped) up to a cutoff
  frequency (or a count): the dynamics inside the link.

This is the Craig-Bampton basis (as SIMPACK, Adams, the Modelica
FlexibleBodies library and EXUDYN's reduced-order FFRF bodies import them
from FE codes), built per link in its own frame, so it does not depend on
the robot's pose (a global modal basis of a parallel robot does: the
platform's modes at one pose stretch the lower links at another). The
fields of a straight beam decouple, so each fixed-interface mode is one
field's (axial u, torsion phi, bending v or w) and its shape does not
depend on the section's coefficients; the cutoff is applied to the
frequencies at the arm's nominal parameters.

The default cutoff keeps the links' first bending modes (about 470 and 680
rad/s for the example): the first eight natural frequencies of the robot
then stay within 0.05 % of the full model's for 2 to 4 elements per link
(tests/test_delta_reduction.py), and the axial and torsion modes inside the
links (above 10,000 rad/s) leave the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from flexfmu.modes.elements import JOINT_VALUES, BeamSection, NodeLayout, straight_beam

METHODS = ("craig-bampton", "none")
DEFAULT_CUTOFF = 1000.0  # rad/s: keeps each link's first bending pair (see the module docstring)
VALUE_NAMES = {("u", 0): "u", ("u", 1): "du", ("phi", 0): "phi", ("phi", 1): "dphi", ("v", 0): "v",
               ("v", 1): "dv", ("v", 2): "ddv", ("w", 0): "w", ("w", 1): "dw", ("w", 2): "ddw"}
VALUE_UNITS = {("u", 0): "m", ("u", 1): "1", ("phi", 0): "rad", ("phi", 1): "rad/m", ("v", 0): "m",
               ("v", 1): "1", ("v", 2): "1/m", ("w", 0): "m", ("w", 1): "1", ("w", 2): "1/m"}
# a mode is scaled to 1 at its largest nodal value (_interior_modes)
MODE_UNIT = {"u": "m", "v": "m", "w": "m", "phi": "rad"}


@dataclass(frozen=True)
class Reduction:
    """How the finite-element links are reduced.

    Attributes
    ----------
    method : str
        ``craig-bampton`` (default) or ``none`` (the full nodal values).
    cutoff : float
        Keep the fixed-interface modes up to this frequency, rad/s.
    modes : int or None
        Keep this many fixed-interface modes per link (the lowest) instead of a cutoff.
    """

    method: str = "craig-bampton"
    cutoff: float = DEFAULT_CUTOFF
    modes: int | None = None

    def describe(self) -> str:
        """One line for ``flexfmu info`` and the FMU's description."""
        if self.method == "none":
            return "none (every nodal value of the finite elements)"
        kept = f"{self.modes} lowest" if self.modes is not None else f"those up to {self.cutoff:g} rad/s"
        return f"Craig-Bampton per link: the joint interface values and the fixed-interface modes, {kept}"


@dataclass(frozen=True)
class InteriorMode:
    """One fixed-interface mode of a link: its field, its frequency (rad/s, nominal parameters) and whether it
    was kept."""

    field: str
    frequency: float
    kept: bool


@dataclass(frozen=True)
class LinkBasis:
    """The basis delta = psi xi of one link.

    Attributes
    ----------
    link : str
        ``upper`` or ``lower``.
    psi : numpy.ndarray
        (the link's nodal values, node by node) x (coordinates xi); xi = [boundary values; interior
        coordinates].
    boundary : tuple
        (node, (field, derivative)) of each boundary column, joint node by joint node, each in
        :data:`~flexfmu.modes.elements.JOINT_VALUES` order.
    interior : tuple
        (name, unit) of each interior coordinate, ``{i}`` standing for the chain; nodal values
        (``upper[{i}].dv[1]``) with no reduction, modes (``upper[{i}].v.mode[1]``) with one.
    modes : tuple of InteriorMode
        Every fixed-interface mode (empty without reduction).
    """

    link: str
    psi: np.ndarray
    boundary: tuple
    interior: tuple
    modes: tuple = field(default=())

    @property
    def size(self) -> int:
        return self.psi.shape[1]


def joint_nodes(link: str, elements: int) -> tuple[int, ...]:
    """The link's nodes at a joint whose values are coordinates of the robot (the upper link's at A is
    clamped)."""
    return (elements,) if link == "upper" else (0, elements)


def link_basis(link: str, approximation: str, elements: int, length: float, section: BeamSection,
               reduction: Reduction) -> LinkBasis:
    """The :class:`LinkBasis` of ``link`` (``upper`` or ``lower``) of ``elements`` elements of ``approximation``
    and ``length`` (m), its nominal ``section``, reduced as ``reduction`` says."""
    node = NodeLayout(approximation)
    size = (elements + 1) * node.size
    joints = joint_nodes(link, elements)
    boundary = tuple((k, value) for k in joints for value in JOINT_VALUES)
    clamped = {(0, value) for value in JOINT_VALUES} if link == "upper" else set()
    inner = [(k, value) for k in range(elements + 1) for value in node.values
             if (k, value) not in clamped and (k, value) not in boundary]
    position = {(k, value): k * node.size + node.index(*value) for k in range(elements + 1) for value in node.values}
    b_rows, i_rows = [position[v] for v in boundary], [position[v] for v in inner]
    if reduction.method == "none":
        psi = np.zeros((size, len(boundary) + len(inner)))
        psi[b_rows + i_rows, range(psi.shape[1])] = 1.0
        names = tuple((f"{link}[{{i}}].{VALUE_NAMES[value]}[{k}]", VALUE_UNITS[value]) for k, value in inner)
        return LinkBasis(link, psi, boundary, names)
    M, K = straight_beam(approximation, elements, length, section)
    psi = np.zeros((size, len(boundary)))
    psi[b_rows, range(len(boundary))] = 1.0
    if i_rows:
        psi[i_rows] = -np.linalg.solve(K[np.ix_(i_rows, i_rows)], K[np.ix_(i_rows, b_rows)])
    modes, shapes = _interior_modes(node, inner, i_rows, M, K, length / elements)
    order = np.argsort([m.frequency for m in modes], kind="stable")
    kept_count = (reduction.modes if reduction.modes is not None
                  else sum(m.frequency <= reduction.cutoff for m in modes))
    kept_set = set(order[:kept_count].tolist())
    modes = [InteriorMode(m.field, m.frequency, k in kept_set) for k, m in enumerate(modes)]
    columns, names, counts = [], [], {}
    for k in order[:kept_count]:
        column = np.zeros(size)
        column[i_rows] = shapes[k]
        columns.append(column)
        f = modes[k].field
        counts[f] = counts.get(f, 0) + 1
        names.append((f"{link}[{{i}}].{f}.mode[{counts[f]}]", MODE_UNIT[f]))
    if columns:
        psi = np.column_stack([psi, *columns])
    return LinkBasis(link, psi, boundary, tuple(names), tuple(modes[k] for k in order))


def _interior_modes(node: NodeLayout, inner, rows, M, K, element_length: float):
    """Every fixed-interface mode, field by field: (InteriorMode list, shapes over ``rows``). Each shape is
    scaled to 1 at its largest nodal value with derivatives counted as displacements over an element
    (l v', l^2 v'', l the ``element_length``): a mode whose displacements vanish at the nodes (a 2-element
    link's antisymmetric bending mode is all slope at its middle node) is scaled by its slopes, not by
    round-off."""
    modes, shapes = [], []
    for field_name in ("u", "phi", "v", "w"):
        own = [j for j, (_, value) in enumerate(inner) if value[0] == field_name]
        if not own:
            continue
        sub = [rows[j] for j in own]
        omega2, vectors = scipy.linalg.eigh(K[np.ix_(sub, sub)], M[np.ix_(sub, sub)])
        lengths = np.array([element_length ** inner[j][1][1] for j in own])
        for w2, vector in zip(omega2, vectors.T):
            largest = np.argmax(np.abs(vector) * lengths)
            shape = np.zeros(len(rows))
            shape[own] = vector / (vector[largest] * lengths[largest])
            modes.append(InteriorMode(field_name, float(np.sqrt(max(w2, 0.0))), False))
            shapes.append(shape)
    return modes, shapes


def reduction_of(elements) -> Reduction:
    """The :class:`Reduction` an arm's ``elements`` settings (:class:`flexfmu.spec.delta.Elements`) ask for."""
    return Reduction(elements.reduction, elements.cutoff, elements.modes)


def link_bases(elements, values: dict, reduction: Reduction | None = None) -> dict[str, LinkBasis]:
    """{link: LinkBasis} of a Delta robot's ``elements`` settings at the nominal parameter ``values`` (name ->
    number), reduced as ``reduction`` says (default: as the settings say)."""
    reduction = reduction or reduction_of(elements)

    def section(link: str) -> BeamSection:
        return BeamSection(*(values[f"{link}.{key}"] for key in
                             ("mass_per_length", "torsion_inertia", "EA", "EIy", "EIz", "GJ")))

    return {link: link_basis(link, elements.approximation, elements.count, values[f"{link}.length"], section(link),
                             reduction) for link in ("upper", "lower")}
