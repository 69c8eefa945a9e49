"""A corpus folder from someone else: what nerstudio finds beside the corpus (a save journal, a
lock file) never makes it touch a file outside the folder, follow a symbolic link, wait on a
named pipe, or fail with an internal error; a window's lock covers every name of its file; every
file name the system accepts can be saved.

Every test here fails on the code before the fix: a crafted journal renamed or deleted the file
it named, a named pipe hung the read (the operations that could hang run in a child process with
a timeout, so that the suite never does), a lock field out of range was an internal error (exit
status 3), a lock was bypassed through a second name, a 251-character name could not be saved.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import ROOT

from nerstudio.cli import main
from nerstudio.corpus import read_corpus, write_corpus
from nerstudio.corpus.filelock import FileLock, Instance, lock_path, refuse_if_held
from nerstudio.errors import FileInUse, FormatError

pytestmark = pytest.mark.skipif(os.name != "posix", reason="links, named pipes: POSIX")

OLD = "Greta B-PER\nLind I-PER\nlives O\n\n"
NEW = "Oslo B-LOC\nis O\ncold O\n\n"
SECRET = "the user's own file, outside the corpus folder\n"
J = ".data.conll.nerstudio-4242-0123abcd.journal"  # a journal's name, as nerstudio makes it
T = ".data.conll.nerstudio-4242-0123abcd.tmp"  # a temporary file of data.conll


def _words(path) -> list[tuple[str, ...]]:
    return [tuple(s.words) for s in read_corpus(path).sentences]


@pytest.fixture
def folder(tmp_path):
    """``corpus/data.conll`` (someone else's folder) and ``home/secret.txt`` outside it."""
    corpus, home = tmp_path / "corpus", tmp_path / "home"
    corpus.mkdir()
    home.mkdir()
    (corpus / "data.conll").write_text(OLD, encoding="utf-8")
    (home / "secret.txt").write_text(SECRET, encoding="utf-8")
    return corpus, home / "secret.txt"


def _journal(corpus: Path, *records: dict, name: str = J) -> Path:
    path = corpus / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _commit(*entries: tuple[str, str, bool], journals: list[str] | None = None) -> dict:
    return {
        "commit": [{"tmp": t, "target": g, "copy": c} for t, g, c in entries],
        "journals": journals or [],
    }


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def _refused(capsys, corpus: Path, journal: Path) -> None:
    """Reading the corpus is refused: a FormatError naming the corpus and the journal, exit
    status 1 with one line; the corpus keeps its contents."""
    data = corpus / "data.conll"
    with pytest.raises(FormatError) as err:
        read_corpus(data)
    assert err.value.path == str(data) and str(journal) in err.value.message
    capsys.readouterr()
    assert main(["stats", str(data)]) == 1
    line = _one_line(capsys.readouterr().err)
    assert str(journal) in line
    assert data.read_text(encoding="utf-8") == OLD


# -- crafted journals -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        "{home}/secret.txt",  # another folder, absolute
        "{corpus}/../home/secret.txt",  # absolute, through ..
        "../home/secret.txt",  # relative
    ],
)
def test_a_journal_naming_a_file_outside_its_folder_touches_nothing(folder, capsys, target):
    corpus, secret = folder
    target = target.format(home=secret.parent, corpus=corpus)
    tmp = secret.parent / ".secret.txt.nerstudio-4242-0123abcd.tmp"
    tmp.write_text("overwritten\n", encoding="utf-8")
    journal = _journal(corpus, _commit((str(tmp), target, False)))
    _refused(capsys, corpus, journal)
    assert secret.read_text(encoding="utf-8") == SECRET
    assert tmp.exists()  # not renamed either


def test_a_journal_renaming_a_file_of_its_folder_onto_a_file_outside_touches_nothing(
    folder, capsys
):
    corpus, secret = folder
    (corpus / T).write_text("overwritten\n", encoding="utf-8")
    journal = _journal(corpus, _commit((str(corpus / T), str(secret), False)))
    _refused(capsys, corpus, journal)
    assert secret.read_text(encoding="utf-8") == SECRET


