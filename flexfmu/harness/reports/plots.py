"""Plots people look at instead of reading numbers.

Every figure gets its title through :func:`titled`: wrapped to the figure's
width, so a long title is never clipped, and laid out by matplotlib's
constrained layout, so the title, the panels' titles and their labels do not
overlap. Paths of an end effector are drawn in the plane where they move
(:func:`moving_plane`): a planar arm's x-y, a Delta robot's pick-and-place
x-z, its circle x-y.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib
import numpy as np

from flexfmu.control.cost import end_effector
from flexfmu.dynamics.metadata import DEFLECTION, JOINT_ANGLE, MOTOR_ANGLE

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PLOTTED_POINTS = 2000  # per curve: a 10 s run sampled at 1 kHz draws five times faster, and looks the same
TITLE_CHARACTERS_PER_INCH = 9  # of a figure title at matplotlib's default size: where the wrapping starts


def titled(fig, title: str) -> None:
    """Give ``fig`` the ``title``, wrapped to the figure's width, and lay it out so that nothing is clipped
    and nothing overlaps (matplotlib's constrained layout)."""
    fig.suptitle(textwrap.fill(title, max(30, int(TITLE_CHARACTERS_PER_INCH * fig.get_figwidth()))))
    fig.set_layout_engine("constrained")


def moving_plane(names: list[str], *paths) -> tuple[str, str]:
    """The two of the end-effector coordinates ``names`` along which the ``paths`` (Results, or arrays with a
    column per name) move most, in their order: where a path is worth drawing."""
    if len(names) <= 2:
        return tuple(names)
    spans = np.zeros(len(names))
    for path in paths:
        values = np.column_stack([path[name] for name in names]) if not isinstance(path, np.ndarray) else path
        spans = np.maximum(spans, np.ptp(values, axis=0))
    first, second = sorted(np.argsort(spans)[-2:])
    return names[first], names[second]


def thinned(time, values, points: int = PLOTTED_POINTS):
    """``(time, values)`` cut to about ``points`` samples for drawing: each bin of samples keeps its
    smallest and largest value, in time order, so no peak (of a signal or of round-off noise) is lost.

    Parameters
    ----------
    time, values : array
        One curve's samples.
    points : int
        How many samples to keep at most (about).
    """
    time, values = np.asarray(time), np.asarray(values)
    if len(time) <= points:
        return time, values
    width = -(-2 * len(time) // points)
    whole = len(time) // width * width
    bins = values[:whole].reshape(-1, width)
    low, high = bins.argmin(axis=1), bins.argmax(axis=1)
    starts = np.arange(len(bins)) * width
    keep = np.concatenate([np.column_stack([starts + np.minimum(low, high), starts + np.maximum(low, high)]).ravel(),
                           np.arange(whole, len(time))])
    return time[keep], values[keep]


def plot_simulation(result, model, path: str | Path) -> None:
    """Joint angles, tip deflections and the end-effector path of one run.

    Parameters
    ----------
    result : Result
        The run, with the model's joint and motor angles, deflections and tip position.
    model : Model
        Names the outputs to plot.
    path : str or Path
        The image file to write.
    """
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    t = result.time
    for name in model.outputs_of(JOINT_ANGLE) + model.outputs_of(MOTOR_ANGLE):
        axes[0].plot(t, result[name], label=name)
    for name in model.outputs_of(DEFLECTION):
        axes[1].plot(t, 1e3 * result[name], label=name)
    axes[0].set(xlabel="time [s]", ylabel="angle [rad]", title="joint and motor angles")
    axes[1].set(xlabel="time [s]", ylabel="deflection [mm]", title="link tip deflections")
    x, y = moving_plane(end_effector(model), result)
    axes[2].plot(result[x], result[y])
    axes[2].plot(result[x][0], result[y][0], "o", label="start")
    axes[2].set(xlabel=f"{x} [m]", ylabel=f"{y} [m]", title="end-effector path", aspect="equal")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    titled(fig, f"{model.arm.name}")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_before_after(before, after, model, reference, history, path: str | Path, title: str) -> None:
    """Tracking error, link deflections and torques of two FMU runs (before:
    dashed, after: solid), and the optimiser's cost per iteration.

    Parameters
    ----------
    before, after : Result
        The runs with the starting and the tuned gains.
    model : Model
        Names the joint angles, deflections and torques to plot.
    reference : callable
        t -> (theta_d, dtheta_d, ddtheta_d), for the tracking error.
    history : list of float
        The cost after each iteration (log scale).
    path : str or Path
        The image file to write.
    title : str
        The figure's title.
    """
    import numpy as np

    fig, axes = plt.subplots(2, 2, figsize=(13, 8))
    for run, style, label in ((before, "--", "before"), (after, "-", "after")):
        theta_d = np.array([reference(t)[0] for t in run.time])
        for j, (angle, torque) in enumerate(zip(model.outputs_of(JOINT_ANGLE), model.inputs)):
            color = f"C{j}"
            axes[0, 0].plot(run.time, theta_d[:, j] - run[angle], style, color=color, label=f"{angle} ({label})")
            axes[1, 0].plot(run.time, run[torque], style, color=color, label=f"{torque} ({label})")
        for i, name in enumerate(model.outputs_of(DEFLECTION)):
            axes[0, 1].plot(run.time, 1e3 * run[name], style, color=f"C{i}", label=f"{name} ({label})")
    axes[1, 1].semilogy(range(len(history)), history, "o-")
    axes[0, 0].set(xlabel="time [s]", ylabel="theta_d - theta [rad]", title="tracking error")
    axes[0, 1].set(xlabel="time [s]", ylabel="deflection [mm]", title="link tip deflections")
    axes[1, 0].set(xlabel="time [s]", ylabel="torque [N m]", title="joint torques")
    axes[1, 1].set(xlabel="iteration", ylabel="cost J", title="optimiser progress")
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    titled(fig, title)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_plan(planned, baseline, model, move_time: float, path: str | Path, title: str) -> None:
    """Torques, link deflections and tip paths of a planned move and its
    baseline (dashed), both run through the FMU; the move's end marked.

    Parameters
    ----------
    planned, baseline : Result
        The FMU runs of the plan's torques and of the baseline controller.
    model : Model
        Names the inputs, deflections and tip position to plot.
    move_time : float
        End of the move, s (a vertical line).
    path : str or Path
        The image file to write.
    title : str
        The figure's title.
    """
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    x, y = moving_plane(end_effector(model), baseline, planned)
    for run, style, label in ((baseline, "--", "baseline"), (planned, "-", "plan")):
        for j, name in enumerate(model.inputs):
            axes[0].plot(run.time, run[name], style, color=f"C{j}", label=f"{name} ({label})")
        for i, name in enumerate(model.outputs_of(DEFLECTION)):
            axes[1].plot(run.time, 1e3 * run[name], style, color=f"C{i}", label=f"{name} ({label})")
        axes[2].plot(run[x], run[y], style, label=label)
    for ax in axes[:2]:
        ax.axvline(move_time, color="k", lw=0.8)
    axes[0].set(xlabel="time [s]", ylabel="torque [N m]", title="joint torques")
    axes[1].set(xlabel="time [s]", ylabel="deflection [mm]", title="link tip deflections")
    axes[2].set(xlabel=f"{x} [m]", ylabel=f"{y} [m]", title="end-effector path", aspect="equal")
    save_figure(fig, axes, title, path)


def save_figure(fig, axes, title: str, path) -> None:
    """Grid and legend on each of ``axes``, ``title`` over ``fig``, written to ``path`` and closed."""
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    titled(fig, title)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_pick_place(planned, baseline, model, commanded, move_time: float, path: str | Path, title: str) -> None:
    """A Delta robot's planned pick-and-place against its baseline (dashed), both run through the FMU: the
    platform's distance from its mean position after the move (the residual vibration's measure), the motor
    torques, and the commanded and actual paths seen from the side (X-Z); the move's end marked.

    Parameters
    ----------
    planned, baseline : Result
        The FMU runs of the planned move and of the baseline.
    model : Model
        Names the inputs and the platform position.
    commanded : tuple of two arrays
        The commanded platform paths (3 x samples, m) of the plan and of the baseline.
    move_time, path, title :
        As for :func:`plot_plan`.
    """
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    names = end_effector(model)
    for (run, style, label), route in zip(((planned, "-", "plan"), (baseline, "--", "baseline")), commanded):
        position = np.column_stack([run[name] for name in names])
        distance = np.linalg.norm(position - position[run.time >= move_time - 1e-9].mean(axis=0), axis=1)
        axes[0].semilogy(*thinned(run.time, 1e3 * distance), style, color="C0", label=label)
        for j, name in enumerate(model.inputs):
            axes[1].plot(*thinned(run.time, run[name]), style, color=f"C{j}", label=f"{name} ({label})")
        axes[2].plot(route[0], route[2], style, color="C7", label=f"commanded ({label})")
        axes[2].plot(position[:, 0], position[:, 2], style, color="C3", label=f"platform ({label})")
    for ax in axes[:2]:
        ax.axvline(move_time, color="k", lw=0.8)
    axes[0].set(xlabel="time [s]", ylabel="distance [mm]", title="platform distance from its mean after the move")
    axes[1].set(xlabel="time [s]", ylabel="torque [N m]", title="motor torques")
    axes[2].set(xlabel="X [m]", ylabel="Z [m] (down)", title="paths seen from the side")
    axes[2].invert_yaxis()
    save_figure(fig, axes, title, path)


def plot_scenario(result, model, reference, path: str | Path, title: str, open_loop: bool) -> None:
    """What the run does, for a controls engineer: a closed loop's desired and actual tip paths,
    joint tracking error and tip distance from the desired path over time, and the applied torques;
    an open loop's torques, joint angles, deflections and tip path.

    Parameters
    ----------
    result : Result
        The run (the reference), holding every output and input of ``model``.
    model : Model
        Names the signals.
    reference : callable or None
        t -> (theta_d, dtheta_d, ddtheta_d) of a closed loop.
    path : str or Path
        The image file to write.
    title : str
        The figure's title.
    open_loop : bool
        Whether the torques ignore the measurements (then ``reference`` is None).
    """
    from flexfmu.harness.reports.figures import desired_tip, tracking_errors

    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    t = result.time
    names = end_effector(model)
    desired = None if open_loop else desired_tip(model, reference, t)
    x, y = moving_plane(names, result, *([] if desired is None else [desired]))
    path_ax, error_ax, tip_ax, torque_ax = axes.flat
    if not open_loop:
        path_ax.plot(desired[:, names.index(x)], desired[:, names.index(y)], "k--", lw=1.2,
                     label="desired (rigid kinematics of theta_d)")
        joints, tip = tracking_errors(result, model, reference)
        for j, name in enumerate(model.outputs_of(JOINT_ANGLE)):
            error_ax.plot(*thinned(t, 1e3 * joints[:, j]), label=f"theta_d - {name}")
        error_ax.set(ylabel="joint tracking error [mrad]", title="joint tracking error")
        tip_ax.plot(*thinned(t, 1e3 * tip), color="C3")
        tip_ax.set(ylabel="distance [mm]", title="tip distance from the desired path")
    else:
        for name in model.outputs_of(JOINT_ANGLE) + model.outputs_of(MOTOR_ANGLE):
            error_ax.plot(*thinned(t, result[name]), label=name)
        error_ax.set(ylabel="angle [rad]", title="joint and motor angles")
        for name in model.outputs_of(DEFLECTION):
            tip_ax.plot(*thinned(t, 1e3 * result[name]), label=name)
        tip_ax.set(ylabel="deflection [mm]", title="link tip deflections")
    path_ax.plot(result[x], result[y], color="C0", lw=1.0, label="actual tip")
    path_ax.plot(result[x][0], result[y][0], "o", color="C0", label="start")
    path_ax.set(xlabel=f"{x} [m]", ylabel=f"{y} [m]", title="end-effector path", aspect="equal")
    for name in model.inputs:
        torque_ax.plot(*thinned(t, result[name]), label=name)
    torque_ax.set(ylabel="torque [N m]", title="applied joint torques")
    for ax in (error_ax, tip_ax, torque_ax):
        ax.set_xlabel("time [s]")
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    titled(fig, title)
    fig.savefig(path, dpi=90)
    plt.close(fig)
