"""Progress of long runs on stderr: a live bar on a terminal, one line in a log.

On a terminal the bar is tqdm's; when stderr is a file or a pipe (CI logs,
``2> log``), nothing is drawn while the run goes on and a single line says
what finished and how long it took, so logs stay short.
"""

from __future__ import annotations

import sys
import time

from tqdm import tqdm


class Progress:
    """``progress(done, total)`` callable for one labelled run, counting ``unit`` (samples are ``step``, a
    campaign's points ``point``)."""

    def __init__(self, label: str, stream=None, unit: str = "step"):
        self.label, self.stream, self.unit = label, stream or sys.stderr, unit
        self.bar, self.start, self.done = None, time.perf_counter(), 0

    def __call__(self, done: int, total: int) -> None:
        if self.stream.isatty():
            if self.bar is None:
                self.bar = tqdm(total=total, desc=self.label, file=self.stream, leave=True, unit=self.unit,
                                dynamic_ncols=True)
            self.bar.update(done - self.done)
            if done >= total:
                self.bar.close()
        elif done >= total:
            print(f"{self.label}: {total} {self.unit}s in {time.perf_counter() - self.start:.1f} s", file=self.stream,
                  flush=True)
        self.done = done
