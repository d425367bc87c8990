"""Campaign benchmark: the closed-loop FMU's points per second, its scaling over Dask workers, the README's Monte-Carlo.

1. Per point, in one process: yu_chen_2dof in pd_circle shortened to 2 s
   (2000 controller samples), payload.mass and kp varied. The compiled loop
   (the scenario's closed-loop FMU, one fmi2DoStep per point, the figures
   folded in by the FMU) against the Python loop (the plant FMU stepped by
   FMPy, the law called from Python, the figures by numpy from the samples):
   median ms per point, points per second per worker (target: at least 50),
   and the largest relative difference of the two loops' figures on the
   same points (target: round-off).
2. Scaling: a sweep of --scaling-points points (default 1000) of the same
   kind on a local Dask cluster of 1 and of 2 workers, each started for the
   campaign: wall time (cluster start and stop included, as a command pays
   them); then the same on a cluster of as many workers started beforehand
   (as quiet as a campaign's own) and given as a command's --scheduler is:
   the client's connection, the shipping of the FMU and every point
   included, what a campaign costs when the cluster outlives it. And the
   throughput while points flow (from the moment every worker's first batch
   is in to the last row): --repeats runs of each size and cluster,
   alternating, and two ratios, 2 workers to 1 (target: at least 1.8): that
   of the medians, and the median of each pair's ratio (a 1-worker run and
   the 2-worker run right after it). This machine's speed drifts by a third
   from one run to the next, and it moves a raw ratio by as much as
   anything flexfmu does, so each run also measures its points' own median
   time, the workers' busy fraction (the points' time over the workers'
   time while points flow: what Dask and the campaign leave to the points)
   and the client process's CPU (client, scheduler and nannies: it shares
   the two cores with the workers), and each pair gives its ratio at the
   same point speed: the raw ratio times the 2-worker run's median point
   time over the 1-worker run's.
3. The command: the README's Monte-Carlo sweep with --scaling-points
   points, run as a user runs it with --workers 1 and --workers 2
   (--repeats pairs): wall time and the pairs' ratios, every step of the
   command included (imports, the Model, the start values, the cluster,
   the table and the summary plot).
4. The README's Monte-Carlo sweep (10,000 points), run as the README
   writes it, with its progress bar: wall time (target: minutes).

The machine is shared: the figures are medians and ratios from one run of this script, and
the JSON records the load average before and after (under load the figures
are the load's as much as flexfmu's).

Usage: python benchmarks/campaign.py [--points 200] [--python-points 10] [--scaling-points 1000] [--repeats 3]
                                     [--skip-commands] [--skip-monte-carlo] [--json benchmarks/results/campaign.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

# Where a campaign's worker processes are spawned (not forked: see START_METHOD in
# flexfmu.harness.campaigns.campaign) they start by importing this script again, so it imports at its top only
# what a command's entry point does (``flexfmu.cli``): the workers' start, part of every campaign's wall time, is
# then the command's. The rest is imported where used.
import flexfmu.cli  # noqa: E402, F401

if TYPE_CHECKING:
    from flexfmu.harness.campaigns.campaign import CampaignSettings
    from flexfmu.harness.running.loop_case import LoopCase
    from flexfmu.harness.workflows.sweep import SweepSetup

ROOT = Path(__file__).resolve().parent.parent
DURATION = 2.0
TARGETS = {"points per second per worker": 50.0, "2 workers / 1 worker": 1.8}


def points(count: int, seed: int = 0) -> list[dict]:
    """``count`` points: payload.mass uniform in [0, 0.5] kg, kp uniform in [80, 170]."""
    rng = np.random.default_rng(seed)
    return [{"payload.mass": float(m), "kp": float(k)} for m, k in zip(rng.uniform(0, 0.5, count),
                                                                        rng.uniform(80, 170, count))]


def python_loop(model, scenario, point: dict) -> dict:
    """The figures of ``point`` through the plant FMU stepped from Python (the independent check)."""
    from flexfmu.control.cost import cost_signals, cost_terms, end_effector
    from flexfmu.harness.reports.envelope import envelope_outputs
    from flexfmu.harness.reports.figures import scenario_figures
    from flexfmu.harness.running.fmu_cache import native_fmu
    from flexfmu.harness.running.runner import run_fmu

    controller = scenario.build_controller(model, {"kp": point["kp"]})
    varied = {"payload.mass": point["payload.mass"]}
    start = scenario.start_values(model, model.parameter_vector(varied)) | varied
    record = list(dict.fromkeys([*cost_signals(model), *end_effector(model), *envelope_outputs(model)]))
    result = run_fmu(native_fmu(model.arm), model, controller, scenario.grid(), start, "cs", record)
    reference = scenario.reference(model)
    return cost_terms(model, result, reference, scenario.step) | scenario_figures(result, model, reference)


def per_point(case: LoopCase, model, scenario, count: int, python_count: int) -> dict:
    """Median time per point of the compiled and the Python loop, and the largest figure difference."""
    sample = points(count)
    case = case.holding(model, scenario, sample)  # each point's equilibrium, solved here as a sweep does
    case.row(sample[0])  # unpack and instantiate once, as a worker does
    compiled = []
    for point in sample:
        began = time.perf_counter()
        case.row(point)
        compiled.append(time.perf_counter() - began)
    python, worst = [], 0.0
    for point in sample[:python_count]:
        began = time.perf_counter()
        expected = python_loop(model, scenario, point)
        python.append(time.perf_counter() - began)
        row = case.row(point)
        worst = max(worst, max(abs(row[k] - v) / max(abs(v), 1e-300) for k, v in expected.items()))
    median, python_median = float(np.median(compiled)), float(np.median(python))
    return {"points": count, "compiled_ms_median": 1e3 * median, "compiled_ms_min": 1e3 * min(compiled),
            "points_per_s_per_worker": 1.0 / median, "python_points": python_count,
            "python_ms_median": 1e3 * python_median, "speedup": python_median / median,
            "largest_relative_difference_of_figures": worst}


def scaling(setup: SweepSetup, model, scenario, count: int, workers: int, running: bool = False) -> dict:
    """Wall time and throughput of ``count`` points on a local cluster of ``workers`` started by the campaign, or
    when ``running`` started beforehand (its start not timed); their start values solved beforehand, as a sweep
    does."""
    from flexfmu.harness.campaigns.campaign import CampaignSettings, dask_client

    if running:  # the cluster a campaign would start, started here and left to run the campaign as its scheduler
        with dask_client(CampaignSettings(workers=workers)) as client:
            return scaling_on(CampaignSettings(scheduler=client.scheduler.address), setup, model, scenario, count,
                              workers) | {"cluster": "running"}
    return scaling_on(CampaignSettings(workers=workers), setup, model, scenario, count, workers) | {
        "cluster": "own"}


def scaling_on(settings: CampaignSettings, setup: SweepSetup, model, scenario, count: int, workers: int) -> dict:
    """The figures of :func:`scaling` for a campaign run with ``settings``."""
    from flexfmu.harness.campaigns.campaign import batches, run_campaign
    from flexfmu.harness.workflows.sweep import sweep_task

    arrivals, client_cpu = [], []
    sample = points(count, seed=workers)
    setup = dataclasses.replace(setup, case=setup.case.holding(model, scenario, sample))
    first_batches = workers * len(batches(sample, workers)[0])

    def keep(key, row):
        arrivals.append(time.perf_counter())
        if len(arrivals) in (first_batches, count):
            client_cpu.append(time.process_time())  # this process: the client, the scheduler and the nannies
        return row

    with tempfile.TemporaryDirectory(prefix="flexfmu-bench-campaign-") as tmp:
        began = time.perf_counter()
        rows = run_campaign(sample, sweep_task, Path(tmp), settings, f"{workers} worker(s)", (setup,), keep=keep)
        wall = time.perf_counter() - began
    # rows arrive a batch at a time and every worker's first batch ends at about the same moment; the rate while
    # points flow counts the rows after those first batches over the time from the last of them to the last row
    started = arrivals[first_batches - 1]
    flowing = [row["seconds"] for row in rows[first_batches:]]  # rows in the points' order: ~ the ones that flowed
    return {"workers": workers, "points": count, "ok": sum(row["status"] == "ok" for row in rows), "wall_s": wall,
            "points_per_s_wall": count / wall, "first_rows_after_s": started - began,
            "points_per_s_flowing": (count - first_batches) / (arrivals[-1] - started),
            "point_ms_median": 1e3 * float(np.median(flowing)),
            "busy_fraction": sum(flowing) / (workers * (arrivals[-1] - started)),
            "client_cpu_share": (client_cpu[1] - client_cpu[0]) / (arrivals[-1] - started)}


def pair_ratios(runs: list[dict], key: str) -> list[float]:
    """``key`` of each 2-worker run over that of the 1-worker run just before it (``runs`` alternate 1, 2, ...)."""
    return [two[key] / one[key] for one, two in zip(runs[::2], runs[1::2])]


def readme_monte_carlo() -> tuple[str, str]:
    """(the distributions file, the sweep command) of the README's Monte-Carlo example."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"benchmarks/campaign\.py runs this.*?```sh\n(.*?)```", text, re.DOTALL).group(1)
    distributions = re.search(r"<<'EOF'\n(.*?)EOF\n", block, re.DOTALL).group(1)
    command = next(line for line in block.splitlines() if line.startswith("flexfmu sweep"))
    return distributions, command


