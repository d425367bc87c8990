"""The outputs every serial chain (planar or spatial) shares: encoders, rotors, modes, the validity envelope.

A chain's outputs begin with what its coordinates measure directly (each
joint's encoder angle and rate, each rotor's angle and rate, each modal
coordinate) and end with the validity envelope (each flexible link's tip
deflection relative to its length, each flexible joint's spring deflection,
each with the parameter that limits it, and a flag that is 1 while any of
them is beyond its limit). Between them each kind adds its own kinematics
(``flexfmu.dynamics.planar.outputs``, ``flexfmu.dynamics.spatial.outputs``).
Every function adds its outputs through ``add(name, unit, group,
description, expression, link=None, limit=None)``.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics import metadata as md
from flexfmu.dynamics.parameters import JOINT_ENVELOPE, LINK_ENVELOPE, ParameterSymbols


def coordinate_outputs(add, joint_rotations, coords, q, qd) -> None:
    """The outputs every serial chain starts with, through ``add``: each joint's encoder angle and rate (its
    rotation row of ``joint_rotations`` times ``q`` and ``qd``), each rotor's angle and rate, and each modal
    coordinate, with ``coords`` (rotor and modal indices, and the coordinate records that give the units)."""
    for j, psi in enumerate(joint_rotations, start=1):
        add(f"joint[{j}].angle", "rad", md.JOINT_ANGLE, f"encoder angle of joint {j}", ca.mtimes(psi, q), j)
        add(f"joint[{j}].rate", "rad/s", md.JOINT_RATE, f"encoder rate of joint {j}", ca.mtimes(psi, qd), j)
    for j, k in sorted(coords.rotor.items()):
        add(f"motor[{j + 1}].angle", "rad", md.MOTOR_ANGLE, f"rotor angle of joint {j + 1} (link side)", q[k], j + 1)
        add(f"motor[{j + 1}].rate", "rad/s", md.MOTOR_RATE, f"rotor rate of joint {j + 1} (link side)", qd[k], j + 1)
    for i, idx in enumerate(coords.modal, start=1):
        for m, k in enumerate(idx, start=1):
            add(f"link[{i}].mode[{m}]", coords.records[k].unit, md.MODE, f"modal coordinate {m} of link {i}", q[k], i)


def envelope_outputs(add, bending: list, springs: dict, P: ParameterSymbols, q) -> None:
    """The validity envelope's outputs, through ``add``: each bending deflection relative to its link's
    length, each flexible joint's spring deflection, and the flag, 1 while any is beyond its limit (the
    parameters ``P``); nothing for an arm with neither.

    Parameters
    ----------
    add : callable
        Adds one output (see the module docstring).
    bending : list of (int, str, casadi.SX)
        (link, axis or "" in a plane, tip deflection over the link's length), in output order.
    springs : dict
        {joint index from 0: row of the spring twist over q} of the flexible joints.
    P : ParameterSymbols
        The parameters, for the limits.
    q : casadi.SX
        The coordinates.
    """
    limits = []
    for i, axis, relative in bending:
        suffix, along = (f".{axis}", f" along {axis}") if axis else ("", "")
        add(f"link[{i}].relative_deflection{suffix}", "1", md.ENVELOPE,
            f"tip deflection of link {i}{along} relative to its length", relative, i, LINK_ENVELOPE)
        limits.append((relative, P[LINK_ENVELOPE]))
    for j, row in sorted(springs.items()):
        spring = ca.mtimes(row, q)
        add(f"joint[{j + 1}].spring_deflection", "rad", md.ENVELOPE,
            f"spring deflection of flexible joint {j + 1} (rotor minus link side)", spring, j + 1, JOINT_ENVELOPE)
        limits.append((spring, P[JOINT_ENVELOPE]))
    if limits:
        beyond = [ca.fabs(value) > limit for value, limit in limits]
        largest = beyond[0]
        for value in beyond[1:]:
            largest = ca.fmax(largest, value)
        add("envelope.exceeded", "1", md.ENVELOPE_FLAG,
            "1 while a flexible link or joint is beyond its validity envelope, else 0", largest)
