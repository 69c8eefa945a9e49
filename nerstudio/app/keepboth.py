"""Keep both: another program's version of the corpus merged with this window's edits.

Three versions of every sentence's entities: the *base* (what was read or last saved here),
*mine* (the document now) and *theirs* (the file on disk now). Sentence by sentence: a sentence
only they changed takes theirs; one only I changed keeps mine; one both changed the same way is
simply equal; one both changed differently keeps mine and is listed as a conflict. This works
only when the two versions hold the same documents and sentences with the same tokens (and the
same other columns and text): otherwise :attr:`MergePlan.aligned` is False and
:attr:`MergePlan.why` says what differs, and the user is offered Reload, Overwrite or Save as
instead. What is not an entity the file keeps as *they* wrote it (:func:`adopt_file`): their
separators and line endings, their tags as written, their records' other fields, their brat
relations and notes, so that saving the merge changes their file only where my entities differ.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from ..corpus.model import Corpus, Sentence, Span


def snapshot(corpus: Corpus) -> list[list[Span]]:
    """Every sentence's span list as it is now (the base of a later merge): the lists
    themselves, which an edit replaces and never changes in place (Document._apply), so taking
    them costs no copy."""
    return [s.spans for s in corpus.sentences]


def release(corpus: Corpus, pace: Callable[[], None] | None = None) -> None:
    """Free a :func:`frozen` copy a few thousand sentences at a time: freeing it in one go is
    one long call that holds the interpreter lock (and the window's thread) for a large corpus.
    ``pace``: called between the slices (:class:`~nerstudio.app.pacing.Pacer`)."""
    flat = corpus._sentences or [
        s for d in corpus.documents for s in d.sentences
    ]  # the cache holds them too
    corpus._sentences = None
    for d in corpus.documents:
        d.sentences = []
    corpus.documents.clear()
    while flat:
        del flat[-2000:]
        if pace is not None:
            pace()


def frozen(corpus: Corpus, spans: list, pace: Callable[[], None] | None = None) -> Corpus:
    """A copy of ``corpus`` whose sentences hold ``spans`` (one list per sentence, taken on the
    main thread) and share everything else with it: what a background save writes while the
    document goes on changing. ``pace``: called every few hundred sentences."""
    sentences = iter(spans)
    docs = []
    for d in corpus.documents:
        copies = []
        for i, s in enumerate(d.sentences):
            if pace is not None and not i % 256:
                pace()
            t = Sentence.__new__(Sentence)
            for attr in Sentence.__slots__:
                setattr(t, attr, getattr(s, attr))
            t.spans = list(next(sentences))
            copies.append(t)
        docs.append(dataclasses.replace(d, sentences=copies))
    out = copy.copy(corpus)
    out.documents, out._sentences, out.notes = docs, None, list(corpus.notes)
    return out


@dataclass
class MergePlan:
    aligned: bool
    why: str = ""
    take: dict[int, list[Span]] = field(default_factory=dict)  # sentences that take their spans
    conflicts: list[int] = field(default_factory=list)  # both changed, differently: mine kept
    mine: list[int] = field(default_factory=list)  # sentences I edited that keep my spans


def _first_difference(mine: Corpus, theirs: Corpus) -> str:
    a, b = mine.sentences, theirs.sentences
    if len(a) != len(b):
        return f"the file now has {len(b):,} sentences, this window {len(a):,}"
    if [d.id for d in mine.documents] != [d.id for d in theirs.documents] or [
        len(d.sentences) for d in mine.documents
    ] != [len(d.sentences) for d in theirs.documents]:
        return "the documents of the file changed"
    for k, (s, t) in enumerate(zip(a, b)):
        if s.words != t.words:
            return f"the tokens of sentence {k + 1} changed"
        if s.extra != t.extra or s.source != t.source or s.offsets != t.offsets:
            return f"sentence {k + 1} changed beyond its entities (other columns or its text)"
    return ""


def adopt_file(mine: Corpus, theirs: Corpus) -> None:
    """Give ``mine`` (aligned with ``theirs``) everything of their file but the entities: what
    the writer keeps as read (layout, line endings, tags as written, records, brat lines)."""
    for attr in ("layout", "newline", "bom", "final_newline", "sep", "ncols"):
        setattr(mine, attr, getattr(theirs, attr))
    for d, e in zip(mine.documents, theirs.documents):
        d.docstart = e.docstart
    for s, t in zip(mine.sentences, theirs.sentences):
        s.tags, s.raw, s.meta, s.line = t.tags, t.raw, t.meta, t.line


def plan(base: list, mine: Corpus, theirs: Corpus) -> MergePlan:
    """How their version and mine combine (a sentence is mine-edited when its entities differ
    from ``base``, whatever the undo history did)."""
    why = _first_difference(mine, theirs)
    if why or len(base) != len(mine.sentences):
        return MergePlan(False, why or "this window's record of the file does not match it")
    out = MergePlan(True)
    for k, (s, t) in enumerate(zip(mine.sentences, theirs.sentences)):
        b, m, th = list(base[k]), list(s.spans), list(t.spans)
        if m != b:
            out.mine.append(k)
            if th != b and th != m:
                out.conflicts.append(k)
        elif th != b:
            out.take[k] = th
    return out


def sentences(n: int) -> str:
    return f"{n:,} sentence{'' if n == 1 else 's'}"


def describe(plan_: MergePlan, limit: int = 8, prefix: str = "Keep both: ") -> str:
    """One sentence for the user: what Keep both does (or why it cannot)."""
    if not plan_.aligned:
        return f"Keep both is not possible: {plan_.why}."
    take, mine = len(plan_.take), len(plan_.mine)
    text = (
        f"{prefix}{sentences(take)} {'takes' if take == 1 else 'take'} the file's entities, "
        f"{sentences(mine)} {'keeps' if mine == 1 else 'keep'} this window's"
    )
    if plan_.conflicts:
        n = len(plan_.conflicts)
        shown = ", ".join(str(k + 1) for k in plan_.conflicts[:limit]) + (
            ", …" if n > limit else ""
        )
        which = f"sentence {shown} was" if n == 1 else f"{n:,} sentences ({shown}) were"
        text += f"; {which} changed in both versions: this window's entities are kept there"
    return text + "."
