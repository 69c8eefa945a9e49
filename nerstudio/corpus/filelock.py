"""One writer per file: an advisory lock file beside the open corpus, and who holds it.

A corpus ``DIR/NAME`` (a file, or a folder of brat pairs) is held by the instance that wrote
``DIR/.~lock.NAME#`` (LibreOffice's naming: hidden, so no folder reader takes it for data). The
lock holds JSON naming its holder (:class:`Instance`: process id, host, user, when it started and
an id of its own), and is created whole or not at all (written to a temporary file, then
hard-linked into place, which fails when a lock is there already).

A lock whose holder is gone is *stale* and is taken over, as LibreOffice and Qt's ``QLockFile``
do: same host and the process is not running (or runs, but started at another time: its id was
reused), or, for a holder in this very process (two windows of one session), the window is
closed. A lock of another host, or one nobody can read that is younger than
:data:`UNREADABLE_STALE_S`, is respected. A holder that is killed (``kill -9``) leaves its lock
behind: the next instance finds its process dead and takes the lock over.

Nothing here is enforced by the system: every nerstudio instance asks before it writes, and a
second instance opens the corpus read-only (see :mod:`nerstudio.app.saving`). The command line
and the API ask too: every corpus write (:func:`nerstudio.corpus.writing.write_corpus`, the
streamed ``convert``) calls :func:`refuse_if_held` first, so ``nerstudio convert x.conll
open.conll`` cannot overwrite a corpus a window is editing. It lives in the corpus layer for that
reason: the writers are here, the application above.
"""

from __future__ import annotations

import atexit
import getpass
import json
import os
import secrets
import socket
import time
import weakref
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import StrPath

LOCK_FORMAT = "nerstudio-lock"
UNREADABLE_STALE_S = 30.0  # an unreadable lock (a crash while writing it?) older than this is stale

_LIVE: set[str] = set()  # instance ids of this process that are still open
_HELD: weakref.WeakSet[FileLock] = weakref.WeakSet()  # released when the interpreter exits normally


def _proc_start(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, Linux), "" when unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name for this uid (containers)
        return str(os.getuid()) if hasattr(os, "getuid") else ""


