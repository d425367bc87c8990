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

A closed-loop controller's ``[controller.reference]`` names a row of
:data:`flexfmu.control.reference_kinds.REFERENCES` by its ``kind``, with the
keys that row declares. An arm with prescribed joints needs a ``[motion]``
table: a profile of :data:`flexfmu.control.motions.MOTIONS` (``kind =
"spinup"``: paper 001's spin-up to the rate ``w0`` in ``ramp_time``), which
the harness feeds to their angle, rate and acceleration inputs, the same
profile for every prescribed joint. Its entries are the scenario's
parameters (:meth:`Scenario.with_motion`); the other joints take the held
torques of a ``held`` controller. Both tables' keys are checked when the
scenario loads.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from pathlib import Path

from flexfmu.control.controllers import HeldInputs, PrescribedInputs, SampledController
from flexfmu.control.laws import LAWS, build_law
from flexfmu.control.motions import MOTIONS
from flexfmu.control.reference_kinds import REFERENCES
from flexfmu.data import resolve_arm, resolve_scenario, scenario_names
from flexfmu.dynamics.metadata import OUTPUT_GROUPS, PRESCRIBED_ANGLE, TORQUE
from flexfmu.errors import FlexfmuError, InputError
from flexfmu.spec.keys import read_keys

CONTROLLER_KINDS = ("held", *LAWS)
REQUIRED = ("name", "arm", "duration", "step", "controller", "compare", "tolerances")

__all__ = ["Scenario", "ScenarioError", "load_scenario", "scenario_names", "scenarios_for"]


class ScenarioError(FlexfmuError, ValueError):
    """A scenario file that cannot be run; the message names the field."""


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario (see the module docstring for the file's fields)."""

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
        return rows

    def _tolerance(self, model, output: str) -> float:
        group = next(s.group for s in model.output_table if s.name == output)
        for key in (output, group, "default"):
            if key in self.tolerances:
                return float(self.tolerances[key])
        raise AssertionError("load_scenario requires a default tolerance")

    def initial_state(self, model):
        """x0 = [q0; 0] over the state coordinates of ``model`` with the scenario's initial coordinates (the
        others at the arm's start pose: zero for serial arms, the home pose for a Delta robot).

        Raises
        ------
        ScenarioError
            If an initial name is not a state coordinate of the model (prescribed joints follow the motion).
        """
        states = model.states
        unknown = sorted(set(self.initial) - set(states))
        if unknown:
            raise ScenarioError(f"scenario {self.name}: initial names {', '.join(unknown)}, not state coordinates "
                                f"of arm {model.arm.name!r} ({', '.join(states)}; prescribed joints follow the "
                                "[motion] table)")
        x0 = model.start_state.copy()
        for name, value in self.initial.items():
            x0[states.index(name)] = value
        return x0

    def with_motion(self, **values) -> Scenario:
        """This scenario with the ``[motion]`` parameters in ``values`` replaced (``w0=6.0``).

        Raises
        ------
        ScenarioError
            If the scenario has no motion or the motion no such parameter.
        """
        profile = MOTIONS.get(self.motion.get("kind"))
        known = tuple(key.name for key in profile.keys) if profile else ()
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ScenarioError(f"scenario {self.name}: no motion parameter {', '.join(unknown)} "
                                f"(its motion has: {', '.join(known) or 'none'})")
        return dataclasses.replace(self, motion=self.motion | {k: float(v) for k, v in values.items()})

    def motion_profile(self, joints: int):
        """t -> (angles, rates, accelerations) of the ``[motion]`` table for ``joints`` prescribed joints."""
        return MOTIONS[self.motion["kind"]].motion(self.motion, joints)

    def grid(self):
        """The sample times 0, step, ..., duration."""
        import numpy as np

        return np.linspace(0.0, self.duration, int(round(self.duration / self.step)) + 1)

    def law(self, model):
        """The control law of this scenario for ``model``, its gains as the law's defaults."""
        options = {key: value for key, value in self.controller.items() if key not in ("kind", "reference")}
        if self.controller["kind"] == "composite":
            options.setdefault("sample_step", self.step)
        return build_law(model, self.controller["kind"], **options)

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
        if self.controller["kind"] == "held":
            torques = model.inputs_of(TORQUE)
            nu = len(torques)
            wrong = [t for t, u in self.controller["switches"] if len(u) != nu]
            if wrong:
                raise ScenarioError(f"scenario {self.name}: controller.switches at t = {wrong[0]} s has not "
                                    f"{nu} torques (arm {model.arm.name!r} has {nu} torque inputs)")
            held = HeldInputs(self.controller["switches"], torques)
            if prescribed:
                return PrescribedInputs.for_model(model, self.motion_profile(len(prescribed)), held)
            return held
        if prescribed:
            raise ScenarioError(f"scenario {self.name}: control laws drive joint torques; arm {model.arm.name!r} "
                                f"has prescribed joints ({', '.join(prescribed)}): use controller.kind = \"held\"")
        law = self.law(model)
        return SampledController(law, law.gain_vector(gains), self.reference(model))


def scenarios_for(arm_name: str) -> list[str]:
    """Names of the shipped scenarios written for the arm ``arm_name``."""
    return [name for name in scenario_names() if load_scenario(name).arm == arm_name]


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load a scenario by name (shipped scenarios) or path.

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
        raise ScenarioError(f"scenario {str(name_or_path)!r} cannot be read: {error}") from None
    problems = [f"missing {key!r}" for key in REQUIRED if key not in data]
    if problems:
        raise ScenarioError(f"{path.name}: " + "; ".join(problems))
    kind = data["controller"].get("kind")
    if kind not in CONTROLLER_KINDS:
        problems.append(f"controller.kind must be one of {', '.join(CONTROLLER_KINDS)}, got {kind!r}")
    elif kind != "held":
        problems += _reference_problems(data["controller"].get("reference", {}))
    try:
        resolve_arm(data["arm"])
    except InputError as error:
        problems.append(str(error))
    for key in ("duration", "step"):
        if not isinstance(data[key], (int, float)) or data[key] <= 0:
            problems.append(f"{key} must be > 0, got {data[key]!r}")
    if "default" not in data["tolerances"]:
        problems.append("tolerances.default is missing")
    problems += _motion_problems(data.get("motion"))
    if problems:
        raise ScenarioError(f"{path.name}: " + "; ".join(problems))
    return Scenario(
        name=data["name"], description=data.get("description", ""), arm=data["arm"],
        duration=float(data["duration"]), step=float(data["step"]), initial=dict(data.get("initial", {})),
        controller=dict(data["controller"]), outputs=list(data["compare"]["outputs"]),
        tolerances=dict(data["tolerances"]), motion=dict(data.get("motion", {})),
    )


def _reference_problems(reference) -> list[str]:
    """What is wrong with a ``[controller.reference]`` table: its kind, then the keys of that kind's row."""
    kind = reference.get("kind") if isinstance(reference, dict) else None
    if kind not in REFERENCES:
        return [f"controller.reference.kind must be one of {', '.join(REFERENCES)}, got {kind!r}"]
    problems: list[str] = []
    read_keys(problems, reference, "controller.reference", REFERENCES[kind].keys, others=("kind",))
    return problems


def _motion_problems(motion) -> list[str]:
    """What is wrong with a ``[motion]`` table (None: absent, fine): its kind, then the keys of that kind's row."""
    if motion is None:
        return []
    if not isinstance(motion, dict):
        return [f"motion must be a table, got {motion!r}"]
    kind = motion.get("kind")
    if kind not in MOTIONS:
        return [f"motion.kind must be one of {', '.join(MOTIONS)}, got {kind!r}"]
    problems: list[str] = []
    read_keys(problems, motion, "motion", MOTIONS[kind].keys, others=("kind",))
    return problems
