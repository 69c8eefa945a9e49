"""The demo opens from a per-user copy: the installed package's files are never written, the
user's edits to the copy are kept, and a folder that cannot be written never stops the start."""

from __future__ import annotations

import hashlib
import json
import sys

import pytest

from nerstudio.app import demo_copy as uc
from nerstudio.demo import DEMO_DIR


def test_the_copy_holds_the_demo_and_keeps_the_users_edits(tmp_path):
    folder = uc.prepare(tmp_path / "demo")
    files = uc.bundled_files()
    assert {
        "train.conll",
        "dev.conll",
        "test.conll",
        "model/train.nbest.npz",
        "model/train.scored.npz",
    } <= set(files)
    assert "README.md" in files and not any(f.endswith(".py") for f in files)
    for rel in files:
        assert (folder / rel).read_bytes() == (DEMO_DIR / rel).read_bytes()
    # the user's edit stays; a deleted file comes back
    (folder / "train.conll").write_text("Mine I-PER\n", encoding="utf-8")
    (folder / "dev.conll").unlink()
    uc.prepare(folder)
    assert (folder / "train.conll").read_text(encoding="utf-8") == "Mine I-PER\n"
    assert (folder / "dev.conll").read_bytes() == (DEMO_DIR / "dev.conll").read_bytes()


def test_a_file_the_user_never_changed_follows_a_newer_demo(tmp_path):
    folder = uc.prepare(tmp_path / "demo")
    # as an older nerstudio would have left it: an older test.conll, copied and never touched
    old = b"Old I-LOC\n"
    (folder / "test.conll").write_bytes(old)
    manifest = json.loads((folder / uc.MANIFEST).read_text(encoding="utf-8"))
    manifest["test.conll"] = hashlib.sha256(old).hexdigest()
    # and a train.conll the user edited after copying the older version
    (folder / "train.conll").write_bytes(b"Edited I-PER\n")
    manifest["train.conll"] = hashlib.sha256(b"Older I-PER\n").hexdigest()
    (folder / uc.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    uc.prepare(folder)
    assert (folder / "test.conll").read_bytes() == (DEMO_DIR / "test.conll").read_bytes()
    assert (folder / "train.conll").read_bytes() == b"Edited I-PER\n"


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the XDG rule is for Linux")
def test_the_copy_lives_in_the_users_data_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(uc.ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert uc.copy_dir() == tmp_path / "data" / "nerstudio" / "demo"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert uc.copy_dir() == tmp_path / "home" / ".local" / "share" / "nerstudio" / "demo"


def test_a_folder_that_cannot_be_written_falls_back_to_a_private_one(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(uc.ENV, str(blocker / "demo"))  # under a file: cannot be made
    monkeypatch.setattr(uc.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    folder = uc.user_demo()
    assert folder is not None and folder.parent == tmp_path / "tmp"
    assert (folder / "train.conll").read_bytes() == (DEMO_DIR / "train.conll").read_bytes()
    # nothing can be written at all: no demo, no error
    monkeypatch.setattr(uc.tempfile, "tempdir", str(blocker))
    assert uc.user_demo() is None


def test_the_copy_gets_the_mode_of_a_new_file_of_the_users(tmp_path):
    """The copy's files are the user's to open in other programs: the mode a new file gets
    under their umask, not a temporary file's 0600."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        folder = uc.prepare(tmp_path / "demo")
    finally:
        os.umask(old)
    for rel in ("train.conll", "model/train.nbest.npz"):
        assert stat.S_IMODE(os.stat(folder / rel).st_mode) == 0o644, rel
