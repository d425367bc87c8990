"""Native C FMUs: export, validation, simulation against the reference,
FMU state, directional derivatives, and misuse from C (threads, failed steps,
any communication step and the validity envelope: test_fmu_reliability.py)."""

from __future__ import annotations

import ctypes
import dataclasses
import shutil
import subprocess
import zipfile
from pathlib import Path

import fmpy
import numpy as np
import pytest
from fmpy.fmi2 import FMU2Model, FMU2Slave

from flexfmu.control.controllers import HeldInputs
from flexfmu.harness.running.reference import simulate_reference
from flexfmu.harness.running.runner import run_fmu
from flexfmu.targets import ExportError, ExportSettings, export_fmu
from flexfmu.targets.build import local_includes
from flexfmu.targets.validate import validate_fmu
from tests.conftest import EXAMPLE_ARMS, example_model, unzipped

pytestmark = pytest.mark.compiler  # and slow where a test builds an FMU (a full C compile of the model)

# piecewise-constant torques switching on the 1 ms grid, and start poses
SCENARIOS = {
    "yu_chen_2dof": ([(0.0, [0.6, 0.2]), (0.5, [-0.6, -0.2]), (1.0, [0.0, 0.0]), (2.0, [0.3, -0.1])],
                     {"theta[1]": -np.pi / 2}),
    "subudhi_morris_2link": ([(0.0, [0.2, 0.2]), (0.5, [-0.2, -0.2]), (1.0, [0.0, 0.0])], {}),
}


@pytest.fixture(scope="module")
def fmus(example_fmu):
    """Exported FMUs of the two reference arms (RK4, default step and settings)."""
    return {name: example_fmu(name) for name in SCENARIOS}


@pytest.mark.slow
@pytest.mark.parametrize("arm_name", EXAMPLE_ARMS)
def test_every_example_arm_exports_and_validates(arm_name, example_fmu):
    """With the default settings (so win64 too where MinGW-w64 is present); validation rebuilds the shipped
    sources with their CMakeLists.txt."""
    report = example_fmu(arm_name)
    result = validate_fmu(report.path)
    assert result.problems == []
    assert result.skipped == []


@pytest.mark.slow
def test_exported_fmu_is_complete(fmus):
    report = fmus["yu_chen_2dof"]
    with zipfile.ZipFile(report.path) as archive:
        names = set(archive.namelist())
    expected = {"modelDescription.xml", "binaries/linux64/yu_chen_2dof.so", "sources/CMakeLists.txt",
                "sources/fmi2_glue.c", "sources/model_data.c", "sources/model_functions.c",
                "sources/ffmu_model.h", "sources/fmi2Functions.h"}
    assert expected <= names
    md = fmpy.read_model_description(str(report.path))
    assert md.coSimulation and md.modelExchange
    assert md.coSimulation.canGetAndSetFMUstate and md.coSimulation.providesDirectionalDerivative
    assert float(md.defaultExperiment.stepSize) == pytest.approx(1e-3)
    # h * omega_max <= 0.3 for RK4, and 1 ms is a whole number of steps
    assert report.internal_step * report.omega_max <= 0.3
    assert (1e-3 / report.internal_step) == pytest.approx(round(1e-3 / report.internal_step))
    variability = {v.name: v.variability for v in md.modelVariables}
    assert variability["link[1].EI"] == "tunable" and variability["link[1].length"] == "fixed"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_the_shipped_cmakelists_compiles_as_flexfmu_does(fmus, tmp_path):
    """A Release build of the shipped sources (CMake's Release means -O3) compiles every file at -O2, as
    flexfmu's own build (flexfmu.targets.build.COMMON), the generated model code with the straight-line flags
    of flexfmu's gcc builds (the last -O flag of each file's compile command is the one gcc uses)."""
    import json

    from flexfmu.codegen.native import straight_line_flags
    from flexfmu.targets.build import COMMON

    sources = tmp_path / "fmu" / "sources"
    with zipfile.ZipFile(fmus["yu_chen_2dof"].path) as archive:
        archive.extractall(tmp_path / "fmu")
    subprocess.run(["cmake", "-S", str(sources), "-B", str(tmp_path / "build"), "-DCMAKE_BUILD_TYPE=Release",
                    "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"], check=True, capture_output=True)
    commands = {Path(c["file"]).name: c["command"].split()
                for c in json.loads((tmp_path / "build" / "compile_commands.json").read_text())}
    ours = next(flag for flag in COMMON if flag.startswith("-O"))
    assert set(commands) >= {"model_functions.c", "model_data.c", "ffmu_instance.c", "fmi2_glue.c"}
    for name, command in commands.items():
        assert [flag for flag in command if flag.startswith("-O")][-1] == ours, (name, command)
    assert set(straight_line_flags(commands["model_functions.c"][0])) <= set(commands["model_functions.c"])
    assert not set(straight_line_flags(commands["fmi2_glue.c"][0])) & set(commands["fmi2_glue.c"])


