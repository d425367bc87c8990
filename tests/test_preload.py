"""A linearisation about a loaded equilibrium holds the load's geometric stiffness: paper 000's arm, hubs
held, vibrating about its sag under gravity, against an independent frame-element model written here.

The frame model is geometrically exact: corotational two-node Euler-Bernoulli elements (Crisfield's
element: linear strains in a frame that follows each element's chord, so rigid motions of any size cost
nothing), with consistent masses. Newton finds the static sag under gravity; the natural frequencies are
those of the tangent stiffness (the material part and the geometric part of the element forces: axial
force and end moments) and the consistent mass at the sag. It shares nothing with flexfmu but the arm's
numbers: link 1 (0.475 m, 0.374 kg, EI = 32.96 N m^2) clamped at 45 deg by its held hub, link 2 (0.435 m,
0.29 kg, EI = 13.9 N m^2) welded to its tip at -45 deg by the second held hub, 2.94 kg at the corner,
0.343 kg at the tip. Axially the links are made a million times stiffer than in bending, as flexfmu's are
inextensible.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.linalg

import flexfmu
from flexfmu.dynamics import linear
from flexfmu.dynamics.linear import held_frequencies
from flexfmu.harness.reproductions.paper000 import POSE, _converged

E = 2.06e11
LINKS = ((0.475, 0.374, 16e-11, np.pi / 4), (0.435, 0.29, 6.75e-11, 0.0))  # length, mass, I, angle (hubs held)
LUMPED = (2.94, 0.343)  # kg, at the end of link 1 and of link 2


def _element_mass(L: float, rhoA: float) -> np.ndarray:
    """Consistent mass of a beam element in its own axes (u1, v1, t1, u2, v2, t2)."""
    M, axial, bending = np.zeros((6, 6)), [0, 3], [1, 2, 4, 5]
    M[np.ix_(axial, axial)] = rhoA * L / 6 * np.array([[2, 1], [1, 2]])
    M[np.ix_(bending, bending)] = rhoA * L / 420 * np.array([
        [156, 22 * L, 54, -13 * L], [22 * L, 4 * L * L, 13 * L, -3 * L * L],
        [54, 13 * L, 156, -22 * L], [-13 * L, -3 * L * L, -22 * L, 4 * L * L]])
    return M


class Frame:
    """The two links as ``n`` corotational elements each, nodes 0 (the held hub) to 2n (the tip)."""

    def __init__(self, n: int, gravity: float):
        self.gravity, self.nodes, self.elements = gravity, [np.zeros(2)], []
        for length, mass, inertia, angle in LINKS:
            step = length / n
            for _ in range(n):
                self.nodes.append(self.nodes[-1] + step * np.array([np.cos(angle), np.sin(angle)]))
                EI = E * inertia
                self.elements.append(dict(first=len(self.nodes) - 2, L=step, angle=angle, EI=EI,
                                          EA=1e6 * EI / length**2, rhoA=mass / length))
        self.lumped = {n: LUMPED[0], 2 * n: LUMPED[1]}
        self.size = 3 * len(self.nodes)

    def _geometry(self, element, u):
        dofs = list(range(3 * element["first"], 3 * element["first"] + 6))
        a, b = element["first"], element["first"] + 1
        chord = self.nodes[b] + u[dofs[3:5]] - self.nodes[a] - u[dofs[0:2]]
        return dofs, np.hypot(*chord), chord / np.hypot(*chord)

    def forces(self, u):
        """Internal forces and tangent stiffness at the displacements ``u`` (x, y, rotation per node)."""
        f, K = np.zeros(self.size), np.zeros((self.size, self.size))
        for e in self.elements:
            dofs, length, (c, s) = self._geometry(e, u)
            turn = np.arctan2(s, c) - e["angle"]
            L, EI, EA = e["L"], e["EI"], e["EA"]
            local = np.array([[EA / L, 0, 0], [0, 4 * EI / L, 2 * EI / L], [0, 2 * EI / L, 4 * EI / L]])
            N, M1, M2 = local @ np.array([length - L, u[dofs[2]] - turn, u[dofs[5]] - turn])
            r, z = np.array([-c, -s, 0, c, s, 0]), np.array([s, -c, 0, -s, c, 0])
            B = np.vstack([r, -z / length + [0, 0, 1, 0, 0, 0], -z / length + [0, 0, 0, 0, 0, 1]])
            f[dofs] += B.T @ [N, M1, M2]
            K[np.ix_(dofs, dofs)] += (B.T @ local @ B + N / length * np.outer(z, z)
                                      + (M1 + M2) / length**2 * (np.outer(r, z) + np.outer(z, r)))
        return f, K

    def masses(self, u):
        """Consistent mass at ``u`` (each element's mass turned with its chord) and the weights."""
        M, weight = np.zeros((self.size, self.size)), np.zeros(self.size)
        for e in self.elements:
            dofs, _, (c, s) = self._geometry(e, u)
            R = scipy.linalg.block_diag(*[np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]])] * 2)
            M[np.ix_(dofs, dofs)] += R.T @ _element_mass(e["L"], e["rhoA"]) @ R
            weight[[dofs[1], dofs[4]]] -= e["rhoA"] * e["L"] / 2 * self.gravity
        for node, mass in self.lumped.items():
            M[3 * node, 3 * node] += mass
            M[3 * node + 1, 3 * node + 1] += mass
            weight[3 * node + 1] -= mass * self.gravity
        return M, weight

    def frequencies(self, count: int = 2) -> np.ndarray:
        """The lowest natural frequencies (rad/s) about the static sag (node 0 clamped)."""
        free, u = np.arange(3, self.size), np.zeros(self.size)
        _, weight = self.masses(u)
        for _ in range(50):
            f, K = self.forces(u)
            step = np.linalg.solve(K[np.ix_(free, free)], (weight - f)[free])
            u[free] += step
            if np.max(np.abs(step)) < 1e-14:
                break
        _, K = self.forces(u)
        M, _ = self.masses(u)
        squares = scipy.linalg.eigh(K[np.ix_(free, free)], M[np.ix_(free, free)], eigvals_only=True,
                                    subset_by_index=[0, count - 1])
        return np.sqrt(squares)


