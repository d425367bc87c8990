"""What a controls engineer asks of a run: tracking, vibration, effort.

For a closed loop with a reference: the joint tracking error theta_d -
theta (link-side encoders), and the distance of the tip from where the
rigid kinematics of theta_d put it (the desired path), both over the whole
run and after the start transient; for every run, the peak torques and
link deflections. ``desired_tip`` gives the desired path itself.
"""

from __future__ import annotations

import numpy as np

from flexfmu.control.cost import end_effector
from flexfmu.control.run_figures import settle_time
from flexfmu.control.laws import rigid_selection
from flexfmu.dynamics.metadata import DEFLECTION, JOINT_ANGLE


def settled(time: np.ndarray) -> np.ndarray:
    """Mask of the samples of ``time`` after the start transient (:func:`flexfmu.control.run_figures.settle_time`)."""
    return time >= settle_time(time[-1]) - 1e-9


def desired_tip(model, reference, time) -> np.ndarray:
    """The end effector (:func:`end_effector`) of ``model``, one row per time of ``time``, with the joints at ``reference``'s
    theta_d and the links straight: the path the controller is asked to follow."""
    S = rigid_selection(model)
    n, k = len(model.coordinates), len(time)
    q = S @ np.array([reference(t)[0] for t in time]).T
    y = np.array(model.outputs.map(k)(q, np.zeros((n, k)), np.zeros((len(model.inputs), k)),
                                      model.nominal_parameters))
    rows = [model.output_names.index(name) for name in end_effector(model)]
    return y[rows].T


def tracking_errors(result, model, reference) -> tuple[np.ndarray, np.ndarray]:
    """(joint errors theta_d - theta, one column per joint, rad; tip distance from the desired path, m) of
    ``result``, a run of ``model`` tracking ``reference``."""
    theta_d = np.array([reference(t)[0] for t in result.time])
    joints = np.column_stack([result[name] for name in model.outputs_of(JOINT_ANGLE)])
    tip = np.column_stack([result[name] for name in end_effector(model)])
    return theta_d - joints, np.linalg.norm(tip - desired_tip(model, reference, result.time), axis=1)


def scenario_figures(result, model, reference=None) -> dict:
    """Tracking (closed loop with ``reference``), vibration and effort figures of ``result``, a run of
    ``model`` holding its outputs and inputs, by name, each with its unit in the key."""
    figures = {f"largest {s.name} magnitude [{s.unit}]": float(np.max(np.abs(result[s.name])))
               for s in model.input_table}
    figures |= {f"largest {name} magnitude [m]": float(np.max(np.abs(result[name]))) for name in model.outputs_of(DEFLECTION)}
    if reference is not None:
        joints, tip = tracking_errors(result, model, reference)
        late = settled(result.time)
        after = f"t >= {float(result.time[late][0]):g} s"
        figures |= {"largest joint tracking error [rad]": float(np.max(np.abs(joints))),
                    f"largest joint tracking error, {after} [rad]": float(np.max(np.abs(joints[late]))),
                    f"RMS joint tracking error, {after} [rad]": float(np.sqrt(np.mean(joints[late] ** 2))),
                    f"largest tip distance from the desired path, {after} [m]": float(np.max(tip[late])),
                    f"RMS tip distance from the desired path, {after} [m]": float(np.sqrt(np.mean(tip[late] ** 2)))}
    return figures
