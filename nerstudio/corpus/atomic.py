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
  the other names with the old contents, so once the new contents are complete and on disk in a
  file beside it (``NAME.nerstudio-save``, never cleaned automatically), they are copied into
  the file in place and that copy is removed. Should the machine stop during the copy, the
  complete new contents are still in ``NAME.nerstudio-save``;
* **temporary files of earlier saves that were killed** are removed the next time a file is saved
  in the same folder. They are recognised by their name, ``.NAME.nerstudio-PID-RANDOM.tmp``, and
  a save holds an exclusive lock on its temporary file while it writes; a temporary file is stale
  when nobody holds that lock any more (locks die with their process) and it has not been
  touched for :data:`STALE_AFTER` seconds. A concurrent save that is still running holds its
  lock, so its file is never removed. Where file locks are not available (Windows), only files
  untouched for :data:`STALE_AFTER_UNLOCKED` seconds are removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time
from typing import IO, Iterator

from ..errors import FormatError

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

STALE_AFTER = 60.0  # seconds without a write before an unlocked temporary file counts as stale
STALE_AFTER_UNLOCKED = 24 * 3600.0  # without file locks: only files untouched for a day
LEGACY_STALE_AFTER = 24 * 3600.0  # ``.NAME.XXXXXXXX.tmp`` files of older nerstudio versions

TEMP_RE = re.compile(r"^\.(?P<name>.+)\.nerstudio-(?P<pid>\d+)-[0-9a-f]{8}\.tmp$")
_LEGACY_RE = r"^\.{name}\.[a-z0-9_]{{8}}\.tmp$"  # what tempfile.mkstemp made before


def temp_name(target_name: str) -> str:
    """The name of a temporary file for ``target_name`` (recognised by :data:`TEMP_RE`)."""
    return f".{target_name}.nerstudio-{os.getpid()}-{secrets.token_hex(4)}.tmp"


def resolve_target(path) -> str:
    """The file a save of ``path`` must replace: ``path`` itself, or the file its chain of
    symbolic links ends at (which need not exist yet)."""
    path = os.path.abspath(os.fspath(path))
    if os.path.islink(path):
        return os.path.realpath(path)
    return path


def _unlocked(path: str) -> bool:
    """Whether nobody holds the lock of a temporary file (so its writer is gone)."""
    try:
        fd = os.open(path, os.O_RDWR)
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
    """Remove temporary files of killed saves in ``folder``; return the names removed.

    Only files named like ours are considered; see the module docstring for when one is stale.
    Errors (permissions, a file vanishing meanwhile) are ignored: cleaning is a courtesy.
    """
    now = time.time() if now is None else now
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = TEMP_RE.match(name)
        if m is None:
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


def _remove_legacy_temps(folder: str, target_name: str, now: float) -> None:
    """Temporary files of ``target_name`` left by nerstudio versions that did not lock them."""
    pattern = re.compile(_LEGACY_RE.format(name=re.escape(target_name)))
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
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


def _copy_in_place(src: str, target: str, folder: str) -> None:
    """Copy the complete file ``src`` into the hard-linked ``target`` (all its names see it),
    through ``NAME.nerstudio-save``, which is removed once the target holds the new contents.
    A target that cannot be opened for writing (read-only) is replaced instead, as any file."""
    try:
        fout = open(target, "r+b")
    except OSError:
        os.replace(src, target)
        return
    with fout:
        keep = target + ".nerstudio-save"
        os.replace(src, keep)  # a name no cleaner removes, in case the copy below is cut short
        _fsync_folder(folder)
        with open(keep, "rb") as fin:
            while True:
                block = fin.read(1 << 20)
                if not block:
                    break
                fout.write(block)
        fout.truncate()
        fout.flush()
        os.fsync(fout.fileno())
    os.unlink(keep)


def _fsync_folder(folder: str) -> None:
    """Make the rename itself durable (POSIX); harmless where folders cannot be opened."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_open(path, encoding: str = "utf-8", newline: str = "\n", mode: str = "w") -> Iterator[IO]:
    """Open a temporary file next to ``path``'s target; it replaces the target only if the
    block succeeds. Symbolic links are written through, permissions kept, stale temporary files
    of killed saves removed (see the module docstring). ``newline`` is accepted for
    compatibility: text is written exactly as given (no newline translation)."""
    path = os.fspath(path)
    target = resolve_target(path)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FormatError(path, None, f"cannot write: folder {folder} does not exist")
    if os.path.isdir(target):
        raise FormatError(path, None, "cannot write: it is a folder")
    now = time.time()
    remove_stale_temps(folder, now)
    _remove_legacy_temps(folder, os.path.basename(target), now)
    tmp = os.path.join(folder, temp_name(os.path.basename(target)))
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held until closed: tells cleaners this save is alive
        _copy_metadata(fd, tmp, target)
        _copy_xattrs(target, tmp)
        f = os.fdopen(fd, mode) if "b" in mode else os.fdopen(fd, mode, encoding=encoding, newline="")
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
            linked = _hard_linked(target)
            if not linked:
                os.replace(tmp, target)  # still locked: the file is never unlocked under its temp name
        if linked:
            _copy_in_place(tmp, target, folder)
        _fsync_folder(folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
