"""The names nerstudio gives its own files beside a user's file, and how it opens them safely.

A save writes ``.NAME.nerstudio-PID-RANDOM.tmp`` beside the file NAME and, for files saved
together, a journal ``.NAME.nerstudio-PID-RANDOM.journal``; a window's lock is ``.~lock.NAME#``.
A folder entry holds at most :data:`NAME_MAX` bytes, so for a long NAME only its start is kept,
followed by ``~`` and a hash of the whole name: every file name the system accepts can be saved
and locked, and each of these names still tells which file it belongs to.

A folder may come from someone else, so a journal or a lock found in it is checked before
nerstudio acts on it: it names files only by bare names (no folder part, no ``..``) of the form
nerstudio makes, and is opened without following a symbolic link or waiting on a named pipe
(:func:`open_regular`); anything that is not a regular file is not nerstudio's.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import stat

NAME_MAX = 255  # bytes in one folder entry (Linux, macOS, Windows)
_PID_DIGITS = 10
# ".NAME.nerstudio-PID-RANDOM.journal": what surrounds NAME, at most
_SAVE_ROOM = NAME_MAX - len(".") - len(".nerstudio-") - _PID_DIGITS - len("-01234567.journal")
# ".~lock.NAME#" and what a lock adds to its name while it is made or taken over (".stale-TAG")
_LOCK_ROOM = NAME_MAX - len(".~lock.#") - len(".stale-") - _PID_DIGITS - len("-01234567")

TEMP_RE = re.compile(r"^\.(?P<name>.+)\.nerstudio-(?P<pid>\d+)-[0-9a-f]{8}\.tmp$", re.DOTALL)
JOURNAL_RE = re.compile(r"^\.(?P<name>.+)\.nerstudio-(?P<pid>\d+)-[0-9a-f]{8}\.journal$", re.DOTALL)

# what a kind of file is called in a message (never a regular file: those are read)
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def fit(name: str, room: int) -> str:
    """``name``, or when it takes more than ``room`` bytes, its start and a hash of it."""
    raw = os.fsencode(name)
    if len(raw) <= room:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:12]
    keep = raw[: room - len(digest) - 1]
    while keep and keep[-1] & 0xC0 == 0x80:  # never cut a UTF-8 character in two
        keep = keep[:-1]
    if keep and keep[-1] >= 0xC0:
        keep = keep[:-1]
    return f"{os.fsdecode(keep)}~{digest}"


def temp_name(target_name: str) -> str:
    """A temporary file's name for ``target_name`` (recognised by :data:`TEMP_RE`)."""
    return f".{fit(target_name, _SAVE_ROOM)}.nerstudio-{os.getpid()}-{secrets.token_hex(4)}.tmp"


def journal_name(target_name: str) -> str:
    """A save journal's name for a save of ``target_name`` (recognised by :data:`JOURNAL_RE`)."""
    pid, rand = os.getpid(), secrets.token_hex(4)
    return f".{fit(target_name, _SAVE_ROOM)}.nerstudio-{pid}-{rand}.journal"


def lock_name(name: str) -> str:
    """The lock file's name for the file or folder ``name``."""
    return f".~lock.{fit(name, _LOCK_ROOM)}#"


def is_bare(name: object) -> bool:
    """Whether ``name`` is one folder entry: a non-empty string, no folder part, not ``..``."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and os.sep not in name
        and (os.altsep is None or os.altsep not in name)
        and "\0" not in name
    )


def temp_of(tmp_name: str, target_name: str) -> bool:
    """Whether ``tmp_name`` is a name nerstudio gives a temporary file of ``target_name``."""
    m = TEMP_RE.match(tmp_name)
    return (
        is_bare(tmp_name)
        and is_bare(target_name)
        and m is not None
        and m["name"] == fit(target_name, _SAVE_ROOM)
    )


class NotRegular(OSError):
    """A file nerstudio meant to read or write is not a regular file (``kind`` says what)."""

    def __init__(self, path: str, kind: str):
        super().__init__(f"{path} is {kind}, not a regular file")
        self.kind = kind


def kind_of(mode: int) -> str:
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """``os.open`` for a file that must be a regular file: a symbolic link is not followed and a
    named pipe or device is not waited on; anything else raises :class:`NotRegular`."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | nofollow | getattr(os, "O_NONBLOCK", 0), mode)
    except OSError as exc:
        try:
            st = os.lstat(path)
        except OSError:
            raise exc from None
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(path, kind_of(st.st_mode)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(path, kind_of(st.st_mode))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def nofollow_opener(path: str, flags: int) -> int:
    """An ``opener`` for :func:`open` that opens regular files only (see :func:`open_regular`)."""
    return open_regular(path, flags)
