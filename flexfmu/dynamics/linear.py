"""Linearisation about a pose at rest: mass, stiffness and natural frequencies.

About a configuration q0 at rest, M(q0) dq'' + K dq = 0 with K = dh/dq at
(q0, qd = 0). Natural frequencies are the square roots of the generalized
eigenvalues of (K, M). Coordinates can be locked (removed), which is how a
joint held by its motor or brake is modelled. Used by tests against analytic
beam frequencies, and to choose a co-simulation step from the highest
frequency of an arm.

About a static equilibrium under load (:func:`held_frequencies`: the links
sagging under gravity with the hubs held) the linearisation is consistent
only with the geometric stiffness of the load: the axial force a link
carries (the weight of what hangs on it, along the link) works on the
foreshortening of the bent link, 1/2 int N(x) w'(x)^2 dx, which stiffens a
link in tension and softens one in compression. It is second order in the
deflection, so a Model built without geometric stiffening (a model linear in
the deflections, like paper 000's) has none of it, while its sag, first
order, is there. :func:`held_frequencies` therefore linearises the arm with
every link's geometric stiffening on (:func:`preloaded_energies`), whether
or not the Model's dynamics keep it: K is the Hessian of that arm's
potential energy at its equilibrium, M its mass matrix there (which holds
the kinetic energy of the foreshortening, of the same order). Checked
against a geometrically exact frame-element model of paper 000's arm
(``tests/test_preload.py``).
"""

from __future__ import annotations

import dataclasses
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
        Configuration (the start pose by default: ``model.start_coordinates``, undeformed).
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
    # K and D column by column: one symbolic directional derivative of h, evaluated along each unit vector
    # (a full symbolic Jacobian of the Delta robot's h took five times as long, 1.4 s against 0.25 s)
    q, qd, direction = ca.SX.sym("q", n), ca.SX.sym("qd", n), ca.SX.sym("direction", n)
    h = model.bias(q, qd, p)
    tangents = ca.Function("lin", [q, qd, direction], [ca.jtimes(h, q, direction), ca.jtimes(h, qd, direction)])
    K, D = (np.array(m) for m in tangents.map(n)(np.tile(q0[:, None], n), np.zeros((n, n)), np.eye(n)))
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
        Configuration (the start pose by default: ``model.start_coordinates``, undeformed).
    p : array, optional
        Parameters (nominal by default).
    locked : iterable of str
        Coordinate names to hold fixed (their rows and columns removed), e.g. ``["theta[1]"]``.
    """
    lin = linearise(model, q0, p, locked)
    eigenvalues = scipy.linalg.eigvals(lin.K, lin.M).real
    return np.sort(np.sqrt(np.clip(eigenvalues, 0.0, None)))


def with_geometric_stiffening(arm):
    """``arm`` with geometric stiffening on every link that has it off (links without the switch, and an
    arm whose links all keep it, as they are)."""
    links = getattr(arm, "links", ())
    if all(getattr(link, "geometric_stiffening", True) for link in links):
        return arm
    return dataclasses.replace(arm, links=tuple(
        link if getattr(link, "geometric_stiffening", True) else dataclasses.replace(link, geometric_stiffening=True)
        for link in links))


def preloaded_energies(model: Model) -> ca.Function:
    """(q, qd, p) -> (T, V): the kinetic and potential energy (gravity, strain, joint springs) of the arm of
    ``model`` with every link's geometric stiffening on, so that a linearisation about a loaded equilibrium
    holds the geometric stiffness of the load (see the module docstring). The Model's own energies when its
    links keep the term.

    Raises
    ------
    ValueError
        If the stiffened arm's graph does not have the Model's coordinates and parameters (a kind whose
        stiffening adds some).
    """
    graph = model.graph_for(with_geometric_stiffening(model.arm))
    if [c.name for c in graph.layout] != model.coordinates or \
            [row.name for row in graph.parameter_table] != list(model.parameters):
        raise ValueError(f"arm {model.arm.name!r}: the geometric stiffening changes the coordinates or parameters")
    T, V = graph.energies()
    return ca.Function("preloaded_energies", [graph.q, graph.qd, graph.p], [T, V], ["q", "qd", "p"], ["T", "V"])


def held_frequencies(model: Model, pose, p=None, group: str = "joint_angle") -> np.ndarray:
    """Natural frequencies (rad/s, ascending) with the encoders of ``group`` held at ``pose``.

    A motor that holds its encoder (or a gear that does not back-drive) fixes the hub angle, which
    for a chord-framed link is the joint coordinate plus a combination of the modes, not a
    coordinate: the encoders are held as linear constraints C dq = 0 on the configuration. The arm
    is linearised about the static equilibrium of the rest under gravity (found by Newton on the
    constrained coordinates), where M and K are projected onto the null space of C. M and K are those of
    :func:`preloaded_energies`: they hold the geometric stiffness of the links' axial load and the kinetic
    energy of their foreshortening, whether or not the Model's dynamics keep geometric stiffening (see the
    module docstring), and the equilibrium is that arm's.

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
    T, V = preloaded_energies(model)(q, qd, p)
    K, h = ca.hessian(V, q)
    terms = ca.Function("held", [q], [ca.jacobian(encoders, q), h, K])
    mass = ca.Function("mass", [q], [ca.substitute(ca.hessian(T, qd)[0], qd, ca.SX.zeros(n))])
    q0 = np.zeros(n)
    q0[model.coordinates_of("joint")] = pose
    C = np.array(terms(q0)[0])
    null = scipy.linalg.null_space(C)
    if null.shape[1] == 0:  # the held encoders fix every coordinate: a rigid arm, nothing vibrates
        return np.zeros(0)
    z = np.zeros(null.shape[1])
    for _ in range(50):
        _, hz, Kz = (np.array(m) for m in terms(q0 + null @ z))
        step = np.linalg.solve(null.T @ Kz @ null, null.T @ hz.ravel())
        z -= step
        if np.max(np.abs(step)) < 1e-14:
            break
    _, _, K = (np.array(m) for m in terms(q0 + null @ z))
    M = np.array(mass(q0 + null @ z))
    eigenvalues = scipy.linalg.eigvals(null.T @ K @ null, null.T @ M @ null).real
    return np.sort(np.sqrt(np.clip(eigenvalues, 0.0, None)))
