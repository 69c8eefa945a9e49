"""A background save lets the window's thread have the interpreter (app.pacing, corpus.writing's
``paced``), and what it writes is still exactly the snapshot of the moment Save was pressed:
edits made while the file is being written (at the pacing points, where the window's thread
runs) are not in the file and stay unsaved. No timings here: bench/save.py measures them."""

from __future__ import annotations

import os

import pytest

from nerstudio.app import pacing
from nerstudio.app.document import Document
from nerstudio.app.pacing import Pacer
from nerstudio.app.saving import CorpusFile
from nerstudio.corpus.filelock import Instance
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.corpus.writing import PACE_LINES, paced, write_lines

N_SENTENCES = 400  # 3 tokens each: more lines than PACE_LINES, more sentences than a slice


@pytest.fixture
def big_file(tmp_path):
    p = tmp_path / "data" / "big.conll"
    p.parent.mkdir()
    rows = []
    for k in range(N_SENTENCES):
        rows += [f"Word{k} NNP B-NP B-ORG", "and CC O O", f"Other{k} NNP B-NP B-PER", ""]
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return p


def _open(path):
    doc = Document()
    f = CorpusFile(doc, Instance.new())
    doc.open(read_corpus(str(path)), disk=None)
    return doc, f


def test_edits_made_while_the_file_is_written_are_not_in_it_and_stay_unsaved(big_file):
    doc, f = _open(big_file)
    doc.set_spans(0, [Span(0, 3, "MISC")])
    shown = [list(s.spans) for s in doc.opened().sentences]  # what Save was pressed on
    pending = f.begin_save()
    edited: list[int] = []
    writing: list[bool] = []

    def meanwhile() -> None:  # the window's thread, at every point where the save lets it in
        k = 1 + len(edited)
        doc.set_spans(k, [Span(1, 2, "LOC")])
        edited.append(k)
        # a temporary file next to the corpus: the file is being written now
        writing.append(len(os.listdir(big_file.parent)) > 1)

    pending.run(meanwhile)
    f.finish_save(pending)
    assert pending.error is None
    assert any(writing), "no edit was made while the file was being written"
    back = read_corpus(str(big_file))
    assert [list(s.spans) for s in back.sentences] == shown
    assert doc.is_dirty() and sorted(doc.unsaved()) == edited
    for _ in edited:
        doc.undo()
    assert not doc.is_dirty()  # back at what was saved: saved = shown
    assert [list(s.spans) for s in doc.opened().sentences] == shown
    assert f.check().same
    f.close()


def test_write_lines_calls_the_pace_every_so_many_lines_only_inside_paced(tmp_path):
    calls: list[int] = []
    lines = [f"line {i}" for i in range(3 * PACE_LINES + 5)]
    with paced(lambda: calls.append(1)):
        write_lines(tmp_path / "a.txt", lines)
    assert len(calls) == 3
    write_lines(tmp_path / "b.txt", lines)  # outside: not paced
    assert len(calls) == 3
    with pytest.raises(RuntimeError), paced(lambda: calls.append(1)):
        raise RuntimeError
    write_lines(tmp_path / "c.txt", lines)  # restored after an error too
    assert len(calls) == 3
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "\n".join(lines) + "\n"


