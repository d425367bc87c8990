"""Calibrate an arm to recorded experiments: the fit, its report and the calibrated arm file.

Every file is read and checked before any work (``flexfmu.control.measurements``);
then the chosen parameters are fitted through the FMU's own discretisation
with exact sensitivities (``flexfmu.control.identification``). Writes into
the output folder:

- ``<arm>_calibrated.toml``: the arm file with the fitted values, which
  ``flexfmu export`` turns into the calibrated FMU (with ``--communication-step``
  the data's sample step and ``--step`` the fit's internal step, it runs the
  very discretisation that was fitted);
- ``fit_<file>.png``: each measured output against the calibrated prediction,
  with the residuals, and ``prediction_<file>.csv``, that prediction;
- ``validation_<file>.png``: a held-out experiment against the nominal and the
  calibrated arm;
- ``report.md`` and ``report.json``: estimates, standard errors, 95 %
  intervals, correlations, noise levels, warnings, fit and held-out errors.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np

from flexfmu.codegen.native import c_compiler
from flexfmu.control.identification import Z95, Fit, Identification
from flexfmu.control.measurements import read_experiment
from flexfmu.control.open_loop import OpenLoopRun
from flexfmu.harness.reports.plots import save_figure, thinned
from flexfmu.spec.load import read_arm_file
from flexfmu.spec.write import to_toml, with_fields

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@dataclass(frozen=True)
class Validation:
    """A held-out experiment: RMS error per output of the nominal and the calibrated arm."""

    source: str
    nominal_rms: dict[str, float]
    calibrated_rms: dict[str, float]


@dataclass(frozen=True)
class IdentifyResult:
    """What :func:`identify` found and wrote."""

    fit: Fit
    sources: list[str]
    fit_rms: list[dict[str, float]]
    validations: list[Validation]
    calibrated_arm: Path
    sample_steps: list[float]
    internal_steps: list[float]
    integrator: str
    wall_s: float


def identify(model, arm, data: list, names: list[str], out, validate: list = (), fit_initial: bool = False,
             initial_state=None, integrator: str = "rk4", compile: bool = False, start: dict | None = None,
             announce=print) -> IdentifyResult:
    """Fit ``names`` of ``model`` (built from the arm file or example name ``arm``) to the CSV files ``data``.

    Parameters
    ----------
    model : Model
    arm : str or Path
        The arm file (or example arm name) ``model`` was built from: the calibrated file is this one with the
        fitted values written in.
    data, validate : list of paths
        Experiments to fit, and held-out ones to compare the nominal and calibrated arm on.
    names : list of str
        Parameters to fit.
    out : Path
        Output folder.
    fit_initial : bool
        Fit each experiment's initial state too.
    initial_state : array, optional
        x_0 of every experiment (default: at rest at the arm's start pose, where the FMU starts).
    integrator : str
        The FMU's integrator.
    compile : bool
        Compile the runs' per-step pieces to C (``flexfmu.codegen.native``, cached per machine; ten times
        faster runs, the compiler paid once per arm, step and parameter set); without a C compiler the runs
        stay in CasADi's virtual machine, as without ``compile``.
    start : dict, optional
        Starting values of fitted parameters by name (default: the arm file's).
    announce : callable
        Receives progress lines.

    Raises
    ------
    MeasurementError, IdentificationError
        Before any work, for bad files or parameters; IdentificationError for an unidentifiable parameter.
    """
    began = time.perf_counter()
    arm_data, _ = read_arm_file(arm)
    experiments = [read_experiment(path, model) for path in data]
    held_out = [read_experiment(path, model) for path in validate]
    x0 = model.start_state if initial_state is None else np.asarray(initial_state, float)
    if compile and c_compiler() is None:
        announce("no C compiler: the runs are evaluated in CasADi's virtual machine (about ten times slower)")
    identification = Identification(model, experiments, names, start, fit_initial=fit_initial,
                                     initial_states=[x0] * len(experiments), integrator=integrator,
                                     native=compile)
    announce(f"fitting {', '.join(names)} of {model.arm.name} to {len(experiments)} experiment(s), "
             f"{sum(len(e.time) for e in experiments)} samples")
    fit = identification.fit(progress=lambda r, cost: announce(f"  round {r}: weighted cost {cost:.6g}"))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fit_rms = []
    for experiment, prediction in zip(experiments, fit.predictions):
        fit_rms.append({name: _rms(prediction[name] - experiment.outputs[name]) for name in prediction})
        _write_prediction(experiment.time, prediction, out / f"prediction_{Path(experiment.source).stem}.csv")
        _plot(experiment, {"calibrated": prediction}, model, out / f"fit_{Path(experiment.source).stem}.png",
              f"{model.arm.name}: fit to {Path(experiment.source).name} (residuals right)")
    calibrated = model.parameter_vector(fit.estimate)
    validations = []
    for experiment in held_out:
        run = OpenLoopRun(model, experiment.sample_step, len(experiment.time), list(experiment.outputs), [],
                          integrator=integrator, native=compile)
        predictions = {label: dict(zip(experiment.outputs, run.outputs(x0, experiment.inputs, p).T))
                       for label, p in (("nominal", model.nominal_parameters), ("calibrated", calibrated))}
        validations.append(Validation(experiment.source, *(
            {name: _rms(predictions[label][name] - experiment.outputs[name]) for name in experiment.outputs}
            for label in ("nominal", "calibrated"))))
        _plot(experiment, predictions, model, out / f"validation_{Path(experiment.source).stem}.png",
              f"{model.arm.name}: held-out {Path(experiment.source).name}, nominal against calibrated")
    path = out / f"{model.arm.name}_calibrated.toml"
    header = (f"{model.arm.name} calibrated by flexfmu identify to {', '.join(Path(p).name for p in data)}\n"
              + "\n".join(f"{name} = {fit.estimate[name]:.6g} +- {Z95 * fit.standard_error[name]:.2g} (95 %), was "
                          f"{fit.start[name]:.6g}" for name in names))
    path.write_text(to_toml(with_fields(arm_data, calibrated_fields(model, fit.estimate)), header))
    result = IdentifyResult(fit, [e.source for e in experiments], fit_rms, validations, path, [e.sample_step for e in experiments],
                            [run.internal_step for run in identification.runs], integrator,
                            time.perf_counter() - began)
    _write_report(out, model, result)
    return result


def calibrated_fields(model, estimate: dict[str, float]) -> dict[str, float]:
    """The arm-file fields of ``model`` to rewrite for the fitted ``estimate`` (name -> value): each fitted
    parameter's field, and the other elements of a list field it is part of (at their current values), so
    the list is written whole."""
    table = {row.name: row for row in model.parameter_table}
    lists = {table[name].field.rsplit("[", 1)[0] for name in estimate if table[name].field.endswith("]")}
    fields = {row.field: row.value for row in model.parameter_table
              if row.field and row.field.endswith("]") and row.field.rsplit("[", 1)[0] in lists}
    return fields | {table[name].field: value for name, value in estimate.items()}


def _write_prediction(time, prediction: dict, path: Path) -> None:
    """The fitted model's measured outputs at every sample, as a CSV of the input file's layout (exact
    decimal round trip, so the calibrated FMU can be checked against it)."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["time", *prediction])
        writer.writerows([repr(float(t)), *(repr(float(v)) for v in values)]
                         for t, values in zip(time, zip(*prediction.values())))


def _rms(values) -> float:
    return float(np.sqrt(np.mean(np.square(values))))


def _unit(model, name: str) -> str:
    unit = model.output_units[model.output_names.index(name)]
    return f" [{unit}]" if unit else ""


def _plot(experiment, predictions: dict, model, path: Path, title: str) -> None:
    """Measured against each prediction (left) and each prediction's error (right), one row per measured
    output; ``predictions`` maps a label to the predicted outputs by name."""
    names = list(experiment.outputs)
    fig, axes = plt.subplots(len(names), 2, figsize=(12, 2.4 * len(names)), squeeze=False)
    for row, name in zip(axes, names):
        row[0].plot(*thinned(experiment.time, experiment.outputs[name]), ".", ms=2, color="0.5", label="measured")
        for label, prediction in predictions.items():
            row[0].plot(*thinned(experiment.time, prediction[name]), lw=1.0, label=label)
            row[1].plot(*thinned(experiment.time, prediction[name] - experiment.outputs[name]), lw=0.7,
                        label=f"{label} - measured")
        row[0].set(ylabel=f"{name}{_unit(model, name)}")
        row[1].set(ylabel=f"error{_unit(model, name)}")
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    save_figure(fig, axes.ravel(), title, path)


def _write_report(out: Path, model, result: IdentifyResult) -> None:
    fit = result.fit
    table = {row.name: row for row in model.parameter_table}
    parameters = {name: {"unit": table[name].unit, "start": fit.start[name], "estimate": fit.estimate[name],
                         "standard_error": fit.standard_error[name], "ci95": list(fit.interval(name)),
                         "relative_standard_error": fit.standard_error[name] / abs(fit.estimate[name])
                         if fit.estimate[name] else None}
                  for name in fit.names}
    steps = sorted(set(zip(result.sample_steps, result.internal_steps)))
    export = [f"flexfmu export {result.calibrated_arm} -o {model.arm.name}_calibrated.fmu --integrator "
              f"{result.integrator} --communication-step {T:g} --step {h:.17g}" for T, h in steps]
    data = {
        "arm": model.arm.name, "parameters": parameters,
        "correlation": {"names": fit.names, "matrix": np.nan_to_num(fit.correlation, nan=0.0).tolist()},
        "noise_sigma": fit.sigma, "warnings": fit.warnings, "at_bound": fit.at_bound,
        "rounds": fit.rounds, "iterations": fit.iterations, "sensitivity_runs": fit.evaluations,
        "cost_history": fit.cost_history,
        "fit_rms": result.fit_rms,
        "validation": [{"source": v.source, "nominal_rms": v.nominal_rms, "calibrated_rms": v.calibrated_rms}
                       for v in result.validations],
        "initial_states": [x.tolist() for x in fit.initial_states], "states": model.states,
        "calibrated_arm": str(result.calibrated_arm), "integrator": result.integrator,
        "sample_steps": result.sample_steps, "internal_steps": result.internal_steps, "export": export,
        "wall_s": result.wall_s,
    }
    (out / "report.json").write_text(json.dumps(data, indent=2) + "\n")
    lines = [f"# {model.arm.name}: identified parameters", "",
             (f"{fit.rounds} re-weighting round(s), {fit.iterations} Levenberg-Marquardt steps, {fit.evaluations} "
              f"sensitivity runs, {result.wall_s:.1f} s."), "",
             "| parameter | start | estimate | standard error | 95 % interval | unit |", "|---|---|---|---|---|---|"]
    for name, row in parameters.items():
        low, high = row["ci95"]
        lines.append(f"| {name} | {row['start']:.6g} | {row['estimate']:.6g} | {row['standard_error']:.3g} | "
                     f"[{low:.6g}, {high:.6g}] | {row['unit']} |")
    lines += ["", "Correlation of the estimates:", "", "| | " + " | ".join(fit.names) + " |",
              "|---" * (len(fit.names) + 1) + "|"]
    lines += [f"| {name} | " + " | ".join(f"{c:+.3f}" for c in row) + " |"
              for name, row in zip(fit.names, fit.correlation)]
    lines += ["", "## Warnings", ""] + ([f"- {w}" for w in fit.warnings] or ["none"])
    lines += ["", "## Fit", "", "| experiment | output | noise sigma (estimated) | RMS residual |", "|---|---|---|---|"]
    for experiment_rms, source in zip(result.fit_rms, result.sources):
        lines += [f"| {Path(source).name} | {name} | {fit.sigma[name]:.3g} | {rms:.3g} |"
                  for name, rms in experiment_rms.items()]
    lines += [""] + [f"![fit](fit_{Path(source).stem}.png)" for source in result.sources]
    if result.validations:
        lines += ["", "## Held-out experiments", "",
                  "| experiment | output | nominal RMS error | calibrated RMS error |", "|---|---|---|---|"]
        for v in result.validations:
            lines += [f"| {Path(v.source).name} | {name} | {v.nominal_rms[name]:.3g} | {v.calibrated_rms[name]:.3g} |"
                      for name in v.nominal_rms]
        lines += [""] + [f"![validation](validation_{Path(v.source).stem}.png)" for v in result.validations]
    lines += ["", "## The calibrated FMU", "",
              (f"`{result.calibrated_arm.name}` holds the estimates. Exported with the fit's discretisation, the FMU "
               "runs exactly what was fitted:"), "", "```sh", *export, "```", ""]
    (out / "report.md").write_text("\n".join(lines))

