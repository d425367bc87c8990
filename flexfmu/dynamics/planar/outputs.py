"""Measured quantities of the arm: the Model's outputs y(q, qd, qdd, p).

Joint angles and rates as an encoder on each joint measures them (the
rotation psi_j of link j's root tangent relative to the tip tangent of link
j-1: equal to the coordinate theta[j] for tangent-framed links, but not for
chord-framed ones, where a controller fed back theta[j] would be
non-collocated and can destabilise the links), rotor angles and rates, modal
coordinates, every link's deflected tip position, each flexible link's tip deflection (relative to the tangent at
its root, so pinned-pinned and clamped links report the same physical
quantity), and the end effector's position, velocity and acceleration (what
paper 000 measured with an accelerometer at the tip). Last come the
quantities of the validity envelope (each flexible link's tip deflection
relative to its length, each flexible joint's spring deflection, each with
the parameter that limits it) and a flag that is 1 while any of them is
beyond its limit.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics import metadata as md
from flexfmu.dynamics.chain import Coordinates, LinkBody
from flexfmu.dynamics.frames import ChainRows, forward_kinematics
from flexfmu.dynamics.metadata import Signal
from flexfmu.dynamics.parameters import JOINT_ENVELOPE, LINK_ENVELOPE, ParameterSymbols


def coordinate_outputs(add, joint_rotations, coords, q, qd) -> None:
    """The outputs every serial chain (planar or spatial) starts with, through ``add`` (called as
    add(name, unit, group, description, expression, link)): each joint's encoder angle and rate (its rotation row of
    ``joint_rotations`` times ``q`` and ``qd``), each rotor's angle and rate, and each modal coordinate,
    with ``coords`` (rotor and modal indices, and the coordinate records that give the units)."""
    for j, psi in enumerate(joint_rotations, start=1):
        add(f"joint[{j}].angle", "rad", md.JOINT_ANGLE, f"encoder angle of joint {j}", ca.mtimes(psi, q), j)
        add(f"joint[{j}].rate", "rad/s", md.JOINT_RATE, f"encoder rate of joint {j}", ca.mtimes(psi, qd), j)
    for j, k in sorted(coords.rotor.items()):
        add(f"motor[{j + 1}].angle", "rad", md.MOTOR_ANGLE, f"rotor angle of joint {j + 1} (link side)", q[k], j + 1)
        add(f"motor[{j + 1}].rate", "rad/s", md.MOTOR_RATE, f"rotor rate of joint {j + 1} (link side)", qd[k], j + 1)
    for i, idx in enumerate(coords.modal, start=1):
        for m, k in enumerate(idx, start=1):
            add(f"link[{i}].mode[{m}]", coords.records[k].unit, md.MODE, f"modal coordinate {m} of link {i}", q[k], i)


def output_expressions(coords: Coordinates, chain: ChainRows, bodies: list[LinkBody], P: ParameterSymbols, q, qd,
                       qdd):
    """Return (signals, expressions) of the outputs, in y order.

    Parameters
    ----------
    coords, chain, bodies : chain parts
        The chain's coordinate layout, constant Jacobian rows (a ChainRows) and link bodies, as held by
        :class:`flexfmu.dynamics.planar.PlanarChain`.
    P : ParameterSymbols
        The parameters, for the limits of the validity envelope.
    q, qd, qdd : casadi.SX
        Symbols (or expressions) of the coordinates, their rates and accelerations.
    """
    rows: list[tuple[Signal, ca.SX]] = []

    def add(name, unit, group, description, expr, link=None, limit=None):
        rows.append((Signal(name, unit, group, description, link, limit), expr))

    coordinate_outputs(add, chain.joint_rotations, coords, q, qd)

    origins, _, tip, _ = forward_kinematics(coords, bodies, q)
    link_tips = origins[1:] + [tip]
    deflections = {}
    for i, (body, point) in enumerate(zip(bodies, link_tips), start=1):
        for axis, value in zip("xy", (point[0], point[1])):
            add(f"link[{i}].tip.{axis}", "m", md.LINK_TIP, f"{axis} of the deflected tip of link {i}", value, i)
        if body.modes:
            f = q[list(coords.modal[i - 1])]
            deflections[i] = ca.mtimes(body.tip_value - body.length * body.root_tangent, f)
            add(f"link[{i}].deflection", "m", md.DEFLECTION,
                f"tip deflection of link {i} from the tangent at its root", deflections[i], i)

    velocity = ca.jtimes(tip, q, qd)
    state, state_rate = ca.vertcat(q, qd), ca.vertcat(qd, qdd)
    acceleration = ca.jtimes(velocity, state, state_rate)
    for axis in range(2):
        name = "xy"[axis]
        add(f"tip.{name}", "m", md.TIP_POSITION, f"end-effector {name}", tip[axis])
        add(f"tip.v{name}", "m/s", md.TIP_VELOCITY, f"end-effector velocity along {name}", velocity[axis])
        add(f"tip.a{name}", "m/s2", md.TIP_ACCELERATION, f"end-effector acceleration along {name}",
            acceleration[axis])
    # appended last so that the value references of the outputs above stay
    # what they were before these were added
    for i, idx in enumerate(coords.modal, start=1):
        for m, k in enumerate(idx, start=1):
            add(f"link[{i}].mode_rate[{m}]", "m/s", md.MODE_RATE, f"rate of modal coordinate {m} of link {i}",
                qd[k], i)
    _envelope(add, bodies, chain, P, q, deflections)
    signals, exprs = zip(*rows)
    return list(signals), ca.vertcat(*exprs)


def _envelope(add, bodies: list[LinkBody], chain: ChainRows, P: ParameterSymbols, q, deflections: dict) -> None:
    """The validity envelope's outputs, through ``add``: each flexible link's tip deflection (from
    ``deflections``, by link) over its length, each flexible joint's spring deflection (rows of ``chain``
    at ``q``), and the flag, 1 while any is beyond its limit (parameters ``P``); nothing for a rigid arm."""
    limits = []
    for i, deflection in deflections.items():
        relative = deflection / bodies[i - 1].length
        add(f"link[{i}].relative_deflection", "1", md.ENVELOPE,
            f"tip deflection of link {i} relative to its length", relative, i, LINK_ENVELOPE)
        limits.append((relative, P[LINK_ENVELOPE]))
    for j, row in sorted(chain.springs.items()):
        spring = ca.mtimes(row, q)
        add(f"joint[{j + 1}].spring_deflection", "rad", md.ENVELOPE,
            f"spring deflection of flexible joint {j + 1} (rotor minus link side)", spring, j + 1, JOINT_ENVELOPE)
        limits.append((spring, P[JOINT_ENVELOPE]))
    if limits:
        beyond = [ca.fabs(value) > limit for value, limit in limits]
        add("envelope.exceeded", "1", md.ENVELOPE_FLAG,
            "1 while a flexible link or joint is beyond its validity envelope, else 0", _largest(beyond))


def _largest(values: list) -> ca.SX:
    """The largest of ``values`` (SX scalars)."""
    largest = values[0]
    for value in values[1:]:
        largest = ca.fmax(largest, value)
    return largest
