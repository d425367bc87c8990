"""Fit an arm's physical parameters to recorded experiments, with their uncertainty.

Weighted least squares through the FMU's own discretisation
(:class:`flexfmu.control.open_loop.OpenLoopRun`): the residuals are
(predicted - measured) / sigma_j for every sample of every measured output j
of every experiment, minimised by scipy's trust-region reflective
Levenberg-Marquardt variant within the physical ranges of the arm file
(``Parameter.range``), with the exact Jacobian of the forward sensitivities.
Each evaluation runs the sensitivities with the outputs, so an accepted step
costs one such run and its Jacobian comes free.

The noise levels sigma_j are not known in advance: a first fit weighs each
output by its spread, then sigma_j is re-estimated from that output's
residuals (pooled over the experiments, corrected for the fitted degrees of
freedom) and the fit repeated until sigma settles. The Gauss-Newton
covariance is then C = (J' J)^-1 of the weighted Jacobian at the optimum:
standard errors sqrt(diag C), 95 % intervals estimate +- 1.96 se and the
correlation matrix. Parameters the data cannot separate (|correlation| >
0.95, or a Jacobian of numerical rank below the number of parameters) are
named in a warning; a parameter that no measured output depends on at the
start is refused before the fit, as unidentifiable.
"""

from __future__ import annotations

import copy
import difflib
import math
from dataclasses import dataclass, field

import numpy as np

from flexfmu.control.measurements import Experiment
from flexfmu.control.open_loop import OpenLoopRun
from flexfmu.errors import FlexfmuError

Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile
SEPARATION_LIMIT = 0.95   # |correlation| above which two parameters count as inseparable
UNMOVED = 1e-9            # a parameter whose scaled sensitivity is below this fraction of the largest is unmoved
RANK_TOLERANCE = 1e-10    # singular values of the column-scaled Jacobian below this fraction count as zero
SIGMA_SETTLED = 0.02      # relative change of every sigma that ends the re-weighting
MAX_ROUNDS = 4
CONVERGED = 1e-4         # decrease of the cost (half the weighted sum of squares) that ends the iteration: at the
                         # optimum a parameter this far off raises it by (offset / standard error)^2 / 2, so the
                         # estimates are within 0.015 standard errors of it


class IdentificationError(FlexfmuError, ValueError):
    """A fit that cannot be run as asked; the message names the parameter, file or output at fault."""


@dataclass
class Fit:
    """What a fit found.

    Attributes
    ----------
    names : list of str
        The fitted parameters.
    start, estimate, standard_error : dict of str to float
        Their values before and after the fit, and the estimates' standard errors.
    correlation : array
        Correlation matrix of the estimates (order of ``names``).
    sigma : dict of str to float
        The noise level of each measured output, estimated from its residuals.
    initial_states : list of array
        x_0 of each experiment (fitted or given).
    predictions : list of dict of str to array
        The fitted model's measured outputs of each experiment.
    warnings : list of str
    rounds, iterations, evaluations : int
        Re-weighting rounds, accepted Levenberg-Marquardt steps and sensitivity runs (of all experiments:
        one per trial point and experiment).
    cost_history : list of float
        Half the weighted sum of squares after each round, with the final sigma.
    at_bound : list of str
        Parameters that ended on a bound of their range (their intervals are not reliable).
    """

    names: list[str]
    start: dict[str, float]
    estimate: dict[str, float]
    standard_error: dict[str, float]
    correlation: np.ndarray
    sigma: dict[str, float]
    initial_states: list[np.ndarray]
    predictions: list[dict[str, np.ndarray]]
    warnings: list[str] = field(default_factory=list)
    rounds: int = 0
    iterations: int = 0
    evaluations: int = 0
    cost_history: list[float] = field(default_factory=list)
    at_bound: list[str] = field(default_factory=list)

    def interval(self, name: str) -> tuple[float, float]:
        """The 95 % confidence interval of ``name``."""
        half = Z95 * self.standard_error[name]
        return self.estimate[name] - half, self.estimate[name] + half


