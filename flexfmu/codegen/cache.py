"""A content-hashed cache of built files (compiled references, FMUs).

A file is named by the SHA-256 of everything it is built from, so a rebuilt
input gets a new name and a cached file is never stale. It is built in a
temporary file beside its final name and moved there when complete, so
processes sharing the cache (campaign workers) never read half a file.
The folder is ``$FLEXFMU_CACHE`` or ``~/.cache/flexfmu``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable


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
    handle, partial = tempfile.mkstemp(prefix=f".{name}.", suffix=target.suffix, dir=target.parent)
    os.close(handle)
    try:
        build(Path(partial))
        os.replace(partial, target)
    finally:
        Path(partial).unlink(missing_ok=True)
    return target
