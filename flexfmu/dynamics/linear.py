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
        Configuration (the start pose by default: zeros, the arm stretched along x, for serial arms).
    p : array, optional
        Parameters (nominal by default).
    locked : iterable of str
        Coordinate names to hold fixed, e.g. ``["theta[1]"]``.
    """
    n = len(model.coordinates)
    q0 = model.start_coordinates if q0 is None else np.asarray(q0, float)
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
        Configuration (the start pose by default: zeros, the arm stretched along x, for serial arms).
    p : array, optional
        Parameters (nominal by default).
    locked : iterable of str
        Coordinate names to hold fixed (their rows and columns removed), e.g. ``["theta[1]"]``.
    """
    lin = linearise(model, q0, p, locked)
    eigenvalues = scipy.linalg.eigvals(lin.K, lin.M).real
    return np.sort(np.sqrt(np.clip(eigenvalues, 0.0, None)))
