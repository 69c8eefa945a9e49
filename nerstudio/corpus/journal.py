"""The save journal: saves of several files (and in-place copies) that end whole or not at all.

A rename replaces one file atomically; a save of several files (a Hugging Face data file and
its labels file, a brat ``.txt`` and ``.ann``, a brat collection) or a copy into a hard-linked
file cannot be done in one step. A :class:`Transaction` makes them so:

1. every new file is written completely, beside its target, under a temporary name, and flushed
   to disk (:mod:`~nerstudio.corpus.atomic` writes them); a *journal* file in the folder,
   ``.NAME.nerstudio-PID-RANDOM.journal``, locked by the saving process while it lives, lists
   each temporary file before it is created (so that nobody cleans it away meanwhile);
2. the **commit record** (every temporary file and its target) is appended to the journal and
   flushed: from now on the new set is complete on disk and is the one that counts;
3. the temporary files are renamed over their targets (or, for a hard-linked target, copied into
   it in place), then the journal is removed.

A failure before step 2 (a full disk, an exception, a kill) leaves the old files untouched
(the temporary files are removed, by the save itself or, after a kill, by the next one). A
failure after it is *replayed*: renaming and copying again is harmless, so whoever finds a
journal whose process is gone finishes the save. Every reader calls :func:`settle` on the file
or folder it reads before reading it, and every save does so in its folder, so a mix of old and
new files is never read: it is completed first, or, when that is impossible (a folder one may
read but not write), refused with an error naming the targets and where their complete new
contents are. Journals are found in the folder of the file read (and, for a symbolic link, of
the file it points to): a hard-linked file whose other name lies in another folder is the one
case a reader of that other name cannot see.

A folder may come from someone else, so a journal found in it is checked before it is acted on
(:func:`_read_journal`): it must be a regular file (a symbolic link is not followed, a named pipe
not waited on), and its commit record must name, in this folder, only targets and the temporary
files nerstudio makes for them (:func:`~nerstudio.corpus.fsnames.temp_of`); what it says about
other folders is left to their own journals, and finishing it removes only itself. A journal
that fails the checks may be a forgery or a damaged record of a real save: nothing it names is
touched, and reading a file of its folder is refused with a message naming it (a save there
goes ahead: it touches only its own files).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import time
from dataclasses import dataclass, field

from ..errors import FormatError
from .fsnames import (
    JOURNAL_RE,
    NotRegular,
    is_bare,
    journal_name,
    nofollow_opener,
    open_regular,
    temp_of,
)

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["JOURNAL_RE", "Transaction", "settle", "settle_folder"]

WAIT_FOR_LIVE = 10.0  # seconds a reader waits for a live save to finish committing
COPY_BLOCK = 1 << 20
MAX_JOURNAL_BYTES = 256 << 20  # a brat collection of 100,000 files journals about 40 MB

#: for tests: a callable ``(step, path)`` called before every step of a save ("flush" of a new
#: file, "journal" record, "rename", "copy-start", each "copy" block, "unjournal"), which may
#: raise to inject a fault there (a full disk, a kill)
fault_hook = None


def step(name: str, path: str) -> None:
    """Announce a step of a save to :data:`fault_hook`."""
    if fault_hook is not None:
        fault_hook(name, path)


def fsync_folder(folder: str) -> None:
    """Make renames in ``folder`` durable (POSIX); harmless where folders cannot be opened."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# without file locks: a journal untouched for a day is a dead save's
UNLOCKED_DEAD_AFTER = 24 * 3600.0


def try_lock(fd: int) -> bool:
    """Take the exclusive lock of ``fd`` without waiting. Where locks do not exist (Windows),
    only a journal untouched for :data:`UNLOCKED_DEAD_AFTER` seconds counts as a dead save's."""
    if fcntl is None:  # pragma: no cover - Windows
        return time.time() - os.fstat(fd).st_mtime > UNLOCKED_DEAD_AFTER
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def copy_into(src: str, target: str) -> None:
    """Copy the file ``src`` into ``target`` in place (the same inode: every hard link sees it).
    Both must be regular files; neither a symbolic link nor a named pipe is opened."""
    exists = os.path.lexists(target)
    with (
        open(src, "rb", opener=nofollow_opener) as fin,
        open(target, "r+b" if exists else "wb", opener=nofollow_opener) as fout,
    ):
        while True:
            block = fin.read(COPY_BLOCK)
            if not block:
                break
            step("copy", target)
            fout.write(block)
        fout.truncate()
        fout.flush()
        os.fsync(fout.fileno())


