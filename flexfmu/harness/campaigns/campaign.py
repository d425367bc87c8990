"""Campaigns: many independent runs on dask.distributed.

A campaign is a list of points (plain dicts: a parameter sweep, Monte-Carlo
samples, tuning starts, cross-check runs), a task run once per point, and a
table with one row per point. The tasks run on a ``LocalCluster`` of worker
processes, one per core unless told otherwise, started once per campaign (as
forks of this process where the platform allows, :data:`START_METHOD`), or
on an existing cluster (``scheduler``: its address); ``workers=0`` runs them
in this process, one after another (the serial run a parallel one must equal
bit for bit). Points go to the workers in batches that shrink as the
campaign nears its end (at most :data:`MAX_BATCH` points, then a share of
what is left), so a point of a few milliseconds does not pay a scheduler
round trip of its own and the workers still finish together; the workers
run without Dask's sampling profiler and with slow monitors, whose
threads would otherwise take their share of the cores the points need. The
progress bar counts points.

- A point that fails (an exception, a diverging run) is a row with its
  error; the campaign goes on.
- A worker that dies (killed, out of memory) is reported when it is lost;
  Dask runs its batch again on another worker (three times at most, then
  the points fail with KilledWorker), and those points' rows say how often
  they were retried (``retried``).
- Every finished row is appended at once to ``journal.jsonl`` in the output
  folder (floats written exactly), so an interrupted campaign loses only the
  points in flight: rerunning the same command skips the points already done
  (by the hash of the point) and retries failed ones.
- FMUs are built once (``flexfmu.harness.running.fmu_cache``) and shipped to the
  workers as bytes (:class:`FmuFile`), which a worker writes into its own
  content-hashed cache unless it is already there (as on one machine).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import traceback
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from flexfmu.codegen.cache import cache_dir, cached_file, content_hash
from flexfmu.errors import FlexfmuError
from flexfmu.harness.running.progress import Progress

JOURNAL = "journal.jsonl"
OK, FAILED = "ok", "failed"
RETRIED = "retried"  # the column of a row whose points a lost worker had taken
TOPIC = "flexfmu-campaign"  # the scheduler's event topic where tasks say where they start
MAX_BATCH = 64  # points per task at most
SHARE = 4  # a batch holds at most 1/(SHARE * workers) of the points left: the last batches are small
QUIET_WORKERS = {  # a worker's housekeeping threads run beside its task on the same cores: keep them idle
    "distributed.worker.profile.enabled": False,  # sampling every 10 ms
    "distributed.worker.memory.monitor-interval": "1s",  # 100 ms by default
    "distributed.admin.system-monitor.interval": "2s",  # 500 ms by default
    "distributed.admin.tick.interval": "200ms",  # 20 ms by default: how often it checks its event loop is not blocked
}
# How a new cluster's workers start. A spawned worker imports Python, Dask and flexfmu afresh: about a second
# before its first point, a fixed cost every campaign pays on top of its points (Amdahl's share). A forked one
# inherits this process's imports and is ready in a tenth of that. Fork where the platform offers it safely
# (Linux; macOS's system libraries are not fork-safe, Windows has no fork).
START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"


@dataclass(frozen=True)
class CampaignSettings:
    """Where a campaign's tasks run: ``workers`` processes of a LocalCluster (None: one per core;
    0: in this process, serially), or the cluster whose scheduler is at ``scheduler``."""

    workers: int | None = None
    scheduler: str | None = None

    @property
    def serial(self) -> bool:
        return self.scheduler is None and self.workers == 0


@dataclass(frozen=True)
class FmuFile:
    """An FMU as bytes, named by its content hash (as in the cache), to ship to workers."""

    name: str
    data: bytes

    @classmethod
    def of(cls, path: Path) -> FmuFile:
        """The FMU at ``path`` (a file of the cache, or any FMU: then named by the hash of its bytes)."""
        data = Path(path).read_bytes()
        name = Path(path).name if Path(path).parent == cache_dir() else f"{content_hash(data)}.fmu"
        return cls(name, data)

    def path(self) -> Path:
        """The FMU in this process's cache, written there first if missing."""
        return cached_file(self.name, lambda target: target.write_bytes(self.data))


