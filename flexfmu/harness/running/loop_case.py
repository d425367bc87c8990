"""A scenario on an arm run through its closed-loop FMU: what a point sets, what it reads back.

A point is a dict of values by name: the arm's parameters (``payload.mass``),
the controller's parameters as the closed-loop FMU names them
(``controller.kp``, ``reference.radius``, ``motion.w0``; a gain also by its
bare name, ``kp``). :meth:`LoopCase.row` runs it and answers the figures a
sweep tabulates, under the column names of the harness's figures of a
recorded run (``flexfmu.harness.reports.figures``): the cost terms, the peak
torques and deflections, the tracking figures and the validity envelope
(each quantity's peak as a fraction of its limit, and when the run left it,
None if it stayed inside), with the FMU's warnings.

A LoopCase is plain data, made once where the Model is built
(:meth:`LoopCase.of`) and shipped to campaign workers, which need only the
FMU to run it: no Model is built on a worker. A run starts at rest at the
scenario's pose (``Scenario.start_values``: the static equilibrium there);
where points set the arm's parameters, that equilibrium is each point's own,
solved where the Model is (:meth:`LoopCase.holding`) and shipped with the
case.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flexfmu.control.run_figures import ENVELOPE_FIGURES, ENVELOPE_PEAK, SETTLE_TIME, Figure, settle_time
from flexfmu.harness.running.loop_runner import LoopRun, loop_runner
from flexfmu.harness.running.result import Result

WARNINGS = "warnings"


@dataclass(frozen=True)
class LoopCase:
    """A scenario's closed loop on an arm, as the FMU at ``fmu`` runs it.

    Attributes
    ----------
    fmu : Path
        The closed-loop FMU (``flexfmu.targets.loop``).
    duration, step : float
        The run's length and sample step, s.
    initial : dict
        The start values of the plant's coordinates by name: the equilibrium at the scenario's pose
        (``Scenario.start_values``) at the arm's nominal parameters.
    figures : tuple of Figure
        The loop's figures (``flexfmu.control.loop_system``), in output order.
    aliases : dict
        A point's names of the controller's parameters -> the FMU's: each its own, and each gain by its bare
        name too.
    parameters : tuple of str
        The arm's parameters.
    held : dict
        The start values at other values of the arm's parameters, by :meth:`plant_key` (:meth:`holding`).
    """

    fmu: Path
    duration: float
    step: float
    initial: dict
    figures: tuple[Figure, ...]
    aliases: dict
    parameters: tuple[str, ...]
    held: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, model, scenario, fmu, integrator: str = "rk4", internal_step: float | None = None) -> LoopCase:
        """The case of ``scenario`` (its duration included) on ``model``, run by the FMU at ``fmu`` (exported
        with ``integrator`` and ``internal_step``, as its loop's figures depend on)."""
        from flexfmu.control.loop_system import LoopSystem

        controller = scenario.build_controller(model)
        system = LoopSystem(model, controller, scenario.step, scenario.initial_state(model), integrator, internal_step)
        names = {name: name for name in controller.parameters}
        aliases = names | {name.partition(".")[2]: name for name in names if name.startswith("controller.")}
        return cls(Path(fmu), scenario.duration, scenario.step, scenario.start_values(model), tuple(system.figures),
                   aliases, tuple(model.parameters))

    def plant_key(self, point: dict) -> tuple:
        """The values ``point`` sets of the arm's parameters, as a key of :attr:`held` (empty: nominal)."""
        return tuple(sorted((name, float(value)) for name, value in point.items() if name in self.parameters))

    def holding(self, model, scenario, points: list[dict]) -> LoopCase:
        """This case with the start values of every ``points``' values of the arm's parameters solved on
        ``model`` (the static equilibrium at the ``scenario``'s pose under them, all at once:
        ``Scenario.start_values_under``), so that no worker needs the Model.

        Raises
        ------
        ScenarioError
            If the arm has no equilibrium under a point's values (naming them).
        """
        from flexfmu.control.scenario import ScenarioError  # here, where the Model is: workers need not import it

        keys = sorted({self.plant_key(point) for point in points} - {()})
        if not keys:
            return dataclasses.replace(self, held={})
        try:
            held = scenario.start_values_under(model, [model.parameter_vector(dict(key)) for key in keys])
        except ScenarioError as error:  # name the point's values: the sweep's user knows the point by them
            if getattr(error, "index", None) is None:  # not a point's: the scenario's own
                raise
            values = ", ".join(f"{name}={value:g}" for name, value in keys[error.index])
            raise ScenarioError(f"at {values}: {error}") from error
        return dataclasses.replace(self, held=dict(zip(keys, held)))

    def at(self, fmu) -> LoopCase:
        """This case run by the FMU at ``fmu`` (the same FMU, elsewhere: a worker's copy)."""
        return dataclasses.replace(self, fmu=Path(fmu))

    def shortened(self, duration: float) -> LoopCase:
        """This case run for ``duration`` s."""
        return dataclasses.replace(self, duration=float(duration))

    @property
    def names(self) -> list[str]:
        """Every name a point may set: the arm's parameters, then the controller's (both spellings of a gain)."""
        return list(self.parameters) + list(self.aliases)

    def start_values(self, point: dict) -> dict[str, float]:
        """The FMU's start values for ``point``: the plant at rest at the scenario's pose under the point's
        parameters (:attr:`held`, else :attr:`initial`), the point's values under the FMU's names, and the settle
        time of the figures for the run's duration.

        Raises
        ------
        KeyError
            Naming a value that is neither a parameter of the arm nor one of the controller's, or values of the
            arm's parameters whose start values :meth:`holding` did not solve.
        """
        unknown = [name for name in point if name not in self.parameters and name not in self.aliases]
        if unknown:
            raise KeyError(f"{', '.join(unknown)}: not a parameter of the arm nor of the controller")
        key = self.plant_key(point)
        if key and key not in self.held:
            raise KeyError(f"the start values at {', '.join(f'{n}={v:g}' for n, v in key)} were not solved: "
                           "LoopCase.holding")
        start = self.held.get(key, self.initial)
        values = dict(start) | {self.aliases.get(name, name): float(value) for name, value in point.items()}
        return values | {SETTLE_TIME: settle_time(self.duration)}

    def run(self, point: dict, record=()) -> LoopRun:
        """Run ``point``, reading the figures at the end and recording ``record`` (output names) at every sample
        when given. Raises PointError with the FMU's message if the run fails."""
        return loop_runner(self.fmu).run(self.start_values(point), self.duration, [f.name for f in self.figures],
                                         self.step, record)

    def trajectory(self, point: dict, record) -> Result:
        """The outputs ``record`` of ``point``'s run at every sample."""
        return self.run(point, record).result

    def row(self, point: dict) -> dict:
        """The figures of ``point`` by column name (see the module docstring), with the FMU's warnings."""
        return self.figures_of(self.run(point))

    def figures_of(self, run: LoopRun) -> dict:
        """The figures of the ``run`` of a point by column name, with the FMU's warnings."""
        grid = np.linspace(0.0, self.duration, int(round(self.duration / self.step)) + 1)
        settled = f"t >= {float(grid[grid >= settle_time(self.duration) - 1e-9][0]):g} s"
        row = {}
        for figure in self.figures:
            value = run.outputs[figure.name]
            if figure.fold == "first":
                value = None if value < 0 else value
            row[figure.label.format(settled=settled)] = value
        fractions = [run.outputs[f.name] for f in self.figures if f.name.startswith(ENVELOPE_FIGURES) and f.fold == "max"]
        if fractions:  # the envelope's summary beside its quantities, as a recorded run's (reports.envelope)
            row[ENVELOPE_PEAK] = max(fractions)
        return row | {WARNINGS: " | ".join(run.warnings)}
