"""Recorded experiments: a CSV of an arm's inputs and measured outputs, checked before any work.

A file holds one experiment: a header row naming its columns, then one row
per sample. The columns are ``time`` (s, equally spaced: the sample step,
which becomes the FMU's communication step), every input of the arm (held
from their sample to the next, as an FMU's inputs are) and any of its
outputs as measured, named as the FMU names them (``flexfmu info ARM``
lists both). Everything wrong is reported at once, naming the file, column
and row: a column that is neither an input nor an output, a missing input,
time that does not increase or is not equally spaced, a cell that is empty
or not a finite number.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flexfmu.errors import FlexfmuError

TIME = "time"
SPACING_TOLERANCE = 1e-6  # relative deviation of a sample interval from the mean that counts as equal spacing


class MeasurementError(FlexfmuError, ValueError):
    """A recorded experiment that cannot be used; the message names the file, column and row."""


@dataclass(frozen=True)
class Experiment:
    """One recorded experiment.

    Attributes
    ----------
    source : str
        The file it was read from.
    time : array (K,)
        Sample times, s, equally spaced.
    inputs : array (K, nu)
        The arm's inputs at each sample, in the Model's input order.
    outputs : dict of str to array (K,)
        The measured outputs by name, in the file's column order.
    """

    source: str
    time: np.ndarray
    inputs: np.ndarray
    outputs: dict[str, np.ndarray]

    @property
    def sample_step(self) -> float:
        """The sample step T, s."""
        return float((self.time[-1] - self.time[0]) / (len(self.time) - 1))


def read_experiment(path: str | Path, model) -> Experiment:
    """Read and check the experiment in the CSV file ``path`` for ``model``.

    Raises
    ------
    MeasurementError
        Listing every problem of the file (see the module docstring).
    """
    path = Path(path)
    try:
        with path.open(newline="") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError) as error:
        raise MeasurementError(f"--data {str(path)!r} cannot be read: {error}") from None
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if len(rows) < 3:
        raise MeasurementError(f"{path}: expected a header row and at least two samples, got {len(rows)} rows")
    header = [name.strip() for name in rows[0]]
    problems = _header_problems(header, model)
    values = np.full((len(rows) - 1, len(header)), np.nan)
    for r, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            problems.append(f"row {r} has {len(row)} cells, the header {len(header)}")
            continue
        for c, cell in enumerate(row):
            try:
                values[r - 2, c] = float(cell)
            except ValueError:
                pass
    bad = [(r, c) for r, c in zip(*np.nonzero(~np.isfinite(values))) if len(rows[r + 1]) == len(header)]
    for column in sorted({c for _, c in bad}):
        at = [r + 2 for r, c in bad if c == column]
        problems.append(f"column {header[column]!r}: {len(at)} empty, missing or non-numeric cell(s) (NaN), "
                        f"first at row {at[0]}")
    if TIME in header and not problems:
        problems += _time_problems(values[:, header.index(TIME)])
    if problems:
        raise MeasurementError(f"{path}: " + "; ".join(problems))
    columns = {name: values[:, k] for k, name in enumerate(header)}
    return Experiment(str(path), columns[TIME], np.column_stack([columns[name] for name in model.inputs]),
                      {name: columns[name] for name in header if name in model.output_names})


def _header_problems(header: list[str], model) -> list[str]:
    problems = []
    known = [TIME, *model.inputs, *model.output_names]
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        problems.append(f"columns named twice: {', '.join(duplicates)}")
    unknown = [name for name in header if name not in known]
    if unknown:
        problems.append(f"unknown column(s) {', '.join(map(repr, unknown))}: not time, an input or an output of "
                        f"arm {model.arm.name!r} (inputs: {', '.join(model.inputs)}; outputs: "
                        f"{', '.join(model.output_names)})")
    missing = [name for name in (TIME, *model.inputs) if name not in header]
    if missing:
        problems.append(f"missing column(s) {', '.join(map(repr, missing))}: time and every input are needed")
    if not any(name in model.output_names for name in header):
        problems.append("no measured output: name at least one column as an output of the arm")
    return problems


def _time_problems(time: np.ndarray) -> list[str]:
    steps = np.diff(time)
    if np.any(steps <= 0):
        k = int(np.argmax(steps <= 0))
        return [f"time is not increasing: row {k + 3} has t = {float(time[k + 1])!r} after t = {float(time[k])!r} at row {k + 2}"]
    mean = (time[-1] - time[0]) / len(steps)
    worst = int(np.argmax(np.abs(steps - mean)))
    if abs(steps[worst] - mean) > SPACING_TOLERANCE * mean:
        return [(f"time is not equally spaced: the interval before row {worst + 3} is {float(steps[worst])!r} s, the mean "
                 f"{float(mean)!r} s (resample the file to one sample step)")]
    return []