@contextmanager
def dask_client(settings: CampaignSettings):
    """A dask.distributed Client for ``settings``: a new LocalCluster of processes (closed on exit)
    or the scheduler at ``settings.scheduler``; a new cluster's workers start by :data:`START_METHOD` and run
    :data:`QUIET_WORKERS`."""
    import dask
    from dask.distributed import Client, LocalCluster

    if settings.scheduler:
        with Client(settings.scheduler) as client:
            yield client
        return
    workers = settings.workers or os.cpu_count() or 1
    with dask.config.set(QUIET_WORKERS | {"distributed.worker.multiprocessing-method": START_METHOD}), LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
            silence_logs=40) as cluster, Client(cluster) as client:
        yield client


def point_id(point: dict) -> str:
    """The identity of ``point``: the hash of its values (sorted by name), stable across runs."""
    return content_hash(json.dumps(point, sort_keys=True))


def guarded(task: Callable, point: dict, *shared) -> dict:
    """The row of ``task`` run on ``point`` (and ``shared``): status ``ok`` with the task's figures, or ``failed`` with
    the error (a FlexfmuError's message as it is, e.g. the FMU's own; any other's type, message and where it was
    raised); ``seconds`` either way."""
    began = time.perf_counter()
    try:
        row = {"status": OK, "error": "", **task(point, *shared)}
    except FlexfmuError as error:  # a failing point is a result, not the end of the campaign: its own words
        row = {"status": FAILED, "error": str(error)}
    except Exception as error:  # a bug's: where it was raised too
        where = traceback.extract_tb(error.__traceback__)[-1]
        row = {"status": FAILED, "error": f"{type(error).__name__}: {error} ({Path(where.filename).name}:"
                                          f"{where.lineno})"}
    return row | {"seconds": time.perf_counter() - began}


def read_journal(folder: Path) -> dict[str, dict]:
    """Rows already in ``folder``'s journal, by point id; a line cut short by an interruption is ignored."""
    rows = {}
    journal = folder / JOURNAL
    if journal.exists():
        for line in journal.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            rows[row["point"]] = row
    return rows


def run_batch(task: Callable, points: list[dict], *shared) -> list[dict]:
    """The rows of ``task`` run on each of ``points`` (with ``shared``), as :func:`guarded` makes them; on a
    worker, first says on the campaign's event topic which task starts where (see :class:`LostWorkers`), and
    waits until the scheduler has it: a task that kills its worker must still be seen to have started."""
    from dask.distributed import get_client, get_worker

    worker = get_worker()
    get_client().log_event(TOPIC, {"task": worker.get_current_task(), "worker": worker.address})
    return [guarded(task, point, *shared) for point in points]


def batches(items: list, workers: int, size: int | None = None) -> list[list]:
    """``items`` in batches of ``size``, or when None in batches that shrink: each takes 1/(:data:`SHARE` *
    ``workers``) of the items left, at most :data:`MAX_BATCH` and at least one. The batches go out in order as
    workers free up, so while most points are left a batch is large (few round trips) and at the end the
    workers wait for each other at most one small batch."""
    chunks, start = [], 0
    while start < len(items):
        left = len(items) - start
        step = size or max(1, min(MAX_BATCH, math.ceil(left / (SHARE * max(workers, 1)))))
        chunks.append(items[start:start + step])
        start += step
    return chunks


class LostWorkers:
    """The workers a campaign lost, read from the starts of its tasks: every task says where it starts (on
    the scheduler's event topic :data:`TOPIC`), so a task that starts a second time was on a worker that
    died, running or holding its result. :meth:`poll` prints each lost worker on ``stream`` as it is found
    (reading the events at most every ``every`` s)."""

    def __init__(self, client, stream=None, every: float = 2.0):
        self.client, self.every, self.stream = client, every, stream or sys.stderr
        self.starts: dict[str, list[str]] = {}
        self._polled = 0.0

    def poll(self, force: bool = False) -> None:
        """Read the tasks' starts (not again within ``every`` s of the last read, unless ``force``); print the
        workers newly found lost and the tasks they held."""
        if not force and time.monotonic() - self._polled < self.every:
            return
        self._polled = time.monotonic()
        before = self.lost
        self.starts = {}
        for _, event in self.client.get_events(TOPIC):
            self.starts.setdefault(event["task"], []).append(event["worker"])
        for worker, tasks in self.lost.items():
            if worker not in before:
                print(f"lost worker {worker}: its task(s) {', '.join(tasks)} run again on the other workers",
                      file=self.stream, flush=True)

    @property
    def lost(self) -> dict[str, list[str]]:
        """{worker: the tasks it started that started again elsewhere}."""
        lost: dict[str, list[str]] = {}
        for task, workers in self.starts.items():
            for worker in workers[:-1]:
                lost.setdefault(worker, []).append(task)
        return lost

    def retries(self, task: str) -> int:
        """How often ``task`` started again."""
        return max(len(self.starts.get(task, ())) - 1, 0)