class Transaction:
    """Files replaced together; see the module docstring. ``committed`` tells, after a failed
    :meth:`commit`, whether the new set already counted (it is then finished by replay)."""

    def __init__(self, journal: bool):
        self.members: list[tuple[str, str]] = []  # (temporary file, target)
        self.journal = journal  # multi-file: a journal from the first file on
        self.committed = False
        self._journals: dict[str, tuple[str, int]] = {}  # folder -> (journal path, locked fd)

    def _journal_of(self, folder: str, name: str) -> int:
        if folder not in self._journals:
            path = os.path.join(folder, journal_name(name))
            fd = os.open(
                path,
                os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                0o600,
            )
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)  # held until the transaction ends: it is alive
            self._journals[folder] = (path, fd)
        return self._journals[folder][1]

    def reserve(self, tmp: str, target: str) -> None:
        """Record ``tmp`` (about to be created for ``target``) in its folder's journal."""
        if self.journal:
            fd = self._journal_of(os.path.dirname(tmp), os.path.basename(target))
            os.write(fd, (json.dumps({"tmp": tmp, "target": target}) + "\n").encode("utf-8"))
        self.members.append((tmp, target))

    def commit(self, copy: dict[str, bool]) -> None:
        """Replace every target by its temporary file (``copy[target]``: copy in place instead)."""
        entries = [{"tmp": t, "target": g, "copy": bool(copy.get(g))} for t, g in self.members]
        if not self.journal and not any(e["copy"] for e in entries):
            for tmp, target in self.members:  # one file renamed: atomic by itself
                step("rename", target)
                os.replace(tmp, target)
                self.committed = True
                fsync_folder(os.path.dirname(target))
            self.close()
            return
        for tmp, target in self.members:
            if not self.journal:  # a journal made now, for a copy: it names the file it needs
                fd = self._journal_of(os.path.dirname(target), os.path.basename(target))
                os.write(fd, (json.dumps({"tmp": tmp, "target": target}) + "\n").encode("utf-8"))
            self._journal_of(os.path.dirname(target), os.path.basename(target))
        paths = [p for p, _ in self._journals.values()]
        record = (json.dumps({"commit": entries, "journals": paths}) + "\n").encode("utf-8")
        for path, fd in self._journals.values():
            step("journal", path)
            if os.write(fd, record) != len(record):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            os.fsync(fd)
            fsync_folder(os.path.dirname(path))
        # committed: from here on the new set is what counts; a failure leaves it to replay
        self.committed = True
        folders: dict[str, list[Entry]] = {}
        for tmp, target in self.members:
            folders.setdefault(os.path.dirname(target), []).append(
                Entry(os.path.basename(tmp), os.path.basename(target), bool(copy.get(target)))
            )
        for folder, local in folders.items():
            replay(folder, local)
        for path in paths:
            step("unjournal", path)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        self.close()

    def abort(self) -> None:
        """Remove the temporary files and the journals: the targets were never touched."""
        for tmp, _ in self.members:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for path, _ in self._journals.values():
            with contextlib.suppress(OSError):
                os.unlink(path)
        self.close()

    def close(self) -> None:
        for _, fd in self._journals.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._journals = {}


@dataclass(frozen=True)
class Entry:
    """One file of a committed save, in the journal's folder: bare names only."""

    tmp: str
    target: str
    copy: bool


@dataclass
class Record:
    """What a journal found in a folder says, once checked (see :func:`_read_journal`)."""

    reserved: list[str] = field(default_factory=list)  # this folder's temporary files (names)
    committed: bool = False
    local: list[Entry] = field(default_factory=list)  # the commit's files in this folder
    targets: list[str] = field(default_factory=list)  # every target, for messages
    problem: str = ""  # why it cannot be trusted ("": it can)


class Untrusted(Exception):
    """A journal nerstudio cannot act on (see the module docstring); the message says why."""