def check_parameters(model, names: list[str]) -> None:
    """Raise IdentificationError unless every name of ``names`` is a tunable parameter of ``model``, each named
    once, with a field of the arm file, so that a calibrated file can be written."""
    table = {row.name: row for row in model.parameter_table}
    if not any(row.field for row in model.parameter_table):
        raise IdentificationError(f"arm {model.arm.name!r} ({model.arm.kind}) cannot be identified: none of its "
                                  "parameters has a field of the arm file to write a calibrated value to (planar "
                                  "and spatial arms have)")
    problems = [f"{name!r} is not a parameter of arm {model.arm.name!r}"
                + "".join(f" (did you mean {close!r}?)" for close in difflib.get_close_matches(name, table, 1))
                for name in names if name not in table]
    problems += [f"{name!r} is fixed geometry ({table[name].description}), not a tunable parameter"
                 for name in names if name in table and not table[name].tunable]
    problems += [f"{name!r} has no field in the arm file to write the calibrated value to" for name in names
                 if name in table and table[name].tunable and table[name].field is None]
    if len(set(names)) != len(names) or not names:
        problems.append(f"name each parameter once, got {', '.join(names) or 'none'}")
    if problems:
        tunable = [row.name for row in model.parameter_table if row.tunable and row.field is not None]
        raise IdentificationError("--params: " + "; ".join(problems) + f" (tunable: {', '.join(tunable)})")


