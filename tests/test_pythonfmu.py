"""Python-backed FMUs (PythonFMU): the plant against the CVODES reference, the
controller against the Python controller it wraps. Both run in this process
through FMPy, so they also check that the slaves work inside an FMU."""

from __future__ import annotations

import shutil

import fmpy
import numpy as np
import pytest
from fmpy.fmi2 import FMU2Slave
from fmpy.validation import validate_fmu

from flexfmu.control.controllers import HeldInputs
from flexfmu.control.scenario import load_scenario
from flexfmu.errors import FlexfmuError
from flexfmu.harness.running.reference import simulate_reference
from flexfmu.harness.running.runner import run_fmu
from flexfmu.targets.pythonfmu import export_controller_fmu, export_pythonfmu
from tests.conftest import ARMS_DIR, example_model

ARM = "subudhi_morris_2link"
ANGLES = ["joint[1].angle", "joint[2].angle"]
BANG_BANG = load_scenario("bang_bang").controller["switches"]


@pytest.fixture(scope="module")
def plant_fmu(tmp_path_factory):
    return export_pythonfmu(ARMS_DIR / f"{ARM}.toml", tmp_path_factory.mktemp("plant") / f"{ARM}.fmu")


@pytest.fixture(scope="module")
def controller_fmu(tmp_path_factory):
    return export_controller_fmu("pd_circle", tmp_path_factory.mktemp("controller") / "pd_circle.fmu")


def _bang_bang_runs(path, duration: float, overrides: dict | None = None):
    """The FMU's and the reference's joint angles under the bang-bang torques,
    both with ``overrides`` of the parameters."""
    model = example_model(ARM)
    held, grid = HeldInputs(BANG_BANG, model.inputs), np.linspace(0.0, duration, int(round(duration / 1e-3)) + 1)
    run = run_fmu(path, model, held, grid, overrides, record=ANGLES)
    reference = simulate_reference(model, duration, 1e-3, inputs=held, p=model.parameter_vector(overrides))
    assert np.allclose(run.time, reference.time)
    return run, reference


def _largest_difference(a, b) -> float:
    return max(np.max(np.abs(a[name] - b[name])) for name in ANGLES)


def test_flexfmus_own_validation_accepts_its_python_backed_fmu_and_says_which_checks_apply(plant_fmu, capsys):
    """PythonFMU's generic binaries read the GUID at run time and export C++ symbols of their own: those two
    checks do not apply and are reported as skipped, the others pass; a binary that lacks an FMI function of
    the FMU's interface is still a problem."""
    from flexfmu.cli import main
    from flexfmu.targets.validate import fmi2_functions

    assert main(["validate", str(plant_fmu), "--no-build"]) == 0
    out = capsys.readouterr().out
    assert "skipped: a Python-backed FMU (PythonFMU)" in out and out.rstrip().endswith(": 0 problem(s)")
    assert "fmi2DoStep" in fmi2_functions(model_exchange=False, co_simulation=True)
    assert "fmi2GetDerivatives" not in fmi2_functions(model_exchange=False, co_simulation=True)


def test_plant_fmu_validates(plant_fmu):
    assert validate_fmu(str(plant_fmu)) == []
    description = fmpy.read_model_description(str(plant_fmu))
    assert "not for real-time targets" in description.description
    names = {v.name: v for v in description.modelVariables}
    model = example_model(ARM)
    assert {"theta[1]", "der(theta[1])", *model.inputs, *model.output_names} <= set(names)
    assert names["payload.mass"].variability == "tunable" and names["link[1].length"].variability == "fixed"


@pytest.mark.slow
def test_plant_fmu_matches_the_reference_under_bang_bang(plant_fmu):
    assert _largest_difference(*_bang_bang_runs(plant_fmu, 2.0)) < 1e-6


@pytest.mark.slow
def test_tunable_parameter_changes_the_trajectory_as_in_the_reference(plant_fmu):
    model = example_model(ARM)
    heavier = {"payload.mass": 3 * model.parameters["payload.mass"]}
    run, reference = _bang_bang_runs(plant_fmu, 1.0, heavier)
    nominal = simulate_reference(model, 1.0, 1e-3, inputs=HeldInputs(BANG_BANG, model.inputs))
    assert _largest_difference(run, nominal) > 1e-3
    assert _largest_difference(run, reference) < 1e-6


def test_start_value_of_a_coordinate_sets_the_initial_pose(plant_fmu):
    model = example_model(ARM)
    run = run_fmu(plant_fmu, model, HeldInputs([(0.0, [0.0, 0.0])], model.inputs), [0.0, 0.001, 0.002],
                  {"theta[1]": 0.3}, record=ANGLES)
    assert run["joint[1].angle"][0] == pytest.approx(0.3, abs=1e-12)
    assert run["joint[2].angle"][0] == pytest.approx(0.0, abs=1e-12)


def test_missing_arm_file_is_an_input_error(tmp_path):
    output = tmp_path / "missing.fmu"
    with pytest.raises(FlexfmuError, match="nowhere.toml"):
        export_pythonfmu(tmp_path / "nowhere.toml", output)
    assert not output.exists()


def test_controller_fmu_validates(controller_fmu):
    assert validate_fmu(str(controller_fmu)) == []
    description = fmpy.read_model_description(str(controller_fmu))
    assert [v.name for v in description.modelVariables if v.causality == "output"] == ["tau[1]", "tau[2]"]


