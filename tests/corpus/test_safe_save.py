"""Saves that respect the file (issue 13, defect 6): symbolic links are written through,
permission bits are kept, and temporary files of killed saves are cleaned up, never those of a
save that is still running."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from nerstudio.corpus import read_corpus, write_corpus
from nerstudio.corpus.atomic import STALE_AFTER, TEMP_RE, atomic_open, remove_stale_temps
from nerstudio.corpus.model import Span
from nerstudio.persist import load_npz, save_npz

pytestmark = pytest.mark.data_integrity

CORPUS = b"EU B-ORG\nrejects O\nGerman B-MISC\ncall O\n\nPeter B-PER\nBlackburn I-PER\n"


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _edited(path: Path):
    c = read_corpus(path)
    c.sentences[1].spans = [Span(0, 1, "PER")]
    return c


def test_saving_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "data" / "real.conll"
    real.parent.mkdir()
    real.write_bytes(CORPUS)
    link = tmp_path / "link.conll"
    link.symlink_to(real)
    write_corpus(_edited(link), link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert b"Blackburn O" in real.read_bytes()  # the target received the edit
    assert _temps(tmp_path) == [] and _temps(real.parent) == []


def test_saving_through_a_chain_of_relative_symlinks_and_a_dangling_one(tmp_path):
    real = tmp_path / "real.conll"
    real.write_bytes(CORPUS)
    (tmp_path / "a.conll").symlink_to("real.conll")
    (tmp_path / "b.conll").symlink_to("a.conll")
    write_corpus(_edited(tmp_path / "b.conll"), tmp_path / "b.conll")
    assert (tmp_path / "b.conll").is_symlink() and (tmp_path / "a.conll").is_symlink()
    assert b"Blackburn O" in real.read_bytes()
    dangling = tmp_path / "new.conll"
    dangling.symlink_to("created-by-save.conll")
    write_corpus(read_corpus(real), dangling)
    assert (
        dangling.is_symlink()
        and (tmp_path / "created-by-save.conll").read_bytes() == real.read_bytes()
    )


def test_model_files_are_written_through_symlinks_too(tmp_path):
    real = tmp_path / "model-v1.npz"
    link = tmp_path / "current.npz"
    save_npz(real, {"format": "x", "version": 1}, {"a": np.arange(3)})
    link.symlink_to(real.name)
    save_npz(link, {"format": "x", "version": 1}, {"a": np.arange(5)})
    assert link.is_symlink()
    assert load_npz(real, "x", 1, "a test file")[1]["a"].tolist() == [0, 1, 2, 3, 4]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664])  # 0o444: refused (test_save_faults.py)
def test_saving_keeps_the_permission_bits(tmp_path, mode):
    path = tmp_path / "private.conll"
    path.write_bytes(CORPUS)
    path.chmod(mode)
    write_corpus(_edited(path), path)
    assert _mode(path) == mode
    model = tmp_path / "private.npz"
    save_npz(model, {"format": "x", "version": 1}, {})
    model.chmod(mode)
    save_npz(model, {"format": "x", "version": 1}, {"b": np.zeros(2)})
    assert _mode(model) == mode


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_a_new_file_gets_the_umask_default(tmp_path):
    old = os.umask(0o027)
    try:
        write_corpus(read_corpus(_write(tmp_path / "in.conll")), tmp_path / "new.conll")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "new.conll") == 0o640


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_the_temporary_file_is_never_more_readable_than_the_target(tmp_path):
    path = tmp_path / "secret.conll"
    path.write_bytes(CORPUS)
    path.chmod(0o600)
    with atomic_open(path) as f:
        f.write("x O\n")
        (tmp,) = _temps(tmp_path)
        assert _mode(tmp_path / tmp) == 0o600
    assert path.read_bytes() == b"x O\n"


def _write(path: Path) -> Path:
    path.write_bytes(CORPUS)
    return path


_SAVER = r"""
import sys, time
from nerstudio.corpus.atomic import atomic_open
with atomic_open(sys.argv[1]) as f:
    f.write("half of a file")
    f.flush()
    print("writing", flush=True)
    sys.stdin.readline()  # wait until told to finish (or killed)
    f.write(" and the rest\n")