def reference_and_fmu(name, report, interface, duration=5.0):
    model = example_model(name)
    switches, start = SCENARIOS[name]
    # undeformed, at rest, the joints where the scenario puts them (given to the FMU as its start values too)
    start = {name: 0.0 for name in model.states} | start
    x0 = np.concatenate([[start[name] for name in model.states], np.zeros(len(model.states))])
    held = HeldInputs(switches, model.inputs)
    reference = simulate_reference(model, duration, 1e-3, x0=x0, inputs=held)
    angles = model.outputs_of("joint_angle") + model.outputs_of("motor_angle")
    grid = np.linspace(0.0, duration, int(round(duration / 1e-3)) + 1)
    fmu = run_fmu(report.path, model, held, grid, start, {"CoSimulation": "cs", "ModelExchange": "me"}[interface],
                  angles)
    return reference, fmu, angles


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.parametrize("interface", ["CoSimulation", "ModelExchange"])
def test_fmu_joint_angles_match_the_reference(fmus, name, interface):
    """Within 1e-6 rad over 5 s under a torque profile (CS: RK4 at the
    default internal step, 1 ms communication; ME: FMPy's CVode)."""
    reference, fmu, angles = reference_and_fmu(name, fmus[name], interface)
    assert np.allclose(fmu.time, reference.time)
    for angle in angles:
        error = np.abs(fmu[angle] - reference[angle]).max()
        assert error < 1e-6, f"{angle}: {error:.3g} rad"
    assert max(np.ptp(reference[a]) for a in angles) > 0.1  # the arm really moved


@pytest.mark.slow
def test_default_step_keeps_energy_on_an_undamped_arm(example_fmu):
    """RK4 at the default step (h w_max <= 0.3) on yu_chen with every
    dissipative parameter zeroed: energy drifts by < 1e-5 over 5 s. At h = 1 ms
    (h w_max = 1.1) the same run loses visibly more."""
    model = example_model("yu_chen_2dof")
    dissipative = {n: 0.0 for n in model.parameters
                   if any(k in n for k in ("damping", "friction"))}
    drifts = {}
    for label, step in (("default", None), ("1ms", 1e-3)):
        report = example_fmu("yu_chen_2dof", ExportSettings(internal_step=step))
        drifts[label] = undamped_energy_drift(model, report, dissipative)
    assert drifts["default"] < 1e-5
    assert drifts["1ms"] > 10 * drifts["default"]


def undamped_energy_drift(model, report, dissipative) -> float:
    """Largest relative energy deviation over 5 s from a twisted start, the motors giving no torque."""
    states = list(model.coordinates) + [f"der({c})" for c in model.coordinates]
    free = {name: 0.0 for name in model.inputs}  # not the holding torques: no work done on the arm
    result = fmpy.simulate_fmu(str(report.path), stop_time=5.0, output_interval=1e-3, output=states,
                               start_values={"theta[1]": np.pi / 4, "theta[2]": -np.pi / 4, **dissipative, **free})
    n = len(model.coordinates)
    x = np.column_stack([result[s] for s in states])
    energy = np.array(model.energy.map(x.shape[0])(x[:, :n].T, x[:, n:].T, model.parameter_vector(dissipative)))
    energy = energy.sum(axis=0)
    return np.abs(energy - energy[0]).max() / abs(energy[0])


