"""Parameter sweeps and Monte-Carlo runs of a scenario through its closed-loop FMU.

A point sets plant parameters (e.g. ``payload.mass``) and the controller's
parameters (a gain ``kp`` or ``controller.kp``, ``reference.radius``,
``motion.w0``) by name. Every value is checked before anything runs, by the
ranges the arm file's numbers are checked by (``flexfmu.spec.ranges``) and
the keys of the scenario's tables: a sweep of ``payload.mass=-1,0.5`` is
refused, naming the parameter and the value. The scenario runs through its
closed-loop FMU (``flexfmu.targets.loop``: plant and controller in compiled
code, one FMU for the whole campaign, built once, shipped to the workers,
unpacked and instantiated once per worker, reset between points), and the
row holds the run's figures computed in the same compiled pass
(``flexfmu.harness.running.loop_case``): the cost terms (tracking,
vibration, effort, apart), peaks, tracking figures, the validity envelope
(each quantity's peak as a fraction of its limit, the largest of them,
``envelope.peak_fraction``, and when the run first left it,
``envelope.left_at_s``, empty if never) and the FMU's own warnings; a failed
point's error is the FMU's message. Every point starts at rest at the
scenario's pose under its own parameters (the static equilibrium, solved
here before the campaign: workers import no CasADi).
With ``trajectories`` each point's samples are written to
``trajectories/<point>.csv``. Points come from a grid (``--vary
NAME=START:STEP:STOP`` or ``NAME=V1,V2,...``, all combinations) and/or from
random draws over the distributions of a TOML file (``--samples N
--distributions FILE``):

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
TRAJECTORIES = "trajectories"  # the folder of the points' samples
SAMPLES = "samples"  # the key of a row's samples on their way from a worker


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
    """What every point of a sweep shares (sent to each worker once): the case (a LoopCase), its closed-loop
    FMU (an FmuFile) and the outputs recorded at every sample (none: figures only). A worker builds no
    Model: it runs the FMU."""

    case: object
    fmu: object
    record: tuple[str, ...] = ()


@lru_cache(maxsize=4)
def _case(arm_file: str, scenario_file: str, duration: float | None):
    """(Model, Scenario) of the files, the scenario's duration overridden when given."""
    import flexfmu
    from flexfmu.control.scenario import load_scenario

    scenario = load_scenario(scenario_file)
    if duration is not None:
        scenario = scenario.with_duration(duration)
    model = flexfmu.build_model(flexfmu.load_arm(arm_file))
    scenario.check(model)
    return model, scenario


def check_points(model, controller, case, points: list[dict]) -> None:
    """Refuse ``points`` (values by name) unless every name is a parameter of ``model`` or of the scenario's
    ``controller`` (as ``case``, a LoopCase, names them) and every value is in the range the arm file or the
    scenario's table allows for it.

    Raises
    ------
    SweepError
        Naming every unknown name, and for each name with values out of range the first such value, why,
        and how many points have one.
    """
    names = list(dict.fromkeys(name for point in points for name in point))
    unknown = [name for name in names if name not in case.names]
    if unknown:
        gains = [alias for alias, name in case.aliases.items() if alias != name]  # a gain's bare name
        own = gains + [name for alias, name in case.aliases.items() if alias == name and not name.startswith(
            "controller.")]
        raise SweepError(f"cannot vary {', '.join(unknown)}: not a parameter of arm {model.arm.name!r} nor of the "
                         f"scenario's controller (its parameters: {', '.join(own) or 'none'}; the arm's: "
                         f"{', '.join(model.parameters)})")
    rows = {row.name: row for row in model.parameter_table}

    def problem(name: str, value) -> str | None:
        if name in rows:
            return rows[name].problem(value)
        return "; ".join(controller.problems({case.aliases[name]: value})) or None

    problems = []
    for name in names:
        verdicts = {value: problem(name, value) for value in {point[name] for point in points if name in point}}
        bad = [point[name] for point in points if name in point and verdicts[point[name]]]
        if bad:
            problems.append(f"{verdicts[bad[0]]} ({len(bad)} of {len(points)} points)")
    if problems:
        raise SweepError("out of range, nothing was run: " + "; ".join(problems))


def sweep_task(point: dict, setup: SweepSetup) -> dict:
    """Run the scenario through its closed-loop FMU at ``point`` (values by name) and return its figures
    (with the samples under ``samples`` when ``setup`` records); runs on a worker.

    Parameters
    ----------
    point : dict
        Values by name.
    setup : SweepSetup
    """
    case = setup.case.at(setup.fmu.path())
    if not setup.record:
        return case.row(point)
    run = case.run(point, setup.record)
    return case.figures_of(run) | {SAMPLES: run.result}


def trajectory_names(model, scenario) -> tuple[str, ...]:
    """What a sweep with trajectories records: the ``scenario``'s compared outputs and the inputs of ``model`` as
    applied."""
    return tuple(dict.fromkeys([name for name, _ in scenario.compared(model)] + list(model.inputs)))


