"""A content-hashed cache of built files (compiled references, FMUs).

A file is named by the SHA-256 of everything it is built from, so a rebuilt
input gets a new name and a cached file is never stale. It is built in a
temporary file beside its final name and moved there when complete, so
processes sharing the cache (campaign workers, parallel test workers) never
read half a file; where the system has file locks (fcntl), the first
process to miss a file builds it while the others wait for it instead of
building it again. The folder is ``$FLEXFMU_CACHE`` or ``~/.cache/flexfmu``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no lock; two processes may then build the same file, each moving it into place whole
    fcntl = None


def cache_dir() -> Path:
    """The cache folder (created if needed)."""
    folder = Path(os.environ.get("FLEXFMU_CACHE") or Path.home() / ".cache" / "flexfmu")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def content_hash(*parts: bytes | str) -> str:
    """SHA-256 (hex, first 24 digits) of ``parts`` (bytes, or text encoded as UTF-8), each length-prefixed."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()[:24]


def cached_file(name: str, build: Callable[[Path], None]) -> Path:
    """The cached file ``name`` (which should hold a content hash), built by
    ``build`` (called with a temporary path) first when it is missing."""
    target = cache_dir() / name
    if target.exists():
        return target
    with _building(target):
        if target.exists():  # built by another process while this one waited
            return target
        handle, partial = tempfile.mkstemp(prefix=f".{name}.", suffix=target.suffix, dir=target.parent)
        os.close(handle)
        try:
            build(Path(partial))
            os.replace(partial, target)
        finally:
            Path(partial).unlink(missing_ok=True)
    return target


@contextlib.contextmanager
def _building(target: Path):
    """Hold the lock of building ``target`` (an exclusive lock on a file beside it, released when the
    process ends, however it ends)."""
    if fcntl is None:
        yield
        return
    with open(target.with_name(f".{target.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