def replay(folder: str, entries: list[Entry]) -> None:
    """Finish a committed save in ``folder``: rename (or copy) each temporary file still there
    over its target. Doing it twice is harmless. A temporary file that is not a regular file is
    not nerstudio's: :class:`Untrusted`."""
    done = False
    for e in entries:
        tmp, target = os.path.join(folder, e.tmp), os.path.join(folder, e.target)
        try:
            st = os.lstat(tmp)
        except FileNotFoundError:
            continue  # done before
        if not stat.S_ISREG(st.st_mode):
            raise Untrusted(f"{tmp} is not a file nerstudio wrote")
        step("copy-start" if e.copy else "rename", target)
        if e.copy:
            copy_into(tmp, target)
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
        done = True
    if done:
        fsync_folder(folder)


def _same_folder(a: str, folder: str) -> bool:
    if a == folder:
        return True
    try:
        return os.path.samefile(a, folder)
    except (OSError, ValueError):
        return False


def _path_in(value: object, folder: str) -> tuple[str, bool] | None:
    """A path a journal records: its name and whether it lies in ``folder`` (None: not a path
    nerstudio writes, which is absolute, normalised, and names a file)."""
    if not isinstance(value, str) or not os.path.isabs(value) or "\0" in value:
        return None
    if os.path.normpath(value) != value or ".." in value.split(os.sep):
        return None
    name = os.path.basename(value)
    if not is_bare(name):
        return None
    return name, _same_folder(os.path.dirname(value), folder)


def _parse(data: bytes, folder: str) -> Record:
    """Check a journal of ``folder`` (see :class:`Record`). A line cut short by a kill is not
    a record; a commit record is trusted only whole."""
    rec = Record()
    commits = []
    for line in data.split(b"\n"):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        if "commit" in obj:
            commits.append(obj)
            continue
        tmp = _path_in(obj.get("tmp"), folder)
        target = _path_in(obj.get("target"), folder)
        if tmp and tmp[1] and (target is None or temp_of(tmp[0], target[0])):
            rec.reserved.append(tmp[0])
    if not commits:
        return rec
    rec.committed = True
    if len(commits) > 1:
        rec.problem = "it holds more than one commit record"
        return rec
    obj = commits[0]
    if set(obj) != {"commit", "journals"} or not isinstance(obj["commit"], list):
        rec.problem = "its commit record is not one nerstudio writes"
        return rec
    journals = obj["journals"]
    if not isinstance(journals, list) or not all(_path_in(j, folder) for j in journals):
        rec.problem = "its list of journals is not one nerstudio writes"
        return rec
    for e in obj["commit"]:
        if not isinstance(e, dict) or set(e) != {"tmp", "target", "copy"}:
            rec.problem = "an entry of its commit record is not one nerstudio writes"
            return rec
        tmp, target = _path_in(e["tmp"], folder), _path_in(e["target"], folder)
        if (
            tmp is None
            or target is None
            or not isinstance(e["copy"], bool)
            or os.path.dirname(e["tmp"]) != os.path.dirname(e["target"])
            or not temp_of(tmp[0], target[0])
        ):
            rec.problem = f"its entry for {e['target']!r} is not one nerstudio writes"
            return rec
        rec.targets.append(e["target"])
        if target[1]:  # another folder's files are finished by that folder's own journal
            rec.local.append(Entry(tmp[0], target[0], e["copy"]))
            rec.reserved.append(tmp[0])
    if not rec.local:
        rec.problem = "its commit record names no file of this folder"
    return rec


def _read_journal(fd: int, folder: str) -> Record:
    size = os.fstat(fd).st_size
    if size > MAX_JOURNAL_BYTES:
        return Record(committed=True, problem=f"it is too large ({size} bytes) to be one")
    return _parse(os.pread(fd, size, 0), folder)


def journals_in(folder: str) -> list[str]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if JOURNAL_RE.match(n))


def _what(rec: Record) -> str:
    targets = rec.targets
    shown = ", ".join(targets[:3]) + (f" and {len(targets) - 3} more" if len(targets) > 3 else "")
    return shown


def _concerns(rec: Record, folder: str, path: str) -> bool:
    """Whether a journal's save involves ``path`` (a file: one of its targets, or the same file
    under another name; a folder: a file inside it)."""
    if os.path.isdir(path):
        return _same_folder(path, folder) and bool(rec.local or rec.reserved)
    return any(
        os.path.join(folder, e.target) == path or _same_file(os.path.join(folder, e.target), path)
        for e in rec.local
    )


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _untrusted(journal: str, why: str) -> str:
    return (
        f"the save journal {journal} beside it cannot be trusted ({why}): nerstudio touches "
        "nothing it names and does not read this folder while it is there; if no save of "
        "yours was interrupted, remove it"
    )


