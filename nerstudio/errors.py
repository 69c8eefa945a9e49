"""Errors that reach the user as one clear line (``path:line: message``)."""

from __future__ import annotations

import os


class NerstudioError(Exception):
    """An error caused by the user's input or settings, not by a bug.

    The CLI prints ``str(error)`` on one line and exits non-zero; the GUI shows it in a dialog.
    """


class FormatError(NerstudioError):
    """Malformed input file. Carries the file and (1-based) line it was found at."""

    def __init__(self, path: str | os.PathLike | None, line: int | None, message: str):
        self.path = None if path is None else os.fspath(path)
        self.line = line
        self.message = message
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"


class Cancelled(NerstudioError):
    """Raised by long-running work when its cancel flag was set."""
