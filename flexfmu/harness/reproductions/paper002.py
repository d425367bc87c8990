"""Paper 002 (Lin & Lewis 1994): the zero dynamics of a flexible link.

The paper's claim (its section 4.1): with the joint angle (the rigid
coordinate) as the output of the joint torque, the zero dynamics of a
pinned-pinned (chord-framed) model of a flexible link are unstable
(non-minimum phase: zeros with positive real parts), those of a
clamped-free model marginally stable (zeros on the imaginary axis). Here
the zeros of the undamped link at rest are computed from flexfmu's Model
(the paper's link in SI units, on a hub): the finite generalized
eigenvalues s^2 of [[K, -B], [C, 0]] v = -s^2 [[M, 0], [0, 0]] v, C
selecting the joint coordinate. The paper's zeros themselves
(+-58.89 +- j76.06 and +-j76.98, +-j1.0914) depend on a hub and mode count
it does not give, so the rows compare the sign, which is the claim.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.linalg

from flexfmu.dynamics.linear import linearise
from flexfmu.harness.reproductions.beams import load_text
from flexfmu.harness.reproductions.rows import Row

LINK = """
name = "lin_lewis_link"
description = "The flexible link of paper 002 on a hub, undamped, horizontal plane"
gravity = [0.0, 0.0]

[[link]]
kind = "flexible"
length = 1.1938
mass_per_length = 0.245178
EI = 11.8236

[link.modes]
family = "{family}"
count = 3

[link.joint]
kind = "rigid"
rotor_inertia = 0.01
"""


def zeros(model) -> np.ndarray:
    """The transmission zeros s (complex) from the joint torque to the joint coordinate of the one-link
    ``model`` at rest, stretched along x."""
    n = len(model.coordinates)
    p = model.nominal_parameters
    lin = linearise(model)
    B = np.array(model.input_matrix(np.zeros(n), p))
    C = np.zeros((1, n))
    C[0, model.coordinates_of("joint")[0]] = 1.0
    A = np.block([[lin.K, -B], [C, np.zeros((1, 1))]])
    E = np.block([[lin.M, np.zeros((n, 1))], [np.zeros((1, n + 1))]])
    squares = scipy.linalg.eigvals(A, -E)
    squares = squares[np.isfinite(squares)]
    return np.concatenate([np.sqrt(squares.astype(complex)), -np.sqrt(squares.astype(complex))])


def zero_dynamics(out: Path) -> list[Row]:
    """Rows for both of the paper's claims; ``out`` is unused (no figure)."""
    pinned = zeros(load_text(LINK.format(family="pinned-pinned")))
    clamped = zeros(load_text(LINK.format(family="clamped-free")))
    source = "Paper 002, zero dynamics"
    largest = float(np.max(pinned.real))
    spread = float(np.max(np.abs(clamped.real)) / np.max(np.abs(clamped)))
    return [
        Row(source, "pinned-pinned link: largest real part of a zero (non-minimum phase)", 0.0, largest, "1/s",
            "ours > 0", largest > 0.0, "The paper states the sign, not a value."),
        Row(source, "clamped-free link: largest abs(real part) / abs(zero) (marginally stable: imaginary zeros)", 0.0, spread,
            "1", "ours <= 1e-9", spread <= 1e-9, "The paper states the sign, not a value."),
    ]