def test_a_journal_never_deletes_a_file_outside_its_folder(folder):
    """An unfinished save is rolled back by deleting the temporary files it reserved, and a
    finished one by deleting its journals: only nerstudio's own, in this folder."""
    corpus, secret = folder
    (corpus / T).write_text(NEW, encoding="utf-8")
    other = corpus / ".other.nerstudio-4242-0123abcd.journal"
    _journal(corpus, {"tmp": str(secret), "target": str(secret)}, name=other.name)
    _journal(
        corpus,
        _commit(
            (str(corpus / T), str(corpus / "data.conll"), False),
            journals=[str(secret), str(corpus / J)],
        ),
    )
    assert _words(corpus / "data.conll") == [("Oslo", "is", "cold")]  # a real save, finished
    assert secret.read_text(encoding="utf-8") == SECRET
    assert not other.exists() and not (corpus / J).exists()


def test_a_temporary_file_that_is_a_symbolic_link_is_not_renamed_over_the_corpus(folder, capsys):
    corpus, secret = folder
    (corpus / T).symlink_to(secret)
    journal = _journal(corpus, _commit((str(corpus / T), str(corpus / "data.conll"), False)))
    _refused(capsys, corpus, journal)
    assert not (corpus / "data.conll").is_symlink()
    assert secret.read_text(encoding="utf-8") == SECRET


def test_a_copy_into_a_symbolic_link_is_not_made(folder, capsys):
    """An entry "copy into the hard-linked target" whose target is a link to a file outside."""
    corpus, secret = folder
    (corpus / T).write_text("overwritten\n", encoding="utf-8")
    (corpus / "link.conll").symlink_to(secret)
    tmp = corpus / ".link.conll.nerstudio-4242-0123abcd.tmp"
    tmp.write_text("overwritten\n", encoding="utf-8")
    journal = _journal(
        corpus,
        _commit(
            (str(corpus / T), str(corpus / "data.conll"), False),
            (str(tmp), str(corpus / "link.conll"), True),
        ),
    )
    with pytest.raises(FormatError):
        read_corpus(corpus / "link.conll")
    assert secret.read_text(encoding="utf-8") == SECRET
    assert main(["stats", str(corpus / "link.conll")]) == 1
    assert secret.read_text(encoding="utf-8") == SECRET
    assert journal.exists()


def test_a_journal_that_is_a_symbolic_link_is_not_followed(folder, capsys):
    corpus, secret = folder
    elsewhere = secret.parent / "record"
    (corpus / T).write_text(NEW, encoding="utf-8")
    elsewhere.write_text(
        json.dumps(_commit((str(corpus / T), str(corpus / "data.conll"), False))) + "\n"
    )
    (corpus / J).symlink_to(elsewhere)
    _refused(capsys, corpus, corpus / J)
    assert "symbolic link" in read_error(corpus / "data.conll")


def read_error(path) -> str:
    with pytest.raises(FormatError) as err:
        read_corpus(path)
    return err.value.message


@pytest.mark.parametrize(
    "record",
    [
        {"commit": "data.conll", "journals": []},
        {"commit": [{"tmp": 1, "target": 2, "copy": False}], "journals": []},
        {"commit": [{"tmp": T, "target": "data.conll", "copy": False}], "journals": []},
        {"commit": [], "journals": []},
        {
            "commit": [{"tmp": "{c}/" + T, "target": "{c}/data.conll", "copy": "yes"}],
            "journals": [],
        },
        {
            "commit": [{"tmp": "{c}/notours", "target": "{c}/data.conll", "copy": False}],
            "journals": [],
        },
    ],
)
def test_a_journal_with_an_invalid_record_is_refused_naming_it(folder, capsys, record):
    corpus, _ = folder
    (corpus / T).write_text(NEW, encoding="utf-8")
    text = json.dumps(record).replace("{c}", str(corpus))
    (corpus / J).write_text(text + "\n", encoding="utf-8")
    _refused(capsys, corpus, corpus / J)
    assert (corpus / T).exists()


def test_a_folder_named_like_a_journal_is_refused_naming_it(folder, capsys):
    corpus, _ = folder
    (corpus / J).mkdir()
    _refused(capsys, corpus, corpus / J)
    assert "a folder" in read_error(corpus / "data.conll")


def test_a_save_in_a_folder_with_an_untrusted_journal_goes_ahead(folder):
    """A save touches only its own files: what a foreign journal says does not stop it."""
    corpus, _ = folder
    (corpus / J).mkdir()
    src = corpus.parent / "new.conll"
    src.write_text(NEW, encoding="utf-8")
    assert main(["convert", str(src), str(corpus / "out.conll")]) == 0
    assert (corpus / "out.conll").read_text(encoding="utf-8") == NEW


