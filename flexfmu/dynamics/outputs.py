"""Measured quantities of the arm: the Model's outputs y(q, qd, qdd, p).

Joint angles and rates as an encoder on each joint measures them (the
rotation psi_j of link j's root tangent relative to the tip tangent of link
j-1: equal to the coordinate theta[j] for tangent-framed links, but not for
chord-framed ones, where a controller fed back theta[j] would be
non-collocated and can destabilise the links), rotor angles and rates, modal
coordinates, every link's deflected tip position, each flexible link's tip deflection (relative to the tangent at
its root, so pinned-pinned and clamped links report the same physical
quantity), and the end effector's position, velocity and acceleration (what
paper 000 measured with an accelerometer at the tip).
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics.chain import Coordinates, LinkBody
from flexfmu.dynamics.frames import ChainRows, forward_kinematics


def output_expressions(coords: Coordinates, chain: ChainRows, bodies: list[LinkBody], q, qd, qdd):
    """Return (names, units, expressions) of the outputs, in y order."""
    rows: list[tuple[str, str, ca.SX]] = []
    for j, psi in enumerate(chain.joint_rotations, start=1):
        rows += [(f"joint[{j}].angle", "rad", ca.mtimes(psi, q)), (f"joint[{j}].rate", "rad/s", ca.mtimes(psi, qd))]
    for j, k in sorted(coords.rotor.items()):
        rows += [(f"motor[{j + 1}].angle", "rad", q[k]), (f"motor[{j + 1}].rate", "rad/s", qd[k])]
    for i, idx in enumerate(coords.modal, start=1):
        rows += [(f"link[{i}].mode[{m}]", "m", q[k]) for m, k in enumerate(idx, start=1)]

    origins, _, tip, _ = forward_kinematics(coords, bodies, q)
    link_tips = origins[1:] + [tip]
    for i, (body, point) in enumerate(zip(bodies, link_tips), start=1):
        rows += [(f"link[{i}].tip.x", "m", point[0]), (f"link[{i}].tip.y", "m", point[1])]
        if body.modes:
            f = q[list(coords.modal[i - 1])]
            deflection = ca.mtimes(body.tip_value - body.length * body.root_tangent, f)
            rows.append((f"link[{i}].deflection", "m", deflection))

    velocity = ca.jtimes(tip, q, qd)
    state, state_rate = ca.vertcat(q, qd), ca.vertcat(qd, qdd)
    acceleration = ca.jtimes(velocity, state, state_rate)
    for axis in range(2):
        name = "xy"[axis]
        rows += [
            (f"tip.{name}", "m", tip[axis]),
            (f"tip.v{name}", "m/s", velocity[axis]),
            (f"tip.a{name}", "m/s2", acceleration[axis]),
        ]
    # appended last so that the value references of the outputs above stay
    # what they were before these were added
    for i, idx in enumerate(coords.modal, start=1):
        rows += [(f"link[{i}].mode_rate[{m}]", "m/s", qd[k]) for m, k in enumerate(idx, start=1)]
    names, units, exprs = zip(*rows)
    return list(names), list(units), ca.vertcat(*exprs)
