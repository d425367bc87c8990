"""Measured quantities of a spatial arm: the Model's outputs y(q, qd, qdd, p).

The planar chain's outputs, extended to three axes: joint encoder angles
and rates (psi_j, see layout), rotor angles and rates, modal coordinates,
every link's deflected tip (x, y, z in the base frame), each flexible
link's tip deflections along its y and z axes relative to the tangent at its
root (``link[i].deflection.y``, ``.z``), its tip twist and stretch where it
models them, and the end effector's position, velocity and acceleration.
Modal rates follow, as in the planar list; last come the validity envelope
(each bending deflection relative to the link's length, each flexible
joint's spring deflection, with the parameters that limit them) and its
flag, as for planar arms.
"""

from __future__ import annotations

import casadi as ca

from flexfmu.dynamics import metadata as md
from flexfmu.dynamics.chain_outputs import coordinate_outputs, envelope_outputs
from flexfmu.dynamics.metadata import Signal
from flexfmu.dynamics.spatial import bodies as B
from flexfmu.dynamics.spatial.kinematics import frames, link_coordinates, tip_motion


def _deflections(props: dict, st: B.BodyStructure, f) -> list[tuple[str, str, str, str, ca.SX]]:
    """(suffix, unit, group, what, expression) of a flexible link's tip deformation outputs."""
    parts = B.split(f, st)
    rows = []
    for axis in B.BENDS:
        if st.count(axis):
            value = ca.dot(props[f"tip_{axis}"] - props["L"] * props[f"root_{axis}"], parts[axis])
            rows.append((f"deflection.{axis}", "m", md.DEFLECTION,
                         f"tip deflection along {axis} from the tangent at the root", value))
    if st.count("t"):
        rows.append(("twist", "rad", md.TWIST, "tip twist about the link axis", ca.dot(props["tip_t"], parts["t"])))
    if st.count("u"):
        rows.append(("stretch", "m", md.STRETCH, "tip axial displacement", ca.dot(props["tip_u"], parts["u"])))
    return rows


def output_expressions(chain, q, qd, qdd):
    """Return (signals, expressions) of the outputs of the spatial ``chain``, in y order, at ``q``, ``qd``
    and the accelerations ``qdd`` (symbols or expressions)."""
    rows: list[tuple[Signal, ca.SX]] = []
    coords = chain.coords

    def add(name, unit, group, description, expr, link=None, limit=None):
        rows.append((Signal(name, unit, group, description, link, limit), expr))

    coordinate_outputs(add, chain.rows.joint_rotations, coords, q, qd)

    F = frames(chain.joints, chain.structures, chain.bodies, coords, q)
    bending = []  # (link, axis, deflection) for the envelope
    for i, (st, props, tip) in enumerate(zip(chain.structures, chain.bodies, F.distal_origins), start=1):
        for axis in range(3):
            name = "xyz"[axis]
            add(f"link[{i}].tip.{name}", "m", md.LINK_TIP, f"{name} of the deflected tip of link {i}", tip[axis], i)
        if st.modes:
            for suffix, unit, group, what, value in _deflections(props, st, link_coordinates(q, coords.modal[i - 1])):
                add(f"link[{i}].{suffix}", unit, group, f"{what} of link {i}", value, i)
                if group == md.DEFLECTION:
                    bending.append((i, suffix.rsplit(".", 1)[1], value / props["L"]))

    tip, velocity, acceleration = tip_motion(chain.joints, chain.structures, chain.bodies, coords, q, qd, qdd)
    for axis in range(3):
        name = "xyz"[axis]
        add(f"tip.{name}", "m", md.TIP_POSITION, f"end-effector {name}", tip[axis])
        add(f"tip.v{name}", "m/s", md.TIP_VELOCITY, f"end-effector velocity along {name}", velocity[axis])
        add(f"tip.a{name}", "m/s2", md.TIP_ACCELERATION, f"end-effector acceleration along {name}", acceleration[axis])
    for i, idx in enumerate(coords.modal, start=1):
        for m, k in enumerate(idx, start=1):
            add(f"link[{i}].mode_rate[{m}]", coords.records[k].unit + "/s", md.MODE_RATE,
                f"rate of modal coordinate {m} of link {i}", qd[k], i)
    envelope_outputs(add, bending, chain.rows.springs, chain.P, q)
    signals, exprs = zip(*rows)
    return list(signals), ca.vertcat(*exprs)
