"""Saves under faults (issue 22, case 10 and case 14's FIFO): a fault-injecting writer runs out of
disk space at a chosen byte, and a save is killed (SIGKILL, in a forked process) at a chosen
byte of a copy or a chosen step of a multi-file save. Whatever the point, what is read
afterwards is the old file (or set of files) or the new one, never a mix; a protected target is
refused; every error names the target.

The faults are injected through the standard library (``os.fdopen``, ``os.replace``,
``open``), not through nerstudio's own hooks, so that the same tests ran against the code
before the save journal existed (and failed there)."""

from __future__ import annotations

import builtins
import errno
import json
import os
import signal
import stat

import pytest

from nerstudio.cli import main
from nerstudio.corpus import read_corpus, write_corpus
from nerstudio.corpus.model import Corpus, Document, Sentence, Span
from nerstudio.errors import FormatError

pytestmark = [
    pytest.mark.data_integrity,
    pytest.mark.skipif(not hasattr(os, "fork"), reason="kills are simulated in a forked process"),
]


# -- what a file reads as --------------------------------------------------------------------


def _content(path, **kw):
    """A corpus as plain values: per document, per sentence, its words and spans."""
    c = read_corpus(path, **kw)
    return [
        [
            (tuple(s.words), tuple((sp.start, sp.end, sp.label) for sp in s.spans))
            for s in d.sentences
        ]
        for d in c.documents
    ]


def _conll(n: int, tag: str) -> bytes:
    rows = []
    for i in range(n):
        rows.append(f"tok{i} {tag if i % 3 == 0 else 'O'}\n")
        if i % 7 == 6:
            rows.append("\n")
    return "".join(rows).encode()


def _corpus(labels: list[str], n: int = 3) -> Corpus:
    """A small corpus, one document per entry of ``labels``, each entity labelled by it."""
    docs = []
    for k, lab in enumerate(labels):
        sents = [
            Sentence([f"w{k}{j}", "in", "Paris", "."], [Span(0, 1, lab), Span(2, 3, "LOC")])
            for j in range(n)
        ]
        docs.append(Document(sents, id=f"doc{k}"))
    return Corpus(docs, format="conll2003")


# -- fault injection -------------------------------------------------------------------------


class _DiskFull:
    """A file object that fails with ENOSPC once more than ``limit`` bytes were written."""

    def __init__(self, f, limit: int):
        self._f, self._left = f, limit

    def write(self, s):
        n = len(s.encode(self._f.encoding) if isinstance(s, str) else s)
        if n > self._left:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._left -= n
        return self._f.write(s)

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._f.__exit__(*exc)


def _disk_full_after(monkeypatch, limit: int, only=None):
    """Every temporary file of a save (or only those whose target name contains ``only``)
    runs out of space after ``limit`` bytes."""
    real = os.fdopen

    def fdopen(fd, *args, **kwargs):
        f = real(fd, *args, **kwargs)
        name = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else ""
        return _DiskFull(f, limit) if only is None or only in name else f

    monkeypatch.setattr(os, "fdopen", fdopen)


def _die():
    os.kill(os.getpid(), signal.SIGKILL)