def test_controller_fmu_returns_the_python_controllers_torques(controller_fmu, tmp_path):
    scenario = load_scenario("pd_circle")
    controller = scenario.build_controller(example_model(scenario.arm))
    description = fmpy.read_model_description(str(controller_fmu))
    vr = {v.name: v.valueReference for v in description.modelVariables}
    inputs, outputs = [vr[name] for name in controller.inputs], [vr[name] for name in controller.outputs]
    assert controller.inputs and set(controller.inputs) <= set(vr)

    unzipped = fmpy.extract(str(controller_fmu), str(tmp_path / "unzipped"))
    fmu = FMU2Slave(guid=description.guid, unzipDirectory=unzipped,
                    modelIdentifier=description.coSimulation.modelIdentifier, instanceName="controller")
    fmu.instantiate()
    try:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        rng = np.random.default_rng(1)
        t, h = 0.0, scenario.step
        for k in range(4):
            measured = np.array([0.785, -0.785, 0.0, 0.0]) + 0.05 * rng.standard_normal(len(inputs))
            fmu.setReal(inputs, list(measured))
            assert np.allclose(fmu.getReal(outputs), controller(t, measured), rtol=1e-14, atol=1e-12)
            fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)
            t += h
            if k == 2:  # a longer step: the controller's time follows the master's
                fmu.doStep(currentCommunicationPoint=t, communicationStepSize=0.25)
                t += 0.25
        assert t > 0.25
        fmu.terminate()
    finally:
        fmu.freeInstance()
        shutil.rmtree(unzipped, ignore_errors=True)


@pytest.mark.slow
def test_instantiate_free_cycles_leave_no_slave_alive(plant_fmu, tmp_path):
    """The native FMU is checked for leaks by valgrind over 1,000 cycles (test_fmu.py). For this one valgrind
    cannot judge: PythonFMU's binary embeds CPython, whose arenas, interned objects and module caches live
    until the process ends, and every cycle builds the Model with CasADi (0.2 s). What the FMU itself owns
    is its slave object: after 40 instantiate/step/free cycles in this process none may be alive."""
    description = fmpy.read_model_description(str(plant_fmu))
    unzipped = fmpy.extract(str(plant_fmu), str(tmp_path / "unzipped"))
    for k in range(40):
        fmu = FMU2Slave(guid=description.guid, unzipDirectory=unzipped,
                        modelIdentifier=description.coSimulation.modelIdentifier, instanceName=f"cycle{k}")
        fmu.instantiate()
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=1e-3)
        if k == 0:
            assert alive_slaves() == 1  # the count sees a live slave
        fmu.terminate()
        fmu.freeInstance()
    assert alive_slaves() == 0


def alive_slaves() -> int:
    import gc

    gc.collect()
    return sum(type(o).__name__ == "FlexfmuPlant" for o in gc.get_objects())


def test_leaving_the_envelope_is_warned_once_as_the_native_fmu_does(plant_fmu, tmp_path):
    """2 N m on both joints: link 1 deflects beyond 10 % of its length after about 47 ms (the native FMU's
    figure, test_fmu_reliability.py); the Python-backed plant warns once, naming the quantity and the time
    (PythonFMU's binary passes messages on only with logging on, unlike the native FMU)."""
    from fmpy import calloc, free
    from fmpy.fmi2 import (fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE, fmi2CallbackFunctions,
                           fmi2CallbackLoggerTYPE)

    messages = []
    callbacks = fmi2CallbackFunctions()
    callbacks.logger = fmi2CallbackLoggerTYPE(lambda env, name, status, category, text:
                                              messages.append((status, text.decode())))
    callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
    callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
    description = fmpy.read_model_description(str(plant_fmu))
    vrs = {v.name: v.valueReference for v in description.modelVariables}
    fmu = FMU2Slave(guid=description.guid, unzipDirectory=fmpy.extract(str(plant_fmu), str(tmp_path / "u")),
                    modelIdentifier=description.coSimulation.modelIdentifier, instanceName="envelope")
    fmu.instantiate(callbacks=callbacks, loggingOn=True)
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    fmu.setReal([vrs["tau[1]"], vrs["tau[2]"]], [2.0, 2.0])
    for k in range(60):
        fmu.doStep(currentCommunicationPoint=k * 1e-3, communicationStepSize=1e-3)
    assert fmu.getReal([vrs["envelope.exceeded"]]) == [1.0]
    fmu.terminate()
    fmu.freeInstance()
    warnings = [text for status, text in messages if status == 1]
    assert len(warnings) == 1 and warnings[0].startswith("t=0.047 s: link[1].relative_deflection = ")


@pytest.mark.compiler
@pytest.mark.slow
@pytest.mark.parametrize("integrator", ["rk4", "implicit"])
def test_native_and_python_backed_fmus_agree_to_round_off(integrator, tmp_path, example_fmu):
    """The same fixed-step scheme and internal step over two implementations of the dynamics (the
    native FMU's generated articulated-body passes, the Python-backed FMU's closed-form graph): the
    same discrete system, so round-off is all that may differ; the CVODES reference differs by the
    scheme's own error, orders of magnitude more."""
    from flexfmu.targets import ExportSettings

    model = example_model(ARM)
    native = example_fmu(ARM, ExportSettings(integrator=integrator)).path
    python = export_pythonfmu(ARMS_DIR / f"{ARM}.toml", tmp_path / "python.fmu", integrator=integrator)
    held, grid = HeldInputs(BANG_BANG, model.inputs), np.linspace(0.0, 0.6, 601)
    record = ANGLES + model.outputs_of("deflection")
    a, b = (run_fmu(path, model, held, grid, record=record) for path in (native, python))
    reference = simulate_reference(model, 0.6, 1e-3, inputs=held)
    for name in record:
        assert np.max(np.abs(a[name] - b[name])) < 1e-12, name
    assert max(np.max(np.abs(a[name] - reference[name])) for name in record) > 1e-10
