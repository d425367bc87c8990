"""Analytic beam frequencies: the clamped-free and the clamped-mass frequency equations.

A uniform Euler-Bernoulli beam clamped at its root has the natural
frequencies omega_k = (beta_k L)^2 sqrt(EI / (rho A L^4)), beta_k L the roots
of its frequency equation: cos b cosh b = -1 without a tip load, and
1 + cos b cosh b + mu b (cos b sinh b - sin b cosh b) = 0 with a tip mass
mu rho A L (no tip inertia). The tabulated roots (to the digits given here)
are compared with the frequencies of flexfmu's Model with its hub locked,
converted back to beta L.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import flexfmu
from flexfmu.dynamics.linear import natural_frequencies
from flexfmu.harness.reproductions.rows import Row, relative_row

CANTILEVER = (1.8751041, 4.6940911, 7.8547574)  # roots of cos b cosh b = -1
TIP_MASS_1 = (1.2479174, 4.0311394)  # roots with a tip mass equal to the beam's mass (mu = 1)
TOLERANCE = 1e-6  # relative: the modes are the exact shapes, so only the roots' digits limit it

TIP_MASS_BEAM = """
name = "tip_mass_beam"
description = "A clamped beam on a locked hub with a tip mass equal to its own mass"
gravity = [0.0, 0.0]

[[link]]
kind = "flexible"
length = 1.0
mass_per_length = 1.0
EI = 1.0

[link.modes]
family = "clamped-mass"
count = 2

[link.joint]
kind = "rigid"
rotor_inertia = 0.1

[payload]
mass = 1.0
inertia = 0.0
"""


def load_text(text: str):
    """The Model of an arm given as TOML ``text``."""
    with tempfile.TemporaryDirectory(prefix="flexfmu-reproduce-") as folder:
        path = Path(folder) / "arm.toml"
        path.write_text(text)
        return flexfmu.build_model(flexfmu.load_arm(path))


def _betas(model) -> list[float]:
    """beta_k L of the model's one link from its frequencies with the hub locked."""
    parameters = model.parameters
    length, rho, EI = (parameters[f"link[1].{name}"] for name in ("length", "mass_per_length", "EI"))
    omegas = natural_frequencies(model, locked=[model.coordinates[0]])
    return [float(length * (omega**2 * rho / EI) ** 0.25) for omega in omegas]


def cantilever(out: Path) -> list[Row]:
    """The example arm ``cantilever`` (paper 001's spin-up beam, three clamped-free modes) with its hub
    locked; ``out`` is unused (no figure)."""
    betas = _betas(flexfmu.build_model(flexfmu.load_arm("cantilever")))
    return [relative_row("Euler-Bernoulli, clamped-free: cos b cosh b = -1", f"beta_{k} L, mode {k}", published,
                         ours, "1", TOLERANCE) for k, (published, ours) in enumerate(zip(CANTILEVER, betas), start=1)]


def clamped_mass(out: Path) -> list[Row]:
    """A clamped beam with a tip mass equal to its own mass (two clamped-mass modes), hub locked; ``out``
    is unused (no figure)."""
    betas = _betas(load_text(TIP_MASS_BEAM))
    return [relative_row("Euler-Bernoulli, tip mass M = rho A L: 1 + cos b cosh b + b (cos b sinh b - sin b cosh b) "
                         "= 0", f"beta_{k} L, mode {k}", published, ours, "1", TOLERANCE)
            for k, (published, ours) in enumerate(zip(TIP_MASS_1, betas), start=1)]
