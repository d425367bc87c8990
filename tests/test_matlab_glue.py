"""The MATLAB glue under GNU Octave: the sfunction target's MEX gateway builds
with mkoctfile --mex (through the exported make script) and steps the arm as
the FMU does; matlab_glue's helpers read FMUs and parameter structs. Octave
has no Simulink, so the S-function itself is not compiled here (see
docs/simulink.md for what is and is not tested). Skipped, saying so, where
Octave is absent (scripts/install-tools.sh installs it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import fmpy
import numpy as np
import pytest
from fmpy.fmi2 import FMU2Slave

from flexfmu.cli import main
from flexfmu.targets import ExportError, ExportSettings, export
from flexfmu.targets.platforms import host_platform
from tests.conftest import example_model

pytestmark = pytest.mark.compiler  # and slow where a test runs Octave (on a full build of the model)
needs_octave = pytest.mark.skipif(shutil.which("octave") is None or shutil.which("mkoctfile") is None,
                                  reason="GNU Octave (octave, mkoctfile) is not installed "
                                         "(scripts/install-tools.sh installs it)")

ARM = "yu_chen_2dof"
GLUE = Path(__file__).resolve().parent.parent / "matlab_glue"


def octave(script: str, folder: Path) -> str:
    """Runs ``script`` in Octave in ``folder`` with matlab_glue on the path; its printed output."""
    done = subprocess.run(["octave", "--no-gui", "--norc", "--quiet", "--eval", f"addpath('{GLUE}'); {script}"],
                          cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def octave_error(script: str, folder: Path) -> str:
    """The message and identifier of the error ``script`` raises in Octave."""
    return octave(f"try, {script}; disp('no error'); catch failure, disp([failure.identifier ' | ' "
                  f"failure.message]); end", folder)


@pytest.fixture(scope="module")
def built(tmp_path_factory, example_fmu):
    """The sfunction folder of yu_chen_2dof with its MEX gateway built by make_yu_chen_2dof in Octave, the
    FMU of the same arm and the build's output."""
    folder = tmp_path_factory.mktemp("matlab") / "sfun"
    assert main(["export", ARM, "--target", "sfunction", "-o", str(folder)]) == 0
    log = octave(f"make_{ARM}", folder)
    return folder, example_fmu(ARM), log


def torques(t: float, nu: int) -> list[float]:
    return [0.4 - 0.3 * t * t / (j + 1) if t < 1.0 else -0.2 + 0.1 * t for j in range(nu)]


@pytest.mark.slow
@needs_octave
def test_sfunction_folder_is_self_contained_and_the_mex_builds_without_warnings(built):
    folder, _, log = built
    files = {p.name for p in folder.iterdir()}
    assert {f"{ARM}_sfun.c", f"{ARM}_mex.c", f"make_{ARM}.m", "ffmu_model.h", "ffmu_instance.c",
            "model_data.c", "model_functions.c", "model_mass_matrix.c", "matlab_data.c"} <= files
    assert f"#define S_FUNCTION_NAME {ARM}_sfun" in (folder / f"{ARM}_sfun.c").read_text()
    assert f"built {ARM}_mex" in log and "warning" not in log.lower()
    assert "the S-function needs MATLAB with Simulink" in log
    assert (folder / f"{ARM}_mex.mex").is_file()


