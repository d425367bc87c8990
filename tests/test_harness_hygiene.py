"""The harness leaves nothing behind and keeps logs short and plots light.

A cross-check extracts FMUs, builds Python-backed ones and compiles native
ones, all in temporary folders: after it, the temporary directory holds
what it held before. Progress counts what the user waits for (runs, points)
from the start: a live tqdm bar on a terminal, a line at the start and one at
the end when stderr is a file or a pipe (a CI log). Plots draw a few
thousand points per curve, keeping every peak.
"""

from __future__ import annotations

import io
import re
import tempfile

import numpy as np
import pytest

from flexfmu.harness.reports.plots import thinned
from flexfmu.harness.running.progress import Progress
from flexfmu.harness.workflows.crosscheck import RUNS, run_case


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_is_a_single_final_line_when_not_a_terminal():
    stream = io.StringIO()
    progress = Progress("arm/scenario: reference", stream)
    for done in range(1, 1001):
        progress(done, 1000)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and re.fullmatch(r"arm/scenario: reference: 1000 steps in \d+\.\d s", lines[0])


def test_progress_draws_a_bar_on_a_terminal():
    stream = Terminal()
    progress = Progress("arm/scenario: reference", stream)
    for done in range(1, 1001):
        progress(done, 1000)
    text = stream.getvalue()
    assert "\r" in text and "1000/1000" in text and "arm/scenario: reference" in text


def test_progress_shows_from_the_start_in_its_own_unit_and_names_the_piece_in_progress():
    stream = Terminal()
    progress = Progress("crosscheck", stream, unit="run")
    progress.begin(7, "yu_chen_2dof/pd_circle: reference")
    assert "0/7" in stream.getvalue() and "yu_chen_2dof/pd_circle: reference" in stream.getvalue()
    progress(7, 7)
    assert "7/7" in stream.getvalue() and ("run/s" in stream.getvalue() or "s/run" in stream.getvalue())
    log = io.StringIO()
    progress = Progress("campaign", log, unit="point")
    progress.begin(3)
    for done in (1, 2, 3):
        progress(done, 3)
    lines = log.getvalue().splitlines()
    assert lines[0] == "campaign: 3 points to go" and re.fullmatch(r"campaign: 3 points in \d+\.\d s", lines[1])


@pytest.mark.compiler
@pytest.mark.slow
def test_a_crosscheck_leaves_the_temporary_directory_as_it_found_it(tmp_path, monkeypatch, capsys):
    """Every run of a cross-check (reference, native FMU in both interfaces, Python-backed FMU, controller
    FMU) in a private temporary directory, for this process and the compilers it starts; the count of its
    entries before and after must agree. Its progress, counted in runs: a line at the start and one at the
    end on a stderr that is no terminal."""
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    before = sorted(p.name for p in private.iterdir())
    case = run_case("yu_chen_2dof", "pd_circle", tmp_path / "out", duration=0.02, runs=RUNS)
    assert set(case["runs"]) == set(RUNS) - {"full-reference"}  # yu_chen_2dof reduces no flexible body
    assert sorted(p.name for p in private.iterdir()) == before == []
    lines = capsys.readouterr().err.splitlines()
    count = len(RUNS) - 1  # every run but full-reference
    assert f"crosscheck: {count} runs to go" in lines, lines
    assert any(re.fullmatch(rf"crosscheck: {count} runs in \d+\.\d s", line) for line in lines), lines


def test_a_thinned_curve_keeps_every_bins_extremes_in_time_order():
    rng = np.random.default_rng(3)
    time = np.linspace(0.0, 10.0, 10_000)
    noise = 1e-15 * rng.standard_normal(time.size)
    noise[7_777] = 5e-14  # one spike, as a round-off difference shows
    t, y = thinned(time, noise, points=2000)
    assert len(t) == 2000 and np.all(np.diff(t) > 0)
    assert y.max() == noise.max() and y.min() == noise.min()
    width = 10  # 2 * 10000 / 2000: every bin of 10 samples keeps its low and its high
    for start in range(0, 10_000, width * 97):
        chunk = noise[start:start + width]
        assert chunk.max() in y and chunk.min() in y
    short_t, short_y = thinned(time[:500], noise[:500], points=2000)
    assert np.array_equal(short_t, time[:500]) and np.array_equal(short_y, noise[:500])


def test_a_long_title_is_wrapped_and_a_path_drawn_where_it_moves():
    import matplotlib.pyplot as plt

    from flexfmu.harness.reports.plots import moving_plane, titled

    fig, _ = plt.subplots(1, 2, figsize=(6, 3))
    titled(fig, "kuo_delta/delta_pick_place: " + "a description of the scenario that goes on " * 4)
    assert fig._suptitle.get_text().count("\n") >= 2
    assert all(len(line) <= 9 * 6 for line in fig._suptitle.get_text().splitlines())
    assert fig.get_layout_engine().__class__.__name__ == "ConstrainedLayoutEngine"
    plt.close(fig)
    names = ["platform.x", "platform.y", "platform.z"]
    t = np.linspace(0, 1, 50)
    pick_and_place = np.column_stack([0.16 * t, 0.04 * t, 0.5 + 0.2 * np.sin(np.pi * t)])
    circle = np.column_stack([0.1 * np.cos(6 * t), 0.1 * np.sin(6 * t), np.full(50, 0.5)])
    assert moving_plane(names, pick_and_place) == ("platform.x", "platform.z")
    assert moving_plane(names, circle) == ("platform.x", "platform.y")
    assert moving_plane(["tip.x", "tip.y"], circle) == ("tip.x", "tip.y")
