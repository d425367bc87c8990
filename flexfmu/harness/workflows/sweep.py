"""Parameter sweeps and Monte-Carlo runs of a scenario through the native FMU.

A point sets plant parameters (FMU start values, e.g. ``payload.mass``) and
controller gains (e.g. ``kp``) by name; the scenario runs through the
co-simulation FMU at each point (one FMU for the whole campaign, built once
and shipped to the workers), and the row holds the cost terms (tracking,
vibration, effort, apart) and the run's figures (``flexfmu.harness.reports.figures``).
Points come from a grid (``--vary NAME=START:STEP:STOP`` or
``NAME=V1,V2,...``, all combinations) and/or from random draws over the
distributions of a TOML file (``--samples N --distributions FILE``):

    [parameters."payload.mass"]
    distribution = "uniform"    # low, high
    low = 0.0
    high = 0.3

    [parameters.kp]
    distribution = "normal"     # mean, std
    mean = 125.0
    std = 10.0
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from flexfmu.errors import FlexfmuError
from flexfmu.harness.reports.tables import write_table

DISTRIBUTIONS = {"uniform": ("low", "high"), "normal": ("mean", "std")}
TABLE = "results.csv"
SUMMARY_PLOT = "summary.png"


class SweepError(FlexfmuError, ValueError):
    """A sweep that cannot be set up; the message names the option or field."""


def parse_vary(text: str) -> tuple[str, list[float]]:
    """``NAME=START:STEP:STOP`` (inclusive) or ``NAME=V1,V2,...`` -> (name, values).

    Parameters
    ----------
    text : str
        One ``--vary`` option's value.
    """
    name, sep, spec = text.partition("=")
    name = name.strip()
    try:
        if not sep or not name:
            raise ValueError
        if ":" in spec:
            start, step, stop = (float(part) for part in spec.split(":"))
            if not step > 0 or stop < start:
                raise ValueError
            count = int(math.floor((stop - start) / step + 1e-9)) + 1
            return name, [float(start + k * step) for k in range(count)]
        values = [float(part) for part in spec.split(",") if part.strip()]
        if not values:
            raise ValueError
        return name, values
    except ValueError:
        raise SweepError(f"--vary {text!r}: expected NAME=START:STEP:STOP (STEP > 0, STOP >= START) or "
                         f"NAME=V1,V2,...") from None


def grid_points(varies: list[tuple[str, list[float]]]) -> list[dict]:
    """Every combination of the ``varies`` values ((name, values) pairs), as points."""
    names = [name for name, _ in varies]
    return [dict(zip(names, values)) for values in itertools.product(*(values for _, values in varies))]


def sample_points(path: str | Path, count: int, seed: int) -> list[dict]:
    """``count`` random points over the distributions in the TOML file ``path``, drawn with ``seed``.

    Raises
    ------
    SweepError
        If the file cannot be read or a distribution is unknown or incomplete.
    """
    try:
        table = tomllib.loads(Path(path).read_text()).get("parameters", {})
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise SweepError(f"--distributions {str(path)!r}: {error}") from None
    problems = []
    for name, spec in table.items():
        kind = spec.get("distribution") if isinstance(spec, dict) else None
        if kind not in DISTRIBUTIONS:
            problems.append(f"parameters.{name}.distribution must be one of {', '.join(DISTRIBUTIONS)}, got {kind!r}")
        else:
            problems += [f"parameters.{name}.{key} is missing or not a number" for key in DISTRIBUTIONS[kind]
                         if not isinstance(spec.get(key), (int, float))]
    if problems or not table:
        raise SweepError(f"--distributions {str(path)!r}: " + ("; ".join(problems) or "no [parameters.NAME] tables"))
    rng = np.random.default_rng(seed)
    draws = {name: (rng.uniform(spec["low"], spec["high"], count) if spec["distribution"] == "uniform"
                    else rng.normal(spec["mean"], spec["std"], count)) for name, spec in table.items()}
    return [{name: float(values[k]) for name, values in draws.items()} for k in range(count)]


@dataclass(frozen=True)
class SweepSetup:
    """What every point of a sweep shares (sent to each worker once): the arm and scenario files,
    the duration override (s) and the FMU."""

    arm_file: str
    scenario_file: str
    duration: float | None
    fmu: object  # FmuFile


@lru_cache(maxsize=4)
def _case(arm_file: str, scenario_file: str, duration: float | None):
    import flexfmu
    from flexfmu.control.scenario import load_scenario

    scenario = load_scenario(scenario_file)
    if duration is not None:
        scenario = dataclasses.replace(scenario, duration=duration)
    return flexfmu.build_model(flexfmu.load_arm(arm_file)), scenario


def check_names(model, scenario, names) -> None:
    """Raise SweepError unless every name of ``names`` is a parameter of ``model`` or a gain of the
    ``scenario``'s law."""
    gains = [] if scenario.controller["kind"] == "held" else list(scenario.law(model).gains)
    unknown = [name for name in names if name not in model.parameters and name not in gains]
    if unknown:
        raise SweepError(f"cannot vary {', '.join(unknown)}: not a parameter of arm {model.arm.name!r} nor a gain "
                         f"of {scenario.name}'s controller (gains: {', '.join(gains) or 'none'}; parameters: "
                         f"{', '.join(model.parameters)})")