# -- named pipes: never waited on -------------------------------------------------------------


def _run(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``nerstudio ARGV`` in a child process; a hang fails the test instead of the suite."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "nerstudio", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"nerstudio {' '.join(argv)} hung")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_named_like_a_journal_blocks_nothing(folder):
    corpus, _ = folder
    os.mkfifo(corpus / J)
    data = corpus / "data.conll"
    r = _run("stats", str(data))
    assert r.returncode == 1 and str(corpus / J) in _one_line(r.stderr)
    assert "named pipe" in r.stderr
    src = corpus.parent / "new.conll"
    src.write_text(NEW, encoding="utf-8")
    r = _run("convert", str(src), str(corpus / "out.conll"))  # a save in the folder
    assert r.returncode == 0, r.stderr
    assert data.read_text(encoding="utf-8") == OLD


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_named_like_a_lock_blocks_nothing(folder):
    corpus, _ = folder
    data = corpus / "data.conll"
    os.mkfifo(lock_path(str(data)))
    r = _run("stats", str(data))
    assert r.returncode == 0, r.stderr
    src = corpus.parent / "new.conll"
    src.write_text(NEW, encoding="utf-8")
    r = _run("convert", str(src), str(data))  # asks the lock first
    assert r.returncode == 0, r.stderr
    assert data.read_text(encoding="utf-8") == NEW
    # a window asking for the lock neither: it is not a lock anybody wrote
    code = (
        "import sys; from nerstudio.corpus.filelock import FileLock, Instance; "
        "print(FileLock(sys.argv[1], Instance.new()).acquire())"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(data)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr


# -- lock fields ------------------------------------------------------------------------------


def _holder(**fields) -> dict:
    """A lock holder: a live process of this host (this test's parent), then ``fields``."""
    base = {
        "pid": os.getppid(),
        "host": socket.gethostname(),
        "user": "someone",
        "started": time.time(),
        "id": "0123abcd",
        "proc_start": "",
    }
    return {**base, **fields}


def _write_lock(data: Path, holder: dict, **extra) -> Path:
    lock = Path(lock_path(str(data)))
    body = {
        "format": "nerstudio-lock",
        "corpus": str(data),
        "holder": holder,
        "locked": time.time(),
    }
    lock.write_text(json.dumps({**body, **extra}), encoding="utf-8")
    return lock


@pytest.mark.parametrize(
    "fields",
    [
        {"pid": 10**14},
        {"pid": -1},
        {"pid": 0},
        {"pid": True},
        {"pid": "1"},
        {"started": float("nan")},
        {"started": 1e300},
        {"started": -5.0},
        {"started": float("inf")},
        {"host": "a\nb"},
        {"id": "../x"},
        {"proc_start": [1]},
    ],
)
def test_a_lock_with_an_invalid_field_is_no_holder_and_no_internal_error(tmp_path, capsys, fields):
    data = tmp_path / "data.conll"
    data.write_text(OLD, encoding="utf-8")
    _write_lock(data, _holder(**fields))
    src = tmp_path / "new.conll"
    src.write_text(NEW, encoding="utf-8")
    assert main(["convert", str(src), str(data)]) == 0, capsys.readouterr().err
    assert data.read_text(encoding="utf-8") == NEW
    lock = FileLock(str(data), Instance.new())
    assert not lock.acquire()  # young and unreadable: respected a while, as a crash's
    assert "cannot be read" in lock.describe_holder()


@pytest.mark.parametrize(
    "extra", [{"locked": float("nan")}, {"file": [-1, 2]}, {"file": "x"}, {"corpus": 5}]
)
def test_a_lock_with_an_invalid_record_field_is_no_holder(tmp_path, capsys, extra):
    data = tmp_path / "data.conll"
    data.write_text(OLD, encoding="utf-8")
    _write_lock(data, _holder(), **extra)
    refuse_if_held(data)  # no error: not a valid lock


@pytest.mark.parametrize("extra", [{}, {"written_by": "a later version"}])
def test_a_valid_lock_of_a_live_process_is_still_respected(tmp_path, capsys, extra):
    data = tmp_path / "data.conll"
    data.write_text(OLD, encoding="utf-8")
    _write_lock(data, _holder(), **extra)
    with pytest.raises(FileInUse):
        refuse_if_held(data)


# -- a lock covers every name of its file -----------------------------------------------------


def _other_window(path: Path) -> FileLock:
    """A window of another (live) process holding ``path``."""
    inst = Instance(os.getppid(), socket.gethostname(), "someone", time.time(), "0badcafe")
    lock = FileLock(str(path), inst)
    assert lock.acquire()
    return lock


@pytest.mark.parametrize("how", ["symlink", "hardlink", "symlink-elsewhere"])
def test_a_lock_is_seen_through_every_name_of_its_file(tmp_path, capsys, how):
    data = tmp_path / "data.conll"
    data.write_text(OLD, encoding="utf-8")
    where = tmp_path / "elsewhere" if how == "symlink-elsewhere" else tmp_path
    where.mkdir(exist_ok=True)
    alias = where / "alias.conll"
    if how == "hardlink":
        os.link(data, alias)
    else:
        alias.symlink_to(data)
    held = _other_window(data)
    src = tmp_path / "new.conll"
    src.write_text(NEW, encoding="utf-8")
    assert main(["convert", str(src), str(alias)]) == 1
    assert "open for editing" in _one_line(capsys.readouterr().err)
    assert data.read_text(encoding="utf-8") == OLD
    window = FileLock(str(alias), Instance.new())
    assert not window.acquire() and window.holder is not None
    assert window.holder.id == "0badcafe"
    held.release()
    assert window.acquire()  # free once the other window closes
    window.release()


def test_a_lock_through_a_link_is_seen_through_the_file_itself(tmp_path):
    data = tmp_path / "data.conll"
    data.write_text(OLD, encoding="utf-8")
    alias = tmp_path / "alias.conll"
    os.link(data, alias)
    held = _other_window(alias)
    with pytest.raises(FileInUse):
        refuse_if_held(data)
    held.release()
    refuse_if_held(data)


# -- long names -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a" * 245 + ".conll", "é" * 122 + ".conll"])
def test_a_file_with_a_name_of_the_longest_length_can_be_saved_and_locked(tmp_path, name):
    assert len(os.fsencode(name)) in (251, 250)
    src = tmp_path / "new.conll"
    src.write_text(NEW, encoding="utf-8")
    path = tmp_path / name
    path.write_text(OLD, encoding="utf-8")
    write_corpus(read_corpus(src), path)
    assert _words(path) == [("Oslo", "is", "cold")]
    write_corpus(read_corpus(src), path)  # and again, over the first
    assert sorted(os.listdir(tmp_path)) == sorted(["new.conll", name])
    lock = FileLock(str(path), Instance.new())
    assert lock.acquire() and not lock.error
    assert len(os.fsencode(os.path.basename(lock.file))) <= 255
    assert os.path.exists(lock.file)
    lock.release()


def test_a_brat_pair_with_a_long_name_is_saved_together(tmp_path):
    stem = "b" * 247
    src = tmp_path / "new.conll"
    src.write_text(NEW, encoding="utf-8")
    path = tmp_path / (stem + ".ann")
    write_corpus(read_corpus(src), path, format="brat")
    assert (tmp_path / (stem + ".txt")).exists()
    assert _words(path) == [("Oslo", "is", "cold")]
    assert not [n for n in os.listdir(tmp_path) if "nerstudio" in n]


def test_a_hard_linked_file_with_a_long_name_is_copied_into_under_a_journal(tmp_path):
    name = "c" * 245 + ".conll"
    path, other = tmp_path / name, tmp_path / "other.conll"
    path.write_text(OLD, encoding="utf-8")
    os.link(path, other)
    src = tmp_path / "new.conll"
    src.write_text(NEW, encoding="utf-8")
    write_corpus(read_corpus(src), path)
    assert os.stat(path).st_ino == os.stat(other).st_ino
    assert _words(other) == [("Oslo", "is", "cold")]
    assert not [n for n in os.listdir(tmp_path) if "nerstudio" in n]


def test_a_journal_too_large_to_be_one_is_refused_unread(folder, capsys):
    corpus, _ = folder
    with open(corpus / J, "wb") as f:
        f.truncate(300 << 20)  # sparse: 300 MB that take no disk
    _refused(capsys, corpus, corpus / J)
    assert "too large" in read_error(corpus / "data.conll")