def _handle(journal: str, path: str | None, wait: float) -> list[str]:
    """Finish (committed) or roll back (not committed) ``journal`` if its save is dead; return
    the names of the temporary files a live save reserved. For a journal that concerns ``path``
    (see :func:`_concerns`), raises FormatError when a dead committed save cannot be finished,
    or a live one does not finish within ``wait`` seconds; a journal that cannot be trusted
    (see the module docstring) raises it for any ``path``; other journals are finished when
    they can be and otherwise left alone."""
    folder = os.path.dirname(journal)
    try:
        fd = open_regular(journal)  # a lock needs no write access
    except FileNotFoundError:
        return []
    except NotRegular as exc:
        if path is None:
            return []
        raise FormatError(path, None, _untrusted(journal, f"it is {exc.kind}")) from None
    except OSError as exc:
        if path is None:
            return []
        raise FormatError(
            path,
            None,
            f"cannot read the save journal {journal} beside it "
            f"({exc.strerror or exc}): a save may have been interrupted",
        ) from None
    try:
        deadline = time.monotonic() + wait
        while not try_lock(fd):
            rec = _read_journal(fd, folder)
            if rec.problem:
                break  # a live save never writes such a record: judged below
            if not rec.committed or path is None or not _concerns(rec, folder, path):
                return rec.reserved  # a live save still writing its files, or another's
            if time.monotonic() >= deadline:
                m = JOURNAL_RE.match(os.path.basename(journal))
                pid = m["pid"] if m else "?"
                raise FormatError(
                    path,
                    None,
                    f"a save of {_what(rec)} by process {pid} is still being "
                    "completed: try again in a moment",
                )
            time.sleep(0.05)
        if not os.path.exists(journal):
            return []  # finished by someone else meanwhile
        rec = _read_journal(fd, folder)
        if rec.problem:
            if path is None:
                return []
            raise FormatError(path, None, _untrusted(journal, rec.problem))
        if not rec.committed:  # the save died before it counted: the old files are intact
            for tmp in rec.reserved:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, tmp))
            with contextlib.suppress(OSError):
                os.unlink(journal)
            return []
        try:
            replay(folder, rec.local)
            step("unjournal", journal)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(journal)
        except Untrusted as exc:
            if path is None:
                return rec.reserved
            raise FormatError(path, None, _untrusted(journal, str(exc))) from None
        except OSError as exc:
            if path is None or not _concerns(rec, folder, path):
                return rec.reserved  # its files stay protected until someone can finish it
            left = ", ".join(
                os.path.join(folder, e.tmp)
                for e in rec.local
                if os.path.lexists(os.path.join(folder, e.tmp))
            )
            raise FormatError(
                path,
                None,
                f"an interrupted save of {_what(rec)} left its complete new contents "
                f"in {left} and nerstudio cannot finish it ({exc.strerror or exc}): the "
                "files may mix old and new contents; rename (or copy) those files over "
                f"their targets, then remove {journal}",
            ) from None
        return []
    finally:
        os.close(fd)


def settle(path: str | os.PathLike[str], wait: float | None = None) -> list[str]:
    """Before reading ``path`` (a file or a folder): finish or roll back the interrupted saves
    of its folder (see the module docstring); a mix of old and new files is never left to be
    read. Returns the names of the temporary files that live saves reserved (cleaners must
    leave them)."""
    path = os.path.abspath(os.fspath(path))
    if os.path.isdir(path):
        folders = [path]
    else:  # a symbolic link's save journals the file it points to, in that file's folder
        folders = list(dict.fromkeys([os.path.dirname(path), os.path.dirname(_real(path))]))
    protected = []
    for folder in folders:
        for journal in journals_in(folder):
            protected.extend(_handle(journal, path, WAIT_FOR_LIVE if wait is None else wait))
    return protected


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def settle_folder(folder: str) -> list[str]:
    """Before saving in ``folder``: finish the interrupted saves found there, wait for none.
    Returns the names of the temporary files that live (or unfinishable) saves reserved."""
    protected = []
    for journal in journals_in(folder):
        protected.extend(_handle(journal, None, 0.0))
    return protected
