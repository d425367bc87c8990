"""The cost of an exported FMU's step, measured on the machine that exports it.

A plant FMU for VeriStand or Simulink Real-Time is useful only if its
doStep fits the loop's period with room to spare. After the host's binary
is built, export links the FMU's own compiled instance and model code with a
small timing driver (``c/ffmu_timing.c``: no FMI glue, so it serves both FMI
versions) and times doSteps of the communication step one by one, the
inputs left at their start values (the arm at rest: a fixed-step FMU costs
the same in any state). The median is the figure a budget is held against;
the worst step shows the machine's jitter, which a shared desktop has and
a real-time target should not.
"""

from __future__ import annotations

import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path

from flexfmu.errors import ExportError
from flexfmu.targets.build import COMMON, BuildError, compiler
from flexfmu.targets.bundle import c_source

STEPS = 2000  # steps timed at most
SECONDS = 0.5  # ... or for this long, whichever comes first (at least 20 steps)


@dataclass(frozen=True)
class StepTiming:
    """How long one doStep of ``communication_step`` s took: ``median_s`` and ``worst_s`` of ``steps`` steps on
    ``host``."""

    steps: int
    median_s: float
    worst_s: float
    communication_step: float
    host: str

    @property
    def realtime_factor(self) -> float:
        """How many times faster than real time the median step runs."""
        return self.communication_step / self.median_s

    def budget_fraction(self) -> float:
        """The median step's cost as a fraction of the communication step."""
        return self.median_s / self.communication_step

    def text(self) -> str:
        """One line: cost per step and real-time factor."""
        return (f"{_duration(self.median_s)} per {_duration(self.communication_step)} doStep (median of "
                f"{self.steps}; worst {_duration(self.worst_s)}) on {self.host}: {self.realtime_factor:.3g} times "
                f"faster than real time")


def _duration(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def host_name() -> str:
    """The processor (or machine type) the timing ran on, for the record."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as stream:
            for line in stream:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "this machine"


def time_steps(sources: Path, objects: Path, c_files: list[str], communication_step: float, work: Path,
               steps: int = STEPS, seconds: float = SECONDS) -> StepTiming:
    """Time the FMU whose sources are in ``sources`` and whose host objects (one per C file of ``c_files``,
    the model and instance code) are in ``objects``: link them with the timing driver in ``work`` and run
    doSteps of ``communication_step`` s, ``steps`` of them or for ``seconds`` s, whichever ends first (see the
    module docstring).

    Raises
    ------
    BuildError
        If the driver does not compile or link.
    ExportError
        If a step fails (the message holds the FMU's own).
    """
    driver = work / "ffmu_timing.c"
    driver.write_text(c_source("ffmu_timing.c"))
    program = work / "ffmu_timing"
    linked = [str(objects / (Path(name).stem + ".o")) for name in c_files]
    command = [compiler(), *COMMON, f"-I{sources}", str(driver), *linked, "-o", str(program), "-lm"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{' '.join(command)}\n{done.stdout}{done.stderr}")
    done = subprocess.run([str(program), str(steps), str(seconds), repr(communication_step)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise ExportError(f"timing the FMU's step failed: {done.stderr.strip() or done.stdout.strip()}")
    count, median_ns, worst_ns = done.stdout.split()
    return StepTiming(int(count), float(median_ns) * 1e-9, float(worst_ns) * 1e-9, communication_step, host_name())
