"""Progress of long work on stderr: a live bar on a terminal, one line in a log.

A bar counts what the user waits for, in its own unit (runs of a
cross-check, points of a campaign, planner steps), and is shown from the
start (:meth:`Progress.begin`), not when the first piece is done. On a
terminal the bar is tqdm's, naming the piece in progress; when stderr is a
file or a pipe (CI logs, ``2> log``), nothing is drawn while the work goes on
and a line says what started and one what finished and how long it took, so
logs stay short.
"""

from __future__ import annotations

import sys
import time

from tqdm import tqdm


class Progress:
    """``progress(done, total, what="")`` callable for one labelled piece of work counted in ``unit``s (samples
    are ``step``, a campaign's points ``point``)."""

    def __init__(self, label: str, stream=None, unit: str = "step"):
        self.label, self.stream, self.unit = label, stream or sys.stderr, unit
        self.bar, self.start, self.done = None, time.perf_counter(), 0

    def begin(self, total: int, what: str = "") -> None:
        """Show the work from its start: ``total`` units to go, ``what`` the first piece."""
        if not self.stream.isatty():
            print(f"{self.label}: {total} {self.unit}s to go", file=self.stream, flush=True)
        self(0, total, what)

    def __call__(self, done: int, total: int, what: str = "") -> None:
        if self.stream.isatty():
            if self.bar is None:
                self.bar = tqdm(total=total, desc=self.label, file=self.stream, leave=True, unit=self.unit,
                                dynamic_ncols=True)
            if what:
                self.bar.set_postfix_str(what)
            self.bar.update(done - self.done)
            if done >= total:
                self.bar.close()
        elif done >= total:
            print(f"{self.label}: {total} {self.unit}s in {time.perf_counter() - self.start:.1f} s", file=self.stream,
                  flush=True)
        self.done = done
