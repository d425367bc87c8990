"""Scenarios: an arm, a duration, a controller, and what to compare how closely.

A scenario is a TOML file (shipped ones in ``flexfmu/data/scenarios``, found
by name; any other by path). Every scenario runs as a closed loop at its
``step`` with sample and hold; open-loop inputs are a controller that ignores
its measurements (kind ``held``).

``compare.outputs`` lists output names (``tip.ay``) or output groups of the
Model (``joint_angle``, ``deflection``, see ``flexfmu.dynamics.metadata``),
so one scenario adapts to arms with more or fewer links: ``deflection`` on a
rigid arm compares nothing. ``tolerances`` are keyed the same way, a name
before its group, with ``default`` for the rest.

``[controller]`` names a row of
:data:`flexfmu.control.controllers.CONTROLLERS` by its ``kind`` (held
torques or a control law of :data:`flexfmu.control.laws.LAWS`) with the keys
that row declares. A control law's ``[controller.reference]`` names a row of
:data:`flexfmu.control.reference_kinds.REFERENCES`, with that row's keys. An
arm with prescribed joints needs a ``[motion]`` table: a profile of
:data:`flexfmu.control.motions.MOTIONS` (``kind = "spinup"``: paper 001's
spin-up to the rate ``w0`` in ``ramp_time``), which the harness feeds to
their angle, rate and acceleration inputs, the same profile for every
prescribed joint. Its entries are the scenario's parameters
(:meth:`Scenario.with_motion`); the other joints take the held torques of a
``held`` controller.

A scenario is checked in two steps, both before anything runs or is
written. :func:`load_scenario` checks the file alone against the declared
keys (:mod:`flexfmu.spec.keys`): every key typed and ranged, unknown keys
with a spelling hint, the kinds of controller, reference and motion from
their tables with the keys of their rows. :meth:`Scenario.check` then
checks it against the arm's Model: the names in ``initial``, ``compare`` and
``tolerances``, the lengths of per-joint lists, whether the controller,
reference and motion fit the arm, and the reference itself, sampled over the
run. Every problem is reported at once, on one line, as a ScenarioError.
"""

from __future__ import annotations

import dataclasses
import difflib
import tomllib
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flexfmu.control.controllers import CONTROLLERS, HeldInputs, PrescribedInputs, SampledController
from flexfmu.control.laws import LAWS
from flexfmu.control.motions import MOTIONS
from flexfmu.control.reference_kinds import REFERENCES
from flexfmu.data import resolve_arm, resolve_scenario, scenario_names
from flexfmu.dynamics.equilibrium import EquilibriumError, rest_state, rest_states
from flexfmu.dynamics.metadata import OUTPUT_GROUPS, PRESCRIBED_ANGLE, TORQUE
from flexfmu.errors import FlexfmuError, InputError
from flexfmu.spec.checks import join, show, string, sub_table, type_name
from flexfmu.spec.keys import Key, joint_count_problems, read_keys

MAX_INITIAL_ANGLE = 1000.0  # rad: a joint's start angle (160 turns)
MAX_SAMPLES = 10_000_000  # duration / step: beyond this a run would not fit in memory
REFERENCE_SAMPLES = 21  # times at which Scenario.check evaluates a reference (both ends included)
SCENARIO_KEYS = (
    Key("name", "string", "the scenario's name"),
    Key("description", "string", "what it shows and where it comes from", required=False, default=""),
    Key("arm", "string", "an example arm's name, or an arm file"),
    Key("duration", "number", "how long it runs", "s", gt=0),
    Key("step", "number", "the controller's sample step and the FMU's communication step", "s", gt=0),
    Key("initial", "table", "start values of state coordinates by name (the others at the arm's start pose)",
        required=False, default={}),
    Key("tolerances", "table", "largest difference allowed between two runs, by output name or output group; "
        "default for the rest (required)", gt=0),
)
COMPARE_KEYS = (Key("outputs", "strings", "the output names or output groups of the arm's Model compared"),)
TABLES = ("controller", "compare", "motion")  # read by their own readers below

__all__ = ["Scenario", "ScenarioError", "load_scenario", "scenario_from_dict", "scenario_names", "scenarios_for"]