def run_sweep(arm_file: Path, scenario_file: Path, points: list[dict], out: Path, settings,
              duration: float | None = None, trajectories: bool = False) -> list[dict]:
    """Run ``points`` of the scenario on the arm as a campaign; write the table and the summary plot.

    Parameters
    ----------
    arm_file, scenario_file : Path
        The arm and the scenario.
    points : list of dict
        Values by name (parameters of the arm, of the scenario's controller).
    out : Path
        The folder of ``results.csv``, ``summary.png``, the campaign's journal and, with ``trajectories``, the
        points' samples (``trajectories/<point>.csv``).
    settings : CampaignSettings
        Where the points run.
    duration : float, optional
        Overrides the scenario's duration, s.
    trajectories : bool
        Also record every point's samples (the scenario's compared outputs and the applied inputs).

    Returns
    -------
    list of dict
        One row per point (see :func:`flexfmu.harness.campaigns.campaign.run_campaign`).

    Raises
    ------
    SweepError
        Before anything runs, for a name or value the arm or the scenario does not take (:func:`check_points`).
    """
    from flexfmu.harness.campaigns.campaign import FmuFile, run_campaign
    from flexfmu.harness.running.fmu_cache import loop_fmu
    from flexfmu.harness.running.loop_case import LoopCase

    model, scenario = _case(str(arm_file), str(scenario_file), duration)
    case = LoopCase.of(model, scenario, Path())
    check_points(model, scenario.build_controller(model), case, points)
    fmu = loop_fmu(model.arm, scenario)
    case = case.at(fmu).holding(model, scenario, points)
    names = list(dict.fromkeys(name for point in points for name in point))
    record = trajectory_names(model, scenario) if trajectories else ()
    setup = SweepSetup(case, FmuFile.of(fmu), record)

    def keep(key: str, row: dict) -> dict:
        samples = row.pop(SAMPLES, None)
        if samples is not None:
            (out / TRAJECTORIES).mkdir(exist_ok=True)
            samples.to_csv(out / TRAJECTORIES / f"{key}.csv")
        return row

    rows = run_campaign(points, sweep_task, out, settings, f"{model.arm.name}/{scenario.name} sweep", (setup,),
                        keep=keep)
    write_table(rows, out / TABLE)
    plot_summary(rows, names, out / SUMMARY_PLOT, f"{model.arm.name} / {scenario.name}")
    return rows


def envelope_warnings(rows: list[dict], names: list[str]) -> list[str]:
    """One line per row of ``rows`` whose run left the validity envelope, naming its point by the swept
    ``names`` and saying when and how far (the columns :data:`flexfmu.control.run_figures.ENVELOPE_LEFT` and
    ``ENVELOPE_PEAK``): results beyond it are outside the model's assumptions."""
    from flexfmu.control.run_figures import ENVELOPE_LEFT, ENVELOPE_PEAK

    return [f"{', '.join(f'{name}={row[name]:g}' for name in names)}: left the validity envelope at "
            f"t = {row[ENVELOPE_LEFT]:.4g} s, largest {row[ENVELOPE_PEAK]:.3g} times its limit"
            for row in rows if row.get("status", "ok") == "ok" and row.get(ENVELOPE_LEFT) is not None]


def summary_metrics(rows: list[dict]) -> list[str]:
    """The figures a summary plot of ``rows`` shows: the cost terms and the RMS tracking error, in the
    rows' order."""
    keys = list(dict.fromkeys(key for row in rows if row["status"] == "ok" for key in row))
    return [key for key in keys if key.startswith(("tracking", "vibration", "effort", "RMS joint tracking"))][:4]


def plot_summary(rows: list[dict], names: list[str], path: Path, title: str) -> None:
    """Each summary metric against each swept name, one panel each, the points coloured by another swept name
    (the second; the first in the second's panels), so a two-way sweep reads as a family of curves; failed
    points as red marks.

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

    from flexfmu.harness.reports.plots import titled

    metrics = summary_metrics(rows) or ["seconds"]
    # constrained from the start: a colour bar added to a figure laid out otherwise breaks the layout later
    fig, axes = plt.subplots(len(metrics), len(names), figsize=(4.2 * len(names), 3.0 * len(metrics)),
                             squeeze=False, layout="constrained")
    ok = [row for row in rows if row["status"] == "ok"]
    failed = [row for row in rows if row["status"] != "ok"]
    for i, metric in enumerate(metrics):
        for j, name in enumerate(names):
            ax = axes[i, j]
            colour = next((other for other in names[1:2] + names[:1] if other != name), None)
            if colour is None:
                ax.plot([row[name] for row in ok], [row[metric] for row in ok], "o", ms=3)
            else:
                points = ax.scatter([row[name] for row in ok], [row[metric] for row in ok], s=12,
                                    c=[row[colour] for row in ok], cmap="viridis")
                fig.colorbar(points, ax=ax, label=colour)
            if failed:
                bottom = min((row[metric] for row in ok), default=0.0)
                ax.plot([row[name] for row in failed], [bottom] * len(failed), "x", color="red", label="failed")
                ax.legend(fontsize=7)
            ax.set(xlabel=name, ylabel=metric)
            ax.grid(True, alpha=0.3)
    titled(fig, f"{title}: {len(ok)} points ok, {len(failed)} failed")
    fig.savefig(path, dpi=90)
    plt.close(fig)
