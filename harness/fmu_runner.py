"""Run an FMU with FMPy for a given input signal and return a labelled Result.

Inputs come from switch points [(t, [u...]), ...], from a CSV file (a
``time`` column and one column per input, as ``Result.to_csv`` writes) or
from a function of time sampled on the output grid. They are either held
(sample and hold: FMPy gets repeated time stamps, so model exchange sees a
time event at each change and co-simulation the held value at each
communication point, exactly as ``piecewise_constant`` gives the reference)
or interpolated linearly between samples. Parameter overrides and initial
coordinates are start values.
"""

from __future__ import annotations

import csv
from pathlib import Path

import fmpy
import numpy as np

from harness.result import Result


def piecewise_constant(switches: list[tuple[float, list[float]]]):
    """u(t) from switch points [(t0, u0), (t1, u1), ...] (t0 = 0)."""
    times = np.array([t for t, _ in switches])
    values = np.array([v for _, v in switches], float)

    def u(t: float) -> np.ndarray:
        return values[np.searchsorted(times, t + 1e-12, side="right") - 1]

    return u


def read_input_csv(path: str | Path, names: list[str]) -> list[tuple[float, list[float]]]:
    """Samples [(t, [u...])] from a CSV with a time column and the named inputs.

    Headers may carry units (``tau[1] [N.m]``), as Result.to_csv writes them.
    """
    with open(path, newline="") as stream:
        rows = list(csv.reader(stream))
    header = [cell.split(" [")[0].strip() for cell in rows[0]]
    missing = [name for name in ["time", *names] if name not in header]
    if missing:
        raise ValueError(f"{path}: no column {', '.join(missing)} (columns: {', '.join(header)})")
    columns = [header.index(name) for name in names]
    t = header.index("time")
    return [(float(row[t]), [float(row[c]) for c in columns]) for row in rows[1:] if row]


def fmpy_input(names: list[str], samples, stop_time: float, hold: bool = True) -> np.ndarray:
    """The structured input array FMPy expects; held inputs get repeated
    time stamps at each change."""
    rows = []
    for k, (t, values) in enumerate(samples):
        if hold and k > 0:
            rows.append((t, *samples[k - 1][1]))
        rows.append((t, *values))
    if rows[-1][0] < stop_time:
        rows.append((stop_time, *samples[-1][1]))
    dtype = [("time", np.float64)] + [(name, np.float64) for name in names]
    return np.array(rows, dtype=dtype)


def input_samples(inputs, names: list[str], duration: float, output_interval: float):
    """Normalise ``inputs`` (switch list, CSV path or function of t) to samples."""
    if isinstance(inputs, (str, Path)):
        return read_input_csv(inputs, names)
    if callable(inputs):
        grid = np.linspace(0.0, duration, int(round(duration / output_interval)) + 1)
        return [(t, list(np.asarray(inputs(t), float))) for t in grid]
    return list(inputs)


def run_fmu(
    path,
    duration: float,
    output_interval: float,
    inputs: list[str],
    signal,
    outputs: list[str],
    interface: str = "CoSimulation",
    start_values: dict | None = None,
    relative_tolerance: float | None = None,
    hold: bool = True,
) -> Result:
    """Simulate ``path`` with FMPy; ``interface`` "CoSimulation" or "ModelExchange" (CVode).

    ``signal`` is a list of (t, [u...]) switch points, a CSV path or a
    function of time, for the FMU inputs named in ``inputs``;
    ``start_values`` sets parameters and initial coordinates by name.
    """
    samples = input_samples(signal, inputs, duration, output_interval)
    signal = fmpy_input(inputs, samples, duration, hold)
    result = fmpy.simulate_fmu(
        str(path), fmi_type=interface, stop_time=duration, output_interval=output_interval,
        step_size=output_interval, input=signal, output=outputs, start_values=start_values or {},
        relative_tolerance=relative_tolerance, solver="CVode",
    )
    # model exchange records event times twice (before and after the event):
    # keep one row per time, the one after the event
    time = np.asarray(result["time"])
    last = len(time) - 1 - np.unique(time[::-1], return_index=True)[1]
    names = [name for name in result.dtype.names if name != "time"]
    return Result(time[last], names, [""] * len(names), np.column_stack([result[name][last] for name in names]))
