"""The document owns its file, without a window: fingerprints and the disk check, the advisory
lock (two processes, a killed holder), the save service's refusals, Keep both, and recovery
files per instance (issue 22, cases 1–3)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from helpers.changed_on_disk import CONLL, sed_i

from nerstudio.app import recovery
from nerstudio.app.autosave import Autosaver
from nerstudio.app.document import Document
from nerstudio.app.keepboth import describe
from nerstudio.app.ownership import check, fingerprint
from nerstudio.app.saving import CorpusFile, DiskChanged, Locked
from nerstudio.corpus.filelock import FileLock, Instance, lock_path, read_holder
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span

MINE_ORG = [Span(0, 2, "ORG")]


@pytest.fixture
def corpus_file(tmp_path):
    p = tmp_path / "eng.testb"
    p.write_text(CONLL, encoding="utf-8")
    return p


def _open(path, instance=None):
    doc = Document()
    f = CorpusFile(doc, instance or Instance.new())
    doc.open(read_corpus(str(path)), disk=None)
    return doc, f


# --------------------------------------------------------------------------------------------
# fingerprint and check


def test_check_tells_same_touched_changed_and_missing(corpus_file):
    fp = fingerprint(str(corpus_file))
    assert fp.exists and fp.members[0].size == corpus_file.stat().st_size
    assert check(fp).status == "same"
    os.utime(corpus_file, ns=(fp.mtime_ns + 5_000_000_000,) * 2)  # touched: same bytes
    assert check(fp).status == "same"
    sed_i(corpus_file, "B-PER", "B-ORG")  # same size, other bytes
    st = check(fp)
    assert st.status == "changed" and st.now.content() != fp.content()
    corpus_file.unlink()
    assert check(fp).status == "missing"


def test_a_brat_folder_is_fingerprinted_member_by_member(tmp_path):
    d = tmp_path / "coll"
    d.mkdir()
    for name, text, ann_ in (
        ("a", "Greta Lind lives in Oslo.\n", "T1\tPER 0 10\tGreta Lind\n"),
        ("b", "Anna went to Rome.\n", "T1\tPER 0 4\tAnna\n"),
    ):
        (d / f"{name}.txt").write_text(text, encoding="utf-8")
        (d / f"{name}.ann").write_text(ann_, encoding="utf-8")
    fp = fingerprint(str(d))
    assert fp.folder and [m.name for m in fp.members] == ["a.ann", "a.txt", "b.ann", "b.txt"]
    (d / "notes.md").write_text("not read", encoding="utf-8")
    assert check(fp).same  # not a member
    (d / "b.ann").write_text("T1\tLOC 13 17\tRome\n", encoding="utf-8")
    st = check(fp)
    assert st.status == "changed" and st.changed == ("b.ann",)


# --------------------------------------------------------------------------------------------
# the lock


def test_one_writer_per_file_in_one_process(corpus_file):
    a, b = Instance.new(), Instance.new()
    la, lb = FileLock(str(corpus_file), a), FileLock(str(corpus_file), b)
    assert la.acquire() and not lb.acquire()
    assert lb.holder == a and f"process {os.getpid()}" in lb.describe_holder()
    la.release()
    assert not os.path.exists(lock_path(str(corpus_file)))
    assert lb.acquire()
    b.abandon()  # b's window "crashes": its lock stays, and is taken over
    assert os.path.exists(lb.file)
    assert la.acquire() and read_holder(la.file) == a
    la.release()


def test_the_lock_is_hidden_from_the_brat_folder_reader(tmp_path):
    d = tmp_path / "coll"
    d.mkdir()
    (d / "a.txt").write_text("Greta Lind lives in Oslo.\n", encoding="utf-8")
    (d / "a.ann").write_text("T1\tPER 0 10\tGreta Lind\n", encoding="utf-8")
    inner = FileLock(str(d / "a.ann"), Instance.new())  # a pair opened alone, inside the folder
    outer = FileLock(str(d), Instance.new())
    assert inner.acquire() and outer.acquire()
    assert os.path.dirname(outer.file) == str(tmp_path)
    c = read_corpus(str(d))
    assert [doc.id for doc in c.documents] == ["a"] and not c.notes
    inner.release()
    outer.release()


def test_an_unreadable_lock_is_respected_while_young(corpus_file):
    lp = lock_path(str(corpus_file))
    with open(lp, "w") as f:
        f.write("garbage")
    lk = FileLock(str(corpus_file), Instance.new())
    assert not lk.acquire() and "cannot be read" in lk.describe_holder()
    old = time.time() - 3600
    os.utime(lp, (old, old))
    assert lk.acquire()
    lk.release()


_HOLDER = textwrap.dedent("""
    import sys, time
    from nerstudio.corpus.filelock import FileLock, Instance
    lock = FileLock(sys.argv[1], Instance.new())
    print("HELD" if lock.acquire() else "REFUSED", flush=True)
    time.sleep(120)
