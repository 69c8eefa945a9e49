"""The log file: every error nerstudio reports, with its traceback, where the user can find it.

Errors reach the user as one line (the command line's ``nerstudio: error: ...``, a dialog or the
status bar in the application); the details behind them — the traceback, also the one a child
process sent back before it ended — go to a rotating log file in the user's data folder, so
that a bug report can include them without re-running anything with a debug switch:

* Linux and other POSIX systems: ``$XDG_STATE_HOME/nerstudio/logs`` (by default
  ``~/.local/state/nerstudio/logs``);
* macOS: ``~/Library/Logs/nerstudio``;
* Windows: ``%LOCALAPPDATA%\\nerstudio\\Logs``;
* anywhere: the folder named by the environment variable ``NERSTUDIO_LOG_DIR`` (the tests use
  it, so that they never write into the real folder).

The file is ``nerstudio.log``, rotated at 1 MB with three older files kept. ``--debug`` on the
command line (or ``NERSTUDIO_DEBUG=1``) also shows what is logged on stderr. Qt-free: the
application's Help ▸ Open log folder opens :func:`log_dir`.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

LOG_ENV = "NERSTUDIO_LOG_DIR"
LOG_NAME = "nerstudio.log"
MAX_BYTES = 1_000_000
BACKUPS = 3
LOGGER = "nerstudio"
_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"

# until setup() runs (library use, tests), records go nowhere: not to Python's last-resort stderr
logging.getLogger(LOGGER).addHandler(logging.NullHandler())


def log_dir() -> Path:
    """The folder of the log files (see the module docstring); not created here."""
    env = os.environ.get(LOG_ENV)
    if env:
        return Path(env).expanduser()
    home = Path.home()
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        base = os.environ.get("LOCALAPPDATA")
        return (Path(base) if base else home / "AppData" / "Local") / "nerstudio" / "Logs"
    if sys.platform == "darwin":  # pragma: no cover - exercised on macOS only
        return home / "Library" / "Logs" / "nerstudio"
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else home / ".local" / "state"
    return base / "nerstudio" / "logs"


def ensure_log_dir() -> Path:
    """:func:`log_dir`, created if needed (what Help ▸ Open log folder opens)."""
    path = log_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path


def log_path() -> Path:
    """The current log file."""
    return log_dir() / LOG_NAME


def logger(name: str | None = None) -> logging.Logger:
    """The project's logger (or a child of it, ``nerstudio.<name>``)."""
    return logging.getLogger(LOGGER if not name else f"{LOGGER}.{name}")


class _FileHandler(logging.Handler):
    """The log file, rotated at ``max_bytes`` with ``backups`` older files: Python's rotating
    handler, made when the first record comes (its module costs every start some 10 ms, and most
    runs log nothing). Also marks the handler :func:`setup` installed (so that calling it again
    adds no other)."""

    def __init__(self, path: Path, max_bytes: int, backups: int):
        super().__init__()
        self.path, self.max_bytes, self.backups = path, max_bytes, backups
        self._file: logging.Handler | None = None

    def _opened(self) -> logging.Handler:
        if self._file is None:
            import logging.handlers

            self._file = logging.handlers.RotatingFileHandler(
                self.path,
                maxBytes=self.max_bytes,
                backupCount=self.backups,
                encoding="utf-8",
                delay=True,
            )
            self._file.setFormatter(self.formatter)
        return self._file

    def emit(self, record: logging.LogRecord) -> None:
        self._opened().handle(record)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        super().close()


class _DebugHandler(logging.StreamHandler):
    pass


def setup(debug: bool = False, stream=None) -> Path | None:
    """Send the project's log records to the log file (and, with ``debug``, to ``stream``,
    stderr by default). Returns the log file, or ``None`` when its folder cannot be created
    (a read-only home): logging then goes nowhere rather than failing the program. Calling it
    again (another folder, debug switched) replaces the handlers it installed."""
    log = logger()
    log.setLevel(logging.DEBUG)
    log.propagate = False
    reset()
    path = log_path()
    written: Path | None = path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = _FileHandler(path, MAX_BYTES, BACKUPS)
    except OSError:
        written = None
    else:
        fh.setLevel(logging.INFO)
        fh.setFormatter(logging.Formatter(_FORMAT))
        log.addHandler(fh)
    if debug:
        sh = _DebugHandler(stream if stream is not None else sys.stderr)
        sh.setLevel(logging.DEBUG)
        sh.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        log.addHandler(sh)
    return written


def reset() -> None:
    """Remove the handlers :func:`setup` installed (records go nowhere again)."""
    log = logger()
    for h in [h for h in log.handlers if isinstance(h, (_FileHandler, _DebugHandler))]:
        log.removeHandler(h)
        h.close()


def is_debug(flag: bool = False) -> bool:
    """``--debug`` given, or ``NERSTUDIO_DEBUG=1`` in the environment."""
    return bool(flag) or os.environ.get("NERSTUDIO_DEBUG") == "1"


def log_error(message: str, details: str = "", exc_info=None, name: str | None = None) -> None:
    """Record an error: its one-line ``message`` and either a traceback text ``details`` (from
    another process) or ``exc_info`` (an exception of this one)."""
    text = message if not details else f"{message}\n{details.rstrip()}"
    logger(name).error(text, exc_info=exc_info)
