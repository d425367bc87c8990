"""Scenarios: an arm, a duration, a controller, and what to compare how closely.

Scenario files live in ``harness/scenarios/NAME.toml``. Every scenario is run
as a closed loop at its ``step`` with sample and hold; open-loop inputs are a
controller that ignores its measurements (kind "held").
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from flexfmu.control.laws import LAWS, build_law
from flexfmu.control.references import circle_reference, quintic_reference
from harness.controllers import HeldInputs, SampledController

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
ARMS_DIR = Path(__file__).resolve().parent.parent / "fmus" / "arms"
CONTROLLER_KINDS = ("held", *LAWS)
REFERENCE_KINDS = ("circle", "quintic")


class ScenarioError(ValueError):
    """A scenario file that cannot be run; the message names the field."""


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    arm: str
    duration: float
    step: float
    initial: dict
    controller: dict
    outputs: list[str]
    tolerances: dict

    @property
    def arm_path(self) -> Path:
        return ARMS_DIR / f"{self.arm}.toml"

    def tolerance(self, output: str) -> float:
        """Largest allowed absolute difference of ``output`` between two runs."""
        return float(self.tolerances.get(output, self.tolerances["default"]))

    def law(self, model):
        """The control law of this scenario, its gains as the law's defaults."""
        options = {key: value for key, value in self.controller.items() if key not in ("kind", "reference")}
        if self.controller["kind"] == "composite":
            options.setdefault("sample_step", self.step)
        return build_law(model, self.controller["kind"], **options)

    def reference(self, model):
        """t -> (theta_d, dtheta_d, ddtheta_d) of this scenario."""
        spec = self.controller["reference"]
        if spec["kind"] == "circle":
            lengths = [model.parameters[f"link[{j}].length"] for j in (1, 2)]
            return circle_reference(spec["center"], spec["radius"], spec["frequency"], lengths)
        return quintic_reference(spec["start"], spec["goal"], spec["move_time"])

    def build_controller(self, model, gains: dict | None = None):
        """The controller object of this scenario for ``model``; ``gains``
        overrides the scenario's gains by name."""
        if self.controller["kind"] == "held":
            return HeldInputs(self.controller["switches"], list(model.inputs))
        law = self.law(model)
        return SampledController(law, law.gain_vector(gains), self.reference(model))


def scenario_names() -> list[str]:
    return sorted(path.stem for path in SCENARIO_DIR.glob("*.toml"))


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load a scenario by name (``harness/scenarios``) or path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = SCENARIO_DIR / f"{name_or_path}.toml"
    if not path.is_file():
        raise ScenarioError(f"no scenario {str(name_or_path)!r}; known: {', '.join(scenario_names())}")
    data = tomllib.loads(path.read_text())
    problems = []
    for key in ("name", "arm", "duration", "step", "controller", "compare", "tolerances"):
        if key not in data:
            problems.append(f"{path.name}: missing {key!r}")
    if problems:
        raise ScenarioError("; ".join(problems))
    kind = data["controller"].get("kind")
    if kind not in CONTROLLER_KINDS:
        problems.append(f"controller.kind must be one of {', '.join(CONTROLLER_KINDS)}, got {kind!r}")
    elif kind != "held":
        reference = data["controller"].get("reference", {}).get("kind")
        if reference not in REFERENCE_KINDS:
            problems.append(f"controller.reference.kind must be one of {', '.join(REFERENCE_KINDS)}, "
                            f"got {reference!r}")
    if not (ARMS_DIR / f"{data['arm']}.toml").is_file():
        problems.append(f"arm {data['arm']!r} is not in {ARMS_DIR}")
    for key in ("duration", "step"):
        if not isinstance(data[key], (int, float)) or data[key] <= 0:
            problems.append(f"{key} must be > 0, got {data[key]!r}")
    if "default" not in data["tolerances"]:
        problems.append("tolerances.default is missing")
    if problems:
        raise ScenarioError(f"{path.name}: " + "; ".join(problems))
    return Scenario(
        name=data["name"], description=data.get("description", ""), arm=data["arm"],
        duration=float(data["duration"]), step=float(data["step"]), initial=dict(data.get("initial", {})),
        controller=dict(data["controller"]), outputs=list(data["compare"]["outputs"]),
        tolerances=dict(data["tolerances"]),
    )
