"""Campaigns on Dask: a parallel run equals the serial one bit for bit, a
failing point is a row in the FMU's words and not the end, a lost worker is
reported and its points retried, an interrupted campaign resumes, and sweeps
are parsed as written and checked before they run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from flexfmu.control.run_figures import ENVELOPE_LEFT
from flexfmu.data import resolve_arm, resolve_scenario
from flexfmu.harness.campaigns.campaign import (
    JOURNAL, MAX_BATCH, QUIET_WORKERS, RETRIED, SHARE, START_METHOD, CampaignSettings, batches, dask_client,
    read_journal, run_campaign,
)
from flexfmu.harness.running.loop_case import WARNINGS
from flexfmu.harness.workflows.sweep import (
    TRAJECTORIES, SweepError, envelope_warnings, grid_points, parse_vary, run_sweep, sample_points,
)

ARM, SCENARIO = resolve_arm("yu_chen_2dof"), resolve_scenario("pd_circle")
# kd = 1e6 N m s/rad sampled at 1 kHz is far beyond stability: that point diverges
POINTS = grid_points([("payload.mass", [0.0, 0.3]), ("kd", [25.0, 1e6])])


@pytest.fixture(scope="module")
def serial_and_parallel(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweeps")
    serial = run_sweep(ARM, SCENARIO, POINTS, folder / "serial", CampaignSettings(workers=0), duration=0.3)
    parallel = run_sweep(ARM, SCENARIO, POINTS, folder / "parallel", CampaignSettings(workers=2), duration=0.3)
    return folder, serial, parallel


@pytest.mark.slow
@pytest.mark.compiler
def test_two_workers_give_the_serial_numbers_bit_for_bit(serial_and_parallel):
    _, serial, parallel = serial_and_parallel
    assert [row["point"] for row in serial] == [row["point"] for row in parallel]
    for a, b in zip(serial, parallel):
        figures = [key for key in a if key not in ("seconds", "error")]
        assert figures == [key for key in b if key not in ("seconds", "error")]
        assert all(a[key] == b[key] for key in figures), (a, b)
    ok = [row for row in serial if row["status"] == "ok"]
    assert len(ok) == 2 and all(np.isfinite(row["tracking [rad^2 s]"]) for row in ok)
    # the validity envelope, computed where the point ran: pd_circle's first 0.3 s start at rest in the sag
    # under gravity (the holding equilibrium) and stay inside it, 0.67 of the link-1 limit without payload and
    # 0.82 with 0.3 kg
    assert all((row["envelope.left_at_s"] is None) == (0 < row["envelope.peak_fraction"] <= 1) for row in ok)
    unloaded, loaded = ok
    assert 0.5 < unloaded["envelope.peak_fraction"] < loaded["envelope.peak_fraction"] < 1
    # a heavier payload changes the run: the numbers are the points' own
    assert ok[0]["tracking [rad^2 s]"] != ok[1]["tracking [rad^2 s]"]


@pytest.mark.slow
@pytest.mark.compiler
def test_a_failing_point_is_a_row_with_its_error_and_the_others_finish(serial_and_parallel):
    folder, serial, parallel = serial_and_parallel
    for rows in (serial, parallel):
        failed = [row for row in rows if row["status"] == "failed"]
        assert [row["kd"] for row in failed] == [1e6, 1e6]
        # the FMU's own message, not FMPy's status code
        assert all(row["error"].startswith("fmi2DoStep: state '") for row in failed), failed
        assert len(rows) == len(POINTS)
    table = (folder / "parallel" / "results.csv").read_text().splitlines()
    assert len(table) == 1 + len(POINTS) and table[0].startswith("point,payload.mass,kd,status,error")
    assert (folder / "parallel" / "summary.png").stat().st_size > 10_000
    # asked for, the samples of the points that ran, each point's figures as without them
    ok = [point for point, row in zip(POINTS, serial) if row["status"] == "ok"]
    again = run_sweep(ARM, SCENARIO, ok, folder / "samples", CampaignSettings(workers=0), duration=0.3,
                      trajectories=True)
    written = sorted(path.stem for path in (folder / "samples" / TRAJECTORIES).iterdir())
    assert written == sorted(row["point"] for row in again)
    samples = (folder / "samples" / TRAJECTORIES / f"{written[0]}.csv").read_text().splitlines()
    assert len(samples) == 1 + 301 and samples[0].startswith("time")
    for row in again:
        before = next(r for r in serial if r["point"] == row["point"])
        assert all(row[key] == before[key] for key in row if key not in ("seconds", WARNINGS))


@pytest.mark.slow
@pytest.mark.compiler
def test_a_point_that_left_the_validity_envelope_is_named_though_a_worker_ran_it(tmp_path):
    points = grid_points([("envelope.link_deflection", [0.01, 0.5])])
    rows = run_sweep(ARM, SCENARIO, points, tmp_path, CampaignSettings(workers=2), duration=0.3)
    assert [row[ENVELOPE_LEFT] is not None for row in rows] == [True, False]
    assert "beyond the validity envelope" in rows[0][WARNINGS] and rows[1][WARNINGS] == ""
    warnings = envelope_warnings(rows, ["envelope.link_deflection"])
    assert len(warnings) == 1 and warnings[0].startswith("envelope.link_deflection=0.01: left the validity envelope")


def test_swept_values_are_checked_by_the_arm_and_scenario_ranges_before_anything_runs(tmp_path):
    out = tmp_path / "sweep"
    with pytest.raises(SweepError, match=r"payload\.mass = -1 kg is not in \[0, 1e\+06\] kg .*\(1 of 2 points\)"):
        run_sweep(ARM, SCENARIO, grid_points([parse_vary("payload.mass=-1,0.5")]), out, CampaignSettings(workers=0))
    with pytest.raises(SweepError, match=r"controller\.reference\.radius must be > 0 m, got 0"):
        run_sweep(ARM, SCENARIO, [{"reference.radius": 0.0}], out, CampaignSettings(workers=0))
    with pytest.raises(SweepError, match=r"kp must be a finite number|controller\.kp must be a finite number"):
        run_sweep(ARM, SCENARIO, [{"kp": float("nan")}], out, CampaignSettings(workers=0))
    with pytest.raises(SweepError, match=r"cannot vary payload\.mas: .*\(its parameters: kp, kd, reference\.center"):
        run_sweep(ARM, SCENARIO, [{"payload.mas": 1.0}], out, CampaignSettings(workers=0))
    assert not out.exists()


def _dies_once(point: dict, marker: str) -> dict:
    """The square of the point's x, but the first time x is 3 the worker process dies under it."""
    if point["x"] == 3.0 and not Path(marker).exists():
        Path(marker).write_text("died once")
        os._exit(1)
    return {"square": point["x"] ** 2}