def _killed(save) -> None:
    """Run ``save`` in a forked process, which is expected to be killed by it."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            save()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) or os.WEXITSTATUS(status) == 0


def _kill_at_replace(k: int):
    """In the child: die just before the ``k``-th rename of the save."""
    real, calls = os.replace, [0]

    def replace(*args, **kwargs):
        calls[0] += 1
        if calls[0] == k:
            _die()
        return real(*args, **kwargs)

    os.replace = replace


def _kill_after_bytes(target, n: int):
    """In the child: die once ``n`` bytes were written into ``target`` through ``open``
    (how a copy into a hard-linked file is made)."""
    real = builtins.open
    target = os.path.abspath(target)

    class Cut:
        def __init__(self, f):
            self._f, self._left = f, n

        def write(self, b):
            if len(b) >= self._left:
                self._f.write(b[: self._left])
                self._f.flush()
                _die()
            self._left -= len(b)
            return self._f.write(b)

        def __getattr__(self, name):
            return getattr(self._f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self._f.__exit__(*exc)

    def fake_open(file, mode="r", *args, **kwargs):
        f = real(file, mode, *args, **kwargs)
        if (
            isinstance(file, (str, os.PathLike))
            and os.path.abspath(file) == target
            and ("+" in mode or "w" in mode)
        ):
            return Cut(f)
        return f

    builtins.open = fake_open


def _nerstudio_files(folder) -> list[str]:
    return sorted(p for p in os.listdir(folder) if "nerstudio" in p)


# -- hard-linked targets: killed during the copy ----------------------------------------------

OLD = _conll(20000, "B-PER")
NEW = _conll(20000, "B-LOC")


@pytest.mark.parametrize("cut", [0, 1, 4096, len(NEW) // 2, len(NEW) - 1])
def test_a_save_onto_a_hard_linked_file_killed_during_the_copy_reads_whole(tmp_path, cut):
    path, other = tmp_path / "work.conll", tmp_path / "other-name.conll"
    path.write_bytes(OLD)
    os.link(path, other)
    src = tmp_path / "new.conll"
    src.write_bytes(NEW)
    new = read_corpus(src)

    def save():
        _kill_after_bytes(path, cut)
        write_corpus(new, path)

    _killed(save)
    # whoever reads next (through either name) finishes the save: the new contents, whole
    assert _content(other) == _content(src)
    assert path.read_bytes() == other.read_bytes() == NEW
    assert os.stat(path).st_ino == os.stat(other).st_ino  # still one file
    assert _nerstudio_files(tmp_path) == []


def test_an_interrupted_copy_that_cannot_be_finished_is_refused_not_read(
    tmp_path, monkeypatch, capsys
):
    path, other = tmp_path / "work.conll", tmp_path / "other-name.conll"
    path.write_bytes(OLD)
    os.link(path, other)
    src = tmp_path / "new.conll"
    src.write_bytes(NEW)
    new = read_corpus(src)

    def save():
        _kill_after_bytes(path, len(NEW) // 2)
        write_corpus(new, path)

    _killed(save)
    from nerstudio.corpus import journal

    def cannot(*_):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(journal, "copy_into", cannot)
    with pytest.raises(FormatError) as err:
        read_corpus(other)
    assert "interrupted save" in err.value.message and ".tmp" in err.value.message
    assert main(["stats", str(path)]) == 1
    assert "interrupted save" in capsys.readouterr().err
    monkeypatch.undo()
    assert _content(path) == _content(src)  # once it can be finished, it is


def test_a_kill_before_the_copy_keeps_the_old_file(tmp_path):
    path, other = tmp_path / "work.conll", tmp_path / "other-name.conll"
    path.write_bytes(OLD)
    os.link(path, other)
    new = read_corpus(_write(tmp_path / "new.conll", NEW))

    def save():
        from nerstudio.corpus import journal

        journal.fault_hook = lambda step, p: _die() if step == "journal" else None
        write_corpus(new, path)

    _killed(save)
    assert other.read_bytes() == OLD
    assert _content(path) == _content(tmp_path / "new.conll") or path.read_bytes() == OLD
    assert path.read_bytes() == OLD  # nothing had counted yet: the old file, and its temp cleaned
    assert _nerstudio_files(tmp_path) == []


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


# -- multi-file saves: all files or none -----------------------------------------------------

NAMES_OLD = ["O", "B-PER", "I-PER"]


def _hf_old(folder):
    data = folder / "data.jsonl"
    data.write_text(json.dumps({"id": "0", "tokens": ["Ann", "sings"], "ner_tags": [1, 0]}) + "\n")
    (folder / "data.labels.txt").write_text("".join(n + "\n" for n in NAMES_OLD))
    return data


def test_an_hf_pair_on_a_full_disk_keeps_the_old_pair(tmp_path, monkeypatch):
    data = _hf_old(tmp_path)
    before = _content(data)
    new = _corpus(["ORG", "MISC"], n=50)
    _disk_full_after(monkeypatch, 100, only="data.jsonl")
    with pytest.raises(FormatError) as err:
        write_corpus(new, data, format="hf")
    assert err.value.path == str(data) and "No space left on device" in err.value.message
    monkeypatch.undo()
    assert _content(data) == before  # the old data with the old names
    assert (tmp_path / "data.labels.txt").read_text() == "".join(n + "\n" for n in NAMES_OLD)
    assert _nerstudio_files(tmp_path) == []


@pytest.mark.parametrize("k", [1, 2, 3])
def test_an_hf_pair_killed_at_each_rename_reads_old_or_new(tmp_path, k):
    data = _hf_old(tmp_path)
    before = _content(data)
    new = _corpus(["ORG", "MISC"])
    ref = tmp_path / "ref"
    ref.mkdir()
    write_corpus(new, ref / "data.jsonl", format="hf")
    after = _content(ref / "data.jsonl")

    def save():
        _kill_at_replace(k)
        write_corpus(new, data, format="hf")

    _killed(save)
    got = _content(data)
    assert got in (before, after)
    assert got == after or k == 1  # once a file was replaced, the save counts: finished on reading
    assert _nerstudio_files(tmp_path) == []


def _brat_folder(folder, labels):
    folder.mkdir()
    for k, lab in enumerate(labels):
        (folder / f"doc{k}.txt").write_text(f"Ann{k} met Bob in Paris .\n")
        (folder / f"doc{k}.ann").write_text(f"T1\t{lab} 0 {3 + len(str(k))}\tAnn{k}\n")
    return folder


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_a_brat_collection_killed_at_each_rename_reads_old_or_new(tmp_path, k):
    folder = _brat_folder(tmp_path / "coll", ["PER", "PER", "PER"])
    before = _content(folder)
    corpus = read_corpus(folder)
    for d in corpus.documents:
        d.sentences[0].spans = [Span(0, 1, "ORG"), Span(4, 5, "LOC")]
    ref = _brat_folder(tmp_path / "ref", ["PER", "PER", "PER"])
    write_corpus(corpus, ref)
    after = _content(ref)
    assert after != before

    def save():
        _kill_at_replace(k)
        write_corpus(corpus, folder)

    _killed(save)
    assert _content(folder) in (before, after)
    assert _nerstudio_files(folder) == []


def test_a_brat_pair_on_a_full_disk_keeps_the_old_pair(tmp_path, monkeypatch):
    folder = _brat_folder(tmp_path / "one", ["PER"])
    ann = folder / "doc0.ann"
    before = _content(ann)
    c = read_corpus(ann)
    c.documents[0].text = None
    c.documents[0].sentences[0].words = ["Eve0", "met", "Bob", "in", "Paris", "."]  # a new .txt too
    c.documents[0].sentences[0].spans = [Span(0, 1, "ORG")]
    _disk_full_after(monkeypatch, 0, only=".ann")
    with pytest.raises(FormatError) as err:
        write_corpus(c, ann)
    assert err.value.path == str(ann) and "No space" in err.value.message
    monkeypatch.undo()
    assert _content(ann) == before and (folder / "doc0.txt").read_text().startswith("Ann0")


# -- a full disk, for every writer -------------------------------------------------------------

FORMATS = [
    ("conll2003", "out.conll"),
    ("tsv", "out.tsv"),
    ("jsonl", "out.jsonl"),
    ("hf", "out.json"),
    ("brat", "out.ann"),
    ("conllu", "out.conllu"),
    ("doccano", "out.jsonl"),
    ("prodigy", "out.jsonl"),
    ("label-studio", "out.json"),
]


@pytest.mark.parametrize("fmt,name", FORMATS)
@pytest.mark.parametrize("limit", [0, 10])
def test_a_full_disk_leaves_every_format_unchanged_and_names_the_target(
    tmp_path, monkeypatch, fmt, name, limit
):
    first = _corpus(["PER"], n=1)
    path = tmp_path / name
    write_corpus(first, path, format=fmt)
    files = {p: p.read_bytes() for p in tmp_path.iterdir()}
    bigger = _corpus(["ORG"], n=40)
    _disk_full_after(monkeypatch, limit)
    with pytest.raises(FormatError) as err:
        write_corpus(bigger, path, format=fmt)
    assert (
        err.value.path in {str(p) for p in files} and "No space left on device" in err.value.message
    )
    assert ".tmp" not in str(err.value)
    monkeypatch.undo()
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == files


# -- protected targets --------------------------------------------------------------------------


def test_a_read_only_target_is_refused_not_replaced(tmp_path, capsys):
    path = _write(tmp_path / "gold.conll", OLD)
    path.chmod(0o444)
    with pytest.raises(FormatError) as err:
        write_corpus(_corpus(["ORG"]), path)
    assert err.value.path == str(path) and "read-only" in err.value.message
    assert path.read_bytes() == OLD and stat.S_IMODE(os.stat(path).st_mode) == 0o444
    src = _write(tmp_path / "src.conll", NEW)
    assert main(["convert", str(src), str(path)]) == 1
    err_text = capsys.readouterr().err
    assert err_text.count("\n") == 1 and "gold.conll: is read-only" in err_text
    assert path.read_bytes() == OLD


def test_a_read_only_hard_linked_target_keeps_its_link_and_contents(tmp_path):
    path, other = _write(tmp_path / "gold.conll", OLD), tmp_path / "other.conll"
    os.link(path, other)
    path.chmod(0o444)
    with pytest.raises(FormatError):
        write_corpus(_corpus(["ORG"]), path)
    assert os.stat(path).st_ino == os.stat(other).st_ino and path.read_bytes() == OLD


def test_a_folder_that_cannot_be_written_is_named_with_the_target(tmp_path, monkeypatch):
    """(Injected: the tests may run as root, who may write anywhere.)"""
    path = _write(tmp_path / "gold.conll", OLD)
    real = os.open

    def refuse(p, flags, *args, **kwargs):
        if flags & os.O_CREAT and os.path.basename(p).startswith("."):
            raise PermissionError(errno.EACCES, "Permission denied", p)
        return real(p, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(FormatError) as err:
        write_corpus(_corpus(["ORG"]), path)
    assert (
        err.value.path == str(path)
        and str(tmp_path) in err.value.message
        and ".tmp" not in str(err.value)
    )
    monkeypatch.undo()
    assert path.read_bytes() == OLD


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_fifo_given_as_output_is_refused_not_replaced(tmp_path, capsys):
    fifo = tmp_path / "out.conll"
    os.mkfifo(fifo)
    src = _write(tmp_path / "src.conll", NEW)
    assert main(["convert", str(src), str(fifo)]) == 1
    assert "named pipe" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    with pytest.raises(FormatError):
        write_corpus(_corpus(["ORG"]), fifo, format="hf")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not (tmp_path / "out.labels.txt").exists()


def test_a_lone_surrogate_is_an_error_naming_the_file(tmp_path):
    c = _corpus(["PER"], n=1)
    c.documents[0].sentences[0] = Sentence(["Ann", "i\ud800n", "Paris", "."], [Span(0, 1, "PER")])
    for fmt, name in FORMATS:
        path = tmp_path / name
        with pytest.raises(FormatError) as err:
            write_corpus(c, path, format=fmt)
        assert err.value.path in (str(path), str(path.with_suffix(".txt"))), fmt
        assert "surrogate" in err.value.message or "cannot" in err.value.message, fmt
        assert not path.exists()


def _kill_at_step(name: str, k: int):
    """In the child: die at the ``k``-th announcement of save step ``name`` (journal.fault_hook)."""
    from nerstudio.corpus import journal

    seen = [0]

    def hook(step, path):
        if step == name:
            seen[0] += 1
            if seen[0] == k:
                _die()

    journal.fault_hook = hook


@pytest.mark.parametrize(
    "step,k",
    [("flush", 1), ("flush", 2), ("journal", 1), ("rename", 1), ("rename", 2), ("unjournal", 1)],
)
def test_an_hf_pair_killed_at_each_step_of_the_journal_reads_old_or_new(tmp_path, step, k):
    data = _hf_old(tmp_path)
    before = _content(data)
    new = _corpus(["ORG", "MISC"])
    ref = tmp_path / "ref"
    ref.mkdir()
    write_corpus(new, ref / "data.jsonl", format="hf")
    after = _content(ref / "data.jsonl")

    def save():
        _kill_at_step(step, k)
        write_corpus(new, data, format="hf")

    _killed(save)
    committed = step in ("rename", "unjournal")
    assert _content(data) == (after if committed else before)
    # finished or rolled back, temporary files and journal gone
    assert _nerstudio_files(tmp_path) == []
    write_corpus(new, data, format="hf")  # and the folder saves normally again
    assert _content(data) == after


def test_a_save_of_an_unrelated_file_finishes_an_interrupted_one_in_its_folder(tmp_path):
    data = _hf_old(tmp_path)
    new = _corpus(["ORG"])

    def save():
        _kill_at_step("rename", 2)
        write_corpus(new, data, format="hf")

    _killed(save)
    assert any(n.endswith(".journal") for n in os.listdir(tmp_path))
    write_corpus(_corpus(["PER"]), tmp_path / "other.conll")
    assert not any(n.endswith(".journal") for n in os.listdir(tmp_path))
    assert [s.spans[0].label for s in read_corpus(data).sentences] == ["ORG"] * 3


def test_a_hard_linked_file_on_a_disk_too_full_for_the_copy_is_left_untouched(
    tmp_path, monkeypatch
):
    path, other = _write(tmp_path / "work.conll", b"a O\n"), tmp_path / "other.conll"
    os.link(path, other)

    class Full:
        f_bavail, f_frsize = 0, 4096

    monkeypatch.setattr(os, "statvfs", lambda _: Full())
    with pytest.raises(FormatError) as err:
        write_corpus(read_corpus(_write(tmp_path / "new.conll", NEW)), path)
    assert err.value.path == str(path) and "No space left" in err.value.message
    assert path.read_bytes() == other.read_bytes() == b"a O\n" and os.stat(path).st_nlink == 2
    assert _nerstudio_files(tmp_path) == []


def test_a_save_still_being_committed_is_waited_for_then_refused_not_read(tmp_path, monkeypatch):
    """A journal whose process is alive (its lock held) and whose commit is recorded: the
    reader waits, then refuses, naming the file; it never reads the half-renamed set."""
    import fcntl

    from nerstudio.corpus import journal

    data = _hf_old(tmp_path)
    tmp = tmp_path / ".data.jsonl.nerstudio-1-0123abcd.tmp"
    tmp.write_text(json.dumps({"id": "0", "tokens": ["Bob"], "ner_tags": [1]}) + "\n")
    jpath = tmp_path / ".data.jsonl.nerstudio-1-0123abcd.journal"
    jpath.write_text(
        json.dumps(
            {
                "commit": [{"tmp": str(tmp), "target": str(data), "copy": False}],
                "journals": [str(jpath)],
            }
        )
        + "\n"
    )
    fd = os.open(jpath, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # the saving process, alive
    monkeypatch.setattr(journal, "WAIT_FOR_LIVE", 0.2)
    try:
        with pytest.raises(FormatError) as err:
            read_corpus(data)
        assert err.value.path == str(data) and "still being completed" in err.value.message
    finally:
        os.close(fd)  # the process ends without finishing: the next reader finishes it
    assert [s.words for s in read_corpus(data).sentences] == [("Bob",)]
    assert _nerstudio_files(tmp_path) == []


@pytest.mark.parametrize("step,k", [("rename", 1), ("rename", 2), ("unjournal", 1)])
def test_a_pair_saved_across_two_folders_is_finished_in_both(tmp_path, step, k):
    """The data file is a symbolic link into another folder: the save journals both folders,
    each journal finishes its own folder's files, and a read through the link finishes both."""
    store, work = tmp_path / "store", tmp_path / "work"
    store.mkdir()
    work.mkdir()
    _hf_old(store)
    (work / "data.labels.txt").write_text("".join(n + "\n" for n in NAMES_OLD))
    data = work / "data.jsonl"
    data.symlink_to(store / "data.jsonl")
    new = _corpus(["ORG", "MISC"])
    ref = tmp_path / "ref"
    ref.mkdir()
    write_corpus(new, ref / "data.jsonl", format="hf")
    after = _content(ref / "data.jsonl")

    def save():
        _kill_at_step(step, k)
        write_corpus(new, data, format="hf")

    _killed(save)
    journals = [n for f in (store, work) for n in os.listdir(f) if n.endswith(".journal")]
    assert len(journals) == 2  # one per folder, each with the whole commit record
    assert _content(data) == after
    assert data.is_symlink()
    assert _nerstudio_files(store) == [] and _nerstudio_files(work) == []