@pytest.mark.slow
@needs_octave
def test_octave_stepping_the_mex_reproduces_the_fmu_trajectory(built, tmp_path):
    """An Octave script steps the arm 2 s (1 ms steps) under a torque profile with a parameter changed,
    through <arm>_mex('step', x, u, p, dt) and 'outputs'; FMPy runs the FMU (fmi2DoStep) with the same
    torques and parameter: states and outputs agree to 1e-12 of each signal's peak, and the arm moves."""
    folder, fmu, _ = built
    model = example_model(ARM)
    nq, nu = len(model.coordinates), len(model.inputs)
    payload = list(model.parameters).index("payload.mass") + 1
    script = f"""
        info = {ARM}_mex('info'); p = info.parameter_nominal; p({payload}) = 0.35;
        x = info.state_start; rows = zeros(2000, info.nx + info.ny);
        for k = 0:1999
          t = k * 1e-3; u = zeros(info.nu, 1);
          for j = 1:info.nu
            if t < 1, u(j) = 0.4 - 0.3 * t * t / j; else, u(j) = -0.2 + 0.1 * t; end
          end
          x = {ARM}_mex('step', x, u, p, 1e-3);
          rows(k + 1, :) = [x; {ARM}_mex('outputs', x, u, p)]';
        end
        file = fopen('octave.txt', 'w'); fprintf(file, [repmat('%.17g ', 1, size(rows, 2)) '\\n'], rows'); fclose(file);
    """
    octave(f"addpath('{folder}'); {script}", tmp_path)
    steps = np.loadtxt(tmp_path / "octave.txt")

    md = fmpy.read_model_description(str(fmu.path))
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    slave = FMU2Slave(guid=md.guid, unzipDirectory=fmpy.extract(str(fmu.path), unzipdir=tmp_path / "fmu"),
                      modelIdentifier=ARM, instanceName="fmu")
    slave.instantiate()
    slave.setupExperiment(startTime=0.0)
    slave.setReal([vrs["payload.mass"]], [0.35])
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    watched = [200_000 + k for k in range(2 * nq)] + [500_000 + k for k in range(len(model.output_names))]
    rows = []
    for k in range(2000):
        slave.setReal([400_000 + j for j in range(nu)], torques(k * 1e-3, nu))
        slave.doStep(k * 1e-3, 1e-3)
        rows.append(slave.getReal(watched))
    slave.terminate()
    slave.freeInstance()
    reference = np.array(rows)
    peak = np.abs(reference).max(axis=0)
    relative = np.abs(steps - reference).max(axis=0) / np.where(peak > 0, peak, 1.0)
    assert relative.max() <= 1e-12, relative.max()
    assert np.ptp(reference[:, 0]) > 0.1


@pytest.mark.slow
@needs_octave
def test_mex_dynamics_info_and_errors_agree_with_the_model(built):
    """'forward_dynamics' and 'mass_matrix' match the Model's CasADi functions at a random state; 'info'
    lists every name with the unit the FMU declares; a step that is not positive and a wrong vector are
    errors that say so."""
    folder, fmu, _ = built
    model = example_model(ARM)
    nq = len(model.coordinates)
    rng = np.random.default_rng(4)
    q, qd, u = rng.normal(size=nq) * 0.3, rng.normal(size=nq), np.array([0.3, -0.2])
    vector = lambda v: "[" + "; ".join(repr(float(x)) for x in v) + "]"  # noqa: E731
    out = octave(f"""
        qdd = {ARM}_mex('forward_dynamics', {vector(np.concatenate([q, qd]))}, {vector(u)}, []);
        M = {ARM}_mex('mass_matrix', {vector(q)}, []);
        fprintf('%.17g\\n', qdd); fprintf('%.17g\\n', M);
        info = {ARM}_mex('info');
        fprintf('%s\\n', info.integrator); fprintf('%.17g\\n', info.internal_step, info.sample_time);
        c = [info.state_names info.state_units; info.output_names info.output_units;
             info.parameter_names info.parameter_units]';
        fprintf('%s|%s\\n', c{{:}});
    """, folder).split("\n")
    p = model.nominal_parameters
    qdd = np.array(model.forward_dynamics(q, qd, u, p)).ravel()
    mass = np.array(model.mass_matrix(q, p))
    numbers = np.array([float(line) for line in out[:nq + nq * nq]])
    np.testing.assert_allclose(numbers[:nq], qdd, rtol=1e-11, atol=1e-11 * np.abs(qdd).max())
    np.testing.assert_allclose(numbers[nq:].reshape(nq, nq, order="F"), mass, rtol=1e-12, atol=1e-14)
    rest = out[nq + nq * nq:]
    assert rest[0] == "rk4" and float(rest[1]) == fmu.internal_step and float(rest[2]) == 1e-3
    md = fmpy.read_model_description(str(fmu.path))
    units = {v.name: v.unit or "" for v in md.modelVariables}
    listed = dict(line.split("|") for line in rest[3:] if "|" in line)
    names = list(model.coordinates) + list(model.output_names) + list(model.parameters)
    assert set(names) <= set(listed)
    declared = [name for name in names if units[name]]  # the FMU leaves out dimensionless units ("1")
    assert len(declared) > 40 and all(listed[name] == units[name] for name in declared)

    step = octave_error(f"{ARM}_mex('step', zeros(12, 1), [0; 0], [], -1e-3)", folder)
    assert f"{ARM}_mex:failed" in step and "must be positive" in step
    wrong = octave_error(f"{ARM}_mex('outputs', zeros(3, 1), [0; 0], [])", folder)
    assert f"{ARM}_mex:arguments" in wrong and "x must be a real double vector of 12 values" in wrong


