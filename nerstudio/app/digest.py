"""The SHA-256 of a file: how a file computed from others names them (the demo's saved scores
and first screen, the demo's copy), so that it is used only with the very files it came from.
No Qt, no numpy here.
"""

from __future__ import annotations

import hashlib
import os


def digest(path: str | os.PathLike[str]) -> str | None:
    """SHA-256 of a file's bytes (None when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None
