"""Review states, notes and flags carried through ``nerstudio convert``.

The converter streams sentences and spans from one format to another; what the annotator said
of each sentence (:mod:`.review`) lives in JSONL records, Prodigy ``"meta"`` or a sidecar beside
the corpus, which the stream does not see (JSONL to JSONL and Prodigy to Prodigy keep their
record fields already). :func:`carry` reads them from the input once the output is written and
puts them where the application would when saving in the output's format
(:func:`.review.save`): in the records (JSONL, Prodigy) or in the output's sidecar (every other
format). The output's sentences must be the input's, in order, with the same characters (a
format with character offsets — doccano, Label Studio — may split tokens otherwise: the
sidecar is written for the tokens the output reads back as); else they are not carried and a
note says so. No Qt here.
"""

from __future__ import annotations

import os

from ..corpus.formats import read_corpus
from ..corpus.model import Sentence
from . import review


def carry(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    src_format: str | None = None,
    dst_format: str | None = None,
) -> str:
    """Carry ``src``'s review states, notes and flags to the converted file ``dst``; returns a
    one-line note of what was done ('' when the input has none)."""
    if not review.in_file(src_format) and not os.path.isfile(review.sidecar_path(src)):
        return ""  # nowhere to hold any: the input is not read a second time
    source = read_corpus(os.fspath(src), src_format)
    reviewed, marks = review.read(source)
    if not reviewed.any() and not marks.any():
        return ""
    out = read_corpus(os.fspath(dst), dst_format)
    if review.in_file(out.format) and out.format == source.format:
        return ""  # the records' fields went through the stream unchanged
    if [_text(x) for x in out.sentences] != [_text(x) for x in source.sentences]:
        return (
            f"{dst}: review states, notes and flags not carried: the output's sentences differ "
            "from the input's"
        )
    n = int(reviewed.sum()), len(marks.notes), int(marks.flagged.sum())
    what = f"{n[0]} reviewed sentence(s), {n[1]} note(s), {n[2]} flag(s)"
    if review.in_file(out.format):
        review.save(out, reviewed, dst, out.format, marks=marks)
        return f"{dst}: {what} kept in the records"
    side = review.write_sidecar(out, reviewed, dst, marks)
    return f"{dst}: {what} kept in {os.path.basename(side or '')}"


def _text(sentence: Sentence) -> str:
    """A sentence's characters without the token boundaries."""
    return "".join(sentence.words)
