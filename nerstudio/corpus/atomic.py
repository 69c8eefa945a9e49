"""Saves that never lose the file and respect it: :func:`atomic_open`.

Every file nerstudio writes (corpora, models, N-best lists, reports, recovery files) goes through
:func:`atomic_open`: the data goes to a temporary file next to the target, which replaces the
target only once it is complete and flushed to disk, so a crash or a full disk never leaves a
half-written file behind. Saving also respects the file it replaces:

* a **symbolic link** is written through: its target receives the new contents and the link
  stays a link (replacing the link by a regular file would silently fork the data);
* the target's **permission bits** (and, where allowed, its owner and group) are kept: a 600
  file stays 600; a new file gets the usual ``0666 & ~umask``;
* its **extended attributes** are kept where the system has them (Linux), POSIX ACLs included
  (``system.posix_acl_access``): a file shared with a colleague through an ACL stays shared;
* a **hard-linked** file (several names for one file) stays one file: replacing it would leave
  the other names with the old contents, so once the new contents are complete and on disk
  beside it, they are copied into the file in place under a save journal
  (:mod:`~nerstudio.corpus.journal`): should the copy be cut short, the next reader or save in
  the folder finishes it (or refuses to read the file, naming where its new contents are), so a
  mix of old and new is never read;
* files saved **together** (:func:`atomic_files`: a Hugging Face data file and its labels file,
  a brat pair, a brat collection) are replaced all or none, through the same journal;
* a target that is **protected** is refused, never replaced: a read-only file (no write
  permission bit; ``chmod 444``), and anything but a regular file (a named pipe, a device);
* every error names the **target** the user asked for (never a temporary file): a folder that
  cannot be written, a full disk (``No space left on device``), a character the encoding cannot
  hold; the target is then unchanged;
* **temporary files of earlier saves that were killed** are removed the next time a file is saved
  in the same folder. They are recognised by their name, ``.NAME.nerstudio-PID-RANDOM.tmp``, and
  a save holds an exclusive lock on its temporary file while it writes (for a name too long to
  hold all that, ``NAME`` is cut short and ends with a hash of the whole name, so that every
  name the system accepts can be saved); a temporary file is stale
  when nobody holds that lock any more (locks die with their process) and it has not been
  touched for :data:`STALE_AFTER` seconds. A concurrent save that is still running holds its
  lock, so its file is never removed. Where file locks are not available (Windows), only files
  untouched for :data:`STALE_AFTER_UNLOCKED` seconds are removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import time
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from ..errors import FormatError
from . import journal
from .fsnames import TEMP_RE, open_regular, temp_name

__all__ = ["TEMP_RE", "AtomicFiles", "atomic_files", "atomic_open", "temp_name"]

if TYPE_CHECKING:
    from .model import StrPath

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

STALE_AFTER = 60.0  # seconds without a write before an unlocked temporary file counts as stale
STALE_AFTER_UNLOCKED = 24 * 3600.0  # without file locks: only files untouched for a day
LEGACY_STALE_AFTER = 24 * 3600.0  # ``.NAME.XXXXXXXX.tmp`` files of older nerstudio versions

_LEGACY_RE = r"^\.{name}\.[a-z0-9_]{{8}}\.tmp$"  # what tempfile.mkstemp made before


def resolve_target(path: StrPath) -> str:
    """The file a save of ``path`` must replace: ``path`` itself, or the file its chain of
    symbolic links ends at (which need not exist yet)."""
    full = os.path.abspath(os.fspath(path))
    if os.path.islink(full):
        return os.path.realpath(full)
    return full


def _unlocked(path: str) -> bool:
    """Whether nobody holds the lock of a temporary file (so its writer is gone)."""
    try:
        fd = open_regular(path, os.O_RDWR)  # never a named pipe or a link named like ours
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # a live save holds it
    finally:
        os.close(fd)  # closing releases our probe lock
    return True


def remove_stale_temps(folder: str, now: float | None = None) -> list[str]:
    """Finish the interrupted saves of ``folder`` (:func:`journal.settle_folder`), then remove
    temporary files of killed saves; return the names removed.

    Only files named like ours are considered; see the module docstring for when one is stale;
    the files a save journal still needs are never removed. Errors (permissions, a file
    vanishing meanwhile) are ignored: cleaning is a courtesy.
    """
    now = time.time() if now is None else now
    protected = {os.path.basename(p) for p in journal.settle_folder(folder)}
    removed: list[str] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = TEMP_RE.match(name)
        if m is None or name in protected:
            continue
        path = os.path.join(folder, name)
        try:
            age = now - os.lstat(path).st_mtime
        except OSError:
            continue
        if fcntl is not None:
            stale = age > STALE_AFTER and _unlocked(path)
        else:  # pragma: no cover - Windows
            stale = age > STALE_AFTER_UNLOCKED
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed.append(name)
    return removed


def _remove_legacy_temps(
    folder: str, target_name: str, now: float, names: list[str] | None = None
) -> None:
    """Temporary files of ``target_name`` left by nerstudio versions that did not lock them
    (``names``: the folder's listing, when the caller has it)."""
    pattern = re.compile(_LEGACY_RE.format(name=re.escape(target_name)))
    with contextlib.suppress(OSError):
        for name in os.listdir(folder) if names is None else names:
            if pattern.match(name):
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    if now - os.lstat(path).st_mtime > LEGACY_STALE_AFTER:
                        os.unlink(path)


def _copy_metadata(fd: int, tmp: str, target: str) -> None:
    """Give the temporary file the target's permission bits (and owner), or the default mode of
    a new file."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        return
    if hasattr(os, "fchown") and (st.st_uid != os.getuid() or st.st_gid != os.getgid()):
        with contextlib.suppress(OSError):  # only root (or the group's member) may do this
            os.fchown(fd, st.st_uid, st.st_gid)
    os.chmod(tmp, stat.S_IMODE(st.st_mode))


def _copy_xattrs(target: str, tmp: str) -> None:
    """The target's extended attributes (ACLs among them) on the temporary file, where the
    system has them; one that cannot be set (another owner's namespace) is skipped."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(target)
    except OSError:
        return
    for name in names:
        with contextlib.suppress(OSError):
            os.setxattr(tmp, name, os.getxattr(target, name))


def _hard_linked(target: str) -> bool:
    try:
        st = os.stat(target)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_target(path: StrPath, target: str) -> None:
    """Refuse to replace what must not be replaced (see the module docstring)."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise FormatError(path, None, f"cannot save: {exc.strerror or exc}") from None
    except (UnicodeError, ValueError):  # an unpaired surrogate or a NUL in the name
        raise FormatError(
            ascii(os.fspath(path)),
            None,
            "not saved: this file name cannot be written on this system",
        ) from None
    if stat.S_ISDIR(st.st_mode):
        raise FormatError(path, None, "cannot write: it is a folder")
    if not stat.S_ISREG(st.st_mode):
        kind = next((what for test, what in _KINDS if test(st.st_mode)), "not a regular file")
        raise FormatError(
            path,
            None,
            f"not saved: it is {kind}, not a regular file; nerstudio saves only "
            "to regular files and never replaces anything else",
        )
    if not st.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise FormatError(
            path, None, "is read-only: not saved (make it writable, or save under another name)"
        )


def _room_for(path: StrPath, tmp: str, target: str) -> None:
    """Before a copy into a hard-linked file: refuse (nothing changed yet) when the disk cannot
    hold the difference, instead of running out of space halfway through the copy."""
    try:
        grow = os.path.getsize(tmp) - os.path.getsize(target)
        vfs = os.statvfs(os.path.dirname(target))
    except (OSError, AttributeError):
        return
    if grow > 0 and grow + (1 << 20) > vfs.f_bavail * vfs.f_frsize:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _save_error(path: StrPath, exc: BaseException, encoding: str | None = None) -> FormatError:
    """The one-line error for a failed save of ``path`` (the target left unchanged)."""
    if isinstance(exc, UnicodeEncodeError):
        bad = exc.object[exc.start : exc.end]
        why = (
            " (an unpaired surrogate: not valid Unicode)"
            if any(0xD800 <= ord(c) <= 0xDFFF for c in bad)
            else ""
        )
        return FormatError(
            path,
            None,
            f"not saved: {bad!r} cannot be written in {encoding or 'utf-8'}{why}; "
            "the file is unchanged",
        )
    assert isinstance(exc, OSError)
    return FormatError(path, None, f"not saved: {exc.strerror or exc}; the file is unchanged")


def _fdopen(fd: int, *args: Any, **kwargs: Any) -> IO[Any]:
    """The temporary file's file object (``os.fdopen``, looked up at each call so that tests
    can put a fault-injecting writer there)."""
    f: IO[Any] = os.fdopen(fd, *args, **kwargs)
    return f


class AtomicFiles:
    """Files saved together, all or none: :meth:`open` each (as :func:`atomic_open`), they
    replace their targets only when every one is complete (see :mod:`~nerstudio.corpus.journal`)."""

    def __init__(self, together: bool = True):
        self._tx = journal.Transaction(together)
        self._paths: dict[str, str] = {}  # target -> the path the user named
        self._listing: dict[str, list[str]] = {}  # folder -> its names, once cleaned by this save

    @contextlib.contextmanager
    def open(self, path: StrPath, encoding: str = "utf-8", mode: str = "w") -> Iterator[IO[Any]]:
        path = os.fspath(path)
        target = resolve_target(path)
        folder = os.path.dirname(target)
        if not os.path.isdir(folder):
            raise FormatError(path, None, f"cannot write: folder {folder} does not exist")
        check_target(path, target)
        now = time.time()
        if (
            folder not in self._listing
        ):  # once per folder and save (a brat collection has thousands)
            remove_stale_temps(folder, now)
            try:
                self._listing[folder] = [n for n in os.listdir(folder) if n.endswith(".tmp")]
            except OSError:
                self._listing[folder] = []
        _remove_legacy_temps(folder, os.path.basename(target), now, self._listing[folder])
        tmp = os.path.join(folder, temp_name(os.path.basename(target)))
        try:
            self._tx.reserve(tmp, target)
            fd = os.open(
                tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600
            )
        except OSError as exc:
            if isinstance(exc, PermissionError) or exc.errno == errno.EROFS:
                raise FormatError(
                    path, None, f"not saved: the folder {folder} cannot be written ({exc.strerror})"
                ) from None
            raise _save_error(path, exc) from None
        self._paths[target] = path
        try:
            if fcntl is not None:
                # held until closed: tells cleaners this save is alive
                fcntl.flock(fd, fcntl.LOCK_EX)
            _copy_metadata(fd, tmp, target)
            _copy_xattrs(target, tmp)
            f = (
                _fdopen(fd, mode)
                if "b" in mode
                else _fdopen(fd, mode, encoding=encoding, newline="")
            )
        except BaseException:
            os.close(fd)
            raise
        try:
            with f:
                yield f
                journal.step("flush", target)
                f.flush()
                os.fsync(f.fileno())
        except (OSError, UnicodeEncodeError) as exc:
            if isinstance(exc, OSError) and exc.filename not in (None, tmp):
                raise  # another file the caller opened: its own error
            raise _save_error(path, exc, encoding) from None

    def commit(self) -> None:
        """Replace every target (called by the ``with`` block of :func:`atomic_files`)."""
        copy = {t: _hard_linked(t) for _, t in self._tx.members}
        for tmp, target in self._tx.members:
            if copy[target]:
                try:
                    _room_for(self._paths[target], tmp, target)
                except OSError as exc:
                    self._tx.abort()
                    raise _save_error(self._paths[target], exc) from None
        try:
            self._tx.commit(copy)
        except OSError as exc:
            first = self._paths[self._tx.members[0][1]]
            if not self._tx.committed:
                self._tx.abort()
                raise _save_error(first, exc) from None
            self._tx.close()
            raise FormatError(
                first,
                None,
                f"the save was interrupted ({exc.strerror or exc}) after the new "
                "contents were complete on disk: it is finished the next time these "
                "files are read or saved",
            ) from None

    def abort(self) -> None:
        self._tx.abort()


@contextlib.contextmanager
def atomic_files() -> Iterator[AtomicFiles]:
    """Save several files together, all or none (see :class:`AtomicFiles`)::

    with atomic_files() as files:
        with files.open("data.labels.txt") as f: ...
        with files.open("data.jsonl") as f: ...
    """
    files = AtomicFiles(True)
    try:
        yield files
    except BaseException:
        files.abort()
        raise
    files.commit()


@contextlib.contextmanager
def atomic_open(
    path: StrPath, encoding: str = "utf-8", newline: str = "\n", mode: str = "w"
) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``'s target; it replaces the target only if the
    block succeeds. Symbolic links are written through, permissions kept, protected targets
    refused, stale temporary files of killed saves removed (see the module docstring).
    ``newline`` is accepted for compatibility: text is written exactly as given (no newline
    translation)."""
    files = AtomicFiles(False)
    try:
        with files.open(path, encoding, mode) as f:
            yield f
    except BaseException:
        files.abort()
        raise
    files.commit()
