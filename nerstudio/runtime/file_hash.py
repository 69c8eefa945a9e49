"""The SHA-256 of a file's bytes: the one way nerstudio names a file's contents (work inputs
shipped to other processes or machines, the demo's saved scores and first screen, a corpus's
ownership). A module of its own, and nothing else imported, because the window's first screen
needs it before anything heavier has loaded."""

from __future__ import annotations

import hashlib


def sha256_file(path: str) -> str:
    """SHA-256 of the file at ``path``, read in blocks of 1 MiB (OSError when unreadable)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