@pytest.mark.slow
def test_implicit_fmu_tracks_the_reference_and_keeps_energy(example_fmu):
    """Implicit midpoint at its default step (1 ms on yu_chen, 0.5 ms on the
    stiffer subudhi arm): second order, so joint angles stay within 3e-4 rad
    of the reference over 5 s (measured 6e-5 and 1e-5), and on the undamped
    arm the energy neither drifts nor decays (measured 9e-6 over 5 s)."""
    implicit = ExportSettings(integrator="implicit")
    for name in SCENARIOS:
        report = example_fmu(name, implicit)
        reference, fmu, angles = reference_and_fmu(name, report, "CoSimulation")
        for angle in angles:
            error = np.abs(fmu[angle] - reference[angle]).max()
            assert error < 3e-4, f"{name} {angle}: {error:.3g} rad"
    model = example_model("yu_chen_2dof")
    dissipative = {n: 0.0 for n in model.parameters if any(k in n for k in ("damping", "friction"))}
    assert undamped_energy_drift(model, example_fmu("yu_chen_2dof", implicit), dissipative) < 1e-4


def instantiate_slave(report, name="slave"):
    md = fmpy.read_model_description(str(report.path))
    unzipdir = unzipped(report.path)
    slave = FMU2Slave(guid=md.guid, unzipDirectory=unzipdir, modelIdentifier=md.coSimulation.modelIdentifier,
                      instanceName=name)
    slave.instantiate()
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    return slave, vrs, md


def step_outputs(slave, vrs, t0, count, torque=(0.1, -0.05)):
    outs = [vr for name, vr in vrs.items() if name.startswith(("tip.", "joint["))]
    rows = []
    slave.setReal([vrs["tau[1]"], vrs["tau[2]"]], list(torque))
    for k in range(count):
        slave.doStep(t0 + k * 1e-3, 1e-3)
        rows.append(slave.getReal(outs))
    return np.array(rows)


@pytest.mark.slow
def test_fmu_state_restores_bit_identical_trajectories(fmus):
    slave, vrs, _ = instantiate_slave(fmus["subudhi_morris_2link"])
    step_outputs(slave, vrs, 0.0, 100)
    state = slave.getFMUstate()
    first = step_outputs(slave, vrs, 0.1, 200)
    slave.setFMUstate(state)
    again = step_outputs(slave, vrs, 0.1, 200)
    assert np.array_equal(first, again)
    serialized = slave.serializeFMUstate(state)
    other, _, _ = instantiate_slave(fmus["subudhi_morris_2link"], "other")
    other.setFMUstate(other.deSerializeFMUstate(serialized))
    assert np.array_equal(step_outputs(other, vrs, 0.1, 200), first)
    slave.freeFMUstate(state)
    for instance in (slave, other):
        instance.terminate()
        instance.freeInstance()


@pytest.mark.slow
def test_directional_derivatives_match_finite_differences(fmus):
    report = fmus["yu_chen_2dof"]
    md = fmpy.read_model_description(str(report.path))
    unzipdir = unzipped(report.path)
    me = FMU2Model(guid=md.guid, unzipDirectory=unzipdir, modelIdentifier=md.modelExchange.modelIdentifier,
                   instanceName="me")
    me.instantiate()
    me.setupExperiment(startTime=0.0)
    me.enterInitializationMode()
    me.exitInitializationMode()
    me.enterContinuousTimeMode()
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    model = example_model("yu_chen_2dof")
    n = len(model.coordinates)
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.normal(size=n) * [1, 1, 1e-3, 1e-3, 1e-3, 1e-3], rng.normal(size=n)])
    u = np.array([0.3, -0.2])
    knowns = [vrs[c] for c in model.coordinates] + [vrs[f"der({c})"] for c in model.coordinates] + \
        [vrs["tau[1]"], vrs["tau[2]"]]
    unknowns = [vrs[f"der({c},2)"] for c in model.coordinates] + [vrs["tip.ax"], vrs["tip.y"]]

    def evaluate(z):
        states = (ctypes.c_double * (2 * n))(*z[: 2 * n])  # FMPy passes this array to C as is
        me.setContinuousStates(states, 2 * n)
        me.setReal([vrs["tau[1]"], vrs["tau[2]"]], list(z[2 * n:]))
        return np.array(me.getReal(unknowns))

    z = np.concatenate([x, u])
    seed = rng.normal(size=z.size)
    evaluate(z)
    analytic = np.array(me.getDirectionalDerivative(unknowns, knowns, list(seed)))
    eps = 1e-6
    numeric = (evaluate(z + eps * seed) - evaluate(z - eps * seed)) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6 * np.abs(numeric).max())
    me.terminate()
    me.freeInstance()


