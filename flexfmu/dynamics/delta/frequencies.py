"""Natural frequencies of a Delta robot at a pose, with the motors held (paper 003 section 5.1).

At a platform position P the motor angles follow from the inverse
kinematics and are held (the motors' brakes or stiff servos). The elastic
coordinates d then vibrate about their static equilibrium under gravity:
M_dd(theta) d'' + K(theta, d*) d = 0, with M_dd the elastic block of the
mass matrix and K the Hessian of the potential energy at the equilibrium d*
(strain energy, and with ``axial_load`` the geometric stiffness of the axial
forces the weights cause). Without ``axial_load`` the potential is quadratic
in d and K does not depend on d*.

The energies are those of the Model (:mod:`flexfmu.dynamics.delta.assembly`),
evaluated with the motor angles as numbers, so any element count is quick.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import casadi as ca
import numpy as np
import scipy.linalg

from flexfmu.dynamics.delta.assembly import ElementEnergies, elastic_layout
from flexfmu.dynamics.delta.body_energies import BodyEnergies, chain_layout
from flexfmu.dynamics.delta.graph import delta_parameters
from flexfmu.dynamics.delta.kinematics import DeltaKinematics, Dimensions
from flexfmu.dynamics.delta.reduction import Reduction, link_bases, reduction_of

NEWTON_TOLERANCE = 1e-12


@dataclass(frozen=True)
class PoseModes:
    """Natural frequencies (rad/s, ascending) and mode shapes (columns over the elastic coordinates ``names``,
    mass-normalised) at a pose; ``equilibrium`` is the static elastic deformation d* under gravity."""

    position: tuple[float, float, float]
    motor_angles: np.ndarray
    frequencies: np.ndarray
    shapes: np.ndarray
    names: list[str]
    equilibrium: np.ndarray


def parameter_values(arm, overrides: dict | None = None) -> dict[str, float]:
    """{name: value} of the Delta robot ``arm`` at nominal values, with ``overrides`` (name -> value) applied."""
    values = {row.name: row.value for row in delta_parameters(arm)}
    unknown = set(overrides or {}) - set(values)
    if unknown:
        raise KeyError(f"unknown parameters {sorted(unknown)}")
    return values | dict(overrides or {})


def pose_modes(arm, position, elements: int | None = None, approximation: str | None = None,
               axial_load: bool | None = None, overrides: dict | None = None,
               reduction: Reduction | None = None) -> PoseModes:
    """Natural frequencies and modes of the Delta robot ``arm`` with its platform at ``position``.

    Parameters
    ----------
    arm : DeltaArm
    position : sequence of 3 floats
        Platform centre (m, base frame, Z down).
    elements, approximation, axial_load : optional
        Override the arm's element count, approximation and axial-load switch.
    overrides : dict, optional
        Parameter values by name (see ``flexfmu info``), e.g. ``{"gravity.z": 0.0}``.
    reduction : Reduction, optional
        How the links are reduced (default: as the arm says); ``Reduction("none")`` gives the full finite
        element model, evaluated element by element (the reference the reduced models are checked against).

    Raises
    ------
    KinematicsError
        If ``position`` is outside the workspace or singular.
    """
    settings = arm.elements
    settings = dataclasses.replace(settings, **{key: value for key, value in (
        ("count", elements), ("approximation", approximation), ("axial_load", axial_load)) if value is not None})
    values = parameter_values(arm, overrides)
    dims = Dimensions(values["base.radius"], values["platform.radius"], values["upper.length"], values["lower.length"])
    theta = DeltaKinematics(dims).inverse(position)
    reduction = reduction or reduction_of(settings)
    if reduction.method == "none":
        layout = elastic_layout(settings.approximation, settings.count)
        energies = ElementEnergies(layout, values, settings.axial_load)
    else:
        bases = link_bases(settings, values, reduction)
        layout = chain_layout(bases, settings.approximation, settings.count)
        lengths = {link: values[f"{link}.length"] for link in bases}
        energies = BodyEnergies(layout, bases, lengths, settings.approximation, settings.count, values,
                                settings.axial_load)
    d, rate = ca.SX.sym("d", layout.size), ca.SX.sym("rate", layout.size)
    kinetic = energies.kinetic(ca.DM(theta), d, ca.DM.zeros(3), rate, d, rate)
    potential = sum(energies.potential(ca.DM(theta), d))
    mass = np.array(ca.Function("M", [], [ca.hessian(kinetic, rate)[0]])()["o0"])
    stiffness, gradient = ca.hessian(potential, d)
    local = ca.Function("local", [d], [stiffness, gradient])
    equilibrium = np.zeros(layout.size)
    for _ in range(20):
        K, g = (np.array(v) for v in local(equilibrium))
        step = np.linalg.solve(K, -g.ravel())
        equilibrium += step
        if np.abs(step).max() <= NEWTON_TOLERANCE * max(1.0, np.abs(equilibrium).max()):
            break
    K = np.array(local(equilibrium)[0])
    omega2, shapes = scipy.linalg.eigh(0.5 * (K + K.T), 0.5 * (mass + mass.T))
    frequencies = np.sqrt(np.clip(omega2, 0.0, None)) * np.sign(omega2)
    return PoseModes(tuple(map(float, position)), theta, frequencies, shapes, [c.name for c in layout.records],
                     equilibrium)


def natural_frequencies(arm, position, count: int = 8, **options) -> np.ndarray:
    """The first ``count`` natural frequencies (rad/s) of the Delta robot ``arm`` with the platform at
    ``position`` and the motors held; ``options`` as for :func:`pose_modes` (elements, approximation,
    axial_load, overrides, reduction)."""
    return pose_modes(arm, position, **options).frequencies[:count]
