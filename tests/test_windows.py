"""win64 binaries: cross-compiled with MinGW-w64 into every FMU, checked by
validation, and run under Wine by C programs built the same way: the DLL
gives the linux64 binary's trajectory and survives the misuse program.
Tests needing MinGW-w64 or Wine skip, saying so, where they are absent
(scripts/install-tools.sh installs both)."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from importlib import resources
from pathlib import Path

import fmpy
import numpy as np
import pytest
from fmpy.fmi2 import FMU2Slave

from flexfmu.cli import main
from flexfmu.targets.binaries import pe_machine_and_exports
from flexfmu.targets.validate import FMI2_FUNCTIONS, validate_fmu
from tests.conftest import example_model

pytestmark = pytest.mark.compiler  # and slow where a test builds an FMU or runs Wine

MINGW = "x86_64-w64-mingw32-gcc"
needs_mingw = pytest.mark.skipif(shutil.which(MINGW) is None,
                                 reason="MinGW-w64 is not installed (scripts/install-tools.sh installs it)")
C_TESTS = Path(__file__).parent / "c"
HEADERS = resources.files("fmpy") / "c-code"
FLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HEADERS}"]
ARM = "yu_chen_2dof"


@pytest.fixture(scope="module")
def fmu(tmp_path_factory, example_fmu):
    """yu_chen_2dof's FMU exported with the default settings (so with linux64 and win64 binaries where
    MinGW-w64 is present), unpacked: (report, folder)."""
    if shutil.which(MINGW) is None:
        pytest.skip("MinGW-w64 is not installed (scripts/install-tools.sh installs it)")
    report = example_fmu(ARM)
    return report, Path(fmpy.extract(str(report.path), unzipdir=tmp_path_factory.mktemp("win64") / "fmu"))


@pytest.fixture(scope="module")
def programs(tmp_path_factory, fmu):
    """The C test programs built for Linux (cc) and for Windows (MinGW-w64, static: nothing beside the .exe)."""
    out = tmp_path_factory.mktemp("programs")
    built = {}
    for name in ("fmu_trajectory", "fmu_misuse"):
        source = str(C_TESTS / f"{name}.c")
        built[name] = out / name
        built[name + ".exe"] = out / f"{name}.exe"
        subprocess.run(["cc", *FLAGS, source, "-o", str(built[name]), "-ldl", "-lpthread"], check=True)
        subprocess.run([MINGW, *FLAGS, source, "-o", str(built[name + ".exe"]), "-static", "-lpthread"], check=True)
    return built


def imported_dlls(dll: Path) -> set[str]:
    """The DLLs ``dll`` imports, as MinGW's objdump lists them."""
    done = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", str(dll)], capture_output=True, text=True, check=True)
    return {line.split(":", 1)[1].strip() for line in done.stdout.splitlines() if "DLL Name:" in line}


@pytest.mark.slow
def test_export_says_which_platforms_it_built_and_which_it_skipped(tmp_path, capsys, monkeypatch):
    """Without MinGW-w64 the default export builds linux64 and says why win64 is missing; asking for win64
    then is an error naming the platform (exit status 2), and no file appears."""
    import flexfmu.targets.platforms as platforms

    real_which = shutil.which
    monkeypatch.setattr(platforms.shutil, "which", lambda name: None if "mingw" in name else real_which(name))
    assert main(["export", "rigid_2link", "-o", str(tmp_path / "a.fmu")]) == 0
    out = capsys.readouterr().out
    assert "binaries: linux64" in out
    assert "skipped win64: no compiler found (tried: x86_64-w64-mingw32-gcc)" in out and "apt-get install" in out
    with zipfile.ZipFile(tmp_path / "a.fmu") as archive:
        assert {n.split("/")[1] for n in archive.namelist() if n.startswith("binaries/")} == {"linux64"}
    assert main(["export", "rigid_2link", "-o", str(tmp_path / "b.fmu"), "--platforms", "linux64,win64"]) == 2
    assert "platform win64: no compiler found" in capsys.readouterr().err
    assert not (tmp_path / "b.fmu").exists()
    assert main(["export", "rigid_2link", "-o", str(tmp_path / "c.fmu"), "--platforms", "linux64,macos"]) == 2
    assert "--platforms" in capsys.readouterr().err


@pytest.mark.slow
@needs_mingw
def test_default_export_carries_a_dll_that_needs_nothing_beside_it(fmu, tmp_path):
    """Every platform whose compiler is present is built by default; the DLL is x86-64, exports exactly the
    44 fmi2 functions (read by flexfmu's PE reader and, independently, by MinGW's objdump), imports only
    DLLs every Windows has, and validation passes; a DLL replaced by the Linux library is reported."""
    report, folder = fmu
    assert report.platforms == ("linux64", "win64") and report.skipped_platforms == {}
    dll = folder / "binaries" / "win64" / f"{ARM}.dll"
    machine, exported = pe_machine_and_exports(dll.read_bytes())
    assert machine == 0x8664 and exported == FMI2_FUNCTIONS
    objdump = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", str(dll)], capture_output=True, text=True).stdout
    table = objdump.split("[Ordinal/Name Pointer] Table")[1]
    assert {line.split()[-1] for line in table.splitlines() if "fmi2" in line} == FMI2_FUNCTIONS
    assert imported_dlls(dll) <= {"KERNEL32.dll", "msvcrt.dll"}
    assert validate_fmu(report.path, build_sources=False).problems == []

    tampered = tmp_path / "tampered.fmu"
    with zipfile.ZipFile(report.path) as zin, zipfile.ZipFile(tampered, "w") as zout:
        linux = zin.read(f"binaries/linux64/{ARM}.so")  # before writestr rewrites the entries' offsets
        for item in zin.infolist():
            zout.writestr(item, linux if item.filename.endswith(".dll") else zin.read(item.filename))
    problems = validate_fmu(tampered, build_sources=False).problems
    assert any(f"binaries/win64/{ARM}.dll is not a win64 library" in p for p in problems), problems


