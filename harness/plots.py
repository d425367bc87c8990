"""Plots people look at instead of reading numbers."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot_simulation(result, model, path: str | Path) -> None:
    """Joint angles, tip deflections and the end-effector path of one run."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    t = result.time
    for name in model.output_names:
        if name.endswith(".angle"):
            axes[0].plot(t, result[name], label=name)
        if name.endswith(".deflection"):
            axes[1].plot(t, 1e3 * result[name], label=name)
    axes[0].set(xlabel="time [s]", ylabel="angle [rad]", title="joint and motor angles")
    axes[1].set(xlabel="time [s]", ylabel="deflection [mm]", title="link tip deflections")
    axes[2].plot(result["tip.x"], result["tip.y"])
    axes[2].plot(result["tip.x"][0], result["tip.y"][0], "o", label="start")
    axes[2].set(xlabel="x [m]", ylabel="y [m]", title="end-effector path", aspect="equal")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.suptitle(f"{model.arm.name}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
