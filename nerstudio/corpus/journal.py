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
contents are. Journals are found in the folder of the file read: a hard-linked file whose other
name lies in another folder is the one case a reader of that other name cannot see.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import time

from ..errors import FormatError

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

JOURNAL_RE = re.compile(r"^\.(?P<name>.+)\.nerstudio-(?P<pid>\d+)-[0-9a-f]{8}\.journal$")
WAIT_FOR_LIVE = 10.0  # seconds a reader waits for a live save to finish committing
COPY_BLOCK = 1 << 20

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
    """Copy the file ``src`` into ``target`` in place (the same inode: every hard link sees it)."""
    with open(src, "rb") as fin, open(target, "r+b" if os.path.exists(target) else "wb") as fout:
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
            path = os.path.join(
                folder, f".{name}.nerstudio-{os.getpid()}-{secrets.token_hex(4)}.journal"
            )
            fd = os.open(
                path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600
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
        replay(entries, paths)
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


def replay(entries: list[dict], journals: list[str]) -> None:
    """Finish a committed save: rename (or copy) each temporary file still there over its
    target, then remove the journals. Doing it twice is harmless."""
    folders = set()
    for e in entries:
        tmp, target = e["tmp"], e["target"]
        if not os.path.lexists(tmp):
            continue  # done before
        step("copy-start" if e["copy"] else "rename", target)
        if e["copy"]:
            copy_into(tmp, target)
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
        folders.add(os.path.dirname(target))
    for folder in folders:
        fsync_folder(folder)
    for path in journals:
        step("unjournal", path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _parse(data: bytes) -> tuple[list[str], dict | None]:
    """The temporary files a journal reserved and its commit record (``None``: not committed).
    A line cut short by a kill is not a record."""
    reserved, commit = [], None
    for line in data.split(b"\n"):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        if isinstance(obj.get("tmp"), str):
            reserved.append(obj["tmp"])
        if isinstance(obj.get("commit"), list) and isinstance(obj.get("journals"), list):
            commit = obj
            reserved.extend(
                e["tmp"]
                for e in obj["commit"]
                if isinstance(e, dict) and isinstance(e.get("tmp"), str)
            )
    return reserved, commit


def journals_in(folder: str) -> list[str]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if JOURNAL_RE.match(n))


def _what(commit: dict) -> str:
    targets = [e.get("target", "?") for e in commit["commit"]]
    shown = ", ".join(targets[:3]) + (f" and {len(targets) - 3} more" if len(targets) > 3 else "")
    return shown


def _concerns(commit: dict | None, reserved: list[str], path: str) -> bool:
    """Whether a journal's save involves ``path`` (a file: one of its targets, or the same file
    under another name; a folder: a target inside it)."""
    targets = [e.get("target") for e in commit["commit"]] if commit else []
    if os.path.isdir(path):
        return any(isinstance(t, str) and os.path.dirname(t) == path for t in targets) or bool(
            reserved
        )
    return any(isinstance(t, str) and (t == path or _same_file(t, path)) for t in targets)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _handle(journal: str, path: str | None, wait: float) -> list[str]:
    """Finish (committed) or roll back (not committed) ``journal`` if its save is dead; return
    the temporary files a live save reserved. For a journal that concerns ``path`` (see
    :func:`_concerns`), raises FormatError when a dead committed save cannot be finished, or
    a live one does not finish within ``wait`` seconds; other journals are finished when they
    can be and otherwise left alone."""
    try:
        fd = os.open(journal, os.O_RDONLY)  # a lock needs no write access
    except FileNotFoundError:
        return []
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
            reserved, commit = _parse(os.pread(fd, os.fstat(fd).st_size, 0))
            if commit is None or path is None or not _concerns(commit, [], path):
                return reserved  # a live save still writing its files (the old ones are intact), or another's
            if time.monotonic() >= deadline:
                m = JOURNAL_RE.match(os.path.basename(journal))
                pid = m["pid"] if m else "?"
                raise FormatError(
                    path,
                    None,
                    f"a save of {_what(commit)} by process {pid} is still being "
                    "completed: try again in a moment",
                )
            time.sleep(0.05)
        if not os.path.exists(journal):
            return []  # finished by someone else meanwhile
        reserved, commit = _parse(os.pread(fd, os.fstat(fd).st_size, 0))
        if commit is None:  # the save died before it counted: the old files are intact
            for tmp in reserved:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            with contextlib.suppress(OSError):
                os.unlink(journal)
            return []
        try:
            replay(commit["commit"], commit["journals"])
        except OSError as exc:
            if path is None or not _concerns(commit, [], path):
                return reserved  # its files stay protected until someone can finish it
            left = ", ".join(e["tmp"] for e in commit["commit"] if os.path.lexists(e["tmp"]))
            raise FormatError(
                path,
                None,
                f"an interrupted save of {_what(commit)} left its complete new contents "
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
    read. Returns the temporary files that live saves reserved (cleaners must leave them)."""
    path = os.path.abspath(os.fspath(path))
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    protected = []
    for journal in journals_in(folder):
        protected.extend(_handle(journal, path, WAIT_FOR_LIVE if wait is None else wait))
    return protected


def settle_folder(folder: str) -> list[str]:
    """Before saving in ``folder``: finish the interrupted saves found there, wait for none.
    Returns the temporary files that live (or unfinishable) saves reserved."""
    protected = []
    for journal in journals_in(folder):
        protected.extend(_handle(journal, None, 0.0))
    return protected