@dataclass(frozen=True)
class Instance:
    """One editing session: a process, and an id for each window of it."""

    pid: int
    host: str
    user: str
    started: float  # time.time() when the instance began
    id: str
    proc_start: str = ""  # the process's start time as the system counts it (pid reuse)

    @classmethod
    def new(cls) -> Instance:
        """A new live instance of this process."""
        inst = cls(
            os.getpid(),
            socket.gethostname(),
            _user(),
            time.time(),
            secrets.token_hex(4),
            _proc_start(os.getpid()),
        )
        _LIVE.add(inst.id)
        return inst

    @classmethod
    def from_dict(cls, obj: Any) -> Instance | None:
        try:
            return cls(
                int(obj["pid"]),
                str(obj["host"]),
                str(obj.get("user", "")),
                float(obj.get("started", 0)),
                str(obj.get("id", "")),
                str(obj.get("proc_start", "")),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def tag(self) -> str:
        """Short and unique, for file names: ``PID-ID``."""
        return f"{self.pid}-{self.id}"

    def is_me(self, other: Instance | None) -> bool:
        return (
            other is not None
            and other.id == self.id
            and other.pid == self.pid
            and other.host == self.host
        )

    def alive(self) -> bool:
        """Whether this instance may still be running. Another host's: assumed so (it cannot be
        asked)."""
        if self.host != socket.gethostname():
            return True
        if self.pid == os.getpid() and (
            not self.proc_start or self.proc_start == _proc_start(self.pid)
        ):
            return self.id in _LIVE
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # another user's process: it exists
        except OSError:
            return False
        now = _proc_start(self.pid)
        return not (self.proc_start and now and now != self.proc_start)

    def close(self) -> None:
        """The instance ends (its window closed)."""
        _LIVE.discard(self.id)

    # what a killed process leaves behind: its files stay, the instance is gone (tests use it to
    # simulate a crash inside one process)
    abandon = close

    def describe(self) -> str:
        """ "alice@host (process 1234, since 14:05)"."""
        since = time.strftime("%H:%M", time.localtime(self.started)) if self.started else "?"
        who = f"{self.user}@{self.host}" if self.user else self.host
        return f"{who} (process {self.pid}, since {since})"


def lock_path(path: str) -> str:
    """The lock file of corpus ``path`` (a file or a folder): ``.~lock.NAME#`` beside it."""
    ap = os.path.abspath(path).rstrip(os.sep) or os.sep
    return os.path.join(os.path.dirname(ap), f".~lock.{os.path.basename(ap)}#")


def read_holder(lock: str) -> Instance | None:
    """Who holds ``lock`` (None: no lock, or it cannot be read)."""
    try:
        with open(lock, encoding="utf-8") as f:
            obj = json.load(f)
    except (OSError, ValueError, UnicodeError):
        return None
    if not isinstance(obj, dict) or obj.get("format") != LOCK_FORMAT:
        return None
    return Instance.from_dict(obj.get("holder") or {})


def _stale(lock: str) -> bool:
    holder = read_holder(lock)
    if holder is not None:
        return not holder.alive()
    try:
        return time.time() - os.path.getmtime(lock) > UNREADABLE_STALE_S
    except OSError:
        return True  # gone meanwhile


class FileLock:
    """The lock of one corpus for one :class:`Instance`. :meth:`acquire` returns whether it is
    held; :attr:`holder` then names whoever else holds it (None when it could not be read or the
    folder cannot hold a lock, see :attr:`error`)."""

    def __init__(self, path: str, instance: Instance):
        self.path = os.path.abspath(path)
        self.file = lock_path(path)
        self.instance = instance
        self.held = False
        self.holder: Instance | None = None
        self.error = ""  # why no lock could be written (a read-only folder)

    def acquire(self) -> bool:
        if self.held and self.instance.is_me(read_holder(self.file)):
            return True
        self.held, self.holder, self.error = False, None, ""
        for _attempt in range(3):
            try:
                self._create()
                self.held = True
                _HELD.add(self)
                return True
            except FileExistsError:
                pass
            except OSError as exc:
                self.error = f"{os.path.dirname(self.file)}: {exc.strerror or exc}"
                return False
            holder = read_holder(self.file)
            if self.instance.is_me(holder):
                self.held = True
                _HELD.add(self)
                return True
            if not _stale(self.file):
                self.holder = holder
                return False
            self._remove_stale()
        self.holder = read_holder(self.file)
        return False

    def _create(self) -> None:
        """Create the lock with its content in one step (link fails if it exists)."""
        body = json.dumps(
            {
                "format": LOCK_FORMAT,
                "corpus": self.path,
                "holder": self.instance.to_dict(),
                "locked": time.time(),
            }
        )
        tmp = f"{self.file}.{self.instance.tag}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(body)
        try:
            try:
                os.link(tmp, self.file)
            except (OSError, NotImplementedError) as exc:
                if isinstance(exc, FileExistsError):
                    raise
                # no hard links here
                fd = os.open(self.file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(body)
        finally:
            try:
                os.remove(tmp)
            except OSError:
                pass

    def _remove_stale(self) -> None:
        """Move the stale lock aside, then delete it: of two instances taking it over at once,
        one rename succeeds and the other finds the new lock on its next attempt."""
        aside = f"{self.file}.stale-{self.instance.tag}"
        try:
            os.rename(self.file, aside)
        except OSError:
            return
        try:
            if not _stale(aside):  # another instance took the lock over just before: put it back
                os.link(aside, self.file)
        except OSError:
            pass
        try:
            os.remove(aside)
        except OSError:
            pass

    def release(self) -> None:
        """Remove the lock if it is still this instance's."""
        if self.held and self.instance.is_me(read_holder(self.file)):
            try:
                os.remove(self.file)
            except OSError:
                pass
        self.held = False
        _HELD.discard(self)

    def describe_holder(self) -> str:
        if self.holder is not None:
            return self.holder.describe()
        return (
            "another program (its lock file cannot be read)"
            if os.path.exists(self.file)
            else "nobody"
        )


@atexit.register
def _release_all() -> None:
    for lock in list(_HELD):
        lock.release()


def held_elsewhere(path: StrPath) -> Instance | None:
    """The live instance of *another process* that holds the corpus at ``path`` (None: nobody,
    a stale lock, or this process: its windows ask each other through :class:`FileLock`)."""
    holder = read_holder(lock_path(os.fspath(path)))
    if holder is None or not holder.alive():
        return None
    if holder.host == socket.gethostname() and holder.pid == os.getpid():
        return None
    return holder


def refuse_if_held(path: StrPath) -> None:
    """Raise a one-line error naming ``path`` when a nerstudio window of another process is
    editing it (its lock is live): writing it would overwrite that window's file under it."""
    holder = held_elsewhere(path)
    if holder is not None:
        from ..errors import FileInUse, Msg

        raise FileInUse(os.fspath(path), None, Msg.FILE_IN_USE.format(holder=holder.describe()))
