"""The demo the application opens: a copy of the bundled files in the user's data folder.

The bundled demo lives inside the installed package, which must never be written: opening its
corpus there would leave a lock file beside it and Ctrl+S would overwrite the shipped corpus (the
seed of the annotation loop and Teach's data). The application opens a per-user copy instead,
made on first use; the user's edits to it are kept from one session to the next.

Where the copy lives:

* anywhere: the folder named by the environment variable ``NERSTUDIO_DEMO_DIR`` (the tests use
  it, so that they never write into the real folder);
* Linux and other POSIX systems: ``$XDG_DATA_HOME/nerstudio/demo`` (by default
  ``~/.local/share/nerstudio/demo``);
* macOS: ``~/Library/Application Support/nerstudio/demo``;
* Windows: ``%LOCALAPPDATA%\\nerstudio\\demo``.

When that folder cannot be written (a read-only home), a fresh private temporary folder is used
for the session; when nothing can be written, there is no demo to open (never an error at start).

A file missing from the copy is copied again; a file the user never changed is brought up to date
when a newer nerstudio ships another version of it (``.nerstudio-demo.json`` records what was
copied); a file the user changed is never replaced. Deleting the folder gives a fresh copy at the
next start. No Qt here.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from ..corpus.atomic import atomic_open
from ..demo import DEMO_DIR
from .digest import digest

ENV = "NERSTUDIO_DEMO_DIR"
MANIFEST = ".nerstudio-demo.json"  # relative path -> SHA-256 of the bundled file copied there


def copy_dir() -> Path | None:
    """Where the user's copy of the demo lives (see the module docstring; not created here), or
    None when there is no home folder to put it in."""
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no home folder (a service account)
        return None
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        base = os.environ.get("LOCALAPPDATA")
        return (Path(base) if base else home / "AppData" / "Local") / "nerstudio" / "demo"
    if sys.platform == "darwin":  # pragma: no cover - exercised on macOS only
        return home / "Library" / "Application Support" / "nerstudio" / "demo"
    data = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data) if os.path.isabs(data) else home / ".local" / "share"
    return base / "nerstudio" / "demo"


def bundled_files() -> list[str]:
    """The demo's files, relative to :data:`DEMO_DIR`: its ``README.md``, its corpora
    (``*.conll``) and its models with the scores shipped beside them (``model/*.npz``) — not
    the package's code, nor what a program may have left beside them (lock files, review
    sidecars)."""
    picked = [
        *DEMO_DIR.glob("*.conll"),
        *(DEMO_DIR / "model").glob("*.npz"),
        DEMO_DIR / "README.md",
    ]
    return sorted(p.relative_to(DEMO_DIR).as_posix() for p in picked if p.is_file())


def _write_atomically(path: Path, data: bytes) -> None:
    """The project's atomic save (the mode a new file of the user's gets, not a temporary
    file's 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, mode="wb") as f:
        f.write(data)


def _manifest(folder: Path) -> dict[str, str]:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}


def prepare(folder: Path) -> Path:
    """Copy the demo into ``folder`` as the module docstring says and return it. Raises
    :class:`OSError` when the folder cannot be written."""
    folder.mkdir(parents=True, exist_ok=True)
    copied = _manifest(folder)
    changed = False
    for rel in bundled_files():
        target = folder / rel
        data = (DEMO_DIR / rel).read_bytes()
        shipped = hashlib.sha256(data).hexdigest()
        if target.exists() or target.is_symlink():
            if copied.get(rel) == shipped:
                continue  # as shipped
            if copied.get(rel) is None or digest(target) != copied[rel]:
                continue  # the user's own version (or a copy of unknown origin): kept
        _write_atomically(target, data)
        copied[rel] = shipped
        changed = True
    if changed:
        _write_atomically(folder / MANIFEST, json.dumps(copied, indent=1).encode("utf-8"))
    return folder


def user_demo() -> Path | None:
    """The folder of the demo to open: the user's copy (:func:`copy_dir`), else a private
    temporary copy, else None (nothing could be written)."""
    where = copy_dir()
    if where is not None:
        try:
            return prepare(where)
        except OSError:
            pass
    try:
        return prepare(Path(tempfile.mkdtemp(prefix="nerstudio-demo-")))
    except OSError:
        return None