def test_the_review_sidecars_checksum_is_paced_too(big_file):
    from nerstudio.app.review import words_checksum

    corpus = read_corpus(str(big_file))
    calls: list[int] = []
    with paced(lambda: calls.append(1)):
        crc = words_checksum(corpus)
    slices = -(-N_SENTENCES // PACE_LINES)
    assert len(calls) == slices  # one per slice of sentences begun
    assert crc == words_checksum(corpus) and len(calls) == slices  # the same sum; not paced outside


class _Clock:
    """The clocks and sleep of a pretend machine: during a rest, another thread of the process
    works ``others`` seconds of processor time, and the system gives the processor to other
    programs for ``late`` seconds."""

    def __init__(self) -> None:
        self.now, self.cpu, self.others, self.late, self.slept = 0.0, 0.0, 0.0, 0.0, []

    def perf_counter(self) -> float:
        return self.now

    def process_time(self) -> float:
        return self.cpu

    def thread_time(self) -> float:
        return 0.0  # this thread's own time does not move while it sleeps

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s + self.others + self.late
        self.cpu += self.others


@pytest.fixture
def clock(monkeypatch):
    c = _Clock()
    monkeypatch.setattr(pacing.time, "perf_counter", c.perf_counter)
    monkeypatch.setattr(pacing.time, "sleep", c.sleep)
    monkeypatch.setattr(pacing.time, "process_time", c.process_time)
    monkeypatch.setattr(pacing.time, "thread_time", c.thread_time)
    return c


def test_the_pacer_rests_after_each_slice_of_work_and_longer_when_the_window_is_busy(clock):
    p = Pacer(work=0.004, rest=0.0002, busy=0.001, backoff=0.010)
    clock.now += 0.003
    p()  # within the slice: goes on
    assert clock.slept == []
    clock.now += 0.002
    p()  # the slice is over, nobody else wanted the interpreter: a short rest only
    assert clock.slept == [0.0002] and (p.rests, p.backoffs) == (1, 0)
    clock.late = 0.020
    clock.now += 0.005
    p()  # back late, but only because the machine is loaded: no longer rest
    assert clock.slept[1:] == [0.0002] and (p.rests, p.backoffs) == (2, 0)
    clock.late, clock.others = 0.0, 0.005
    clock.now += 0.005
    p()  # the window worked meanwhile: it is busy, so it gets a longer turn
    assert clock.slept[2:] == [0.0002, 0.010] and (p.rests, p.backoffs) == (3, 1)
    clock.now += 0.001
    p()  # a new slice started after the rest
    assert len(clock.slept) == 4


# --------------------------------------------------------------------------------------------
# the disk check: sizes and times when Save is pressed, the content in the write


@pytest.fixture
def hashed(monkeypatch):
    """The files whose content the disk check reads, with the thread that read them."""
    import threading

    from nerstudio.app import ownership

    calls: list[str] = []
    real = ownership.sha256_file

    def spy(path: str) -> str:
        calls.append(threading.current_thread().name)
        return real(path)

    monkeypatch.setattr(ownership, "sha256_file", spy)
    return calls


def test_a_touched_file_is_hashed_by_the_write_not_when_save_is_pressed(big_file, hashed):
    doc, f = _open(big_file)
    st = os.stat(big_file)
    os.utime(big_file, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # same bytes, new time
    doc.set_spans(0, [Span(0, 3, "MISC")])
    hashed.clear()  # (opening fingerprinted the file)
    pending = f.begin_save()
    assert hashed == []  # the window's thread read no content
    pending.run()
    f.finish_save(pending)
    assert hashed  # the write compared the content (and fingerprinted what it wrote)
    assert read_corpus(str(big_file)).sentences[0].spans == [Span(0, 3, "MISC")]
    assert not doc.is_dirty() and f.check().same
    f.close()


def test_a_file_changed_on_disk_is_not_overwritten_when_only_the_content_tells(big_file):
    """Same size, new content (``sed -i`` of a tag): Save begins (sizes and times cannot tell),
    the write finds the change and writes nothing, and the document stays unsaved."""
    from helpers.changed_on_disk import sed_i

    from nerstudio.app.saving import DiskChanged

    doc, f = _open(big_file)
    doc.set_spans(0, [Span(0, 3, "MISC")])
    sed_i(big_file, "Word5 NNP B-NP B-ORG", "Word5 NNP B-NP B-LOC")
    theirs = big_file.read_bytes()
    pending = f.begin_save()
    pending.run()
    with pytest.raises(DiskChanged) as exc:
        f.finish_save(pending)
    assert exc.value.state.status == "changed"
    assert big_file.read_bytes() == theirs
    assert doc.is_dirty() and doc.unsaved() == [0]
    f.close()
