"""flexfmu reproduce: every row of every reproduction within its tolerance,
and a report that holds the rows it claims."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from flexfmu.cli import main
from flexfmu.harness.reproductions import REPRODUCTIONS
from flexfmu.harness.reproductions.rows import PUBLISHED, Row, relative_row
from flexfmu.harness.workflows.reproduce import markdown


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    status = main(["reproduce", "--out", str(out)])
    return status, out, json.loads((out / "report.json").read_text())


@pytest.mark.slow
def test_every_reproduced_number_is_within_its_tolerance(report):
    status, _, data = report
    failed = [f"{row['source']}: {row['quantity']}: published {row['published']}, ours {row['ours']}"
              for section in data["reproductions"] for row in section["rows"] if row["passed"] is False]
    assert not failed, failed
    assert status == 0 and data["passed"]
    assert [section["name"] for section in data["reproductions"]] == [entry.name for entry in REPRODUCTIONS]


@pytest.mark.slow
def test_the_report_holds_every_row_and_figure(report):
    _, out, data = report
    markdown = (out / "report.md").read_text()
    for section in data["reproductions"]:
        assert f"## {section['title']}" in markdown
        for row in section["rows"]:
            assert f"| {row['source']} | {row['quantity']} | {row['published']:.6g} | {row['ours']:.6g} |" in markdown
        for figure in section["figures"]:
            assert (out / figure).stat().st_size > 10_000 and f"]({figure})" in markdown


def test_no_row_passes_with_a_tolerance_looser_than_one_percent():
    """A published number passes within 1 % (an analytic one within 1e-6); anything looser must be
    reported, not reproduced, with its reason."""
    assert relative_row("s", "q", 2.0, 2.0 * 1.009, "1", PUBLISHED).passed is True
    with pytest.raises(ValueError, match="looser than 0.01; report the number"):
        relative_row("s", "q", 2.0, 2.0, "1", 0.10)


def test_a_row_outside_its_tolerance_fails():
    assert relative_row("s", "q", 2.0, 2.0 * (1 + 2e-6), "1", 1e-6).passed is False
    assert relative_row("s", "q", 2.0, 2.0 * (1 + 5e-7), "1", 1e-6).passed is True
    assert Row("s", "q", 4.0, 5.0, "1", "t", False).relative_difference == pytest.approx(0.25)


def test_a_number_reported_but_not_reproduced_neither_passes_nor_fails():
    rows = [relative_row("s", "kept", 2.0, 2.0, "1", 1e-6), Row("s", "apart", 17.5, 20.5, "rad/s", "none", None, "why"),
            relative_row("s", "off", 2.0, 3.0, "1", 1e-6)]

    def data(rows):
        return {"passed": all(r.passed is not False for r in rows),
                "reproductions": [{"name": "x", "title": "X", "figures": [],
                                   "rows": [asdict(r) | {"relative_difference": r.relative_difference} for r in rows]}]}

    text = markdown(data(rows[:2]))
    assert "**PASS** (1 of 1 checked rows within tolerance; 1 reported, not reproduced)" in text
    assert "| none | not reproduced |" in text and "- why" in text
    assert "**FAIL** (1 of 2 checked rows within tolerance; 1 reported, not reproduced)" in markdown(data(rows))


def test_an_unknown_reproduction_is_a_usage_error(tmp_path, capsys):
    assert main(["reproduce", "--only", "paper999", "--out", str(tmp_path)]) == 2
    assert "no reproduction paper999" in capsys.readouterr().err