""")


def test_a_lock_of_a_killed_process_is_taken_over(corpus_file, tmp_path):
    """Another process holds the lock: refused; it is killed (kill -9, no clean-up): its lock
    file stays and the next instance takes it over."""
    script = tmp_path / "holder.py"
    script.write_text(_HOLDER, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(script), str(corpus_file)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert proc.stdout.readline().strip() == "HELD"
        me = FileLock(str(corpus_file), Instance.new())
        assert not me.acquire()
        assert me.holder.pid == proc.pid and f"process {proc.pid}" in me.describe_holder()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert read_holder(me.file).pid == proc.pid  # left behind
        assert me.acquire()
        assert read_holder(me.file).pid == os.getpid()
        me.release()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()


# --------------------------------------------------------------------------------------------
# the save service


@pytest.mark.data_integrity
def test_a_save_never_overwrites_another_programs_change(corpus_file):
    """Case 1 without a window: the change on disk is reported, not overwritten."""
    doc, f = _open(corpus_file)
    doc.set_spans(1, [Span(0, 2, "ORG")])  # relabel Peter Blackburn
    sed_i(corpus_file, "BRUSSELS NNP B-NP B-LOC", "BRUSSELS NNP B-NP B-ORG")
    with pytest.raises(DiskChanged) as exc:
        f.save()
    assert exc.value.state.status == "changed"
    assert "B-ORG" in corpus_file.read_text().split("BRUSSELS")[1].splitlines()[0]
    # Keep both: their sentence and mine, then a save writes both
    theirs = f.read_theirs()
    p = f.plan_keep_both(theirs)
    assert p.aligned and set(p.take) == {2} and p.mine == [1] and not p.conflicts
    assert f.edited() == [1]
    f.keep_both(theirs, exc.value.state, p)
    assert f.save().path == str(corpus_file)
    back = read_corpus(str(corpus_file))
    assert back.sentences[1].spans == [Span(0, 2, "ORG")] and back.sentences[2].spans == [
        Span(0, 1, "ORG")
    ]
    f.close()


def test_overwrite_and_a_deleted_file(corpus_file):
    doc, f = _open(corpus_file)
    doc.set_spans(1, [Span(0, 2, "ORG")])
    sed_i(corpus_file, "BRUSSELS NNP B-NP B-LOC", "BRUSSELS NNP B-NP B-ORG")
    f.save(overwrite=True)  # the user chose Overwrite
    assert read_corpus(str(corpus_file)).sentences[2].spans == [Span(0, 1, "LOC")]
    assert f.check().same  # the new fingerprint is recorded
    corpus_file.unlink()
    doc.set_spans(1, [])
    with pytest.raises(DiskChanged) as exc:
        f.save()
    assert exc.value.state.status == "missing" and "deleted or moved" in str(exc.value)
    f.close()


def test_keep_both_lists_conflicts_and_refuses_unaligned_versions(corpus_file):
    doc, f = _open(corpus_file)
    doc.set_spans(1, [Span(0, 1, "PER")])
    sed_i(corpus_file, "Blackburn NNP I-NP I-PER", "Blackburn NNP I-NP B-LOC")
    p = f.plan_keep_both(f.read_theirs())
    assert p.aligned and p.conflicts == [1] and not p.take
    assert describe(p) == (
        "Keep both: 0 sentences take the file's entities, 1 sentence keeps this window's; sentence "
        "2 was changed in both versions: this window's entities are kept there."
    )
    sed_i(corpus_file, "Commission NNP", "Commissioner NNP")
    p = f.plan_keep_both(f.read_theirs())
    assert not p.aligned and "tokens of sentence 4" in p.why
    f.close()


def test_keep_both_is_one_undoable_step(corpus_file):
    doc, f = _open(corpus_file)
    doc.set_spans(0, [])
    sed_i(corpus_file, "BRUSSELS NNP B-NP B-LOC", "BRUSSELS NNP B-NP B-ORG")
    sed_i(corpus_file, "European NNP I-NP B-ORG", "European NNP I-NP B-MISC")
    state = f.check()
    done = f.keep_both(f.read_theirs(), state)
    assert done == [2, 3] and doc.spans(2) == [Span(0, 1, "ORG")]
    doc.undo()
    assert (
        doc.spans(2) == [Span(0, 1, "LOC")]
        and doc.spans(3) == [Span(1, 3, "ORG")]
        and doc.spans(0) == []
    )
    f.close()


def test_keep_both_in_a_brat_folder_keeps_their_relations_and_notes(tmp_path):
    """Their .ann gained an entity, a relation and a note; mine an entity in another pair: the
    saved folder has all of them (the file keeps what is not an entity as they wrote it)."""
    d = tmp_path / "coll"
    d.mkdir()
    (d / "a.txt").write_text("Greta Lind lives in Oslo.\n", encoding="utf-8")
    (d / "a.ann").write_text("T1\tPER 0 10\tGreta Lind\n", encoding="utf-8")
    (d / "b.txt").write_text("Anna went to Rome.\n", encoding="utf-8")
    (d / "b.ann").write_text("T1\tPER 0 4\tAnna\n", encoding="utf-8")
    doc, f = _open(d)
    doc.set_spans(0, [Span(0, 2, "PER"), Span(4, 5, "LOC")])
    theirs_ann = "T1\tPER 0 4\tAnna\nT2\tLOC 13 17\tRome\nR1\tLives Arg1:T1 Arg2:T2\n#1\tAnnotatorNotes T2\tcapital\n"
    (d / "b.ann").write_text(theirs_ann, encoding="utf-8")
    with pytest.raises(DiskChanged) as exc:
        f.save()
    assert exc.value.state.changed == ("b.ann",)
    theirs = f.read_theirs()
    assert f.keep_both(theirs, exc.value.state) == [1]
    f.save()
    assert (d / "b.ann").read_text(encoding="utf-8") == theirs_ann
    assert (d / "a.ann").read_text(encoding="utf-8").splitlines() == [
        "T1\tPER 0 10\tGreta Lind",
        "T2\tLOC 20 24\tOslo",
    ]
    f.close()


@pytest.mark.data_integrity
def test_a_second_instance_cannot_save_over_the_first(corpus_file):
    """Case 2 without a window: the second instance is read-only while the first holds the file."""
    d1, f1 = _open(corpus_file)
    d2, f2 = _open(corpus_file)
    assert not f1.read_only and f2.read_only and f"process {os.getpid()}" in f2.holder()
    d1.set_spans(0, [])
    d2.set_spans(2, [])
    f1.save()
    with pytest.raises(Locked):
        f2.save()
    assert read_corpus(str(corpus_file)).sentences[0].spans == []
    f1.close()  # the first window closes: the second may write, after the disk check
    with pytest.raises(DiskChanged):
        f2.save()
    f2.close()


@pytest.mark.data_integrity
def test_review_states_saved_by_the_first_instance_are_a_change_on_disk(corpus_file):
    """The first window saves only review states and a note (the corpus file's bytes stay, its
    review sidecar changes) and closes: the second, read-only until then, must not save its
    own stale states over them without being told the disk changed."""
    d1, f1 = _open(corpus_file)
    d2, f2 = _open(corpus_file)
    d1.set_reviewed([0, 1])
    d1.set_note(1, "check the surname")
    f1.save()
    f1.close()
    d2.set_spans(3, [])
    with pytest.raises(DiskChanged):
        f2.save()
    assert f2.check() is not None and not f2.check().same
    f2.close()


# --------------------------------------------------------------------------------------------
# recovery files per instance


@pytest.mark.data_integrity
def test_two_instances_never_share_a_recovery_file(corpus_file, tmp_path):
    """Case 3 without a window: each instance's edits are kept in its own file, and both are
    offered once both instances are gone."""
    rec = str(tmp_path / "recovery")
    docs = []
    for k in (0, 2):
        doc = Document()
        doc.open(read_corpus(str(corpus_file)))
        saver = Autosaver(doc, rec)
        doc.set_spans(k, [])
        assert saver.write()
        docs.append((doc, saver))
    paths = [s.recovery_file() for _, s in docs]
    assert len(set(paths)) == 2 and all(os.path.exists(p) for p in paths)
    assert all(recovery.read_recovery(p).corpus_path == str(corpus_file) for p in paths)
    doc3 = Document()
    doc3.open(read_corpus(str(corpus_file)))
    saver3 = Autosaver(doc3, rec)
    assert saver3.offers() == []  # both still running: not offered
    for _, s in docs:
        s.instance.abandon()
    offers = saver3.offers()
    assert sorted(k for o in offers for k in o.edits) == [0, 2]
    assert offers[0].summary(now=offers[0].written + 240) == (
        f"1 sentence of eng.testb edited 4 minutes ago by process {os.getpid()} on {offers[0].owner.host}"
    )


def test_a_recovery_file_of_an_earlier_version_is_still_offered(corpus_file, tmp_path):
    rec = tmp_path / "recovery"
    c = read_corpus(str(corpus_file))
    c.sentences[1].spans = []
    old = recovery.recovery_path(str(corpus_file), str(rec))  # one per corpus, no owner
    recovery.write_recovery(old, c, [1])
    doc = Document()
    doc.open(read_corpus(str(corpus_file)))
    (offer,) = Autosaver(doc, str(rec)).offers()
    assert offer.path == old and offer.edits == {1: []} and offer.owner is None
    assert offer.summary().startswith("1 sentence of eng.testb edited ")


def test_adopted_recovery_files_go_once_this_instance_holds_their_edits(corpus_file, tmp_path):
    rec = str(tmp_path / "recovery")
    dead = Document()
    dead.open(read_corpus(str(corpus_file)))
    s1 = Autosaver(dead, rec)
    dead.set_spans(1, [])
    p1 = s1.write()
    s1.instance.abandon()
    doc = Document()
    doc.open(read_corpus(str(corpus_file)))
    s2 = Autosaver(doc, rec)
    (offer,) = s2.offers()
    doc.set_many(offer.edits, "recover")
    s2.adopt(offer)
    assert os.path.exists(p1)  # until ours holds the edits
    p2 = s2.write()
    assert not os.path.exists(p1) and recovery.read_recovery(p2).edits == {1: []}


def test_the_lock_names_its_holder(corpus_file):
    inst = Instance.new()
    lk = FileLock(str(corpus_file), inst)
    assert lk.acquire()
    obj = json.loads(open(lk.file, encoding="utf-8").read())
    assert obj["corpus"] == str(corpus_file)
    assert {k: obj["holder"][k] for k in ("pid", "host", "user", "id")} == {
        "pid": os.getpid(),
        "host": inst.host,
        "user": inst.user,
        "id": inst.id,
    }
    lk.release()


def test_a_background_save_writes_the_snapshot_and_later_edits_stay_unsaved(corpus_file):
    doc, f = _open(corpus_file)
    doc.set_spans(1, MINE_ORG)
    pending = f.begin_save()
    doc.set_spans(2, [])  # while the save runs
    pending.run()
    f.finish_save(pending)
    back = read_corpus(str(corpus_file))
    assert back.sentences[1].spans == MINE_ORG and back.sentences[2].spans == [Span(0, 1, "LOC")]
    assert doc.is_dirty() and doc.unsaved() == [2]
    doc.undo()  # back to what was saved
    assert not doc.is_dirty() and f.check().same
    f.close()


def test_a_background_save_whose_state_was_undone_away_leaves_the_document_dirty(corpus_file):
    doc, f = _open(corpus_file)
    doc.set_spans(1, MINE_ORG)
    pending = f.begin_save()
    doc.undo()
    doc.set_spans(3, [])  # the saved state is no longer reachable by undo / redo
    pending.run()
    f.finish_save(pending)
    assert read_corpus(str(corpus_file)).sentences[1].spans == MINE_ORG
    assert doc.is_dirty() and sorted(doc.unsaved()) == [1, 3]
    while doc.undo():
        assert doc.is_dirty()
    f.close()


def test_an_unreadable_recovery_file_is_reported_once_and_kept(corpus_file, tmp_path):
    rec = tmp_path / "recovery"
    rec.mkdir()
    bad = recovery.recovery_path(str(corpus_file), str(rec), "1-dead")
    with open(bad, "w", encoding="utf-8") as f:
        f.write("{not json")
    doc = Document()
    doc.open(read_corpus(str(corpus_file)))
    saver = Autosaver(doc, str(rec))
    (offer,) = saver.offers()
    assert offer.edits is None and "not a readable recovery file" in offer.summary()
    assert saver.set_aside(offer) == bad + ".unreadable" and os.path.exists(bad + ".unreadable")
    assert saver.offers() == []


def test_the_save_service_writes_the_review_states(corpus_file):
    """The review states of the moment the save began reach the file (a sidecar for CoNLL),
    also when the save runs after later edits (as a background save does)."""
    from nerstudio.app import review

    doc, f = _open(corpus_file)
    doc.set_spans(1, [Span(0, 2, "ORG")])
    doc.set_reviewed([1])  # the edited sentence left or accepted: reviewed
    pending = f.begin_save()
    doc.set_spans(2, [])  # after the snapshot: not in this save
    pending.run()
    f.finish_save(pending)
    back = read_corpus(str(corpus_file))
    assert review.read_states(back).nonzero()[0].tolist() == [1]
    f.close()


@pytest.mark.slow
@pytest.mark.data_integrity
def test_the_command_line_and_the_api_respect_a_windows_lock(corpus_file, tmp_path):
    """A corpus another nerstudio process is editing is not overwritten by ``convert``,
    ``nerstudio.write`` or any corpus write: one line naming the file and who holds it (exit 1);
    once that process is gone (killed: its lock stays behind, stale), the write goes through."""
    import nerstudio
    from nerstudio.errors import FileInUse

    script = tmp_path / "holder.py"
    script.write_text(_HOLDER, encoding="utf-8")
    source = tmp_path / "other.conll"
    source.write_text(CONLL.replace("B-LOC", "B-ORG"), encoding="utf-8")
    before = corpus_file.read_bytes()
    proc = subprocess.Popen(
        [sys.executable, str(script), str(corpus_file)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert proc.stdout.readline().strip() == "HELD"
        out = subprocess.run(
            [sys.executable, "-m", "nerstudio", "convert", str(source), str(corpus_file)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        assert out.returncode == 1
        assert str(corpus_file) in out.stderr and f"process {proc.pid}" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
        with pytest.raises(FileInUse, match="open for editing in nerstudio"):
            nerstudio.write(nerstudio.read(str(source)), str(corpus_file))
        assert corpus_file.read_bytes() == before
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        # the lock left behind is stale
        nerstudio.write(nerstudio.read(str(source)), str(corpus_file))
        assert corpus_file.read_bytes() != before
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()


def test_a_latin1_file_of_a_utf8_format_is_read_back_as_saved(tmp_path):
    # JSONL is UTF-8 by definition: a Latin-1 file is saved in UTF-8, and the window, which
    # reads the file again to compare it with what it holds, must read it in UTF-8 then
    path = tmp_path / "c.jsonl"
    record = {"tokens": ["José", "met", "Zoë"], "ner_tags": ["B-PER", "O", "O"]}
    path.write_bytes((json.dumps(record, ensure_ascii=False) + "\n").encode("latin-1"))
    doc = Document()
    f = CorpusFile(doc, Instance.new())
    doc.open(read_corpus(str(path), encoding="latin-1"), disk=None)
    assert doc.corpus.encoding == "latin-1"
    doc.set_spans(0, [Span(0, 1, "PER"), Span(2, 3, "PER")])
    f.save()
    assert path.read_bytes().decode("utf-8")  # written in UTF-8
    theirs = f.read_theirs()
    assert list(theirs.sentences[0].words) == ["José", "met", "Zoë"]
    assert theirs.sentences[0].spans == doc.corpus.sentences[0].spans
    state = f.check()
    assert state is None or state.same
    f.close()


@pytest.mark.parametrize(
    ("name", "fmt", "first"),
    [("b.jsonl", "jsonl", '{"'), ("b.tsv", "tsv", "-DOCSTART-\t"), ("b.conllu", "conllu", "# ")],
)
def test_save_as_writes_the_format_the_new_name_gives(corpus_file, tmp_path, name, fmt, first):
    # Save as b.jsonl from a CoNLL corpus wrote CoNLL text into b.jsonl
    doc, f = _open(corpus_file)
    target = tmp_path / name
    result = f.save(str(target))
    assert result.format == fmt
    assert target.read_text(encoding="utf-8").lstrip().startswith(first)
    back = read_corpus(str(target))
    assert [s.spans for s in back.sentences] == [s.spans for s in doc.corpus.sentences]
    assert [list(s.words) for s in back.sentences] == [list(s.words) for s in doc.corpus.sentences]
    f.close()
