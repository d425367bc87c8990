"""Campaigns: many independent runs on dask.distributed.

A campaign is a list of points (plain dicts: a parameter sweep, Monte-Carlo
samples, tuning starts, cross-check runs), a task run once per point, and a
table with one row per point. The tasks run on a ``LocalCluster`` of worker
processes, one per core unless told otherwise, or on an existing cluster
(``scheduler``: its address); ``workers=0`` runs them in this process, one
after another (the serial run a parallel one must equal bit for bit).

- A point that fails (an exception, a diverging run, a killed worker) is a
  row with its error; the campaign goes on.
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
import os
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from flexfmu.harness.running.cache import cache_dir, cached_file, content_hash
from flexfmu.harness.running.progress import Progress

JOURNAL = "journal.jsonl"
OK, FAILED = "ok", "failed"


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
    or the scheduler at ``settings.scheduler``."""
    from dask.distributed import Client, LocalCluster

    if settings.scheduler:
        with Client(settings.scheduler) as client:
            yield client
        return
    workers = settings.workers or os.cpu_count() or 1
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        yield client


def point_id(point: dict) -> str:
    """The identity of ``point``: the hash of its values (sorted by name), stable across runs."""
    return content_hash(json.dumps(point, sort_keys=True))


def guarded(task: Callable, point: dict, *shared) -> dict:
    """The row of ``task`` run on ``point`` (and ``shared``): status ``ok`` with the task's figures, or ``failed`` with
    the error (type, message and where it was raised); ``seconds`` either way."""
    began = time.perf_counter()
    try:
        row = {"status": OK, "error": "", **task(point, *shared)}
    except Exception as error:  # a failing point is a result, not the end of the campaign
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


def run_campaign(points: list[dict], task: Callable, out: Path, settings: CampaignSettings, label: str,
                 shared: tuple = ()) -> list[dict]:
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

    Returns
    -------
    list of dict
        One row per point, in the order of ``points``: ``point`` (id), the point's values, ``status``,
        ``error``, ``seconds`` and the task's figures.
    """
    out.mkdir(parents=True, exist_ok=True)
    done = {key: row for key, row in read_journal(out).items() if row["status"] == OK}
    todo = {point_id(point): point for point in points if point_id(point) not in done}
    progress = Progress(f"{label}: {len(todo)} of {len(points)} points")
    journal_path = out / JOURNAL
    cut = journal_path.exists() and journal_path.stat().st_size and not journal_path.read_bytes().endswith(b"\n")
    with open(journal_path, "a") as journal:
        if cut:  # the last line was cut short by an interruption: start on a fresh one
            journal.write("\n")

        def record(key: str, row: dict) -> None:
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
                sent = [client.scatter(value, broadcast=True) for value in shared]
                futures = {client.submit(guarded, task, point, *sent, key=f"point-{key}", pure=False): key
                           for key, point in todo.items()}
                for future in as_completed(futures):
                    key = futures[future]
                    try:
                        row = future.result()
                    except Exception as error:  # the worker died under the point
                        row = {"status": FAILED, "error": f"{type(error).__name__}: {error}", "seconds": 0.0}
                    record(key, row)
    return [done[point_id(point)] for point in points]