def sweep_task(point: dict, setup: SweepSetup) -> dict:
    """Run the scenario through the FMU at ``point`` (parameters and gains by name) and return its
    cost terms and figures; runs on a worker.

    Parameters
    ----------
    point : dict
        Values by name.
    setup : SweepSetup
    """
    from flexfmu.control.cost import cost_signals, cost_terms
    from flexfmu.dynamics.metadata import TIP_POSITION
    from flexfmu.harness.reports.figures import scenario_figures
    from flexfmu.harness.running.runner import run_fmu

    model, scenario = _case(setup.arm_file, setup.scenario_file, setup.duration)
    closed = scenario.controller["kind"] != "held"
    gains = {name: value for name, value in point.items() if name not in model.parameters}
    controller = scenario.build_controller(model, gains if closed else None)
    start = dict(scenario.initial) | {name: value for name, value in point.items() if name in model.parameters}
    record = cost_signals(model) + model.outputs_of(TIP_POSITION)[:2]
    result = run_fmu(setup.fmu.path(), model, controller, scenario.grid(), start, "cs", record)
    reference = scenario.reference(model) if closed else None
    if not np.all(np.isfinite(result.values)):
        raise FloatingPointError("the run left the finite numbers (unstable)")
    return cost_terms(model, result, reference, scenario.step) | scenario_figures(result, model, reference)


def run_sweep(arm_file: Path, scenario_file: Path, points: list[dict], out: Path, settings,
              duration: float | None = None) -> list[dict]:
    """Run ``points`` of the scenario on the arm as a campaign; write the table and the summary plot.

    Parameters
    ----------
    arm_file, scenario_file : Path
        The arm and the scenario.
    points : list of dict
        Values by name (parameters of the arm, gains of the scenario's law).
    out : Path
        The folder of ``results.csv``, ``summary.png`` and the campaign's journal.
    settings : CampaignSettings
        Where the points run.
    duration : float, optional
        Overrides the scenario's duration, s.

    Returns
    -------
    list of dict
        One row per point (see :func:`flexfmu.harness.campaigns.campaign.run_campaign`).
    """
    from flexfmu.harness.campaigns.campaign import FmuFile, run_campaign
    from flexfmu.harness.running.fmu_cache import native_fmu

    model, scenario = _case(str(arm_file), str(scenario_file), duration)
    names = list(dict.fromkeys(name for point in points for name in point))
    check_names(model, scenario, names)
    setup = SweepSetup(str(arm_file), str(scenario_file), duration, FmuFile.of(native_fmu(model.arm)))
    rows = run_campaign(points, sweep_task, out, settings, f"{model.arm.name}/{scenario.name} sweep", (setup,))
    write_table(rows, out / TABLE)
    plot_summary(rows, names, out / SUMMARY_PLOT, f"{model.arm.name} / {scenario.name}")
    return rows


def summary_metrics(rows: list[dict]) -> list[str]:
    """The figures a summary plot of ``rows`` shows: the cost terms and the RMS tracking error, in the
    rows' order."""
    keys = list(dict.fromkeys(key for row in rows if row["status"] == "ok" for key in row))
    return [key for key in keys if key.startswith(("tracking", "vibration", "effort", "RMS joint tracking"))][:4]


def plot_summary(rows: list[dict], names: list[str], path: Path, title: str) -> None:
    """Each summary metric against each swept name, one panel each; failed points as red marks.

    Parameters
    ----------
    rows : list of dict
        The campaign's rows.
    names : list of str
        The swept names (columns of panels).
    path : Path
        The image file.
    title : str
        The figure's title.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = summary_metrics(rows) or ["seconds"]
    fig, axes = plt.subplots(len(metrics), len(names), figsize=(4.2 * len(names), 3.0 * len(metrics)),
                             squeeze=False)
    ok = [row for row in rows if row["status"] == "ok"]
    failed = [row for row in rows if row["status"] != "ok"]
    for i, metric in enumerate(metrics):
        for j, name in enumerate(names):
            ax = axes[i, j]
            ax.plot([row[name] for row in ok], [row[metric] for row in ok], "o", ms=3)
            if failed:
                bottom = min((row[metric] for row in ok), default=0.0)
                ax.plot([row[name] for row in failed], [bottom] * len(failed), "x", color="red", label="failed")
                ax.legend(fontsize=7)
            ax.set(xlabel=name, ylabel=metric)
            ax.grid(True, alpha=0.3)
    fig.suptitle(f"{title}: {len(ok)} points ok, {len(failed)} failed")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
