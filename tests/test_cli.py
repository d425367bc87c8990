"""The flexfmu command line: info and simulate, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import flexfmu.errors
from flexfmu.cli import main
from tests.conftest import ARMS_DIR, EXAMPLE_ARMS


@pytest.mark.parametrize("arm_name", EXAMPLE_ARMS)
def test_info_json_lists_the_model(arm_name, capsys):
    assert main(["info", str(ARMS_DIR / f"{arm_name}.toml"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["name"] == arm_name
    assert data["coordinates"][0] == "theta[1]"
    assert all(row["unit"] for row in data["parameters"])
    expected = []
    for joint in (c for c in data["layout"] if c["kind"] == "joint"):
        j = joint["link"]
        expected += [f"theta[{j}]", f"der(theta[{j}])", f"der(theta[{j}],2)"] if joint["prescribed"] else [f"tau[{j}]"]
    assert [row["name"] for row in data["inputs"]] == expected
    assert data["states"] == [c["name"] for c in data["layout"] if not c["prescribed"]]
    end_effector = ({"platform.x", "platform.y", "platform.z"} if data["kind"] == "delta"
                    else {"tip.x", "tip.y", "tip.ax", "tip.ay"})
    assert end_effector <= {row["name"] for row in data["outputs"]}


def test_info_text_shows_values_and_units(capsys):
    assert main(["info", str(ARMS_DIR / "yu_chen_2dof.toml")]) == 0
    out = capsys.readouterr().out
    assert "link[1].EI" in out and "32.96" in out and "N.m2" in out
    assert "lumped_mass[1].mass" in out and "2.94" in out


def test_info_reports_spec_errors_with_exit_status_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\n[[link]]\nkind = "rigid"\nlength = -0.4\nmass = 1.0\n')
    assert main(["info", str(bad)]) == 2
    assert "link[1].length must be in [0.001, 100] m, got -0.4" in capsys.readouterr().err


def test_simulate_writes_trajectory_plot_and_summary(tmp_path):
    out = tmp_path / "run"
    args = ["simulate", "rigid_2link", "--duration", "1.0", "--output-interval", "0.01"]
    assert main(args + ["--initial", "theta[1]=90deg", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    # released upright at rest with no friction: the energy stays put
    assert summary["energy_end_J"] == pytest.approx(summary["energy_start_J"], rel=1e-7)
    assert summary["initial"]["theta[1]"] == pytest.approx(3.141592653589793 / 2)
    assert (out / "simulation.png").stat().st_size > 10_000
    header = (out / "trajectory.csv").read_text().splitlines()[0]
    assert header.startswith("time [s],theta[1] [rad]")


def test_simulate_releases_the_arm_from_its_start_pose(tmp_path):
    """Without --initial the run starts at the arm's start pose (its joints' start_angle): a rigid pendulum
    hanging straight down (-90 deg, gravity along -y) with no torque stays there; the same pendulum started at
    0 rad would swing through 90 deg."""
    arm = tmp_path / "pendulum.toml"
    arm.write_text('name = "pendulum"\ngravity = [0.0, -9.81]\n[[link]]\nkind = "rigid"\nlength = 0.5\n'
                   'mass = 1.0\ncom = [0.25, 0.0]\ninertia = 0.02\n[link.joint]\nstart_angle = -1.5707963267948966\n')
    out = tmp_path / "run"
    assert main(["simulate", str(arm), "--duration", "1.0", "--output-interval", "0.01", "--out", str(out)]) == 0
    angles = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1, usecols=1)
    assert np.abs(angles + np.pi / 2).max() < 1e-9


def test_simulate_says_when_the_run_leaves_the_validity_envelope(tmp_path, capsys):
    """The README's own command: 0.2 N m on both rotors bends link 1 by 12.5 % of its length (the limit is
    10 %): the console warns and summary.md and summary.json say when and how far."""
    out = tmp_path / "sm"
    assert main(["simulate", "subudhi_morris_2link", "--torque", "tau[1]=0.2,tau[2]=0.2", "--duration", "2",
                 "--output-interval", "0.01", "--out", str(out)]) == 0
    console = capsys.readouterr().out
    assert "warning: left the validity envelope: the simulation at t = " in console
    assert "largest: link[1].relative_deflection at 1.2" in console
    summary = json.loads((out / "summary.json").read_text())
    run = summary["envelope"]["runs"]["the simulation"]
    assert 1.0 < run["left_at"] < 2.0 and run["peak_fraction"]["link[1].relative_deflection"] > 1.2
    assert "Validity envelope: **left** by the simulation at t = " in (out / "summary.md").read_text()


def test_the_top_level_help_is_plain_text(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "``" not in text and ":func:" not in text and "Flexible robot arms" in text


def test_validate_has_a_description_saying_which_checks_apply_to_a_python_backed_fmu(capsys):
    assert main(["validate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "FMPy's checks" in text and "Python-backed FMU" in text and "those two checks are skipped" in text


def test_tune_help_names_the_optimiser_that_max_iterations_drives(capsys):
    assert main(["tune", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--max-iterations MAX_ITERATIONS iterations of the optimiser, SLSQP" in text
    assert "L-BFGS-B" not in text


def test_simulate_rejects_unknown_coordinate(tmp_path, capsys):
    args = ["simulate", str(ARMS_DIR / "rigid_2link.toml"), "--initial", "theta[3]=1", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    assert "--initial 'theta[3]=1'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args, fragment", [
    (["--motion", "w0"], "--motion 'w0': expected NAME=NUMBER"),
    (["--motion", "speed=6"], "no motion parameter speed (its motion has: w0, ramp_time)"),
    (["--scenario", "free_vibration", "--motion", "w0=6"], "none of the scenarios has a prescribed motion"),
])
def test_crosscheck_motion_parameters_are_checked_before_anything_runs(args, fragment, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["crosscheck", "spinup_beam", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1
    assert not (out / "report.json").exists()


# --- one error path: every subcommand, every kind of bad input --------------------------

BAD_ARMS = {
    "missing": ("nowhere.toml", "no such file"),
    "folder": ("a_folder", "is a folder"),
    "empty": ("empty.toml", "name is required"),
    "binary": ("binary.toml", "not UTF-8"),
}
ARM_COMMANDS = {
    "info": [],
    "simulate": ["--duration", "0.01"],
    "export": ["-o", "x.fmu"],
    "crosscheck": ["--scenario", "bang_bang"],
    "tune": ["--scenario", "quintic_ct", "--params", "kp"],
    "plan": ["--from", "0,0", "--to", "1,1", "--time", "1"],
    "sweep": ["--scenario", "pd_circle", "--vary", "kp=100,125"],
}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A folder with a subfolder, an empty and a binary arm file, and a plain file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_folder").mkdir()
    (tmp_path / "empty.toml").write_text("")
    (tmp_path / "binary.toml").write_bytes(b"\x00\xff\xfe\x80")
    (tmp_path / "a_file").write_text("not a folder\n")
    return tmp_path


def run_cli(args, capsys) -> tuple[int, str]:
    status = main(args)
    captured = capsys.readouterr()
    return status, captured.err


@pytest.mark.parametrize("command", sorted(ARM_COMMANDS))
@pytest.mark.parametrize("case", sorted(BAD_ARMS))
def test_every_subcommand_reports_a_bad_arm_in_one_line(command, case, workdir, capsys):
    arm, fragment = BAD_ARMS[case]
    status, err = run_cli([command, arm, *ARM_COMMANDS[command]], capsys)
    assert status == 2
    assert fragment in err and arm in err
    assert "Traceback" not in err
    assert sorted(p.name for p in workdir.iterdir()) == ["a_file", "a_folder", "binary.toml", "empty.toml"]


@pytest.mark.parametrize("args, fragment", [
    (["export", "rigid_2link", "-o", "a_folder"], "is a folder"),
    (["export", "rigid_2link", "-o", "a_file/x.fmu"], "'a_file' is a file"),
    (["simulate", "rigid_2link", "--out", "a_file"], "'a_file' is a file"),
    (["simulate", "rigid_2link", "--out", "a_file/deeper"], "'a_file' is a file"),
    (["crosscheck", "rigid_2link", "--out", "a_file"], "'a_file' is a file"),
    (["tune", "yu_chen_2dof", "--scenario", "pd_circle", "--params", "kp", "--out", "a_file"], "'a_file' is a file"),
    (["plan", "rigid_2link", "--from", "0,0", "--to", "1,1", "--time", "1", "--out", "a_file"], "'a_file' is a file"),
    (["demo", "--out", "a_file"], "'a_file' is a file"),
    (["reproduce", "--out", "a_file"], "'a_file' is a file"),
    (["sweep", "yu_chen_2dof", "--scenario", "pd_circle", "--vary", "kp=1", "--out", "a_file"], "'a_file' is a file"),
    (["sweep", "yu_chen_2dof", "--scenario", "pd_circle", "--vary", "kq=1,2"], "cannot vary kq"),
    (["sweep", "yu_chen_2dof", "--scenario", "pd_circle", "--vary", "kp=3:1:2"], "--vary 'kp=3:1:2'"),
    (["sweep", "yu_chen_2dof", "--scenario", "pd_circle"], "nothing to sweep"),
    (["sweep", "yu_chen_2dof", "--scenario", "pd_circle", "--vary", "payload.mass=-1,0.5"],
     "payload.mass = -1 kg is not in [0, 1e+06] kg"),
    (["sweep", "yu_chen_2dof", "--scenario", "pd_circle", "--vary", "reference.radius=0.1,-0.1"],
     "controller.reference.radius must be > 0 m, got -0.1"),
    (["sweep", "yu_chen_2dof", "--scenario", "pd_circle", "--samples", "3"], "--samples and --distributions"),
    (["tune", "yu_chen_2dof", "--scenario", "pd_circle", "--params", "kp", "--limit", "wobble=1"],
     "--limit 'wobble=1'"),
    (["tune", "yu_chen_2dof", "--scenario", "pd_circle", "--params", "kp", "--starts", "0"], "--starts must be >= 1"),
    (["demo", "--workers", "-1"], "--workers must be >= 0"),
    (["validate", "nowhere.fmu"], "'nowhere.fmu' is not a file"),
    (["validate", "a_folder"], "'a_folder' is not a file"),
    (["crosscheck", "rigid_2link", "--scenario", "no_such"], "examples: bang_bang"),
    (["crosscheck"], "give an arm"),
    (["simulate", "rigid_2link", "--duration", "-1"], "--duration must be a number > 0"),
    (["plan", "rigid_2link", "--from", "0", "--to", "1,1", "--time", "1"], "--from needs 2 joint angles"),
    (["plan", "rigid_2link", "--to", "1,1", "--time", "1"], "needs --from"),
    (["plan", "kuo_delta", "--from", "0,0,0"], "--from: for serial arms"),
    (["plan", "kuo_delta", "--iterations", "0"], "iterations must be an integer >= 1"),
    (["plan", "kuo_delta", "--acceleration-ratio", "0.5"], "acceleration_ratio must be >= 1"),
    (["plan", "kuo_delta", "--scenario", "pd_circle"], "no inverted_u reference"),
    (["export", "rigid_2link", "-o", "x.fmu", "--target", "pythonfmu", "--interface", "me"], "--interface does not apply"),
    (["export", "rigid_2link", "-o", "x.fmu", "--fmi-version", "4"], "invalid choice: '4'"),
    (["export", "rigid_2link", "-o", "x.fmu", "--target", "fmi2-loop"], "fmi2-loop needs --scenario"),
    (["export", "rigid_2link", "-o", "x.fmu", "--scenario", "pd_circle"], "--scenario does not apply to the target fmi2"),
    (["export", "rigid_2link", "-o", "x.fmu", "--target", "fmi2-loop", "--scenario", "pd_circle", "--interface", "me"],
     "--interface does not apply"),
    (["export", "rigid_2link", "-o", "x.fmu", "--fmi-version", "3", "--target", "fmi2"], "name different targets"),
    (["export", "rigid_2link", "-o", "x.fmu", "--platforms", "linux64,macos"], "--platforms"),
    (["export", "rigid_2link", "-o", "x", "--target", "sfunction", "--interface", "cs"], "--interface does not apply"),
    (["export", "rigid_2link", "-o", "a_file", "--target", "sfunction"], "'a_file' is a file"),
    (["export", "rigid_2link", "-o", "x.fmu", "--backend", "pythonfmu", "--target", "fmi2"],
     "name different targets"),
    (["info", "rigid_2link", "--bogus"], "unrecognized arguments"),
])
def test_usage_errors_are_one_line_with_status_2(args, fragment, workdir, capsys):
    status, err = run_cli(args, capsys)
    assert status == 2
    assert fragment in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in workdir.iterdir()) == ["a_file", "a_folder", "binary.toml", "empty.toml"]


# files given with an option, and outputs nobody can write (/sys refuses even root)
FILE_OPTIONS = {
    "crosscheck --scenario": ["crosscheck", "rigid_2link", "--scenario", "{file}"],
    "tune --scenario": ["tune", "rigid_2link", "--scenario", "{file}", "--params", "kp"],
    "tune --cost": ["tune", "yu_chen_2dof", "--scenario", "pd_circle", "--params", "kp", "--cost", "{file}"],
}
BAD_FILES = {"missing": "nowhere.toml", "folder": "a_folder", "empty": "empty.toml", "binary": "binary.toml"}
UNWRITABLE = {
    "export": ["export", "rigid_2link", "-o", "/sys/flexfmu-test.fmu"],
    "simulate": ["simulate", "rigid_2link", "--out", "/sys/flexfmu-test"],
    "crosscheck": ["crosscheck", "rigid_2link", "--out", "/sys/flexfmu-test"],
    "tune": ["tune", "yu_chen_2dof", "--scenario", "pd_circle", "--params", "kp", "--out", "/sys/flexfmu-test"],
    "plan": ["plan", "rigid_2link", "--from", "0,0", "--to", "1,1", "--time", "1", "--out", "/sys/flexfmu-test"],
    "demo": ["demo", "--out", "/sys/flexfmu-test/deeper"],
}


@pytest.mark.parametrize("option", sorted(FILE_OPTIONS))
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_files_given_with_an_option_are_one_line_errors(option, case, workdir, capsys):
    args = [item.replace("{file}", BAD_FILES[case]) for item in FILE_OPTIONS[option]]
    status, err = run_cli(args, capsys)
    assert status == 2 and BAD_FILES[case] in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert sorted(p.name for p in workdir.iterdir()) == ["a_file", "a_folder", "binary.toml", "empty.toml"]


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="no /sys (not Linux): no folder that nobody can write")
@pytest.mark.parametrize("command", sorted(UNWRITABLE))
def test_unwritable_outputs_are_refused_before_any_work(command, capsys):
    status, err = run_cli(UNWRITABLE[command], capsys)
    assert status == 2 and "'/sys' is not writable" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("fmu", ["empty.toml", "binary.toml"])
def test_a_failed_check_exits_with_1(fmu, workdir, capsys):
    status = main(["validate", fmu])
    assert status == 1
    assert "not a ZIP archive" in capsys.readouterr().out


def test_an_unstable_step_is_refused_with_the_limit(workdir, capsys):
    """yu_chen's highest frequency is 763 rad/s: RK4 at 10 ms is 7.6 times that, beyond 2 sqrt(2)."""
    status, err = run_cli(["export", "yu_chen_2dof", "-o", "x.fmu", "--step", "0.01"], capsys)
    assert status == 2 and "h * omega_max = 7.63 > 2.83" in err and "use a step <= 0.00371 s" in err
    assert "--allow-unstable-step" in err and not (workdir / "x.fmu").exists()
    assert "the highest frequency of the dynamics as the FMU integrates them" in err


def test_debug_shows_the_traceback(workdir):
    with pytest.raises(flexfmu.errors.InputError):
        main(["--debug", "info", "nowhere.toml"])


def test_info_without_an_arm_lists_the_examples(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    for name in EXAMPLE_ARMS:
        assert name in out
    assert "pd_circle" in out and "bang_bang" in out
