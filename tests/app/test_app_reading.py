"""A corpus file read for the document in the window's worker (nerstudio.app.reading): the
corpus and its type masks, the file's fingerprint, progress in megabytes, cancellation, and a
file that cannot be read as a result that says why (and whether another encoding may do).
No Qt."""

from __future__ import annotations

import pytest

from nerstudio.app.document import type_masks_of
from nerstudio.app.ownership import fingerprint
from nerstudio.app.reading import read_corpus_file
from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.errors import Cancelled


class _Ctx:
    def __init__(self, cancel_at: int | None = None):
        self.stages: list[str] = []
        self.reports: list[tuple[str, int, int]] = []
        self.cancel_at = cancel_at

    def should_cancel(self) -> bool:
        return self.cancel_at is not None and len(self.reports) >= self.cancel_at

    def check(self) -> None:
        if self.should_cancel():
            raise Cancelled("cancelled")

    def plan(self, stages: list[str]) -> None:
        self.planned = list(stages)

    def stage(self, name: str, message: str = "", done: int = 0, total: int = 0) -> None:
        self.stages.append(name)

    def progress(self, message: str = "", done: int = 0, total: int = 0) -> None:
        self.reports.append((message, done, total))


def test_a_corpus_is_read_with_its_type_masks_and_fingerprint():
    path = str(DEMO_DIR / "train.conll")
    ctx = _Ctx()
    res = read_corpus_file(ctx, path)
    want = read_corpus(path)
    assert res.error == "" and not res.decoding
    assert [s.spans for s in res.corpus.sentences] == [s.spans for s in want.sentences]
    masks = type_masks_of(want)
    assert res.type_masks.keys() == masks.keys()
    assert all((res.type_masks[t] == masks[t]).all() for t in masks)
    assert res.disk == fingerprint(path)
    assert ctx.planned == ["reading train.conll", "indexing"] and ctx.stages == ctx.planned
    mb = [r for r in ctx.reports if r[0].endswith(" MB")]
    assert mb and all(t == 1000 and 0 <= d <= 1000 for _, d, t in mb)


def test_bytes_not_in_the_encoding_are_a_result_that_offers_another(tmp_path):
    f = tmp_path / "latin.conll"
    f.write_bytes("Zürich B-LOC\n".encode("latin-1"))
    res = read_corpus_file(_Ctx(), str(f), "utf-8")
    assert res.corpus is None and res.decoding and str(f) in res.error
    again = read_corpus_file(_Ctx(), str(f), "latin-1")
    assert again.corpus is not None and tuple(again.corpus.sentences[0].words) == ("Zürich",)


def test_a_file_that_cannot_be_read_says_why_and_is_no_decoding_matter(tmp_path):
    res = read_corpus_file(_Ctx(), str(tmp_path / "absent.conll"))
    assert res.corpus is None and not res.decoding and "absent.conll" in res.error


def test_a_cancel_while_reading_stops_the_read():
    with pytest.raises(Cancelled):
        read_corpus_file(_Ctx(cancel_at=1), str(DEMO_DIR / "train.conll"))