@pytest.mark.slow
def test_a_lost_worker_is_reported_and_its_points_run_again(tmp_path, capfd):
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import the tests
    points = [{"x": float(x)} for x in range(6)]
    rows = run_campaign(points, _dies_once, tmp_path / "campaign", CampaignSettings(workers=2), "test",
                        (str(tmp_path / "marker"),), batch=1)
    assert [row["status"] for row in rows] == ["ok"] * 6
    assert [row["square"] for row in rows] == [x * x for x in range(6)]
    # the point that killed its worker ran again; so did any whose result the worker held when it died
    assert rows[3][RETRIED] == 1 and all(row.get(RETRIED, 0) <= 1 for row in rows)
    assert "lost worker tcp://" in capfd.readouterr().err


def _square(point: dict) -> dict:
    return {"square": point["x"] ** 2}


def test_an_interrupted_campaign_resumes_where_it_stopped(tmp_path):
    points = [{"x": float(x)} for x in range(6)]
    settings = CampaignSettings(workers=0)
    complete = run_campaign(points, _square, tmp_path / "complete", settings, "test")

    calls = []

    def counting(point: dict) -> dict:
        calls.append(point["x"])
        return _square(point)

    interrupted = tmp_path / "interrupted"
    run_campaign(points, counting, interrupted, settings, "test")
    lines = (interrupted / JOURNAL).read_text().splitlines()
    # killed while writing the fourth row: three rows and half a line survive
    (interrupted / JOURNAL).write_text("\n".join(lines[:3]) + "\n" + lines[3][: len(lines[3]) // 2])
    assert len(read_journal(interrupted)) == 3
    calls.clear()
    resumed = run_campaign(points, counting, interrupted, settings, "test")
    assert calls == [3.0, 4.0, 5.0]
    assert [row["square"] for row in resumed] == [row["square"] for row in complete] == [x * x for x in range(6)]
    calls.clear()
    run_campaign(points, counting, interrupted, settings, "test")
    assert calls == []


def test_a_failed_point_is_retried_when_the_campaign_runs_again(tmp_path):
    attempts = []

    def flaky(point: dict) -> dict:
        attempts.append(point["x"])
        if len(attempts) == 1:
            raise RuntimeError("worker lost its licence server")
        return _square(point)

    first = run_campaign([{"x": 2.0}], flaky, tmp_path, CampaignSettings(workers=0), "test")
    assert first[0]["status"] == "failed" and "licence server" in first[0]["error"]
    second = run_campaign([{"x": 2.0}], flaky, tmp_path, CampaignSettings(workers=0), "test")
    assert second[0]["status"] == "ok" and second[0]["square"] == 4.0
    assert json.loads((tmp_path / JOURNAL).read_text().splitlines()[-1])["status"] == "ok"


@pytest.mark.parametrize("count, workers", [(1000, 1), (1000, 2), (10_000, 2), (40, 2), (5, 4)])
def test_batches_shrink_to_single_points_and_hold_every_point_once_in_order(count, workers):
    items = list(range(count))
    chunks = batches(items, workers)
    assert [item for chunk in chunks for item in chunk] == items
    sizes = [len(chunk) for chunk in chunks]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] == 1 and max(sizes) <= MAX_BATCH
    left = count
    for size in sizes:  # a batch holds at most its share of what is left
        assert size <= max(1, -(-left // (SHARE * workers)))
        left -= size
    # the last batch a worker takes while the others have finished theirs is one point: when the points are
    # as long as each other, the workers end at most one point apart
    assert sizes[-workers:] == [1] * workers
    assert [len(chunk) for chunk in batches(items, workers, size=3)][:-1] == [3] * ((count - 1) // 3)


def test_a_campaigns_workers_run_without_the_sampling_profiler_and_leave_this_process_as_it_was():
    """A worker's housekeeping threads share the cores with the points: a campaign's own cluster runs them
    quiet, and the caller's Dask configuration is untouched afterwards."""
    import dask
    import distributed  # noqa: F401  (its configuration's defaults load with it)

    before = {key: dask.config.get(key) for key in QUIET_WORKERS}
    with dask_client(CampaignSettings(workers=1)) as client:
        seen = client.run(lambda: {key: dask.config.get(key) for key in QUIET_WORKERS})
    assert list(seen.values()) == [QUIET_WORKERS]
    assert {key: dask.config.get(key) for key in QUIET_WORKERS} == before != QUIET_WORKERS


def _imported(name: str) -> bool:
    """Whether this process has imported a module called ``name``."""
    return name in sys.modules


@pytest.mark.skipif(START_METHOD != "fork", reason=f"workers start by {START_METHOD} on {sys.platform}: no fork")
def test_a_campaigns_workers_start_as_forks_of_this_process_with_what_it_imported(monkeypatch):
    """A worker forked from the caller needs no second import of Dask and flexfmu (a second a worker, paid by
    every campaign): it holds what this process holds, even a module only this process ever made, and it runs
    the campaign's tasks."""
    import types

    marker = "flexfmu_test_only_in_the_caller"
    monkeypatch.setitem(sys.modules, marker, types.ModuleType(marker))
    with dask_client(CampaignSettings(workers=2)) as client:
        seen = client.run(_imported, marker)
        rows = client.gather(client.map(_imported, ["flexfmu.harness.campaigns.campaign", "no_such_module"]))
    assert list(seen.values()) == [True, True]
    assert rows == [True, False]


def test_vary_specifications():
    assert parse_vary("payload.mass=0:0.5:6") == ("payload.mass", [0.5 * k for k in range(13)])
    assert parse_vary("kp=50,125,200") == ("kp", [50.0, 125.0, 200.0])
    assert len(grid_points([parse_vary("a=1,2,3"), parse_vary("b=0:1:1")])) == 6
    for bad in ("kp", "kp=", "kp=1:0:2", "kp=2:1:1", "kp=a,b"):
        with pytest.raises(SweepError, match="--vary"):
            parse_vary(bad)


def test_samples_follow_their_distributions(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text('[parameters."payload.mass"]\ndistribution = "uniform"\nlow = 0.1\nhigh = 0.3\n'
                    '[parameters.kp]\ndistribution = "normal"\nmean = 125.0\nstd = 10.0\n')
    points = sample_points(path, 4000, seed=3)
    masses, gains = (np.array([p[name] for p in points]) for name in ("payload.mass", "kp"))
    assert masses.min() >= 0.1 and masses.max() <= 0.3 and abs(masses.mean() - 0.2) < 0.005
    assert abs(gains.mean() - 125.0) < 0.6 and abs(gains.std() - 10.0) < 0.5
    assert sample_points(path, 5, seed=3) == sample_points(path, 5, seed=3) != sample_points(path, 5, seed=4)
    path.write_text('[parameters.kp]\ndistribution = "lognormal"\n')
    with pytest.raises(SweepError, match="parameters.kp.distribution must be one of uniform, normal"):
        sample_points(path, 3, seed=0)


@pytest.mark.slow
@pytest.mark.compiler
def test_crosscheck_on_workers_reports_what_the_serial_crosscheck_reports(tmp_path):
    """Also for a scenario given as loaded data (the spin-up with its motion changed, as ``crosscheck
    --motion`` passes it): the workers run that scenario, not the file's (their FMU runs would otherwise
    differ from the serial reference)."""
    from flexfmu.control.scenario import load_scenario
    from flexfmu.harness.workflows.crosscheck import crosscheck

    cases = [(resolve_arm("subudhi_morris_2link"), "bang_bang"),
             (resolve_arm("spinup_beam"), load_scenario("spinup").with_motion(w0=6.0))]
    serial = crosscheck(cases, tmp_path / "serial", duration=0.3)
    parallel = crosscheck(cases, tmp_path / "parallel", duration=0.3, campaign=CampaignSettings(workers=2))
    for a, b in zip(serial["cases"], parallel["cases"]):
        assert set(a["runs"]) == set(b["runs"]) == {"reference", "native-cs", "native-me", "fmi3-cs", "fmi3-me",
                                                     "pythonfmu-cs", "loop-fmu"}
        assert [(c["first"], c["second"], c["output"], c["max_abs"]) for c in a["comparisons"]] == \
            [(c["first"], c["second"], c["output"], c["max_abs"]) for c in b["comparisons"]]
        assert a["figures"] == b["figures"]
    assert serial["passed"] and parallel["passed"]


def test_sweep_warnings_name_the_points_that_left_the_validity_envelope():
    from flexfmu.harness.reports.envelope import envelope_columns
    from flexfmu.harness.workflows.sweep import envelope_warnings

    summary = {"limits": {"q": 0.1}, "runs": {"point": {"left_at": 0.25, "peak_fraction": {"q": 1.5}}}}
    assert envelope_columns(summary, "point") == {"envelope.left_at_s": 0.25, "envelope.peak_fraction": 1.5}
    assert envelope_columns(None, "point") == {"envelope.left_at_s": None, "envelope.peak_fraction": None}
    rows = [{"status": "ok", "kp": 50.0, "payload.mass": 0.3, "envelope.left_at_s": 0.25, "envelope.peak_fraction": 1.5},
            {"status": "ok", "kp": 125.0, "payload.mass": 0.3, "envelope.left_at_s": None,
             "envelope.peak_fraction": 0.5},
            {"status": "failed", "kp": 200.0, "payload.mass": 0.3}]
    lines = envelope_warnings(rows, ["kp", "payload.mass"])
    assert lines == ["kp=50, payload.mass=0.3: left the validity envelope at t = 0.25 s, largest 1.5 times its limit"]
    assert envelope_warnings(rows[1:], ["kp"]) == []


def test_an_interrupted_sweep_says_how_to_resume(tmp_path, monkeypatch, capsys):
    from flexfmu.cli import main
    from flexfmu.harness.workflows import sweep

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep, "run_sweep", interrupted)
    out = tmp_path / "sweep"
    assert main(["sweep", "yu_chen_2dof", "--scenario", "pd_circle", "--vary", "kp=100,125", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert f"the points done so far are kept in {out}/journal.jsonl: run the same command again to resume" in err


def test_the_sweep_summary_colours_each_panel_by_the_other_swept_name(tmp_path, monkeypatch):
    """A two-way sweep reads as a family of curves: the panels against the first name are coloured by the
    second, those against the second by the first, each with a colour bar naming it."""
    import matplotlib.figure

    from flexfmu.harness.workflows.sweep import plot_summary

    drawn = []
    saved = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: (drawn.append(fig), saved(fig, *a, **k)))
    rows = [{"status": "ok", "kp": kp, "payload.mass": mass, "tracking": kp * (1 + mass)}
            for kp in (50.0, 100.0, 150.0) for mass in (0.0, 0.3)]
    plot_summary(rows, ["kp", "payload.mass"], tmp_path / "summary.png", "sweep")
    assert (tmp_path / "summary.png").stat().st_size > 1000
    panels = {ax.get_xlabel(): ax for ax in drawn[0].axes if ax.get_xlabel() in ("kp", "payload.mass")}
    by_kp, by_mass = (panels[name].collections[0].get_array() for name in ("kp", "payload.mass"))
    assert by_kp.tolist() == [row["payload.mass"] for row in rows]
    assert by_mass.tolist() == [row["kp"] for row in rows]
    bars = sorted(ax.get_ylabel() for ax in drawn[0].axes if ax.get_xlabel() not in ("kp", "payload.mass"))
    assert bars == ["kp", "payload.mass"]
