"""Run the closed-loop FMU point after point, in its own words.

A campaign runs one closed-loop FMU (``flexfmu.targets.loop``) at many
points. Each process (a campaign worker, or this one) unpacks the FMU and
instantiates it once (:func:`loop_runner`); a point resets the instance,
sets its values (plant parameters, the controller's gains, reference and
motion numbers, start coordinates), runs the whole run in one fmi2DoStep
and reads the figures, or, when the samples are asked for, steps sample by
sample and records them.

Everything the FMU logs is kept per point: a failed point raises
:class:`PointError` with the FMU's own error message (``state 'der(theta[1])'
became -1.14e+16 (diverged ...)``), not FMPy's status code, and the FMU's
warnings (the validity envelope left) come back with the point's figures.
An FMU is unpacked into the content-hashed cache beside it
(``flexfmu.codegen.cache``), once per machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import fmpy
import numpy as np
from fmpy.fmi2 import FMU2Slave, fmi2CallbackFunctions, fmi2CallbackLoggerTYPE
from fmpy.fmi2 import defaultCallbacks as fmpy_callbacks

from flexfmu.errors import FlexfmuError
from flexfmu.codegen.cache import cache_dir, content_hash
from flexfmu.harness.running.result import Result

ERROR_STATUS, WARNING_STATUS = 3, 1  # fmi2Error, fmi2Warning


class PointError(FlexfmuError, RuntimeError):
    """A point the FMU could not run; the message is what the FMU logged."""


@dataclass(frozen=True)
class LoopRun:
    """One point's run: the ``outputs`` read at its end (by name), the FMU's ``warnings`` and, when asked for,
    the recorded samples (``result``)."""

    outputs: dict[str, float]
    warnings: list[str] = field(default_factory=list)
    result: Result | None = None


def unpacked(path) -> Path:
    """The folder the FMU at ``path`` is unpacked in: in the cache, named by the FMU's cache name (or the
    hash of its bytes), unpacked by the first process that asks and moved into place when complete."""
    path = Path(path)
    name = path.stem if path.parent == cache_dir() else content_hash(path.read_bytes())
    target = cache_dir() / f"{name}.unpacked"
    if not target.exists():
        partial = tempfile.mkdtemp(prefix=f".{name}.", dir=cache_dir())
        fmpy.extract(str(path), unzipdir=partial)
        try:
            os.rename(partial, target)
        except OSError:  # another process was first
            shutil.rmtree(partial, ignore_errors=True)
    return target


def _text(message: bytes) -> str:
    """A message of a flexfmu FMU as written (its logger escapes '%' and '#' by doubling them)."""
    return message.decode("utf-8", "replace").replace("%%", "%").replace("##", "#")


class LoopRunner:
    """One instance of the closed-loop FMU at ``path``, run point after point.

    Parameters
    ----------
    path : str or Path
        The closed-loop FMU.
    """

    def __init__(self, path):
        self.path = Path(path)
        folder = unpacked(self.path)
        self.description = fmpy.read_model_description(str(folder))
        self.vrs = {v.name: v.valueReference for v in self.description.modelVariables}
        self.messages: list[tuple[int, str]] = []
        self._callbacks = fmi2CallbackFunctions()
        self._callbacks.logger = fmi2CallbackLoggerTYPE(self._log)
        self._callbacks.allocateMemory = fmpy_callbacks.allocateMemory
        self._callbacks.freeMemory = fmpy_callbacks.freeMemory
        self.fmu = FMU2Slave(guid=self.description.guid, unzipDirectory=str(folder),
                             modelIdentifier=self.description.coSimulation.modelIdentifier, instanceName="loop")
        self.fmu.instantiate(callbacks=self._callbacks)

    def _log(self, environment, instance, status, category, message) -> None:
        self.messages.append((int(status), _text(message)))

    def references(self, names) -> list[int]:
        """The value references of ``names``; KeyError naming the unknown ones."""
        unknown = [name for name in names if name not in self.vrs]
        if unknown:
            raise KeyError(f"the closed-loop FMU has no variable {', '.join(unknown)}")
        return [self.vrs[name] for name in names]

    def run(self, values: dict, duration: float, outputs, step: float | None = None, record=()) -> LoopRun:
        """One point: reset, set ``values`` (by name), run ``duration`` s and read ``outputs`` (names).

        Parameters
        ----------
        values : dict
            Start values by name: parameters, the controller's parameters, start coordinates.
        duration : float
            The run's length, s.
        outputs : sequence of str
            What to read at the end.
        step : float, optional
            The sample step, s, at which ``record`` is recorded (required with ``record``).
        record : sequence of str
            Outputs to record at every sample (none: the run is one fmi2DoStep).

        Raises
        ------
        PointError
            If the FMU refuses a value or the run fails; the message is the FMU's.
        """
        fmu = self.fmu
        self.messages.clear()
        set_vrs, read_vrs, record_vrs = (self.references(names) for names in (values, outputs, record))
        try:
            fmu.reset()
            fmu.setupExperiment(startTime=0.0)
            fmu.setReal(set_vrs, [float(v) for v in values.values()])
            fmu.enterInitializationMode()
            fmu.exitInitializationMode()
            result = None
            if record:
                grid = np.linspace(0.0, duration, int(round(duration / step)) + 1)
                rows = []
                for k, t in enumerate(grid):
                    rows.append(fmu.getReal(record_vrs))
                    if k + 1 < len(grid):
                        fmu.doStep(t, grid[k + 1] - t)
                result = Result(grid, list(record), [""] * len(record), np.array(rows))
            else:
                fmu.doStep(0.0, duration)
            read = dict(zip(outputs, fmu.getReal(read_vrs)))
        except Exception as error:  # FMPy's status exception: the FMU's own message says why
            raise PointError(self.error_message() or f"{type(error).__name__}: {error}") from None
        return LoopRun(read, [text for status, text in self.messages if status == WARNING_STATUS], result)

    def error_message(self) -> str:
        """The FMU's error messages of the current point, the first (the cause) first; the roll-back notes
        that follow a failure are left out."""
        errors = [text for status, text in self.messages if status >= ERROR_STATUS]
        causes = [text for text in errors if "rolled back" not in text]
        return "; ".join(causes or errors)


_RUNNERS: dict[str, LoopRunner] = {}


def loop_runner(path) -> LoopRunner:
    """This process's runner of the FMU at ``path``: made on first use, then reused (a worker unpacks and
    instantiates each FMU once)."""
    key = str(Path(path).resolve())
    if key not in _RUNNERS:
        _RUNNERS[key] = LoopRunner(path)
    return _RUNNERS[key]
