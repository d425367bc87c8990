"""Labelled simulation results: names, units and time kept with the numbers."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Result:
    """Time series of named signals: ``values[k, j]`` is signal j at ``time[k]``; ``method`` says how they were
    computed when it matters to a reader (the reference's integrator), else it is empty."""

    time: np.ndarray
    names: list[str]
    units: list[str]
    values: np.ndarray
    method: str = ""

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.values[:, self.names.index(name)]
        except ValueError:
            raise KeyError(f"no signal {name!r}; have {', '.join(self.names)}") from None

    def to_csv(self, path: str | Path) -> None:
        """Write the result to the CSV file ``path``, with a header ``time [s], name [unit], ...``."""
        with open(path, "w", newline="") as stream:
            writer = csv.writer(stream)
            writer.writerow(["time [s]"] + [f"{n} [{u}]" for n, u in zip(self.names, self.units)])
            for t, row in zip(self.time, self.values):
                writer.writerow([repr(float(t))] + [repr(float(v)) for v in row])