def run_campaign(points: list[dict], task: Callable, out: Path, settings: CampaignSettings, label: str,
                 shared: tuple = (), batch: int | None = None, keep: Callable | None = None) -> list[dict]:
    """Run ``task(point, *shared)`` for every point of ``points`` not yet done in ``out``.

    Parameters
    ----------
    points : list of dict
        The points (JSON-serialisable values by name).
    task : callable
        (point, *shared) -> dict of figures; a module-level function, so workers can import it.
    out : Path
        The campaign's folder: its journal and table.
    settings : CampaignSettings
        Where the tasks run.
    label : str
        For the progress bar.
    shared : tuple
        Arguments every task gets (sent to the workers once, e.g. :class:`FmuFile`).
    batch : int, optional
        Points per task (None: from the number of points and workers, see :func:`batches`); 1 for points
        that take long (tuning starts).
    keep : callable, optional
        (point id, row) -> the row to journal, called here as each row arrives (a sweep writes the samples a
        row carries to their own file).

    Returns
    -------
    list of dict
        One row per point, in the order of ``points``: ``point`` (id), the point's values, ``status``,
        ``error``, ``seconds``, the task's figures and, for points a lost worker had taken, ``retried``.
    """
    out.mkdir(parents=True, exist_ok=True)
    done = {key: row for key, row in read_journal(out).items() if row["status"] == OK}
    todo = {point_id(point): point for point in points if point_id(point) not in done}
    progress = Progress(f"{label}: {len(todo)} of {len(points)} points", unit="point")
    progress.begin(len(todo))
    journal_path = out / JOURNAL
    cut = journal_path.exists() and journal_path.stat().st_size and not journal_path.read_bytes().endswith(b"\n")
    retried: dict[str, int] = {}
    with open(journal_path, "a") as journal:
        if cut:  # the last line was cut short by an interruption: start on a fresh one
            journal.write("\n")
            journal.flush()  # before any worker forks: a buffered write would be written again by each fork

        def record(key: str, row: dict) -> None:
            row = keep(key, row) if keep else row
            done[key] = {"point": key, **todo[key], **row}
            journal.write(json.dumps(done[key]) + "\n")
            journal.flush()
            progress(len(done) - (len(points) - len(todo)), len(todo))

        if settings.serial:
            for key, point in todo.items():
                record(key, guarded(task, point, *shared))
        elif todo:
            from dask.distributed import as_completed

            with dask_client(settings) as client:
                watch = LostWorkers(client)
                # a random key, not a hash of the contents: Dask's hash of an FMU and a sweep's start states takes
                # 0.1 to 0.2 s, paid before the first point, and each campaign scatters its own values anyway
                sent = [client.scatter(value, broadcast=True, hash=False) for value in shared]
                workers = len(client.scheduler_info()["workers"])
                run = uuid.uuid4().hex[:12]  # task keys of this run only: its tasks' starts are its own
                futures = {}
                for k, chunk in enumerate(batches(list(todo.items()), workers, batch)):
                    futures[client.submit(run_batch, task, [point for _, point in chunk], *sent,
                                          key=f"points-{run}-{k}", pure=False)] = [key for key, _ in chunk]
                for future in as_completed(futures):
                    keys = futures[future]
                    try:
                        rows = future.result()
                    except Exception as error:  # the workers died under the batch once too often
                        rows = [{"status": FAILED, "error": f"{type(error).__name__}: {error}", "seconds": 0.0}
                                for _ in keys]
                    watch.poll()
                    for key, row in zip(keys, rows):
                        record(key, row)
                watch.poll(force=True)
                retried = {key: watch.retries(future.key) for future, keys in futures.items() for key in keys
                           if watch.retries(future.key)}
    return [done[key] | ({RETRIED: retried[key]} if key in retried else {})
            for key in map(point_id, points)]
