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
from flexfmu.dynamics.chain_outputs import coordinate_outputs, envelope_outputs
from flexfmu.dynamics.metadata import Signal
from flexfmu.dynamics.parameters import ParameterSymbols
from flexfmu.dynamics.planar.bodies import Coordinates, LinkBody
from flexfmu.dynamics.planar.frames import ChainRows, forward_kinematics


def output_expressions(coords: Coordinates, chain: ChainRows, bodies: list[LinkBody], P: ParameterSymbols, q, qd,
                       qdd):
    """Return (signals, expressions) of the outputs, in y order.

    Parameters
    ----------
    coords, chain, bodies : chain parts
        The chain's coordinate layout, constant Jacobian rows (a ChainRows) and link bodies, as held by
        :class:`flexfmu.dynamics.planar.chain.PlanarChain`.
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
    bending = [(i, "", deflection / bodies[i - 1].length) for i, deflection in deflections.items()]
    envelope_outputs(add, bending, chain.springs, P, q)
    signals, exprs = zip(*rows)
    return list(signals), ca.vertcat(*exprs)
