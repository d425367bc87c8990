"""Linearisation about a pose at rest: mass, stiffness and natural frequencies.

About a configuration q0 at rest, M(q0) dq'' + K dq = 0 with K = dh/dq at
(q0, qd = 0). Natural frequencies are the square roots of the generalized
eigenvalues of (K, M). Coordinates can be locked (removed), which is how a
joint held by its motor or brake is modelled. Used by tests against analytic
beam frequencies, and to choose a co-simulation step from the highest
frequency of an arm.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np
import scipy.linalg

from flexfmu.dynamics.model import Model


@dataclass(frozen=True)
class Linearisation:
    """M, K (stiffness) and D (damping) about a pose at rest, over the free
    coordinates ``names``."""

    names: list[str]
    M: np.ndarray
    K: np.ndarray
    D: np.ndarray


def linearise(model: Model, q0=None, p=None, locked=()) -> Linearisation:
    """Linearise ``model`` about ``q0`` at rest with zero input.

    Parameters
    ----------
    q0 : array, optional
        Configuration (zeros by default: the arm stretched along x).
    p : array, optional
        Parameters (nominal by default).
    locked : iterable of str
        Coordinate names to hold fixed, e.g. ``["theta[1]"]``.
    """
    n = len(model.coordinates)
    q0 = np.zeros(n) if q0 is None else np.asarray(q0, float)
    p = model.nominal_parameters if p is None else np.asarray(p, float)
    unknown = set(locked) - set(model.coordinates)
    if unknown:
        raise KeyError(f"cannot lock unknown coordinates {sorted(unknown)}")
    q, qd = ca.SX.sym("q", n), ca.SX.sym("qd", n)
    h = model.bias(q, qd, p)
    derivatives = ca.Function("lin", [q, qd], [ca.jacobian(h, q), ca.jacobian(h, qd)])
    K, D = (np.array(m) for m in derivatives(q0, np.zeros(n)))
    M = np.array(model.mass_matrix(q0, p))
    free = [k for k, name in enumerate(model.coordinates) if name not in set(locked)]
    pick = np.ix_(free, free)
    return Linearisation([model.coordinates[k] for k in free], M[pick], K[pick], D[pick])


def natural_frequencies(model: Model, q0=None, p=None, locked=()) -> np.ndarray:
    """Undamped natural frequencies (rad/s, ascending) about ``q0`` at rest.

    Rigid-body (free) coordinates give zero frequencies; a pose that is not an
    equilibrium gives a K with a non-symmetric part, of which only the real
    part of each eigenvalue is used.

    Parameters
    ----------
    model : Model
    q0 : array, optional
        Configuration (zeros by default: the arm stretched along x).
    p : array, optional
        Parameters (nominal by default).
    locked : iterable of str
        Coordinate names to hold fixed (their rows and columns removed), e.g. ``["theta[1]"]``.
    """
    lin = linearise(model, q0, p, locked)
    eigenvalues = scipy.linalg.eigvals(lin.K, lin.M).real
    return np.sort(np.sqrt(np.clip(eigenvalues, 0.0, None)))


def held_frequencies(model: Model, pose, p=None, group: str = "joint_angle") -> np.ndarray:
    """Natural frequencies (rad/s, ascending) with the encoders of ``group`` held at ``pose``.

    A motor that holds its encoder (or a gear that does not back-drive) fixes the hub angle, which
    for a chord-framed link is the joint coordinate plus a combination of the modes, not a
    coordinate: the encoders are held as linear constraints C dq = 0 on the configuration. The arm
    is linearised about the static equilibrium of the rest under gravity (found by Newton on the
    constrained coordinates), where M and K = dh/dq are projected onto the null space of C.

    Parameters
    ----------
    model : Model
    pose : array
        The held encoder angles, rad, one per joint.
    p : array, optional
        Parameters (nominal by default).
    group : str
        The output group of the held encoders (``"joint_angle"``: the hubs).
    """
    n = len(model.coordinates)
    p = model.nominal_parameters if p is None else np.asarray(p, float)
    q, qd = ca.SX.sym("q", n), ca.SX.sym("qd", n)
    rows = [model.output_names.index(name) for name in model.outputs_of(group)]
    encoders = model.kinematic_outputs(q, qd, ca.SX.zeros(n), p)[rows]
    h = model.bias(q, ca.SX.zeros(n), p)
    terms = ca.Function("held", [q], [ca.jacobian(encoders, q), h, ca.jacobian(h, q)])
    q0 = np.zeros(n)
    q0[model.coordinates_of("joint")] = pose
    C = np.array(terms(q0)[0])
    null = scipy.linalg.null_space(C)
    z = np.zeros(null.shape[1])
    for _ in range(50):
        _, hz, Kz = (np.array(m) for m in terms(q0 + null @ z))
        step = np.linalg.solve(null.T @ Kz @ null, null.T @ hz.ravel())
        z -= step
        if np.max(np.abs(step)) < 1e-14:
            break
    _, _, K = (np.array(m) for m in terms(q0 + null @ z))
    M = np.array(model.mass_matrix(q0 + null @ z, p))
    eigenvalues = scipy.linalg.eigvals(null.T @ K @ null, null.T @ M @ null).real
    return np.sort(np.sqrt(np.clip(eigenvalues, 0.0, None)))
