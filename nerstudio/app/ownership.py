"""What the document read from disk, and whether the disk still holds it.

A :class:`Fingerprint` records, for the corpus file (or for each member of a brat folder: its
``.txt`` and ``.ann`` files) and for its review sidecar (:func:`~.sidecar.sidecar_path`: the
review states, notes and flags, which another window's save may change alone), the size, the
modification time in nanoseconds and a SHA-256 of the bytes. :func:`check` compares the disk
with a recorded fingerprint cheaply: when every member's size and time are unchanged the file is
taken as unchanged (as editors do); otherwise the content is hashed, so a file only touched
(same bytes, new time) is not reported as changed, while a change by another program (``sed
-i``, another window's save) or a deleted or moved file is.

Taken *before* the corpus is read: a change made while reading shows up at the next check.
No Qt here: the window, the command line and the tests share it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..corpus.foreign.brat import folder_pairs
from ..errors import FormatError
from ..runtime.file_hash import sha256_file
from .sidecar import sidecar_path


@dataclass(frozen=True)
class Member:
    name: str  # "" for a single file, else the name inside the folder
    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class Fingerprint:
    path: str
    members: tuple[Member, ...]  # empty: the file did not exist
    folder: bool = False

    @property
    def exists(self) -> bool:
        return bool(self.members)

    def content(self) -> tuple:
        return tuple((m.name, m.sha256) for m in self.members)

    def stats(self) -> tuple:
        return tuple((m.name, m.size, m.mtime_ns) for m in self.members)

    @property
    def mtime_ns(self) -> int:
        return max((m.mtime_ns for m in self.members), default=0)


def _member_paths(path: str) -> list[tuple[str, str]] | None:
    """(name, full path) of what a corpus at ``path`` is read from, its review sidecar last
    when there is one; None when the corpus is missing."""
    if os.path.isdir(path):
        try:
            pairs = folder_pairs(path)[0]
        except (FormatError, OSError):  # an unreadable folder: as if missing
            return None
        out = sorted((os.path.basename(p), p) for pair in pairs for p in pair)
    elif os.path.isfile(path):
        out = [("", path)]
    else:
        return None
    side = sidecar_path(path)
    if os.path.isfile(side):
        out.append((os.path.basename(side), side))
    return out


def _stat(full: str) -> tuple[int, int] | None:
    try:
        st = os.stat(full)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def fingerprint(path: str, hashes: dict[tuple, str] | None = None) -> Fingerprint:
    """The fingerprint of ``path`` now. ``hashes``: known ``(name, size, mtime_ns) → sha256``
    (a member whose stat is unchanged is not read again)."""
    ap = os.path.abspath(path)
    members = []
    for name, full in _member_paths(ap) or []:
        st = _stat(full)
        if st is None:
            continue
        key = (name, *st)
        digest = (hashes or {}).get(key)
        if digest is None:
            try:
                digest = sha256_file(full)
            except OSError:
                continue
        members.append(Member(name, st[0], st[1], digest))
    return Fingerprint(ap, tuple(members), os.path.isdir(ap))


@dataclass(frozen=True)
class DiskState:
    """The result of a check: ``status`` is ``same``, ``changed`` or ``missing``; ``now`` is
    the disk's fingerprint (equal content for ``same``)."""

    status: str
    now: Fingerprint
    changed: tuple[str, ...] = ()  # members whose content changed, appeared or went (a folder)

    @property
    def same(self) -> bool:
        return self.status == "same"


def _stats(paths: list[tuple[str, str]]) -> tuple:
    stats = []
    for name, full in paths:
        st = _stat(full)
        if st is not None:
            stats.append((name, *st))
    return tuple(stats)


def unchanged(recorded: Fingerprint) -> bool:
    """Every member's size and time are as recorded (the cheap first step of :func:`check`,
    reading no content: False means only :func:`check` can tell)."""
    paths = _member_paths(recorded.path)
    return paths is not None and _stats(paths) == recorded.stats()


def check(recorded: Fingerprint) -> DiskState:
    """Does the disk still hold what ``recorded`` describes?"""
    paths = _member_paths(recorded.path)
    if paths is None:
        return DiskState("missing", Fingerprint(recorded.path, (), recorded.folder))
    if _stats(paths) == recorded.stats():
        return DiskState("same", recorded)
    known = {(m.name, m.size, m.mtime_ns): m.sha256 for m in recorded.members}
    now = fingerprint(recorded.path, known)
    if not now.exists:
        return DiskState("missing", now)
    if now.content() == recorded.content():
        return DiskState("same", now)  # touched, or rewritten with the same bytes
    before, after = dict(recorded.content()), dict(now.content())
    names = sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
    return DiskState("changed", now, tuple(names))
