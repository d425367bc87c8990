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

An arm with prescribed joints needs a ``[motion]`` table: the profile the
harness feeds to their angle, rate and acceleration inputs (``kind =
"spinup"``: paper 001's spin-up to the rate ``w0`` in ``ramp_time``; the
same profile for every prescribed joint). Its entries are the scenario's
parameters (:meth:`Scenario.with_motion`); the other joints take the held
torques of a ``held`` controller.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from pathlib import Path

from flexfmu.control.controllers import HeldInputs, PrescribedInputs, SampledController
from flexfmu.control.laws import LAWS, build_law
from flexfmu.control.references import (circle_reference, inverted_u, platform_circle, platform_reference,
                                        quintic_reference, spinup_reference)
from flexfmu.data import resolve_arm, resolve_scenario, scenario_names
from flexfmu.dynamics.metadata import OUTPUT_GROUPS, PRESCRIBED_ANGLE, TORQUE
from flexfmu.errors import FlexfmuError, InputError

CONTROLLER_KINDS = ("held", *LAWS)
REFERENCE_KINDS = ("circle", "quintic", "platform_circle", "inverted_u")  # the last two: Delta robots
MOTION_KEYS = {"spinup": ("w0", "ramp_time")}  # motion kind -> its parameters (numbers)
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
        known = MOTION_KEYS.get(self.motion.get("kind"), ())
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ScenarioError(f"scenario {self.name}: no motion parameter {', '.join(unknown)} "
                                f"(its motion has: {', '.join(known) or 'none'})")
        return dataclasses.replace(self, motion=self.motion | {k: float(v) for k, v in values.items()})

    def motion_profile(self, joints: int):
        """t -> (angles, rates, accelerations) of the ``[motion]`` table for ``joints`` prescribed joints."""
        return spinup_reference(self.motion["w0"], self.motion["ramp_time"], joints)

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
        """t -> (theta_d, dtheta_d, ddtheta_d) of this scenario for ``model`` (whose link lengths a circle
        reference reads)."""
        spec = self.controller["reference"]
        if spec["kind"] in ("platform_circle", "inverted_u"):
            return platform_reference(self._platform_path(spec), delta_kinematics(model))
        if spec["kind"] == "circle":
            if len(model.inputs) != 2:
                raise ScenarioError(f"scenario {self.name}: the circle reference is the inverse kinematics of a "
                                    f"two-link arm; arm {model.arm.name!r} has {len(model.inputs)} joints")
            lengths = [model.parameters[f"link[{j}].length"] for j in (1, 2)]
            return circle_reference(spec["center"], spec["radius"], spec["frequency"], lengths)
        return quintic_reference(spec["start"], spec["goal"], spec["move_time"])

    def _platform_path(self, spec: dict):
        """t -> (P, P', P'') of a Delta robot's platform reference ``spec``."""
        if spec["kind"] == "platform_circle":
            return platform_circle(spec["center"], spec["radius"], spec["frequency"])
        return inverted_u(spec["start"], spec["travel"], spec["times"])

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


def delta_kinematics(model):
    """The DeltaKinematics of a Delta robot's ``model`` at its nominal dimensions.

    Raises
    ------
    ScenarioError
        If ``model`` is not a Delta robot.
    """
    from flexfmu.dynamics.delta.kinematics import DeltaKinematics, Dimensions

    if model.arm.kind != "delta":
        raise ScenarioError(f"a platform path needs a Delta robot; arm {model.arm.name!r} is {model.arm.kind}")
    values = model.parameters
    return DeltaKinematics(Dimensions(*(values[name] for name in (
        "base.radius", "platform.radius", "upper.length", "lower.length"))))


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
        reference = data["controller"].get("reference", {}).get("kind")
        if reference not in REFERENCE_KINDS:
            problems.append(f"controller.reference.kind must be one of {', '.join(REFERENCE_KINDS)}, "
                            f"got {reference!r}")
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


def _motion_problems(motion) -> list[str]:
    """What is wrong with a ``[motion]`` table (None: absent, fine)."""
    if motion is None:
        return []
    if not isinstance(motion, dict):
        return [f"motion must be a table, got {motion!r}"]
    kind = motion.get("kind")
    if kind not in MOTION_KEYS:
        return [f"motion.kind must be one of {', '.join(MOTION_KEYS)}, got {kind!r}"]
    problems = [f"motion.{key} is not a known key (known: kind, {', '.join(MOTION_KEYS[kind])})"
                for key in motion if key != "kind" and key not in MOTION_KEYS[kind]]
    for key in MOTION_KEYS[kind]:
        value = motion.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            problems.append(f"motion.{key} must be a number > 0, got {value!r}")
    return problems