def flexfmu_frequencies(gravity: float) -> np.ndarray:
    """flexfmu's two lowest frequencies of paper 000's arm with converged modes, hubs held at (45, -45) deg."""
    arm = dataclasses.replace(_converged(flexfmu.load_arm("yu_chen_2dof")), gravity=(0.0, -gravity))
    return held_frequencies(flexfmu.build_model(arm), POSE)[:2]


@pytest.fixture(scope="module")
def frame():
    """The frame model's frequencies at gravity 0, g / 4 and g (16 elements per link: converged to 3e-5)."""
    return {g: Frame(16, g).frequencies() for g in (0.0, 9.81 / 4, 9.81)}


def test_without_load_flexfmu_and_the_frame_model_agree_to_round_off_of_their_discretisations(frame):
    assert flexfmu_frequencies(0.0) == pytest.approx(frame[0.0], rel=1e-5)


def test_about_the_sag_flexfmu_holds_the_preloads_geometric_stiffness(frame):
    """Under gravity flexfmu (second order in the deflections) and the exact frame agree to 0.5 % on w1 and
    0.05 % on w2 at full gravity, and sixteen times closer at a quarter of it: the rest is the truncation of
    the foreshortening, quadratic in the load. The load's own effect (w1 falls by 2.2 %) is matched."""
    full, quarter = flexfmu_frequencies(9.81), flexfmu_frequencies(9.81 / 4)
    assert np.all(np.abs(full / frame[9.81] - 1) <= [6e-3, 5e-4])
    assert np.all(np.abs(quarter / frame[9.81 / 4] - 1) <= [4e-4, 5e-5])
    assert frame[9.81][0] / frame[0.0][0] - 1 == pytest.approx(full[0] / frame[0.0][0] - 1, rel=0.25)


def test_leaving_the_geometric_stiffness_out_is_four_percent_off_and_the_test_sees_it(frame, monkeypatch):
    """The linearisation flexfmu made before (the sag of the model linear in the deflections, without the
    preload's geometric stiffness) gives w1 4 % above the exact frame: far outside the bounds above."""
    monkeypatch.setattr(linear, "with_geometric_stiffening", lambda arm: arm)
    inconsistent = flexfmu_frequencies(9.81)
    assert inconsistent[0] / frame[9.81][0] - 1 > 0.03


def test_the_export_step_rule_is_that_of_the_integrated_dynamics_and_the_start_pose_carries_no_preload():
    """The internal step follows the dynamics the FMU integrates (no geometric stiffness they leave out); at the
    start pose paper 000's links lie across gravity, so switching the stiffening on changes nothing there,
    while about the sag at (45, -45) deg it lowers w1 (the test above)."""
    from flexfmu.integrate import highest_frequency

    arm = flexfmu.load_arm("yu_chen_2dof")
    stiffened = linear.with_geometric_stiffening(arm)
    assert stiffened is not arm  # the shipped arm leaves the stiffening out of its dynamics
    integrated = highest_frequency(flexfmu.build_model(arm))
    assert integrated == pytest.approx(762.76, abs=0.01)
    assert highest_frequency(flexfmu.build_model(stiffened)) == pytest.approx(integrated, rel=1e-9)
