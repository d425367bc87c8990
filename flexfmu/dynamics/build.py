"""Building a Model on a kind's graph: M, h and B as Functions, the forward dynamics, and a check of M.

:func:`assemble_model` takes the arm and its kind's graph class (the table
of kinds, ``flexfmu.kinds``, says which), builds M(q, p), h(q, qd, p) and
B(q, p) by the chosen derivation, and the accelerations by a numeric solve
of the evaluated M; :func:`check_mass_matrix` refuses an arm whose M is
not positive definite in double precision, naming the link.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from flexfmu.dynamics.definiteness import unit_diagonal
from flexfmu.dynamics.drives import Drives
from flexfmu.dynamics.metadata import Coordinate
from flexfmu.dynamics.model import ArmSpec, Model
from flexfmu.spec.errors import SpecError

# The smallest eigenvalue of the mass matrix at q = 0, scaled to a unit diagonal, that a Model may have:
# below it, accelerations lose more than ten of double precision's sixteen digits.
CONDITION_FLOOR = 1e-10


def assemble_model(arm: ArmSpec, graph_class: type, method: str | None = None) -> Model:
    """Build the Model of ``arm`` on the building blocks of ``graph_class`` with the chosen derivation
    (``flexfmu.build_model`` picks the class from the arm's kind).

    Parameters
    ----------
    arm : ArmSpec
        From ``flexfmu.load_arm``.
    graph_class : type
        The kind's :class:`~flexfmu.dynamics.model.ModelGraph`, constructed as ``graph_class(arm)``.
    method : str, optional
        The derivation of M and h, one of the graph's ``METHODS`` (the first when None).

    Returns
    -------
    Model

    Raises
    ------
    SpecError
        From the graph (mode shapes that cannot be built) or :func:`check_mass_matrix`.
    """
    method = method or graph_class.METHODS[0]
    if method not in graph_class.METHODS:
        raise ValueError(f"method must be one of {', '.join(graph_class.METHODS)}, got {method!r}")
    graph = graph_class(arm)
    q, qd, p = graph.q, graph.qd, graph.p
    M, h, B = graph.dynamics(method)
    mass_matrix = ca.Function("mass_matrix", [q, p], [M], ["q", "p"], ["M"])
    bias = ca.Function("bias", [q, qd, p], [h], ["q", "qd", "p"], ["h"])
    input_fn = ca.Function("input_matrix", [q, p], [B], ["q", "p"], ["B"])
    drives = Drives.of(graph.layout, graph.inputs)

    # Accelerations by a numeric solve of the evaluated M (not a symbolic
    # solve, which dominates the graph and the generated C): LDL of M, or
    # with prescribed joints QR of the square system of flexfmu.dynamics.drives.
    n, nu = len(drives.states), len(graph.inputs)
    qm, qdm, um, pm = (ca.MX.sym(k, s) for k, s in (("q", n), ("qd", n), ("u", nu), ("p", p.numel())))
    if drives.prescribed:
        q_all, qd_all = drives.coordinates(qm, qdm, um)
        qdd_all, torques = drives.solve(mass_matrix(q_all, pm), bias(q_all, qd_all, pm), input_fn(q_all, pm), um)
        qddm = qdd_all[list(drives.states)]
    else:
        rhs = ca.mtimes(input_fn(qm, pm), um) - bias(qm, qdm, pm)
        qddm = ca.solve(mass_matrix(qm, pm), rhs, "ldl")
        q_all, qd_all, qdd_all, torques = qm, qdm, qddm, ca.MX(0, 1)
    forward = ca.Function("forward_dynamics", [qm, qdm, um, pm], [qddm], ["q", "qd", "u", "p"], ["qdd"])
    motion = ca.Function("motion", [qm, qdm, um, pm], [q_all, qd_all, qdd_all, torques],
                         ["q", "qd", "u", "p"], ["q_all", "qd_all", "qdd_all", "tau"])
    xm = ca.MX.sym("x", 2 * n)
    state_derivative = ca.Function(
        "state_derivative", [xm, um, pm],
        [ca.vertcat(xm[n:], forward(xm[:n], xm[n:], um, pm))], ["x", "u", "p"], ["xdot"],
    )
    check_mass_matrix(arm, graph.layout, mass_matrix, np.array([row.value for row in graph.parameter_table]))
    return Model(
        arm=arm, method=method, layout=graph.layout, parameter_table=graph.parameter_table,
        input_table=graph.inputs, mass_matrix=mass_matrix, bias=bias, input_matrix=input_fn,
        forward_dynamics=forward, state_derivative=state_derivative, motion=motion, _graph=graph,
    )


def check_mass_matrix(arm: ArmSpec, layout: tuple[Coordinate, ...], mass_matrix: ca.Function, p: np.ndarray) -> None:
    """Raise a SpecError naming a link unless M(q = 0, ``p``) is finite and positive definite with room to
    spare: its smallest eigenvalue, scaled to a unit diagonal (which keeps definiteness and removes the
    units), must reach :data:`CONDITION_FLOOR`. Only the rows and columns of the state coordinates count:
    the accelerations of prescribed joints are given, so their rows are never solved for.

    Parameters
    ----------
    arm : ArmSpec
        The arm (its name heads the message).
    layout : tuple of Coordinate
        What each coordinate is; the message names the link of the worst one.
    mass_matrix : casadi.Function
        (q, p) -> M.
    p : numpy.ndarray
        The nominal parameters.
    """
    states = [k for k, c in enumerate(layout) if not c.prescribed]
    M = np.array(mass_matrix(np.zeros(len(layout)), p))[np.ix_(states, states)]
    layout = [layout[k] for k in states]
    diagonal = np.diag(M).copy()
    bad = ~np.isfinite(diagonal) | ~(diagonal > 0) | ~np.isfinite(M).all(axis=1)
    if bad.any():
        worst, why = int(np.argmax(bad)), "has a zero, negative or non-finite diagonal entry"
    else:
        eigenvalues, vectors = np.linalg.eigh(unit_diagonal(M))
        if eigenvalues[0] >= CONDITION_FLOOR:
            return
        worst = int(np.argmax(np.abs(vectors[:, 0])))
        why = f"is singular to double precision (smallest scaled eigenvalue {eigenvalues[0]:.2g})"
    coordinate = layout[worst]
    raise SpecError([f"link[{coordinate.link}]: the mass matrix at q = 0 {why} along {coordinate.name}: "
                     f"the masses and inertias of the arm are too many orders of magnitude apart to simulate"],
                    f"arm {arm.name!r}")