class Identification:
    """The fit of ``names`` (parameters of ``model``) to ``experiments``.

    Parameters
    ----------
    model : Model
    experiments : list of Experiment
        Their measured outputs are fitted; their inputs drive the runs.
    names : list of str
        The parameters to fit (tunable, with a field of the arm file).
    start : dict, optional
        Starting values by name (default: the arm's).
    fit_initial : bool
        Fit each experiment's initial state too (default: every experiment starts where the FMU does,
        at rest at the arm's start pose, or at ``initial_states``).
    initial_states : list of array, optional
        x_0 of each experiment (the start of the fit when ``fit_initial``).
    integrator, internal_step :
        The FMU's discretisation (as ``flexfmu export``; None: its default step for each file's sample step).
    native : bool
        Compile the runs' per-step pieces to C (:class:`OpenLoopRun`); False evaluates them in CasADi's
        virtual machine.
    """

    def __init__(self, model, experiments: list[Experiment], names: list[str], start: dict | None = None,
                 fit_initial: bool = False, initial_states: list | None = None, integrator: str = "rk4",
                 internal_step: float | None = None, native: bool = False):
        check_parameters(model, names)
        self.model, self.experiments, self.names, self.fit_initial = model, experiments, list(names), fit_initial
        table = {row.name: row for row in model.parameter_table}
        unknown = sorted(set(start or {}) - set(names))
        if unknown:
            raise IdentificationError(f"start values given for {', '.join(unknown)}, which are not fitted")
        self.start = {name: float((start or {}).get(name, table[name].value)) for name in names}
        self.bounds = [_bounds(table[name]) for name in names]
        outside = [f"{name} = {self.start[name]:g} (range [{low:g}, {high:g}])"
                   for name, (low, high) in zip(names, self.bounds) if not low <= self.start[name] <= high]
        if outside:
            raise IdentificationError(f"start values outside their ranges: {', '.join(outside)}")
        self.measured = [list(e.outputs) for e in experiments]
        unknown = sorted({name for names in self.measured for name in names} - set(model.output_names))
        if unknown:
            raise IdentificationError(f"measured signals that are not outputs of arm {model.arm.name!r}: "
                                      f"{', '.join(unknown)}")
        self.runs = [OpenLoopRun(model, e.sample_step, len(e.time), outputs, names, fit_initial, integrator,
                                 internal_step, native) for e, outputs in zip(experiments, self.measured)]
        x0 = initial_states or [model.start_state] * len(experiments)
        self.initial_states = [np.asarray(x, float) for x in x0]
        self.evaluations = self.iterations = 0
        self._memo: tuple | None = None

    def with_data(self, experiments: list[Experiment]) -> Identification:
        """The same fit for other ``experiments`` of the same shape (sample steps, lengths, measured outputs),
        reusing the built runs: what repeated fits (many noise draws) need."""
        if [(e.sample_step, len(e.time), list(e.outputs)) for e in experiments] != \
                [(run.sample_step, run.count, outputs) for run, outputs in zip(self.runs, self.measured)]:
            raise IdentificationError("with_data needs experiments of the same sample steps, lengths and outputs")
        other = copy.copy(self)
        other.experiments, other.evaluations, other.iterations, other._memo = list(experiments), 0, 0, None
        return other

    # ------------------------------------------------------------------ theta

    @property
    def _nx(self) -> int:
        return 2 * len(self.model.states)

    def _split(self, theta: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """theta -> (full parameter vector p, x_0 of each experiment)."""
        values = dict(zip(self.names, theta[:len(self.names)]))
        p = self.model.parameter_vector(values)
        if not self.fit_initial:
            return p, self.initial_states
        nx, m = self._nx, len(self.names)
        return p, [theta[m + e * nx:m + (e + 1) * nx] for e in range(len(self.experiments))]

    def _theta0(self) -> np.ndarray:
        theta = [self.start[name] for name in self.names]
        if self.fit_initial:
            theta += [v for x in self.initial_states for v in x]
        return np.array(theta, float)

    # -------------------------------------------------------------- residuals

    def evaluate(self, theta: np.ndarray, sigma: dict[str, float]) -> tuple[np.ndarray, np.ndarray, list]:
        """Weighted residuals, their Jacobian with respect to theta and each experiment's predicted outputs
        (K x ny), at ``theta`` with noise levels ``sigma``. The runs at the last theta are remembered, so a
        new weighting costs no run."""
        if self._memo is None or self._memo[0] != theta.tobytes():
            p, x0s = self._split(theta)
            self._memo = (theta.tobytes(), [run.outputs_and_sensitivities(x0, e.inputs, p)
                                            for run, e, x0 in zip(self.runs, self.experiments, x0s)])
            self.evaluations += len(self.runs)
        m, nx = len(self.names), self._nx
        residuals, jacobians, predictions = [], [], []
        for e, (experiment, outputs, (Y, dY)) in enumerate(zip(self.experiments, self.measured, self._memo[1])):
            weights = np.array([1.0 / sigma[name] for name in outputs])
            measured = np.column_stack([experiment.outputs[name] for name in outputs])
            residuals.append(((Y - measured) * weights).ravel())
            J = np.zeros((Y.size, len(theta)))
            weighted = (dY * weights[None, :, None]).reshape(Y.size, -1)
            J[:, :m] = weighted[:, :m]
            if self.fit_initial:
                J[:, m + e * nx:m + (e + 1) * nx] = weighted[:, m:]
            jacobians.append(J)
            predictions.append(Y)
        return np.concatenate(residuals), np.vstack(jacobians), predictions

    def check_identifiable(self, sigma: dict[str, float]) -> None:
        """Refuse parameters that no measured output depends on at the start (the inputs never move them),
        the residuals weighted by the noise levels ``sigma`` (by output name)."""
        theta = self._theta0()
        r, J, _ = self.evaluate(theta, sigma)
        if not np.all(np.isfinite(r)):
            raise IdentificationError("the arm's run at the start values is not finite (unstable at the FMU's "
                                      "step, or the inputs drive it out of its range)")
        scale = np.maximum(np.abs(theta), _fallback_scales(self, theta))
        norms = np.linalg.norm(J * scale, axis=0)[:len(self.names)]
        unmoved = [name for name, n in zip(self.names, norms) if not n > UNMOVED * max(norms.max(), 1e-300)]
        if unmoved:
            raise IdentificationError(
                f"unidentifiable: {', '.join(unmoved)} — no measured output of the experiments depends on "
                f"{'it' if len(unmoved) == 1 else 'them'} (the inputs never excite {'it' if len(unmoved) == 1 else 'them'}, "
                "or it acts on outputs that were not measured); record an experiment that moves it, or do not fit it")

    # -------------------------------------------------------------------- fit

    def fit(self, max_iterations: int = 30, progress=None) -> Fit:
        """Fit (see the module docstring): at most ``max_iterations`` Levenberg-Marquardt iterations per
        re-weighting round; ``progress``, when given, is called as ``progress(round, cost)`` after each round."""
        sigma = self._roughness()
        self.check_identifiable(sigma)
        theta = self._theta0()
        m = len(self.names)
        low = np.concatenate([[b[0] for b in self.bounds], np.full(len(theta) - m, -np.inf)])
        high = np.concatenate([[b[1] for b in self.bounds], np.full(len(theta) - m, np.inf)])
        history, rounds = [], 0
        for rounds in range(1, MAX_ROUNDS + 1):
            theta, converged = self._levenberg_marquardt(theta, sigma, low, high, max_iterations)
            new_sigma = self._residual_sigma(theta, sigma)
            settled = all(abs(new_sigma[k] / sigma[k] - 1) < SIGMA_SETTLED for k in sigma)
            sigma = new_sigma
            history.append(0.5 * float(np.sum(self.evaluate(theta, sigma)[0] ** 2)))
            if progress:
                progress(rounds, history[-1])
            if settled:
                break
        fit = self._result(theta, sigma, low, high, rounds, history)
        if not converged:
            fit.warnings.append(f"the fit stopped after {max_iterations} iterations without converging: the "
                                "estimates and intervals are those of the last point")
        return fit

    def _levenberg_marquardt(self, theta, sigma, low, high, max_iterations: int) -> tuple[np.ndarray, bool]:
        """Minimise half the weighted sum of squares from ``theta`` within [low, high]: Levenberg-Marquardt
        steps (Marquardt's diagonal scaling) projected onto the box, one sensitivity run per trial point.
        Returns the last point and whether it converged (the cost stopped falling) within ``max_iterations``."""
        r, J, _ = self.evaluate(theta, sigma)
        cost, damping = 0.5 * float(r @ r), 1e-3
        for _ in range(max_iterations):
            A, g = J.T @ J, J.T @ r
            diagonal = np.maximum(np.diag(A), 1e-300)
            try:
                step = -np.linalg.solve(A + damping * np.diag(diagonal), g)
            except np.linalg.LinAlgError:
                damping *= 10
                continue
            trial = np.clip(theta + step, low, high)
            r_trial, J_trial, _ = self.evaluate(trial, sigma)
            cost_trial = 0.5 * float(r_trial @ r_trial) if np.all(np.isfinite(r_trial)) else np.inf
            if cost_trial < cost:
                decrease = cost - cost_trial
                theta, r, J, cost = trial, r_trial, J_trial, cost_trial
                self.iterations += 1
                damping = max(damping / 10, 1e-12)
                if decrease <= CONVERGED:
                    return theta, True
            else:
                damping *= 10
                if damping > 1e12:  # no step lowers the cost: the optimum to round-off
                    return theta, True
        return theta, False

    def _roughness(self) -> dict[str, float]:
        """A first noise level per output, from the data alone: white noise dominates the second differences
        of a densely sampled smooth signal, whose variance is then 6 sigma^2 (the spread of the output, or 1,
        when that is zero)."""
        names = sorted({name for outputs in self.measured for name in outputs})
        sigma = {}
        for name in names:
            series = [e.outputs[name] for e in self.experiments if name in e.outputs]
            second = np.concatenate([np.diff(values, 2) for values in series])
            rough = math.sqrt(float(np.mean(second**2)) / 6.0) if second.size else 0.0
            sigma[name] = rough or float(np.std(np.concatenate(series))) or 1.0
        return sigma

    def _residual_sigma(self, theta: np.ndarray, sigma: dict[str, float]) -> dict[str, float]:
        """sigma_j^2 = RSS_j / (N_j (1 - n_theta / N)) from the unweighted residuals at ``theta``."""
        _, _, predictions = self.evaluate(theta, sigma)
        squares = dict.fromkeys(sigma, 0.0)
        counts = dict.fromkeys(sigma, 0)
        for experiment, outputs, Y in zip(self.experiments, self.measured, predictions):
            for j, name in enumerate(outputs):
                squares[name] += float(np.sum((Y[:, j] - experiment.outputs[name]) ** 2))
                counts[name] += len(Y)
        total = sum(counts.values())
        keep = 1.0 - len(theta) / total
        return {name: math.sqrt(squares[name] / (counts[name] * keep)) or sigma[name] for name in sigma}

    def _result(self, theta, sigma, low, high, rounds, history) -> Fit:
        _, J, predictions = self.evaluate(theta, sigma)
        m = len(self.names)
        scale = np.maximum(np.abs(theta), _fallback_scales(self, theta))
        Js = J * scale
        _, s, Vt = np.linalg.svd(Js, full_matrices=False)
        rank_ok = s > RANK_TOLERANCE * s[0]
        warnings = []
        inverse = np.where(rank_ok, 1.0 / np.where(rank_ok, s, 1.0) ** 2, np.inf)
        covariance_scaled = (Vt.T * np.where(np.isfinite(inverse), inverse, 0.0)) @ Vt
        covariance = covariance_scaled * np.outer(scale, scale)
        variances = np.diag(covariance)[:m].copy()
        for k in np.nonzero(~rank_ok)[0]:
            involved = [self.names[i] for i in np.nonzero(np.abs(Vt[k, :m]) > 0.1)[0]]
            variances[[self.names.index(n) for n in involved]] = np.inf
            warnings.append(f"the data cannot separate {', '.join(involved) or 'the initial state'}: only a "
                            "combination of them moves the measured outputs (their intervals are unbounded)")
        errors = np.sqrt(variances)
        with np.errstate(invalid="ignore", divide="ignore"):
            correlation = covariance[:m, :m] / np.outer(np.sqrt(np.diag(covariance)[:m]),
                                                        np.sqrt(np.diag(covariance)[:m]))
        correlation = np.where(np.isfinite(correlation), correlation, np.nan)
        for i in range(m):
            for j in range(i + 1, m):
                if abs(correlation[i, j]) > SEPARATION_LIMIT:
                    warnings.append(f"the data hardly separate {self.names[i]} and {self.names[j]} (correlation "
                                    f"{correlation[i, j]:+.3f}): their intervals are wide and their estimates trade "
                                    "off; an experiment that moves one without the other would separate them")
        at_bound = [name for k, name in enumerate(self.names)
                    if np.isclose(theta[k], low[k], rtol=1e-6, atol=0) or np.isclose(theta[k], high[k], rtol=1e-6)]
        if at_bound:
            warnings.append(f"{', '.join(at_bound)} ended on a bound of the arm file's range: the interval assumes an "
                            "interior optimum and is not reliable there")
        _, x0s = self._split(theta)
        return Fit(
            names=self.names, start=dict(self.start), estimate=dict(zip(self.names, theta[:m].tolist())),
            standard_error=dict(zip(self.names, errors.tolist())), correlation=correlation, sigma=sigma,
            initial_states=[np.array(x) for x in x0s],
            predictions=[dict(zip(outputs, Y.T)) for outputs, Y in zip(self.measured, predictions)],
            warnings=warnings, rounds=rounds, iterations=self.iterations, evaluations=self.evaluations,
            cost_history=history,
            at_bound=at_bound)


def _bounds(row) -> tuple[float, float]:
    """The fit's bounds of a parameter: its range, strictly inside an open upper end (a damping ratio < 1)."""
    if row.range is None:
        return -np.inf, np.inf
    high = row.range.high
    return row.range.low, np.nextafter(high, -np.inf) if high == 1.0 and row.range.unit == "1" else high


def _fallback_scales(identification: Identification, theta: np.ndarray) -> np.ndarray:
    """The scale of a quantity whose value is zero: a hundredth of its range's width for a parameter, 1 for a
    state (m, rad and their rates)."""
    m = len(identification.names)
    scales = np.ones(len(theta))
    for k, (low, high) in enumerate(identification.bounds):
        width = high - low
        scales[k] = 1e-2 * width if np.isfinite(width) and width > 0 else 1.0
    scales[:m] = np.minimum(scales[:m], 1.0)
    return scales
