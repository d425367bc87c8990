"""The machine and moment a benchmark ran on, stored with its results."""

from __future__ import annotations

import datetime
import os
import platform


def describe() -> dict:
    """CPU, cores, memory, OS, Python and library versions, the load average and the date (UTC)."""
    import casadi
    import numpy

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as stream:
            cpu = next(line.split(":", 1)[1].strip() for line in stream if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        memory_gib = None
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu, "cores": os.cpu_count(), "memory_gib": memory_gib,
        "os": platform.platform(), "python": platform.python_version(),
        "casadi": casadi.__version__, "numpy": numpy.__version__,
        "load_average_1_5_15_min": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
