"""FMI 3.0 FMUs: the same per-model and instance code as FMI 2.0 behind the
fmi3 glue. FMPy validates them and simulates both interfaces; they agree
with the FMI 2.0 FMU and the reference; the FMI 3 parts of the glue (the
independent variable, fmi3DoStep's outputs, no event mode) behave as the
standard says; and the crosscheck harness runs them."""

from __future__ import annotations

import shutil
import zipfile

import fmpy
import numpy as np
import pytest
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Slave
from fmpy.validation import validate_fmu as fmpy_validate

from flexfmu.cli import main
from flexfmu.control.controllers import HeldInputs
from flexfmu.harness.running.reference import simulate_reference
from flexfmu.harness.running.runner import run_fmu
from flexfmu.harness.workflows.crosscheck import run_case
from flexfmu.targets import ExportSettings, export
from flexfmu.targets.validate import fmi3_functions, validate_fmu
from tests.conftest import ARMS_DIR, example_model

pytestmark = pytest.mark.compiler  # and slow where a test builds an FMU (a full C compile of the model)

ARM = "subudhi_morris_2link"
SWITCHES = [(0.0, [0.2, 0.2]), (0.3, [-0.2, -0.2]), (0.6, [0.0, 0.0])]


@pytest.fixture(scope="module")
def fmus(tmp_path_factory, example_fmu):
    """The arm as an FMI 3.0 FMU (every platform with a compiler, through the command line) and as an
    FMI 2.0 FMU (the default export)."""
    path = tmp_path_factory.mktemp("fmi3") / f"{ARM}_fmi3.fmu"
    assert main(["export", ARM, "-o", str(path), "--fmi-version", "3"]) == 0
    return path, example_fmu(ARM)


@pytest.mark.slow
def test_fmpy_and_flexfmu_validate_the_fmi3_fmu(fmus):
    """No problem from FMPy's validation (schema, variables, ModelStructure) nor from flexfmu's (every
    binary exports all 75 fmi3 functions of the standard's header, the token, the sources build); the
    internal step is the standard's fixedInternalStepSize."""
    path, fmi2 = fmus
    assert fmpy_validate(str(path)) == []
    result = validate_fmu(path)
    assert result.problems == [] and result.skipped == []
    assert len(fmi3_functions()) == 75
    md = fmpy.read_model_description(str(path))
    assert md.fmiVersion == "3.0" and md.coSimulation and md.modelExchange
    assert float(md.coSimulation.fixedInternalStepSize) == fmi2.internal_step
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
    assert {f"binaries/x86_64-linux/{ARM}.so", "sources/buildDescription.xml", "sources/fmi3_glue.c"} <= names
    if shutil.which("x86_64-w64-mingw32-gcc"):
        assert f"binaries/x86_64-windows/{ARM}.dll" in names
    # the FMI 2.0 FMU's variables, value references and start values, plus the independent variable
    fmi2_md = fmpy.read_model_description(str(fmi2.path))
    fmi2_vars = {v.name: (v.valueReference, v.start) for v in fmi2_md.modelVariables}
    fmi3_vars = {v.name: (v.valueReference, v.start) for v in md.modelVariables}
    assert fmi3_vars.pop("time") == (0, None)
    assert {n: (vr, None if s is None else float(s)) for n, (vr, s) in fmi3_vars.items()} == \
        {n: (vr, None if s is None else float(s)) for n, (vr, s) in fmi2_vars.items()}


