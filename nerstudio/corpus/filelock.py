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

A lock covers the file, not one of its names: it records the file's device and inode, and the
locks beside every name that is asked about (a symbolic link: beside the file it points to as
well) are compared by them, so a window's lock taken through one name is seen through a symbolic
link or a second hard link to the same file in either folder. A hard link in a third folder is
not seen (nothing short of a search of the disk would find it).

A lock file may come from someone else (a folder copied with it): it is read only when it is a
regular file (a symbolic link is not followed, a named pipe not waited on), and only if every
field is valid (:func:`parse_lock`: a process id in range, a finite start time, printable names);
anything else counts as a lock nobody can read.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import re
import stat
import time
import weakref
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .fsnames import lock_name, open_regular

if TYPE_CHECKING:
    from .model import StrPath

LOCK_FORMAT = "nerstudio-lock"
UNREADABLE_STALE_S = 30.0  # an unreadable lock (a crash while writing it?) older than this is stale
MAX_LOCK_BYTES = 64 * 1024  # a lock nerstudio writes is a few hundred bytes
PID_MAX = 2**31 - 1  # process ids are positive 32-bit numbers
LAST_TIME = 253402300799.0  # 9999-12-31: no lock was written later
_ID_RE = re.compile(r"[0-9a-f]{0,64}")  # "": written before instances had ids
_PROC_START_RE = re.compile(r"[0-9]{0,32}")

_LIVE: set[str] = set()  # instance ids of this process that are still open
_HELD: weakref.WeakSet[FileLock] = weakref.WeakSet()  # released when the interpreter exits normally


def _proc_start(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, Linux), "" when unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _host() -> str:
    """This machine's name (:mod:`socket`, with its ``selectors``, loads when a lock is first
    taken or read: not with every reader of a corpus file)."""
    import socket

    return socket.gethostname()


def _user() -> str:
    import getpass

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
        import secrets

        inst = cls(
            os.getpid(),
            _host(),
            _user(),
            time.time(),
            secrets.token_hex(4),
            _proc_start(os.getpid()),
        )
        _LIVE.add(inst.id)
        return inst

    @classmethod
    def from_dict(cls, obj: Any) -> Instance | None:
        """The instance a lock or a recovery file records, or None unless every field is valid:
        a process id in 1..2**31-1, a printable host (and user), a finite start time between
        1970 and 9999, an id of hex digits, the system's start time as digits."""
        if not isinstance(obj, dict):
            return None
        pid, host = obj.get("pid"), obj.get("host")
        user, started = obj.get("user", ""), obj.get("started", 0)
        iid, proc_start = obj.get("id", ""), obj.get("proc_start", "")
        if not (isinstance(pid, int) and not isinstance(pid, bool) and 1 <= pid <= PID_MAX):
            return None
        if not (isinstance(host, str) and host and _printable(host, 255)):
            return None
        if not (isinstance(user, str) and _printable(user, 255) and _is_time(started)):
            return None
        if not (isinstance(iid, str) and _ID_RE.fullmatch(iid)):
            return None
        if not (isinstance(proc_start, str) and _PROC_START_RE.fullmatch(proc_start)):
            return None
        return cls(pid, host, user, float(started), iid, proc_start)

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
        if self.host != _host():
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


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_time(x: object) -> bool:
    return (
        isinstance(x, (int, float))
        and not isinstance(x, bool)
        and math.isfinite(x)
        and 0 <= x <= LAST_TIME
    )


def _printable(x: object, most: int) -> bool:
    return isinstance(x, str) and len(x) <= most and x.isprintable()


def lock_path(path: str) -> str:
    """The lock file of corpus ``path`` (a file or a folder): ``.~lock.NAME#`` beside it."""
    ap = os.path.abspath(path).rstrip(os.sep) or os.sep
    return os.path.join(os.path.dirname(ap), lock_name(os.path.basename(ap)))


FileId = tuple[int, int]  # (device, inode)


@dataclass(frozen=True)
class LockInfo:
    """What a valid lock file says: who holds it, which file (None: written before locks
    recorded it), when it was taken."""

    holder: Instance
    file: FileId | None
    locked: float


def parse_lock(obj: Any) -> LockInfo | None:
    """A lock's JSON, checked field by field (None: not a valid lock). Fields it does not know
    (written by a later version) are left alone."""
    if not isinstance(obj, dict) or obj.get("format") != LOCK_FORMAT:
        return None
    holder = Instance.from_dict(obj.get("holder"))
    corpus, locked, file = obj.get("corpus", ""), obj.get("locked", 0), obj.get("file")
    if holder is None or not isinstance(corpus, str) or not _is_time(locked):
        return None
    if file is not None and not (
        isinstance(file, list)
        and len(file) == 2
        and all(_is_int(n) and 0 <= n < 2**64 for n in file)
    ):
        return None
    return LockInfo(holder, None if file is None else (file[0], file[1]), float(locked))