def test_bad_settings_leave_no_file(tmp_path):
    target = tmp_path / "bad.fmu"
    with pytest.raises(ExportError, match="must be > 0"):
        export_fmu(example_model("rigid_2link"), target, ExportSettings(communication_step=-1e-3))
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_compiler_failure_leaves_no_file(tmp_path, monkeypatch):
    from flexfmu.targets.build import BuildError

    monkeypatch.setenv("CC", "false")
    target = tmp_path / "broken.fmu"
    with pytest.raises(BuildError):
        export_fmu(example_model("rigid_2link"), target)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_guid_and_value_references_are_stable(fmus, tmp_path):
    again = export_fmu(example_model("yu_chen_2dof"), tmp_path / "again.fmu")
    assert again.guid == fmus["yu_chen_2dof"].guid
    first = {v.name: v.valueReference for v in fmpy.read_model_description(str(fmus["yu_chen_2dof"].path)).modelVariables}
    second = {v.name: v.valueReference for v in fmpy.read_model_description(str(again.path)).modelVariables}
    assert first == second


@pytest.mark.slow
def test_validate_reports_a_tampered_fmu(fmus, tmp_path):
    """Validation must be able to fail: swap the GUID in the XML."""
    source = fmus["subudhi_morris_2link"].path
    tampered = tmp_path / "tampered.fmu"
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(tampered, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "modelDescription.xml":
                data = data.replace(fmus["subudhi_morris_2link"].guid.encode(), b"{00000000-0000-0000-0000-000000000000}")
            zout.writestr(item, data)
    problems = validate_fmu(tampered, build_sources=False).problems
    assert any("GUID" in problem for problem in problems)


@pytest.fixture(scope="module")
def misuse_program(tmp_path_factory):
    source = __import__("pathlib").Path(__file__).parent / "c" / "fmu_misuse.c"
    binary = tmp_path_factory.mktemp("c") / "fmu_misuse"
    headers = __import__("importlib").resources.files("fmpy") / "c-code"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{headers}", str(source), "-o",
                    str(binary), "-ldl"], check=True)
    return binary


def misuse_command(misuse_program, report, cycles):
    model = example_model("yu_chen_2dof")
    unzipdir = unzipped(report.path)
    library = f"{unzipdir}/binaries/linux64/yu_chen_2dof.so"
    return [str(misuse_program), library, report.guid, str(2 * len(model.coordinates)), str(len(model.inputs)),
            str(len(model.output_names)), str(len(model.parameters)), repr(report.internal_step),
            "--cycles", str(cycles)]