@pytest.mark.slow
def test_fmpy_simulates_both_interfaces_as_the_fmi2_fmu_and_the_reference(fmus):
    """fmpy.simulate_fmu under held torques: FMI 3 co-simulation gives the FMI 2 co-simulation run bit for
    bit, and both interfaces stay within 1e-6 rad of the CVODES reference."""
    path, fmi2 = fmus
    model = example_model(ARM)
    held = HeldInputs(SWITCHES, model.inputs)
    grid = np.linspace(0.0, 1.0, 1001)
    angles = model.outputs_of("joint_angle")
    reference = simulate_reference(model, 1.0, 1e-3, inputs=held)
    runs = {name: run_fmu(fmu, model, held, grid, {}, interface, angles)
            for name, fmu, interface in (("fmi3-cs", path, "cs"), ("fmi3-me", path, "me"),
                                         ("fmi2-cs", fmi2.path, "cs"))}
    for angle in angles:
        assert np.array_equal(runs["fmi3-cs"][angle], runs["fmi2-cs"][angle])
        for name in ("fmi3-cs", "fmi3-me"):
            assert np.abs(runs[name][angle] - reference[angle]).max() < 1e-6, (name, angle)
    assert max(np.ptp(reference[a]) for a in angles) > 0.05
    for fmi_type in ("CoSimulation", "ModelExchange"):
        result = fmpy.simulate_fmu(str(path), fmi_type=fmi_type, stop_time=0.2, output_interval=1e-3,
                                   output=angles)
        assert result["time"][-1] == pytest.approx(0.2) and np.all(np.isfinite(result[angles[0]]))


@pytest.mark.slow
def test_fmi3_glue_time_steps_and_event_mode(fmus, tmp_path):
    """The independent variable reads the instance's time and cannot be set; fmi3DoStep reports no event,
    no early return and lastSuccessfulTime = t + h, also for a step that is no multiple of the internal
    step (whole internal steps and one shorter); an importer asking for event mode is refused (hasEventMode
    is false)."""
    path, _ = fmus
    md = fmpy.read_model_description(str(path))
    folder = fmpy.extract(str(path), unzipdir=tmp_path / "fmu")
    slave = FMU3Slave(guid=md.guid, unzipDirectory=folder, modelIdentifier=ARM, instanceName="glue")
    slave.instantiate()
    slave.enterInitializationMode(startTime=0.25)
    slave.exitInitializationMode()
    assert slave.getFloat64([0]) == [0.25]
    assert slave.doStep(0.25, 1e-3) == (False, False, False, pytest.approx(0.251, abs=1e-15))
    assert slave.getFloat64([0]) == [pytest.approx(0.251, abs=1e-15)]
    with pytest.raises(FMICallException):
        slave.setFloat64([0], [1.0])
    h = float(md.coSimulation.fixedInternalStepSize)
    assert slave.doStep(0.251, 1.5 * h) == (False, False, False, pytest.approx(0.251 + 1.5 * h, abs=1e-15))
    assert slave.getFloat64([0]) == [pytest.approx(0.251 + 1.5 * h, abs=1e-15)]
    slave.terminate()
    slave.freeInstance()
    refused = FMU3Slave(guid=md.guid, unzipDirectory=folder, modelIdentifier=ARM, instanceName="events")
    with pytest.raises(Exception, match="Failed to instantiate"):
        refused.instantiate(eventModeUsed=True)


@pytest.mark.slow
def test_crosscheck_runs_fmi3_fmus_against_the_reference(tmp_path):
    """The harness's fmi3-cs and fmi3-me runs pass the scenario's tolerances against the reference, and
    agree with the FMI 2.0 runs of the same interface bit for bit (same C code, same importer)."""
    case = run_case(ARMS_DIR / f"{ARM}.toml", "bang_bang", tmp_path, duration=0.5,
                    runs=("reference", "native-cs", "native-me", "fmi3-cs", "fmi3-me"))
    assert set(case["runs"]) == {"reference", "native-cs", "native-me", "fmi3-cs", "fmi3-me"}
    assert all(c["passed"] for c in case["comparisons"])
    for fmi2, fmi3 in (("native-cs", "fmi3-cs"), ("native-me", "fmi3-me")):
        pair = [c for c in case["comparisons"] if (c["first"], c["second"]) == (fmi2, fmi3)]
        assert pair and all(c["max_abs"] == 0.0 for c in pair)
    assert any(c["first"] == "reference" and c["second"] == "fmi3-me" and c["max_abs"] > 0
               for c in case["comparisons"])


def test_fmi3_export_leaves_nothing_on_bad_settings(tmp_path):
    target = tmp_path / "bad.fmu"
    with pytest.raises(Exception, match="stability limit"):
        export(example_model("yu_chen_2dof"), target, ExportSettings(internal_step=0.01), "fmi3")
    assert list(tmp_path.iterdir()) == []