def read_lock(lock: str) -> LockInfo | None:
    """The valid lock file ``lock`` (None: none, or it cannot be read, is not a regular file,
    or is not valid)."""
    try:
        fd = open_regular(lock)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_LOCK_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_LOCK_BYTES:
        return None
    try:
        obj = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeError, RecursionError):
        return None
    return parse_lock(obj)


def read_holder(lock: str) -> Instance | None:
    """Who holds ``lock`` (None: no lock, or it cannot be read)."""
    info = read_lock(lock)
    return None if info is None else info.holder


def file_id(path: str) -> FileId | None:
    """The device and inode of ``path`` (a symbolic link: of the file it points to)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _is_lock_name(name: str) -> bool:
    return name.startswith(".~lock.") and name.endswith("#")


def other_locks(path: str, own: str) -> list[tuple[str, LockInfo]]:
    """The valid locks, other than ``own``, of the file ``path`` under any of its names in the
    folder of ``path`` and of the file it points to (see the module docstring)."""
    fid = file_id(path)
    if fid is None:
        return []
    ap = os.path.abspath(path).rstrip(os.sep) or os.sep
    try:
        real = os.path.realpath(ap)
    except (OSError, ValueError):
        real = ap
    found = []
    for folder in dict.fromkeys([os.path.dirname(ap), os.path.dirname(real)]):
        try:
            names = sorted(n for n in os.listdir(folder) if _is_lock_name(n))
        except OSError:
            continue
        for name in names:
            lock = os.path.join(folder, name)
            if lock == own:
                continue
            info = read_lock(lock)
            if info is not None and info.file == fid:
                found.append((lock, info))
    return found


def _stale(lock: str) -> bool:
    holder = read_holder(lock)
    if holder is not None:
        return not holder.alive()
    try:
        st = os.lstat(lock)
    except OSError:
        return True  # gone meanwhile
    if not stat.S_ISREG(st.st_mode):
        return True  # not a lock anybody wrote: moved aside like a stale one
    return time.time() - st.st_mtime > UNREADABLE_STALE_S


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
                return self._hold()
            except FileExistsError:
                pass
            except OSError as exc:
                self.error = f"{os.path.dirname(self.file)}: {exc.strerror or exc}"
                return False
            holder = read_holder(self.file)
            if self.instance.is_me(holder):
                return self._hold()
            if not _stale(self.file):
                self.holder = holder
                return False
            self._remove_stale()
        self.holder = read_holder(self.file)
        return False

    def _hold(self) -> bool:
        """The lock file is this instance's: held, unless a live instance locked the same file
        under another name first (then this lock is given back)."""
        mine = read_lock(self.file)
        for _, info in other_locks(self.path, self.file):
            other = info.holder
            if self.instance.is_me(other) or not other.alive():
                continue
            if mine is None or (info.locked, other.id) <= (mine.locked, self.instance.id):
                self.held = True  # so that release removes it
                self.release()
                self.holder = other
                return False
        self.held = True
        _HELD.add(self)
        return True

    def _create(self) -> None:
        """Create the lock with its content in one step (link fails if it exists)."""
        fid = file_id(self.path)
        body = json.dumps(
            {
                "format": LOCK_FORMAT,
                "corpus": self.path,
                "holder": self.instance.to_dict(),
                "locked": time.time(),
                "file": None if fid is None else list(fid),
            }
        )
        tmp = f"{self.file}.{self.instance.tag}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)  # this instance's own, left by an earlier attempt
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(tmp, flags, 0o644), "w", encoding="utf-8") as f:
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
            if os.path.lexists(self.file)
            else "nobody"
        )


@atexit.register
def _release_all() -> None:
    for lock in list(_HELD):
        lock.release()


def held_elsewhere(path: StrPath) -> Instance | None:
    """The live instance of *another process* that holds the corpus at ``path`` under this or
    any other name (None: nobody, a stale lock, or this process: its windows ask each other
    through :class:`FileLock`)."""
    path = os.fspath(path)
    own = lock_path(path)
    holders = [read_holder(own)] + [info.holder for _, info in other_locks(path, own)]
    for holder in holders:
        if holder is None or not holder.alive():
            continue
        if holder.host == _host() and holder.pid == os.getpid():
            continue
        return holder
    return None


def refuse_if_held(path: StrPath) -> None:
    """Raise a one-line error naming ``path`` when a nerstudio window of another process is
    editing it (its lock is live): writing it would overwrite that window's file under it."""
    holder = held_elsewhere(path)
    if holder is not None:
        from ..errors import FileInUse, Msg

        raise FileInUse(os.fspath(path), None, Msg.FILE_IN_USE.format(holder=holder.describe()))