@pytest.mark.slow
def test_misuse_sequences_from_c(fmus, misuse_program):
    done = subprocess.run(misuse_command(misuse_program, fmus["yu_chen_2dof"], 50), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 failed" in done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_misuse_under_valgrind_no_errors_no_leaks(fmus, misuse_program):
    command = ["valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
               "--error-exitcode=3"] + misuse_command(misuse_program, fmus["yu_chen_2dof"], 1000)
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "ERROR SUMMARY: 0 errors" in done.stderr


@pytest.mark.slow
def test_tunable_parameter_set_between_steps_takes_effect(fmus):
    """The FMU hoists parameter-only terms into constants recomputed when a
    parameter changes (not when inputs do): a payload change mid-run must
    change the motion, and setting it back must restore it bit for bit."""
    runs = []
    for payload in (None, 0.5, 0.1):
        slave, vrs, _ = instantiate_slave(fmus["subudhi_morris_2link"], f"payload{payload}")
        step_outputs(slave, vrs, 0.0, 100)
        if payload is not None:
            slave.setReal([vrs["payload.mass"]], [payload])
        runs.append(step_outputs(slave, vrs, 0.1, 200))
        slave.terminate()
        slave.freeInstance()
    nominal, heavier, same = runs
    assert np.abs(heavier - nominal).max() > 1e-4
    assert np.array_equal(same, nominal)  # 0.1 kg is the nominal payload


@pytest.mark.parametrize(("model_exchange", "extra", "problems"), [
    (False, set(), []),  # a co-simulation-only FMU of flexfmu's binary, which holds both interfaces' functions
    (True, set(), []),
    (False, {"ffmu_private_helper"}, ["exports symbols other than the FMI functions: ffmu_private_helper"]),
])
def test_a_binary_exports_its_interfaces_functions_and_nothing_but_fmi_functions(monkeypatch, tmp_path,
                                                                                   model_exchange, extra, problems):
    """validate: the functions of the declared interfaces must be exported; any FMI 2.0 function may be (one
    binary serves both interfaces), a symbol of flexfmu's own may not."""
    from flexfmu.targets import validate

    binary = tmp_path / "arm.so"
    binary.write_bytes(b"\x7fELF")
    monkeypatch.setattr(validate, "elf_machine", lambda data: validate.ELF_X86_64)
    monkeypatch.setattr(validate, "elf_exports", lambda path: validate.FMI2_FUNCTIONS | extra)
    result = validate.Validation()
    expected = validate.fmi2_functions(model_exchange=model_exchange, co_simulation=True)
    validate._check_exports(binary, "arm.so", "linux64", expected, True, result)
    assert [problem.split(" ", 1)[1] for problem in result.problems] == problems


def _tip_run(fmu, step: float) -> np.ndarray:
    """The outputs of a 0.2 s run of ``fmu`` under a constant shoulder torque, at communication step ``step``."""
    result = fmpy.simulate_fmu(str(fmu), stop_time=0.2, output_interval=step, start_values={"tau[1]": 0.5})
    return np.array([list(row)[1:] for row in result])


def test_an_object_is_keyed_by_the_headers_its_source_includes_through_one_another(tmp_path):
    """The object cache's key follows #include "..." chains inside the sources folder, and only them: a
    header nobody includes does not change the key of a source, one included through another does."""
    (tmp_path / "a.c").write_text('#include <math.h>\n#include "b.h"\nint a;\n')
    (tmp_path / "b.h").write_text('  #  include "c.h"\n#include "missing.h"\n')
    (tmp_path / "c.h").write_text('#include "b.h"\n')  # a cycle ends
    (tmp_path / "d.h").write_text("int d;\n")
    assert local_includes(tmp_path, "a.c") == ["b.h", "c.h"]


def test_a_re_export_with_another_step_reuses_the_compiled_model_code(tmp_path, monkeypatch):
    """Every object is cached by content: re-exported with another communication step, an arm compiles at
    most its model_data.c, and the FMU built from the cached objects runs exactly like one compiled afresh;
    another arm compiles its own model code and reuses the runtime and FMI glue."""
    monkeypatch.setenv("FLEXFMU_CACHE", str(tmp_path / "cache"))
    settings = ExportSettings(platforms=("linux64",))
    model = example_model("rigid_2link")

    def objects():
        return set((tmp_path / "cache").glob("object-*.o"))

    def files(paths):
        return {path.name.split("-")[1] for path in paths}

    export_fmu(model, tmp_path / "first.fmu", settings)
    first = objects()
    assert {"model_functions", "model_data", "ffmu_instance", "fmi2_glue"} <= files(first)
    cached = export_fmu(model, tmp_path / "cached.fmu", dataclasses.replace(settings, communication_step=2e-3))
    assert files(objects() - first) <= {"model_data"}
    monkeypatch.setenv("FLEXFMU_CACHE", str(tmp_path / "fresh-cache"))
    fresh = export_fmu(model, tmp_path / "fresh.fmu", dataclasses.replace(settings, communication_step=2e-3))
    run = _tip_run(cached.path, 2e-3)
    assert np.ptp(run[:, 0]) > 1e-3 and np.array_equal(run, _tip_run(fresh.path, 2e-3))
    monkeypatch.setenv("FLEXFMU_CACHE", str(tmp_path / "cache"))
    before = objects()
    export_fmu(example_model("subudhi_morris_2link"), tmp_path / "other.fmu", settings)
    assert files(objects() - before) == {"model_functions", "model_data"}