print("done", flush=True)
"""


def _start_saver(path: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", _SAVER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "writing"
    return proc


def _age(folder: Path, seconds: float) -> None:
    """Pretend the temporary files in ``folder`` were last written ``seconds`` ago."""
    for name in _temps(folder):
        t = time.time() - seconds
        os.utime(folder / name, (t, t))


def test_a_killed_save_leaves_the_file_intact_and_its_temp_file_is_cleaned_later(tmp_path):
    path = _write(tmp_path / "corpus.conll")
    proc = _start_saver(path)
    proc.kill()
    proc.wait()
    assert path.read_bytes() == CORPUS  # nothing lost
    (left,) = _temps(tmp_path)
    assert TEMP_RE.match(left)
    write_corpus(_edited(path), path)  # a save right after the crash: the file may still be fresh
    assert _temps(tmp_path) == [left]
    _age(tmp_path, STALE_AFTER + 5)
    write_corpus(_edited(path), path)  # the next save next to it removes it
    assert _temps(tmp_path) == []
    assert b"Blackburn O" in path.read_bytes()


def test_saving_another_file_in_the_folder_cleans_up_too(tmp_path):
    path = _write(tmp_path / "a.conll")
    proc = _start_saver(path)
    proc.kill()
    proc.wait()
    _age(tmp_path, STALE_AFTER + 5)
    save_npz(tmp_path / "model.npz", {"format": "x", "version": 1}, {})
    assert _temps(tmp_path) == []


def test_a_concurrent_live_save_is_never_disturbed(tmp_path):
    path = _write(tmp_path / "shared.conll")
    proc = _start_saver(path)
    try:
        _age(tmp_path, 10 * 24 * 3600)  # even when it looks ancient
        (theirs,) = _temps(tmp_path)
        assert remove_stale_temps(str(tmp_path)) == []
        write_corpus(_edited(path), tmp_path / "other.conll")
        write_corpus(_edited(path), path)  # our own save of the same file, meanwhile
        assert theirs in _temps(tmp_path)
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "done"
    finally:
        proc.kill()
        proc.wait()
    assert path.read_text() == "half of a file and the rest\n"  # the last save wins, whole
    assert _temps(tmp_path) == []


def test_only_our_temporary_files_are_touched(tmp_path):
    keep = [".notes.tmp", "draft.tmp", ".x.nerstudio-12-zz.tmp", ".other.conll.abcdefgh.tmp"]
    for name in keep:
        (tmp_path / name).write_text("mine")
    _age(tmp_path, 10 * 24 * 3600)
    write_corpus(read_corpus(_write(tmp_path / "c.conll")), tmp_path / "c.conll")
    assert _temps(tmp_path) == sorted(keep)


def test_old_temporary_files_of_earlier_versions_are_cleaned(tmp_path):
    path = _write(tmp_path / "c.conll")
    legacy = tmp_path / ".c.conll.k3j_x9az.tmp"  # tempfile.mkstemp's name in nerstudio <= 0.1
    recent = tmp_path / ".c.conll.abcdefgh.tmp"
    legacy.write_text("old")
    recent.write_text("maybe live")
    t = time.time() - 2 * 24 * 3600
    os.utime(legacy, (t, t))
    write_corpus(read_corpus(path), path)
    assert not legacy.exists() and recent.exists()


def test_a_failed_save_removes_its_temporary_file_and_keeps_the_target(tmp_path):
    path = _write(tmp_path / "c.conll")
    with pytest.raises(RuntimeError), atomic_open(path) as f:
        f.write("partial")
        raise RuntimeError("disk full")
    assert path.read_bytes() == CORPUS and _temps(tmp_path) == []


@pytest.mark.skipif(os.name != "posix", reason="POSIX hard links")
def test_a_hard_linked_file_stays_one_file(tmp_path):
    """Saving a file that has another name (a hard link) changes the file both names share,
    instead of giving the saved name a new file and leaving the other with the old contents."""
    path = tmp_path / "work.conll"
    path.write_bytes(CORPUS)
    other = tmp_path / "backup-name.conll"
    os.link(path, other)
    write_corpus(_edited(path), path)
    assert os.stat(path).st_ino == os.stat(other).st_ino and os.stat(path).st_nlink == 2
    assert b"Blackburn O" in other.read_bytes() and other.read_bytes() == path.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if "nerstudio" in p.name] == []
    # shorter contents: the file is cut to the new length
    small = tmp_path / "small.conll"
    small.write_bytes(b"EU B-ORG\n")
    write_corpus(read_corpus(small), path)
    assert other.read_bytes() == path.read_bytes() == b"EU B-ORG\n"


def test_extended_attributes_and_acls_are_kept(tmp_path):
    """A file's extended attributes (where POSIX ACLs live) survive a save."""
    if not hasattr(os, "setxattr"):
        pytest.skip("no extended attributes on this system")
    path = tmp_path / "shared.conll"
    path.write_bytes(CORPUS)
    try:
        os.setxattr(path, "user.nerstudio-test", b"reviewed")
    except OSError as exc:
        pytest.skip(
            f"the file system of {tmp_path} has no user extended attributes ({exc.strerror})"
        )
    write_corpus(_edited(path), path)
    assert b"Blackburn O" in path.read_bytes()
    assert os.getxattr(path, "user.nerstudio-test") == b"reviewed"
