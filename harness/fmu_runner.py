"""Run an FMU with FMPy and return a labelled Result.

Inputs are piecewise constant: a list of (time, values) switch points. FMPy
receives them with repeated time stamps, so model exchange sees a time event
at each switch and co-simulation samples the held value at each
communication point: both see exactly the torque a sample-and-hold master
applies, and so does ``piecewise_constant`` for the reference simulation.
"""

from __future__ import annotations

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


def fmpy_input(names: list[str], switches, stop_time: float) -> np.ndarray:
    """The structured input array FMPy expects, with repeated times at switches."""
    rows = []
    for k, (t, values) in enumerate(switches):
        if k > 0:
            rows.append((t, *switches[k - 1][1]))
        rows.append((t, *values))
    rows.append((stop_time, *switches[-1][1]))
    dtype = [("time", np.float64)] + [(name, np.float64) for name in names]
    return np.array(rows, dtype=dtype)


def run_fmu(
    path,
    duration: float,
    output_interval: float,
    inputs: list[str],
    switches,
    outputs: list[str],
    interface: str = "CoSimulation",
    start_values: dict | None = None,
    relative_tolerance: float | None = None,
) -> Result:
    """Simulate ``path`` with FMPy; ``interface`` "CoSimulation" or "ModelExchange" (CVode)."""
    signal = fmpy_input(inputs, switches, duration)
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
