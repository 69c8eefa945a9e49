"""Reading a file a block of lines at a time gives what reading it line by line gives.

The column reader decodes a block of whole lines at once for the encodings where that is safe
(issue 26: a 1M-token file opens in seconds); each file here is read both ways — line by line
(``_block_safe`` says no) and in blocks of a few bytes, so that every line boundary falls on a
block's edge somewhere — and the corpora, the file's conventions and the errors must be equal.
"""

from __future__ import annotations

import pytest
from helpers.shared_data import SHARED_DATA

from nerstudio.corpus import formats
from nerstudio.corpus.formats import read_corpus
from nerstudio.errors import FormatError

DATA = SHARED_DATA


def snapshot(path, **kw):
    """Everything read_corpus returns, as plain values (or the error's text)."""
    try:
        c = read_corpus(path, **kw)
    except FormatError as exc:
        return ("error", str(exc))
    docs = [
        (
            d.id,
            d.docstart,
            [(s.words, s.extra, s.tags, list(s.spans), s.line, s.raw, s.meta) for s in d.sentences],
        )
        for d in c.documents
    ]
    conv = (c.format, c.scheme, c.newline, c.bom, c.final_newline, c.sep, c.ncols, c.layout)
    return docs, conv, c.repairs, list(c.notes)


def both_ways(monkeypatch, path, block: int = 7, **kw):
    with monkeypatch.context() as m:
        m.setattr(formats, "_block_safe", lambda _enc: False)
        by_line = snapshot(path, **kw)
    with monkeypatch.context() as m:
        m.setattr(formats, "_BLOCK", block)
        by_block = snapshot(path, **kw)
    return by_line, by_block


CASES = {
    "plain": b"EU B-ORG\nrejects O\nGerman B-MISC\n\nPeter B-PER\nBlackburn I-PER\n",
    "no final newline": b"EU B-ORG\nrejects O\n\nPeter B-PER\nBlackburn I-PER",
    "crlf": b"EU B-ORG\r\nrejects O\r\n\r\nPeter B-PER\r\n",
    "mixed newlines": b"EU B-ORG\r\nrejects O\n\nPeter B-PER\r\n",
    "lf then crlf": b"EU B-ORG\nrejects O\r\n\nPeter B-PER\n",
    "bom": b"\xef\xbb\xbfEU B-ORG\nrejects O\n",
    "cr inside a line": b"EU B-ORG\nre\rjects O\n\nPeter B-PER\n",
    "cr at the very end": b"EU B-ORG\nrejects O\r",
    "docstart": b"-DOCSTART- O\n\nEU B-ORG\nrejects O\n\n-DOCSTART- O\n\nPeter B-PER\n",
    "one line": b"EU B-ORG",
    "bad utf-8 late": b"EU B-ORG\nrejects O\n\nPeter B-PER\nBl\xe4ckburn I-PER\n",
    "bad utf-8 first line": b"E\xe4U B-ORG\nrejects O\n",
    "ragged before bad bytes": b"EU B-ORG\nrejects O X\nBl\xe4ckburn I-PER\n",
    "trailing separator": b"EU B-ORG\nrejects \n",
    "invalid transition": b"EU I-ORG\nrejects O\nGerman I-MISC\ncall I-PER\n",
    "blank lines only": b"\n\n\n",
    "empty": b"",
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("block", [1, 3, 7, 64])
def test_blocks_read_as_lines(tmp_path, monkeypatch, name, block):
    path = tmp_path / "f.conll"
    path.write_bytes(CASES[name])
    by_line, by_block = both_ways(monkeypatch, path, block)
    assert by_block == by_line


def test_latin1_blocks(tmp_path, monkeypatch):
    path = tmp_path / "f.conll"
    path.write_bytes("Müller B-PER\nsagt O\n\nKöln B-LOC\n".encode("latin-1"))
    by_line, by_block = both_ways(monkeypatch, path, 5, encoding="latin-1")
    assert by_block == by_line
    assert by_block[0][0][2][0][0] == ("Müller", "sagt")


def test_progress_is_reported_and_can_stop_the_read(tmp_path, monkeypatch):
    path = tmp_path / "f.conll"
    path.write_text("w O\n" * 20000, encoding="utf-8")
    monkeypatch.setattr(formats, "_BLOCK", 10000)
    seen: list[int] = []
    read_corpus(path, watch=seen.append)
    assert seen and seen == sorted(seen) and seen[-1] <= path.stat().st_size

    class Stop(Exception):
        pass

    def stop(_pos):
        raise Stop

    with pytest.raises(Stop):
        read_corpus(path, watch=stop)


@pytest.mark.parametrize(
    "name", ["conll2003/eng.testa", "wnut17/wnut17train.conll", "conll2002/ned.testa"]
)
def test_real_corpus_blocks_read_as_lines(monkeypatch, name):
    path = DATA / name
    if not path.is_file():
        pytest.skip(f"{path} not found (the shared data is not on this machine)")
    by_line, by_block = both_ways(monkeypatch, path, 1 << 16)
    assert by_block == by_line


def test_the_collector_is_paused_only_while_reading(tmp_path):
    import gc

    good, bad = tmp_path / "good.conll", tmp_path / "bad.conll"
    good.write_bytes(CASES["plain"])
    bad.write_bytes(CASES["trailing separator"])
    seen: list[bool] = []
    assert gc.isenabled()
    read_corpus(good, watch=lambda _pos: seen.append(gc.isenabled()))
    assert gc.isenabled()
    with pytest.raises(FormatError):
        read_corpus(bad)
    assert gc.isenabled()
    gc.disable()  # paused by the caller: left so
    try:
        read_corpus(good)
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert seen == [False]  # during the read
