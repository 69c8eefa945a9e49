"""The SHA-256 of a file: how a file computed from others names them (the demo's saved scores
and first screen, the demo's copy), so that it is used only with the very files it came from.
No Qt, no numpy here.
"""

from __future__ import annotations

import os

from ..runtime.file_hash import sha256_file


def digest(path: str | os.PathLike[str]) -> str | None:
    """SHA-256 of a file's bytes (None when it cannot be read)."""
    try:
        return sha256_file(os.fspath(path))
    except OSError:
        return None