class ScenarioError(FlexfmuError, ValueError):
    """A scenario file that cannot be run; the message (one line) names every field at fault."""


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario (see the module docstring for the file's fields); every value checked against its
    declared key."""

    name: str
    description: str
    arm: str
    duration: float
    step: float
    initial: dict
    controller: dict
    outputs: list[str]
    tolerances: dict
    motion: dict = dataclasses.field(default_factory=dict)

    @property
    def arm_path(self) -> Path:
        """The arm file the scenario is written for."""
        return resolve_arm(self.arm)

    @property
    def controller_kind(self):
        """The row of :data:`~flexfmu.control.controllers.CONTROLLERS` its controller names."""
        return CONTROLLERS[self.controller["kind"]]

    @property
    def closed_loop(self) -> bool:
        """Whether its controller is a control law following a reference (not held torques)."""
        return self.controller_kind.follows_reference

    @property
    def options(self) -> dict:
        """The controller's keys besides ``kind`` and ``reference``: gains and options."""
        return {key: value for key, value in self.controller.items() if key not in ("kind", "reference")}

    def check(self, model) -> None:
        """Check this scenario against the arm's ``model``: the names of ``initial``, ``compare.outputs`` and
        ``tolerances``, the per-joint lists, whether the controller, reference and motion fit the arm, the
        reference sampled over the run (finite, within reach), and the start: initial values finite, the
        arm's static equilibrium at the initial angles.

        Raises
        ------
        ScenarioError
            Naming every problem, on one line.
        """
        problems = self._name_problems(model) + self._initial_problems(model) + self._controller_problems(model)
        if problems:
            raise ScenarioError(f"scenario {self.name} on arm {model.arm.name!r}: " + "; ".join(problems))
        self.initial_state(model)  # the static equilibrium at the initial angles exists

    def _name_problems(self, model) -> list[str]:
        problems = [_unknown("initial", name, model.states, "a state coordinate of the arm")
                    for name in self.initial if name not in model.states]
        known = [*model.output_names, *OUTPUT_GROUPS]
        problems += [_unknown(f"compare.outputs[{i}]", entry, known, "an output or output group of the arm")
                     for i, entry in enumerate(self.outputs, start=1) if entry not in known]
        if not problems and not self.compared(model):
            problems.append(f"compare.outputs selects no output of the arm ({', '.join(self.outputs)})")
        problems += [_unknown("tolerances", key, ["default", *known], "an output or output group of the arm")
                     for key in self.tolerances if key not in ("default", *known)]
        return problems

    def _initial_problems(self, model) -> list[str]:
        """Initial values that are not finite, and joint angles beyond ``MAX_INITIAL_ANGLE`` (the start is the
        static equilibrium at these angles, which no Newton step finds from there)."""
        joints = {c.name for c in model.layout if c.kind == "joint"}
        problems = []
        for name, value in self.initial.items():
            if not np.isfinite(value):
                problems.append(f"initial.{name} = {value!r} is not a finite number")
            elif name in joints and abs(value) > MAX_INITIAL_ANGLE:
                problems.append(f"initial.{name} = {value:g} rad is beyond +-{MAX_INITIAL_ANGLE:g} rad")
        return problems

    def _controller_problems(self, model) -> list[str]:
        row = self.controller_kind
        torques = len(model.inputs_of(TORQUE))
        problems = joint_count_problems(self.controller, "controller", row.keys, torques, model.arm.name)
        why = row.fits(model, self.options)
        if why:
            problems.append(f"controller.kind = {row.name!r}: {why}")
        prescribed = model.inputs_of(PRESCRIBED_ANGLE)
        if prescribed and not self.motion:
            problems.append(f"arm {model.arm.name!r} has prescribed joints ({', '.join(prescribed)}): give their "
                            "motion in a [motion] table")
        elif self.motion and not prescribed:
            problems.append(f"motion: arm {model.arm.name!r} has no prescribed joint to move")
        if row.follows_reference and not problems:
            problems += self._reference_problems(model)
        return problems

    def _reference_problems(self, model) -> list[str]:
        spec = self.controller["reference"]
        row = REFERENCES[spec["kind"]]
        why = row.fits(model)
        if why:
            return [f"controller.reference.kind = {row.name!r}: {why}"]
        problems = joint_count_problems(spec, "controller.reference", row.keys, len(model.inputs_of(TORQUE)),
                                        model.arm.name)
        if problems:
            return problems
        grid = self.grid()
        times = grid[np.unique(np.linspace(0, len(grid) - 1, min(len(grid), REFERENCE_SAMPLES)).round().astype(int))]
        key = (model.arm, repr(sorted(spec.items())), tuple(times))
        if key not in _SAMPLED:
            if len(_SAMPLED) >= 64:
                _SAMPLED.clear()
            _SAMPLED[key] = _sampled_reference(row, spec, model, times)
        return _SAMPLED[key]

    def compared(self, model) -> list[tuple[str, float]]:
        """(output name, largest allowed absolute difference between two
        runs) for every output this scenario compares on ``model``.

        Raises
        ------
        ScenarioError
            If an entry is neither an output nor an output group of the model.
        """
        known = set(model.output_names)
        rows = []
        for entry in self.outputs:
            if entry in known:
                rows.append((entry, self._tolerance(model, entry)))
            elif entry in OUTPUT_GROUPS:
                rows += [(name, self._tolerance(model, name)) for name in model.outputs_of(entry)]
            else:
                raise ScenarioError(f"scenario {self.name}: compare.outputs names {entry!r}, which is neither an "
                                    f"output of arm {model.arm.name!r} nor an output group "
                                    f"({', '.join(OUTPUT_GROUPS)})")
        return list(dict.fromkeys(rows))

    def _tolerance(self, model, output: str) -> float:
        group = next(s.group for s in model.output_table if s.name == output)
        for key in (output, group, "default"):
            if key in self.tolerances:
                return float(self.tolerances[key])
        raise AssertionError("load_scenario requires a default tolerance")

    def initial_state(self, model, p=None):
        """x0 = [q0; 0] over the state coordinates of ``model``: the arm at rest at the scenario's start pose,
        its joints at the scenario's initial angles (the others at the arm's start pose) and every other
        coordinate at the static equilibrium there under the parameters ``p`` (nominal when None;
        ``flexfmu.dynamics.equilibrium``), unless the scenario gives it too.

        Raises
        ------
        ScenarioError
            If an initial name is not a state coordinate of the model (prescribed joints follow the motion), or
            the arm has no static equilibrium at the initial angles (a Delta robot's motors where its chains
            cannot close).
        """
        with self._resting(model):
            return rest_state(model, self.initial, p)

    def start_values(self, model, p=None) -> dict:
        """{state coordinate name: value} of :meth:`initial_state` (parameters ``p``, nominal when None): what an
        FMU of ``model`` is started with."""
        x0 = self.initial_state(model, p)
        return dict(zip(model.states, map(float, x0)))

    def start_values_under(self, model, ps) -> list[dict]:
        """:meth:`start_values` of ``model`` under each parameter vector of ``ps`` (a sweep's points), solved
        together (``flexfmu.dynamics.equilibrium.rest_states``); the ScenarioError of a set without an
        equilibrium carries its place (``error.index``)."""
        with self._resting(model):
            return [dict(zip(model.states, map(float, x0))) for x0 in rest_states(model, ps, self.initial)]

    @contextmanager
    def _resting(self, model):
        """Check the initial names of the scenario against ``model``'s states, and turn an EquilibriumError met
        inside into a ScenarioError that names the scenario and its initial angles (keeping ``index``)."""
        states = model.states
        unknown = sorted(set(self.initial) - set(states))
        if unknown:
            raise ScenarioError(f"scenario {self.name}: initial names {', '.join(unknown)}, not state coordinates "
                                f"of arm {model.arm.name!r} ({', '.join(states)}; prescribed joints follow the "
                                "[motion] table)")
        try:
            yield
        except EquilibriumError as error:
            joints = {c.name for c in model.layout if c.kind == "joint"}
            angles = ", ".join(f"{name} = {value:g}" for name, value in self.initial.items() if name in joints) \
                or "the arm's start pose"
            failure = ScenarioError(f"scenario {self.name}: initial ({angles}): {error}")
            failure.index = getattr(error, "index", None)
            raise failure from error

    def with_motion(self, **values) -> Scenario:
        """This scenario with the ``[motion]`` parameters in ``values`` replaced (``w0=6.0``), checked
        against the motion's keys.

        Raises
        ------
        ScenarioError
            If the scenario has no motion, the motion no such parameter, or a value is out of its range.
        """
        profile = MOTIONS.get(self.motion.get("kind"))
        known = tuple(key.name for key in profile.keys) if profile else ()
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ScenarioError(f"scenario {self.name}: no motion parameter {', '.join(unknown)} "
                                f"(its motion has: {', '.join(known) or 'none'})")
        problems: list[str] = []
        motion = read_keys(problems, self.motion | values, "motion", profile.keys, others=("kind",))
        if problems:
            raise ScenarioError(f"scenario {self.name}: " + "; ".join(problems))
        return dataclasses.replace(self, motion={"kind": self.motion["kind"]} | motion)

    def with_duration(self, duration: float) -> Scenario:
        """This scenario run for ``duration`` s instead (``--duration``), which must be a whole number of its
        steps.

        Raises
        ------
        ScenarioError
            If it is not.
        """
        problems = _duration_problems(duration, self.step)
        if problems:
            raise ScenarioError(f"scenario {self.name}: " + "; ".join(problems))
        return dataclasses.replace(self, duration=float(duration))

    def motion_profile(self, joints: int):
        """t -> (angles, rates, accelerations) of the ``[motion]`` table for ``joints`` prescribed joints."""
        return MOTIONS[self.motion["kind"]].motion(self.motion, joints)

    def grid(self):
        """The sample times 0, step, ..., duration."""
        return np.linspace(0.0, self.duration, int(round(self.duration / self.step)) + 1)

    def law(self, model):
        """The control law of this scenario for ``model``, its gains as the law's defaults."""
        return LAWS[self.controller["kind"]].build(model, self.options, self.step)

    def reference(self, model):
        """t -> (theta_d, dtheta_d, ddtheta_d) of this scenario for ``model``: the row of ``REFERENCES`` its
        reference names, built from the reference's keys.

        Raises
        ------
        ScenarioError
            If the arm of ``model`` cannot follow that reference (a circle needs a planar two-link arm, a
            platform path a Delta robot).
        """
        spec = self.controller["reference"]
        row = REFERENCES[spec["kind"]]
        why = row.fits(model)
        if why:
            raise ScenarioError(f"scenario {self.name}: {why}")
        return row.reference(spec, model)

    def build_controller(self, model, gains: dict | None = None):
        """The controller object of this scenario for ``model``; ``gains``
        overrides the scenario's gains by name.

        Raises
        ------
        ScenarioError
            If the controller does not fit the arm: held torques of the wrong count, a ``[motion]`` table
            missing for an arm with prescribed joints or given for one without, a control law on an arm
            with prescribed joints.
        """
        prescribed = model.inputs_of(PRESCRIBED_ANGLE)
        if bool(prescribed) != bool(self.motion):
            why = (f"has prescribed joints ({', '.join(prescribed)}) and the scenario no [motion] table"
                   if prescribed else "has no prescribed joint for the scenario's [motion] table")
            raise ScenarioError(f"scenario {self.name}: arm {model.arm.name!r} {why}")
        row = self.controller_kind
        problems = joint_count_problems(self.controller, "controller", row.keys, len(model.inputs_of(TORQUE)),
                                        model.arm.name)
        why = row.fits(model, self.options)
        if problems or why:
            raise ScenarioError(f"scenario {self.name}: " + "; ".join(problems or [f"controller: {why}"]))
        if not row.follows_reference:
            held = HeldInputs([list(switch) for switch in self.controller["switches"]], model.inputs_of(TORQUE))
            if prescribed:
                return PrescribedInputs.for_model(model, self.motion_profile(len(prescribed)), held)
            return held
        law = self.law(model)
        return SampledController(law, law.gain_vector(gains), self.reference(model))


_SAMPLED: dict = {}  # (arm, reference, times) -> problems: a scenario is checked where it loads and where it runs


def _sampled_reference(row, spec: dict, model, times) -> list[str]:
    """What is wrong with the reference ``spec`` (a row of REFERENCES) on ``model`` sampled at ``times``: an
    error of its builder (a point out of reach) or a sample that is not finite."""
    try:
        reference = row.build(spec, model)
        for t in times:
            sample = np.concatenate(reference(float(t)))
            if not np.all(np.isfinite(sample)):
                return [f"controller.reference gives joint angles or rates that are not finite at t = {t:g} s"]
    except (ArithmeticError, ValueError, np.linalg.LinAlgError, FlexfmuError) as error:
        return [f"controller.reference cannot be followed by arm {model.arm.name!r}: {_one_line(error)}"]
    return []


def _unknown(where: str, name: str, known, what: str) -> str:
    """The problem of a ``name`` at ``where`` that is not one of ``known``, with a spelling hint."""
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{where} names {show(name)}, not {what}{hint}"


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _duration_problems(duration: float, step: float) -> list[str]:
    """What is wrong with running ``duration`` s at ``step`` s (both already checked > 0)."""
    count = duration / step
    if count > MAX_SAMPLES:
        return [f"duration / step = {count:.3g} samples; at most {MAX_SAMPLES:,} are supported"]
    if round(count) < 1 or abs(round(count) * step - duration) > 1e-9 * duration:
        return [f"duration ({duration:g} s) must be a whole number of steps ({step:g} s)"]
    return []


def scenarios_for(arm_name: str) -> list[str]:
    """Names of the shipped scenarios written for the arm ``arm_name``."""
    return [name for name in scenario_names() if load_scenario(name).arm == arm_name]


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load a scenario by name (shipped scenarios) or path, checking the file alone (see
    :meth:`Scenario.check` for the checks against the arm).

    Parameters
    ----------
    name_or_path : str or Path
        A shipped scenario's name (see :func:`scenario_names`) or a TOML file.

    Returns
    -------
    Scenario

    Raises
    ------
    ScenarioError
        Naming every problem of the file, or that there is no such scenario.
    """
    try:
        path = resolve_scenario(name_or_path)
        data = tomllib.loads(path.read_text())
    except InputError as error:
        raise ScenarioError(str(error)) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ScenarioError(f"scenario {str(name_or_path)!r} cannot be read: {_one_line(error)}") from None
    return scenario_from_dict(data, path.name)


def scenario_from_dict(data: Mapping, source: str = "<dict>") -> Scenario:
    """The Scenario of ``data`` (a parsed scenario file) from ``source`` (a name for messages), checked
    against the declared keys of the file, its controller, reference and motion.

    Raises
    ------
    ScenarioError
        Naming every problem, on one line.
    """
    problems: list[str] = []
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{source}: a scenario must be a table, got {show(data)} ({type_name(data)})")
    values = read_keys(problems, data, "", SCENARIO_KEYS, others=TABLES)
    if values["name"] is not None and not values["name"].strip():
        problems.append("name must not be empty")
    if values["arm"] is not None:
        try:
            resolve_arm(values["arm"])
        except InputError as error:
            problems.append(str(error))
        except (OSError, ValueError) as error:
            problems.append(f"arm {show(values['arm'])} cannot be a file name: {_one_line(error)}")
    if values["tolerances"] is not None and "default" not in values["tolerances"]:
        problems.append("tolerances.default is required (the tolerance of outputs not named)")
    if values["duration"] is not None and values["step"] is not None:
        problems += _duration_problems(values["duration"], values["step"])
    controller = _controller(problems, data)
    compare = sub_table(problems, data, "compare", "", required=True)
    outputs = read_keys(problems, compare, "compare", COMPARE_KEYS)["outputs"] if compare is not None else None
    motion = _kind_table(problems, data, "motion", MOTIONS, required=False)
    if problems:
        raise ScenarioError(f"{source}: " + "; ".join(_one_line(problem) for problem in problems))
    return Scenario(name=values["name"], description=values["description"], arm=values["arm"],
                    duration=values["duration"], step=values["step"], initial=dict(values["initial"]),
                    controller=controller, outputs=list(outputs), tolerances=dict(values["tolerances"]),
                    motion=motion or {})


def _kind_table(problems: list[str], data: Mapping, path: str, rows: dict, required: bool = True,
                others: tuple = ()) -> dict | None:
    """The checked table at ``path`` in ``data`` (its ``kind`` a row of ``rows``, its keys the row's): {} when
    absent and optional, None when unusable (the problems appended)."""
    parent, _, key = path.rpartition(".")
    table = sub_table(problems, data, key, parent, required)
    if table is None or key not in data:
        return table
    kind = string(problems, table, "kind", path, choices=tuple(rows))
    if kind is None:
        return None
    values = read_keys(problems, table, path, rows[kind].keys, others=("kind", *others))
    return {"kind": kind} | values


def _controller(problems: list[str], data: Mapping) -> dict | None:
    """The checked ``[controller]`` table: its kind from CONTROLLERS with that row's keys, and for a control
    law its ``[controller.reference]`` from REFERENCES."""
    controller = _kind_table(problems, data, "controller", CONTROLLERS, others=("reference",))
    if not controller:
        return None
    table = data["controller"]
    if CONTROLLERS[controller["kind"]].follows_reference:
        reference = _kind_table(problems, table, join("controller", "reference"), REFERENCES)
        return None if reference is None else controller | {"reference": reference}
    if "reference" in table:
        problems.append(f"controller.reference: a {controller['kind']!r} controller follows no reference")
    return controller