@pytest.mark.slow
@needs_octave
def test_glue_helpers_read_the_fmu_and_flatten_parameter_structs(built, tmp_path):
    """flexfmu_fmu_info reads what FMPy reads (FMI 2 and FMI 3); flexfmu_parameter_list names struct fields
    as flexfmu does and refuses names the model lacks; flexfmu_struct_expression round-trips a struct."""
    _, fmu, _ = built
    fmi3 = export(example_model(ARM), tmp_path / "fmi3.fmu", ExportSettings(platforms=(host_platform(),)), "fmi3")
    out = octave(f"""
        for f = {{'{fmu.path}', '{fmi3.path}'}}
          i = flexfmu_fmu_info(f{{1}});
          fprintf('%s %s %.17g %.17g %s\\n', i.fmi_version, i.model_identifier, i.step_size, i.internal_step,
                  strjoin(i.interfaces, ','));
          c = [i.parameters num2cell(i.parameter_start)]'; fprintf('%s=%.17g\\n', c{{:}});
        end
        s.payload.mass = 0.3; s.link(2).EI = 40; s.link(1).damping_ratio = [0.01 0.02];
        [n, v] = flexfmu_parameter_list(s, i.parameters);
        c = [n num2cell(v)]'; fprintf('list %s=%.17g\\n', c{{:}});
        disp(isequal(eval(flexfmu_struct_expression(s)), s));
    """, tmp_path)
    md = fmpy.read_model_description(str(fmu.path))
    parameters = [v for v in md.modelVariables if v.causality == "parameter"]
    lines = out.splitlines()
    for version, path in (("2.0", fmu.path), ("3.0", fmi3.path)):
        read = next(line for line in lines if line.startswith(version + " ")).split()
        described = fmpy.read_model_description(str(path))
        assert read[:2] == [version, described.coSimulation.modelIdentifier]
        assert float(read[2]) == float(described.defaultExperiment.stepSize) == 1e-3
        assert float(read[3]) == fmu.internal_step and read[4] == "CoSimulation,ModelExchange"
    starts = dict(line.split("=") for line in lines if "=" in line and not line.startswith("list"))
    assert {name: float(value) for name, value in starts.items()} == {v.name: float(v.start) for v in parameters}
    assert [line for line in lines if line.startswith("list")] == [
        "list payload.mass=0.29999999999999999", "list link[1].damping_ratio[1]=0.01",
        "list link[1].damping_ratio[2]=0.02", "list link[2].EI=40"]
    assert lines[-1].strip() == "1"
    unknown = octave_error("flexfmu_parameter_list(struct('payload', struct('mas', 1)), "
                           f"flexfmu_fmu_info('{fmu.path}').parameters)", tmp_path)
    assert "flexfmu_parameter_list:unknown" in unknown and "payload.mas" in unknown


def test_sfunction_export_refuses_a_folder_it_did_not_write(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ExportError, match="other files in it"):
        export(example_model("rigid_2link"), tmp_path / "mine", ExportSettings(), "sfunction")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_sfunction_export_refuses_an_arm_with_prescribed_joints(tmp_path):
    """The MEX gateway's mass matrix takes every coordinate, its state only the free ones: the target says
    so instead of writing a gateway whose sizes disagree."""
    with pytest.raises(ExportError, match=r"arm 'spinup_beam' has prescribed joints \(theta\[1\]\)"):
        export(example_model("spinup_beam"), tmp_path / "out", ExportSettings(), "sfunction")
    assert not (tmp_path / "out").exists()