def run_trajectory(command: list, runner=None) -> np.ndarray:
    done = (runner or (lambda args: subprocess.run(list(map(str, args)), capture_output=True, text=True)))(command)
    assert done.returncode == 0, done.stderr[-3000:]
    return np.loadtxt(done.stdout.replace("\r", "").splitlines())


@pytest.mark.slow
def test_win64_dll_under_wine_gives_the_linux64_trajectory(fmu, programs, wine):
    """The same C driver, built for Linux and for Windows, steps each binary through 2 s of a torque profile
    with a parameter changed: states and outputs agree to 1e-12 of each signal's peak (round-off of two C
    libraries' sin and cos). The Linux run agrees bit for bit with FMPy driving the same library, so the
    driver drives it as an importer does, and the arm really moves."""
    report, folder = fmu
    model = example_model(ARM)
    nx, nu, ny = 2 * len(model.coordinates), len(model.inputs), len(model.output_names)
    md = fmpy.read_model_description(str(report.path))
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    arguments = [report.guid, nx, nu, ny, 2.0, 1e-3, f"{vrs['payload.mass']}=0.35"]
    linux = run_trajectory([programs["fmu_trajectory"], folder / "binaries" / "linux64" / f"{ARM}.so", *arguments])
    windows = run_trajectory([programs["fmu_trajectory.exe"], folder / "binaries" / "win64" / f"{ARM}.dll",
                              *arguments], wine)
    assert linux.shape == windows.shape == (2000, 1 + nx + ny)
    peak = np.abs(linux).max(axis=0)
    relative = np.abs(windows - linux).max(axis=0) / np.where(peak > 0, peak, 1.0)
    assert relative.max() < 1e-12, relative.max()

    slave = FMU2Slave(guid=md.guid, unzipDirectory=str(folder), modelIdentifier=ARM, instanceName="fmpy")
    slave.instantiate()
    slave.setupExperiment(startTime=0.0)
    slave.setReal([vrs["payload.mass"]], [0.35])
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    watched = [200_000 + k for k in range(nx)] + [500_000 + k for k in range(ny)]
    rows = []
    for i in range(2000):
        t = i * 1e-3
        slave.setReal([400_000 + j for j in range(nu)],
                      [0.4 - 0.3 * t * t / (j + 1) if t < 1.0 else -0.2 + 0.1 * t for j in range(nu)])
        slave.doStep(t, 1e-3)
        rows.append(slave.getReal(watched))
    slave.terminate()
    slave.freeInstance()
    assert np.array_equal(np.array(rows), linux[:, 1:])
    assert np.ptp(linux[:, 1 + model.coordinates.index("theta[1]")]) > 0.1


@pytest.mark.slow
def test_misuse_program_runs_against_the_win64_dll_under_wine(fmu, programs, wine):
    """tests/c/fmu_misuse.c built for Windows drives the DLL through every misuse and valid sequence,
    threads included (MinGW-w64's winpthreads): no crash, every check passes, nothing leaks."""
    report, folder = fmu
    model = example_model(ARM)
    done = wine([programs["fmu_misuse.exe"], folder / "binaries" / "win64" / f"{ARM}.dll", report.guid,
                 2 * len(model.coordinates), len(model.inputs), len(model.output_names), len(model.parameters),
                 repr(report.internal_step), "--cycles", 50])
    last = done.stdout.replace("\r", "").strip().splitlines()[-1]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert last.endswith(" 0 failed") and int(last.split()[0]) > 200, last
    assert "no outstanding allocations at the end (0)" in done.stdout
    assert "instances in parallel threads give the same bits" in done.stdout


@pytest.mark.slow
@needs_mingw
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_shipped_cmakelists_cross_builds_with_mingw_and_keeps_warnings_from_stopping_users(fmu, tmp_path):
    """The user's rebuild from sources/ (docs/simulink.md): a MinGW-w64 cross build succeeds although a
    warning was planted, and its DLL is a proper win64 FMU binary; flexfmu's own setting
    (FLEXFMU_WARNINGS_AS_ERRORS=ON) turns the same warning into an error."""
    sources = tmp_path / "sources"
    shutil.copytree(fmu[1] / "sources", sources)
    with (sources / "ffmu_instance.c").open("a") as source:
        source.write("\nstatic int flexfmu_planted_unused_variable;\n")
    cross = ["cmake", "-S", str(sources), "-B", str(tmp_path / "win"), "-DCMAKE_SYSTEM_NAME=Windows",
             f"-DCMAKE_C_COMPILER={MINGW}"]
    subprocess.run(cross, check=True, capture_output=True)
    built = subprocess.run(["cmake", "--build", str(tmp_path / "win")], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-3000:]
    assert "flexfmu_planted_unused_variable" in built.stdout + built.stderr  # warned, not stopped
    dll = tmp_path / "win" / f"{ARM}.dll"
    machine, exported = pe_machine_and_exports(dll.read_bytes())
    assert machine == 0x8664 and exported == FMI2_FUNCTIONS
    assert imported_dlls(dll) <= {"KERNEL32.dll", "msvcrt.dll"}
    strict = ["cmake", "-S", str(sources), "-B", str(tmp_path / "strict"), "-DFLEXFMU_WARNINGS_AS_ERRORS=ON"]
    subprocess.run(strict, check=True, capture_output=True)
    failed = subprocess.run(["cmake", "--build", str(tmp_path / "strict")], capture_output=True, text=True)
    assert failed.returncode != 0 and "flexfmu_planted_unused_variable" in failed.stdout + failed.stderr
