"""The Delta robot's native FMU (FMI 2.0 CS + ME): complete and valid, starts at rest at the home pose, and
follows the CVODES reference under the motor torques (model exchange to 1e-7; co-simulation, the
Rosenbrock step at the 1 ms communication step, within its integration error)."""

from __future__ import annotations

import fmpy
import numpy as np
import pytest

from flexfmu.control.controllers import HeldInputs
from flexfmu.dynamics.delta.kinematics import DeltaKinematics, Dimensions
from flexfmu.harness.running.reference import simulate_reference
from flexfmu.harness.running.runner import run_fmu
from flexfmu.targets.validate import validate_fmu
from tests.conftest import example_model

pytestmark = [pytest.mark.compiler, pytest.mark.slow]  # a full build of the Delta robot's FMU

# about the static torques at home (1.9 N m each), then a push on motor 1 and a pull on motor 2
SWITCHES = [(0.0, [1.9, 1.9, 1.9]), (0.005, [2.4, 1.4, 1.9]), (0.02, [1.9, 1.9, 1.9])]
DURATION = 0.03
RECORD = ["platform.x", "platform.y", "platform.z", "deviation.z", "platform.pitch", "joint[1].angle"]


@pytest.fixture(scope="module")
def delta(example_fmu):
    """The Model and its FMU (the default export, which tests/test_fmu.py validates with a rebuild of the
    sources)."""
    return example_model("kuo_delta"), example_fmu("kuo_delta")


@pytest.fixture(scope="module")
def reference(delta):
    """The CVODES reference under the torques, for both interfaces."""
    model, _ = delta
    return simulate_reference(model, DURATION, 1e-3, inputs=HeldInputs(SWITCHES, model.inputs))


def test_the_delta_fmu_is_valid_and_starts_at_home(delta):
    model, report = delta
    assert validate_fmu(report.path, build_sources=False).problems == []
    md = fmpy.read_model_description(str(report.path))
    assert md.coSimulation and md.modelExchange
    names = {v.name: v for v in md.modelVariables}
    assert [f"tau[{i}]" for i in (1, 2, 3)] == [v.name for v in md.modelVariables if v.causality == "input"]
    outputs = {v.name for v in md.modelVariables if v.causality == "output"}
    assert {"platform.x", "platform.y", "platform.z", "platform.roll", "deviation.x", "deviation.z",
            "joint[1].angle", "joint[3].rate"} <= outputs
    theta = [float(names[f"theta[{i}]"].start) for i in (1, 2, 3)]
    # the start motor angles put the platform at the arm's home position (plain-geometry forward kinematics)
    arm = model.arm
    dims = Dimensions(arm.base_radius, arm.platform_radius, arm.upper.length, arm.lower.length)
    np.testing.assert_allclose(DeltaKinematics(dims).forward(theta), arm.home, atol=1e-12)
    # a stiff arm (axial modes near 17,000 rad/s): the Rosenbrock step at the communication step by default
    assert report.integrator == "rosenbrock" and report.internal_step == pytest.approx(1e-3)
    # the motors' start values hold the sagging robot at rest
    torques = [float(names[f"tau[{i}]"].start) for i in (1, 2, 3)]
    np.testing.assert_allclose(torques, model.start_inputs, rtol=1e-15)
    assert min(torques) > 1.0


@pytest.mark.parametrize("interface", ["cs", "me"])
def test_the_delta_fmu_follows_the_reference(delta, reference, interface):
    model, report = delta
    grid = np.linspace(0.0, DURATION, int(round(DURATION / 1e-3)) + 1)
    fmu = run_fmu(report.path, model, HeldInputs(SWITCHES, model.inputs), grid, {}, interface, RECORD)
    # model exchange integrates the FMU's exact dynamics (FMPy's CVode); co-simulation takes one Rosenbrock
    # step a millisecond through the torque steps, whose transient it follows to about 3e-6 m and 2e-5 rad
    # (measured; 1e-3 of the links' 25 mm static sag)
    tolerance = 1e-7 if interface == "me" else 3e-5
    for name in RECORD:
        error = np.abs(fmu[name] - reference[name]).max()
        assert error < tolerance, f"{name}: {error:.3g}"
    assert np.ptp(reference["platform.x"]) > 5e-5  # the platform really moved (geared motors: 0.08 mm)
    assert np.ptp(reference["deviation.z"]) > 1e-5  # and the links really deformed
