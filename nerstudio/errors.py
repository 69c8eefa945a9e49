"""The errors a user can fix, and the messages raised from more than one place.

Why one module: the command line and the GUI route by exception type. An error of a class
below (:class:`NerstudioError` and its subclasses) is the user's to fix and is shown as one
line (``nerstudio: error: …``, exit status 1, or a message box); anything else is a bug and is
reported as an internal error with its traceback. So a raise site that reports the user's input
or settings raises one of these classes, and a ``ValueError`` left in the package means a
programming error.

The subclasses that stand for bad values also subclass :class:`ValueError`, so code written
against the library before they existed (``except ValueError``) still catches them.

:class:`Msg` is the catalogue of the messages raised from several places or quoted by tests and
docs: one wording, one place to change it.
"""

from __future__ import annotations

import enum
import os


class NerstudioError(Exception):
    """An error caused by the user's input or settings, not by a bug.

    The CLI prints ``str(error)`` on one line and exits with status 1; the GUI shows it in a
    dialog.
    """


class FileError(NerstudioError):
    """A problem with one of the user's files: carries the file and (1-based) line, if known,
    and renders as ``path:line: message``."""

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


class FormatError(FileError):
    """Malformed input file (a corpus, an N-best list, a model, a sidecar)."""


class FileInUse(FileError):
    """The file is open for editing in a nerstudio window of another process (its lock is
    live): writing it would overwrite that window's file under it."""


class ResourceError(FileError):
    """A data file bundled with nerstudio (word clusters, gazetteer lists) does not hold what
    its manifest records: damaged or edited since it was built. Reinstalling restores it; used
    as it is, it would silently change every feature made from it."""


class SettingsError(NerstudioError, ValueError):
    """A bad option or setting: an unknown name (format, scheme, learner, feature set), a
    number out of range, an option that does not apply, an incomplete request."""


class DataError(NerstudioError, ValueError):
    """Input that is well formed but unfit for what was asked: no gold to train on, files whose
    tokens differ, a model that does not fit the data it is applied to."""


class Cancelled(NerstudioError):
    """Raised by long-running work when its cancel flag was set."""


def _choices(value) -> str:
    return value if isinstance(value, str) else ", ".join(map(str, value))


class Msg(enum.Enum):
    """Message templates, filled by calling the member: ``Msg.UNKNOWN.format(what="tag scheme",
    name="iob3", choices=SCHEMES)``; ``choices`` may be any iterable of names."""

    UNKNOWN = "unknown {what} {name!r} (choose from {choices})"
    NO_SUCH_FILE = "no such file"
    CANNOT_READ = "cannot read: {why}"
    TRAINING_NEEDS_GOLD = "training data needs gold (oracle candidates)"
    OPEN_TRAINING_FIRST = "open a training corpus first"
    OTHER_RESOURCE = (
        "the model was trained with other {what} than this nerstudio's{detail}: retrain it"
    )
    FILE_IN_USE = (
        "open for editing in nerstudio by {holder}: save it there, close it first, or write "
        "another file"
    )

    def format(self, **fields) -> str:
        """The message with ``fields`` filled in (``choices`` joined with ", ")."""
        if "choices" in fields:
            fields["choices"] = _choices(fields["choices"])
        return self.value.format(**fields)