def monte_carlo(samples: int | None = None, workers: int | None = None) -> dict:
    """Run the README's Monte-Carlo sweep in a temporary folder (with ``samples`` points and ``--workers
    workers`` when given); its wall time and result."""
    distributions, command = readme_monte_carlo()
    if samples is not None:
        command = re.sub(r"--samples \d+", f"--samples {samples}", command)
    if workers is not None:
        command += f" --workers {workers}"
    with tempfile.TemporaryDirectory(prefix="flexfmu-bench-monte-carlo-") as tmp:
        (Path(tmp) / "payload.toml").write_text(distributions)
        args = shlex.split(command)
        args[0] = str(Path(sys.executable).parent / "flexfmu")
        began = time.perf_counter()
        done = subprocess.run(args, cwd=tmp, capture_output=True, text=True, check=False)  # its exit status is a figure
        wall = time.perf_counter() - began
        table = Path(tmp) / "out" / "monte-carlo" / "results.csv"
        rows = table.read_text().splitlines()[1:] if table.exists() else []
    samples = int(re.search(r"--samples (\d+)", command).group(1))
    said = (done.stdout.strip() or done.stderr.strip() or "(nothing)").splitlines()
    return {"command": command, "exit_status": done.returncode, "points": samples, "rows": len(rows),
            "wall_s": wall, "points_per_s": samples / wall, "last_line": said[-1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=200, help="points timed in one process")
    parser.add_argument("--python-points", type=int, default=10, help="of them, run through the Python loop too")
    parser.add_argument("--scaling-points", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3, help="scaling runs of each cluster size")
    parser.add_argument("--skip-commands", action="store_true", help="do not time the sweep command")
    parser.add_argument("--skip-monte-carlo", action="store_true")
    parser.add_argument("--json", default="benchmarks/results/campaign.json")
    args = parser.parse_args()
    from benchmarks.machine import describe
    from flexfmu import build_model, load_arm
    from flexfmu.control.scenario import load_scenario
    from flexfmu.harness.campaigns.campaign import FmuFile
    from flexfmu.harness.running.fmu_cache import loop_fmu, native_fmu
    from flexfmu.harness.running.loop_case import LoopCase
    from flexfmu.harness.workflows.sweep import SweepSetup

    load_before = os.getloadavg()
    scenario = dataclasses.replace(load_scenario("pd_circle"), duration=DURATION)
    arm = load_arm(scenario.arm_path)
    model = build_model(arm)
    fmu = loop_fmu(arm, scenario)
    native_fmu(arm)
    case = LoopCase.of(model, scenario, fmu)

    single = per_point(case, model, scenario, args.points, args.python_points)
    print(f"per point ({DURATION:g} s pd_circle, one process): compiled loop {single['compiled_ms_median']:.2f} ms "
          f"(median of {args.points}), {single['points_per_s_per_worker']:.1f} points/s per worker; Python loop "
          f"{single['python_ms_median']:.0f} ms (median of {args.python_points}), {single['speedup']:.0f}x; "
          f"largest relative difference of the figures {single['largest_relative_difference_of_figures']:.1e}",
          flush=True)

    setup = SweepSetup(case, FmuFile.of(fmu))
    runs = [scaling(setup, model, scenario, args.scaling_points, workers, running)  # alternating: a slow spell
            for _ in range(args.repeats) for running in (False, True) for workers in (1, 2)]  # hits both sizes
    for run in runs:
        start = "with the cluster's start" if run["cluster"] == "own" else "on a running cluster"
        print(f"{run['workers']} worker(s): {run['points']} points ({run['ok']} ok) in {run['wall_s']:.1f} s "
              f"({run['points_per_s_wall']:.1f} points/s {start}; every worker's first batch in "
              f"after {run['first_rows_after_s']:.1f} s, then {run['points_per_s_flowing']:.1f} points/s; a point "
              f"{run['point_ms_median']:.2f} ms, workers busy {run['busy_fraction']:.3f}, the client process "
              f"{run['client_cpu_share']:.3f} of a core)", flush=True)
    medians = {workers: {key: float(np.median([run[key] for run in runs if run["workers"] == workers]))
                         for key in ("points_per_s_flowing", "points_per_s_wall")} for workers in (1, 2)}
    ratio_flowing = medians[2]["points_per_s_flowing"] / medians[1]["points_per_s_flowing"]
    own = [run for run in runs if run["cluster"] == "own"]
    ratio_wall = (np.median([run["points_per_s_wall"] for run in own if run["workers"] == 2])
                  / np.median([run["points_per_s_wall"] for run in own if run["workers"] == 1]))
    ratio_running = pair_ratios([run for run in runs if run["cluster"] == "running"], "points_per_s_wall")
    pairs = {"points_per_s_flowing": pair_ratios(runs, "points_per_s_flowing"),
             "points_per_s_wall": pair_ratios(own, "points_per_s_wall")}
    pairs["same_point_speed"] = [two["points_per_s_flowing"] / one["points_per_s_flowing"]
                                 * two["point_ms_median"] / one["point_ms_median"]
                                 for one, two in zip(runs[::2], runs[1::2])]
    paired = {key: float(np.median(values)) for key, values in pairs.items()}
    print(f"2 workers / 1 (medians of {2 * args.repeats} runs each): {ratio_flowing:.2f} while points flow, "
          f"{ratio_wall:.2f} with the cluster's start; median of the pairs' ratios "
          f"{paired['points_per_s_flowing']:.2f} while points flow "
          f"({', '.join(f'{r:.2f}' for r in pairs['points_per_s_flowing'])}), "
          f"{paired['points_per_s_wall']:.2f} with the cluster's start; at the same point speed "
          f"{paired['same_point_speed']:.2f} ({', '.join(f'{r:.2f}' for r in pairs['same_point_speed'])}); on a "
          f"running cluster, the whole campaign: median {np.median(ratio_running):.2f} "
          f"({', '.join(f'{r:.2f}' for r in ratio_running)})")

    commands = [] if args.skip_commands else [monte_carlo(args.scaling_points, workers)
                                                for _ in range(args.repeats) for workers in (1, 2)]
    for run in commands:
        print(f"the command, {run['points']} points, {run['command'].split('--workers')[-1].strip()} worker(s): "
              f"{run['wall_s']:.1f} s (every step of the command included; exit {run['exit_status']}, "
              f"{run['rows']} rows)", flush=True)
    command_ratios = pair_ratios(commands, "points_per_s")
    if command_ratios:
        print(f"the command, 2 workers / 1: median {np.median(command_ratios):.2f} "
              f"({', '.join(f'{r:.2f}' for r in command_ratios)})")
    mc = None if args.skip_monte_carlo else monte_carlo()
    if mc:
        print(f"README Monte-Carlo: {mc['points']} points in {mc['wall_s']:.0f} s ({mc['points_per_s']:.0f} points/s, "
              f"exit {mc['exit_status']}): {mc['last_line']}")
    load_after = os.getloadavg()
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after} on {os.cpu_count()} cores"
          + ("; the machine is loaded: the figures are under load" if max(load_before[0], load_after[0]) > 1.0
             else ""))
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "machine": describe(), "load_average_before": list(load_before), "load_average_after": list(load_after),
        "sweep": {"arm": "yu_chen_2dof", "scenario": "pd_circle", "duration_s": DURATION,
                  "varied": {"payload.mass": [0.0, 0.5], "kp": [80.0, 170.0]}},
        "per_point": single, "scaling": runs, "scaling_medians": medians, "ratio_2_to_1_flowing": ratio_flowing,
        "ratio_2_to_1_wall": float(ratio_wall),
        "pair_ratios_2_to_1": pairs, "median_pair_ratio_2_to_1": paired,
        "running_cluster_ratios_2_to_1": ratio_running, "median_running_cluster_ratio_2_to_1":
            float(np.median(ratio_running)),
        "commands": commands, "command_ratios_2_to_1": command_ratios,
        "median_command_ratio_2_to_1": float(np.median(command_ratios)) if command_ratios else None,
        "monte_carlo": mc, "targets": TARGETS,
    }, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
