"""The flexfmu command line: info and simulate, as a user runs them."""

from __future__ import annotations

import json

import pytest

from flexfmu.cli import main
from tests.conftest import ARMS_DIR, EXAMPLE_ARMS


@pytest.mark.parametrize("arm_name", EXAMPLE_ARMS)
def test_info_json_lists_the_model(arm_name, capsys):
    assert main(["info", str(ARMS_DIR / f"{arm_name}.toml"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["name"] == arm_name
    assert data["coordinates"][0] == "theta[1]"
    assert all(row["unit"] for row in data["parameters"])
    assert [row["name"] for row in data["inputs"]] == [f"tau[{j}]" for j in range(1, len(data["inputs"]) + 1)]
    assert {"tip.x", "tip.y", "tip.ax", "tip.ay"} <= {row["name"] for row in data["outputs"]}


def test_info_text_shows_values_and_units(capsys):
    assert main(["info", str(ARMS_DIR / "yu_chen_2dof.toml")]) == 0
    out = capsys.readouterr().out
    assert "link[1].EI" in out and "32.96" in out and "N.m2" in out
    assert "lumped_mass[1].mass" in out and "2.94" in out


def test_info_reports_spec_errors_with_exit_status_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\n[[link]]\nkind = "rigid"\nlength = -0.4\nmass = 1.0\n')
    assert main(["info", str(bad)]) == 2
    assert "link[1].length must be > 0, got -0.4" in capsys.readouterr().err


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


def test_simulate_rejects_unknown_coordinate(tmp_path, capsys):
    args = ["simulate", str(ARMS_DIR / "rigid_2link.toml"), "--initial", "theta[3]=1", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    assert "--initial 'theta[3]=1'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
