"""Paper 003's two paths on the Delta robot through its native FMU (co-simulation, 1 kHz computed torque):
the platform's elastic deviation from the rigid pose, minus the static sag at the start, as ranges (the
circle: its fifth period; the inverted U: the whole run and its value at the end of the move, 0.8 s) and
plots (docs/delta_circle.png, docs/delta_pick_place.png), written to benchmarks/results/delta_paths.json.

Usage: python benchmarks/delta_paths.py
"""
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from flexfmu import build_model, load_arm
from flexfmu.control.scenario import load_scenario
from flexfmu.harness.running.runner import run_fmu
from flexfmu.targets import export_fmu
m = build_model(load_arm("kuo_delta"))
folder = tempfile.mkdtemp(prefix="flexfmu-delta-paths-")
rep = export_fmu(m, Path(folder) / "kuo_delta.fmu")
out = {}
for name in ("delta_circle", "delta_pick_place"):
    sc = load_scenario(name)
    ctl = sc.build_controller(m)
    rec = [f"deviation.{a}" for a in ("x", "y", "z", "roll", "pitch", "yaw")]
    t0 = time.time()
    r = run_fmu(rep.path, m, ctl, sc.grid(), sc.start_values(m), "cs", rec)
    wall = time.time() - t0
    t = r.time
    dev = {k: np.asarray(r[f"deviation.{k}"]) for k in ("x", "y", "z", "roll", "pitch", "yaw")}
    start = {k: v[0] for k, v in dev.items()}  # static deflection at the start (gravity)
    var = {k: v - start[k] for k, v in dev.items()}
    scale = {k: (1e3 if k in "xyz" else np.degrees(1.0)) for k in dev}
    window = t >= (4.0 if name == "delta_circle" else 0.0)  # the circle's fifth period
    stats = {k: [float(scale[k] * var[k][window].min()), float(scale[k] * var[k][window].max())] for k in dev}
    end = np.argmin(np.abs(t - 0.8))
    final = {k: float(scale[k] * var[k][end]) for k in dev} if name == "delta_pick_place" else None
    out[name] = {"wall_s": wall, "variation_mm_deg": stats, "final_at_0.8s": final,
                 "static_start_mm_deg": {k: float(scale[k] * start[k]) for k in dev}}
    print(name, json.dumps(out[name], indent=1))
    fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for k in "xyz":
        axes[0].plot(t, 1e3 * var[k], label=f"deviation.{k}")
    for k in ("roll", "pitch", "yaw"):
        axes[1].plot(t, np.degrees(var[k]), label=f"deviation.{k}")
    axes[0].set(ylabel="mm", title=f"{name}: platform deviation from the rigid pose, minus the start's static sag")
    axes[1].set(ylabel="deg", xlabel="time [s]")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(f"docs/{name}.png", dpi=80)
    plt.close(fig)
json.dump(out, open("benchmarks/results/delta_paths.json", "w"), indent=1)
