"""Paper 004 (Subudhi & Morris 2002): the bang-bang response, flexible against rigid joints.

The paper drives both rotors of its two-link arm with +-0.2 N m for 0.5 s
each and shows the response in figures 4 to 6, without numbers. The numbers
the response must show follow from the impulse-momentum law: the only
torque on the arm about the base axis is tau[1], so the arm's angular
momentum about the base equals the impulse of tau[1], 0.1 N m s at the end
of the first pulse and zero after the second. The figure is our version of
figures 4(b), 5(d) and 6(a), flexible against rigid joints with the same
rotor inertia. The paper reports larger tip deflections with flexible
joints; our model gives 2-5 % smaller peaks (the joint springs filter the
torque steps), see docs/dynamics.md.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

import flexfmu
from flexfmu.control.controllers import HeldInputs
from flexfmu.control.scenario import load_scenario
from flexfmu.dynamics.metadata import DEFLECTION, JOINT_ANGLE
from flexfmu.harness.reports.plots import titled
from flexfmu.harness.reproductions.rows import Row, relative_row
from flexfmu.harness.running.reference import simulate_reference

FIGURE = "paper004_bang_bang.png"


def _rigid_joints(arm):
    links = tuple(dataclasses.replace(link, joint=dataclasses.replace(link.joint, kind="rigid", stiffness=0.0))
                  for link in arm.links)
    return dataclasses.replace(arm, links=links)


def bang_bang(out: Path) -> list[Row]:
    """Peak tip deflections under the bang-bang torques, flexible over rigid joints, 5 s; the figure
    goes into ``out``."""
    scenario = load_scenario("bang_bang")
    arm = flexfmu.load_arm(scenario.arm)
    runs = {}
    for label, variant in (("flexible joints", arm), ("rigid joints", _rigid_joints(arm))):
        model = flexfmu.build_model(variant)
        runs[label] = (model, simulate_reference(model, scenario.duration, scenario.step,
                                                 inputs=HeldInputs(scenario.controller["switches"], model.inputs)))
    _plot(runs, out / FIGURE)
    model, result = runs["flexible joints"]
    momentum = angular_momentum(model, result)
    impulse = 0.2 * 0.5
    source = "Paper 004, section 6: bang-bang torques (impulse-momentum)"
    after = float(np.max(np.abs(momentum[result.time >= 1.0 - 1e-9])))
    return [relative_row(source, "angular momentum about the base at t = 0.5 s (impulse of tau[1])", impulse,
                         float(momentum[np.argmin(np.abs(result.time - 0.5))]), "N m s", 1e-6),
            Row(source, "largest abs(angular momentum) for t >= 1 s (zero net impulse)", 0.0, after, "N m s",
                "ours <= 1e-6 x 0.1 N m s", after <= 1e-7)]


def angular_momentum(model, result) -> np.ndarray:
    """The arm's angular momentum about the base, g' M(q) qd, at every sample of ``result`` (a run of
    ``model``): g is the rigid rotation of the whole arm, which moves the first joint's coordinates."""
    g = np.array([1.0 if c.kind in ("joint", "rotor") and c.link == 1 else 0.0 for c in model.layout])
    q = np.column_stack([result[name] for name in model.coordinates])
    qd = np.column_stack([result[f"der({name})"] for name in model.coordinates])
    p = model.nominal_parameters
    return np.array([g @ np.array(model.mass_matrix(qk, p)) @ vk for qk, vk in zip(q, qd)])


def _plot(runs: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for style, (label, (model, result)) in zip(("-", "--"), runs.items()):
        for j, name in enumerate(model.outputs_of(JOINT_ANGLE)):
            axes[0].plot(result.time, result[name], style, color=f"C{j}", label=f"{name} ({label})")
        for j, name in enumerate(model.outputs_of(DEFLECTION)[:2]):
            axes[j + 1].plot(result.time, 1e3 * result[name], style, label=label)
    axes[0].set(xlabel="time [s]", ylabel="angle [rad]", title="link angles (figure 4(b), (c))")
    axes[1].set(xlabel="time [s]", ylabel="deflection [mm]", title="link 1 tip deflection (figure 5(d))")
    axes[2].set(xlabel="time [s]", ylabel="deflection [mm]", title="link 2 tip deflection (figure 6(a))")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    titled(fig, "Paper 004: bang-bang torques of +-0.2 N m, 0.5 s, on both rotors")
    fig.savefig(path, dpi=90)
    plt.close(fig)
