"""The open project: one owner for the corpus, its gold and everything attached to it.

:class:`Document` holds the open corpus (the only copy of the gold spans), the attached N-best
list (whose gold is a view of the corpus, see :mod:`~nerstudio.app.attachments`), the
reranker's scores, the models and the training runs. Every change goes through a method here
(:meth:`~Document.set_spans`, :meth:`~Document.attach_nbest`, :meth:`~Document.install_model`,
:meth:`~Document.record_run`, …): it bumps :attr:`~Document.revision` and tells the listeners
with a :class:`Change` whose :class:`ChangeKind` says what changed. From outside the state is
read-only (assigning raises AttributeError); every span it takes passes one check,
:func:`~.guards.checked_spans`; a listener that fails is logged and the others still hear. Gold edits go through the undo
:class:`~nerstudio.app.history.History`, and the document records per sentence the revision of
its last gold change, so every derived number (candidate quality counts, flags, type masks) is
brought up to date lazily from :meth:`~Document.changed_since` — nothing is invalidated by hand.
Each sentence also has a review state (:attr:`~Document.reviewed`: pre-annotated or reviewed,
read from the corpus's file by :mod:`~nerstudio.app.review`): the annotator's acceptance
(:meth:`~Document.set_reviewed`) makes it reviewed, and so does leaving it after editing it
(:meth:`~Document.review_on_leave`, see :mod:`~nerstudio.app.visit`) — an edit alone does not,
so nothing learns from a sentence while it is being corrected — and
:attr:`~Document.review_log` records what the sentence held before the annotator's edits (the
suggestion the annotation loop measures the model by). Every change says who made it
(:class:`~nerstudio.app.events.Origin`): the annotator, an undo or redo, or the application.
The annotator's notes and flags on sentences (:attr:`~Document.notes`, :attr:`~Document.flagged`,
read and saved with the review states by :mod:`~nerstudio.app.review`) are changed by
:meth:`~Document.set_note` and :meth:`~Document.set_flag`, undoable steps like the edits. No Qt
here.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..corpus.model import Corpus, Span
from ..nbest import NBestList
from .attachments import FileStamp, KTCandidates, NBestIndex, Scored, list_documents
from .events import Change, ChangeKind, Origin, notify
from .flags import sentence_flags
from .guards import ReadOnly, checked_spans, frozen, write
from .history import History, SetSpans

if TYPE_CHECKING:
    from .review import Marks

__all__ = ["Change", "ChangeKind", "Document", "Origin", "Run", "checked_spans", "type_masks_of"]


@dataclass
class Run:
    """A finished training run: its settings, curve id, the child process's stage timings and
    the corpus it was trained on (``corpus_path``, shown as ``corpus_name``). ``other_corpus``:
    kept, at the user's request, after another corpus was opened."""

    settings: Any
    run_id: int
    seconds: float
    timings: dict
    corpus_path: str = ""
    corpus_name: str = ""
    other_corpus: bool = False


class Document:
    """See the module docstring. Its state is read-only from outside (assigning raises
    AttributeError): every change goes through a method that checks it and tells the
    listeners."""

    corpus: ReadOnly[Corpus | None] = ReadOnly()
    #: what the corpus's file held when read or last saved (app.ownership.Fingerprint)
    disk: ReadOnly[Any] = ReadOnly()
    revision: ReadOnly[int] = ReadOnly()
    history: ReadOnly[History] = ReadOnly()
    gold_revision: ReadOnly[int] = ReadOnly()
    nbest_index: ReadOnly[NBestIndex | None] = ReadOnly()
    nbest_path: ReadOnly[str | None] = ReadOnly()
    nbest_file: ReadOnly[FileStamp | None] = ReadOnly()
    scored: ReadOnly[Scored | None] = ReadOnly()
    kt: ReadOnly[KTCandidates | None] = ReadOnly()
    tagger: ReadOnly[Any] = ReadOnly()
    tagger_path: ReadOnly[str | None] = ReadOnly()
    model: ReadOnly[Any] = ReadOnly()  # RerankerModel
    model_path: ReadOnly[str | None] = ReadOnly()
    dev_nbest: ReadOnly[NBestList | None] = ReadOnly()
    dev_nbest_path: ReadOnly[str | None] = ReadOnly()
    dev_nbest_file: ReadOnly[FileStamp | None] = ReadOnly()
    kt_model: ReadOnly[Any] = ReadOnly()  # PerceptronTagger or JointTagger
    kt_model_path: ReadOnly[str | None] = ReadOnly()
    #: per sentence: reviewed (True) or pre-annotated; a read-only array
    reviewed: ReadOnly[np.ndarray] = ReadOnly()
    #: per sentence: flagged by the annotator; a read-only array
    flagged: ReadOnly[np.ndarray] = ReadOnly()

    def __init__(self) -> None:
        self._corpus: Corpus | None = None
        self._disk: Any = None
        self._revision = 0
        self._history = History(self._apply)
        self._listeners: list[Callable[[Change], None]] = []
        self._sentence_rev = np.zeros(0, dtype=np.int64)
        self._gold_revision = 0
        self._saved_rev = 0
        self._cache: dict[str, tuple[int, Any]] = {}
        self._type_masks: dict[str, np.ndarray] = {}
        self._types_rev = 0
        self._clear_attachments()
        self._tagger: Any = None
        self._tagger_path: str | None = None
        self._model: Any = None
        self._model_path: str | None = None
        self._dev_nbest: NBestList | None = None
        self._dev_nbest_path: str | None = None
        self._dev_nbest_file: FileStamp | None = None
        self._kt_model: Any = None
        self._kt_model_path: str | None = None
        self._runs: list[Run] = []
        self._reviewed = frozen(np.zeros(0, dtype=bool))
        self._review_log: list[tuple[int, tuple[Span, ...]]] = []
        # per sentence not reviewed that the annotator edited: what it held before (the
        # suggestion the review log records when it becomes reviewed)
        self._suggested: dict[int, tuple[Span, ...]] = {}
        self._notes: dict[int, str] = {}  # the annotator's note per sentence (never empty)
        self._flagged = frozen(np.zeros(0, dtype=bool))

    @property
    def runs(self) -> tuple[Run, ...]:
        """The recorded training runs (:meth:`record_run`), oldest first."""
        return tuple(self._runs)

    @property
    def review_log(self) -> tuple[tuple[int, tuple[Span, ...]], ...]:
        """``(sentence, its spans as it became reviewed)``, in the order they did."""
        return tuple(self._review_log)

    @property
    def notes(self) -> Mapping[int, str]:
        """The annotator's note per sentence (never empty), read-only (:meth:`set_note`)."""
        return MappingProxyType(self._notes)

    def _clear_attachments(self) -> None:
        self._nbest_index: NBestIndex | None = None
        self._nbest_path: str | None = None
        self._nbest_file: FileStamp | None = None
        self._attached_rev = 0
        self._scored: Scored | None = None
        self._scored_rev = self._data_rev = (
            0  # gold revision the scores were computed at / counted to
        )
        self._kt: KTCandidates | None = None

    # -- listeners ------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[Change], None], first: bool = False) -> Callable[[], None]:
        """Call ``fn(change)`` after every change (``first``: before the listeners there are,
        e.g. state the views' reactions read); returns a function that unsubscribes."""
        if first:
            self._listeners.insert(0, fn)
        else:
            self._listeners.append(fn)

        def unsubscribe() -> None:
            if fn in self._listeners:
                self._listeners.remove(fn)

        return unsubscribe

    def _emit(
        self,
        kind: ChangeKind,
        sentences: Iterable[int] = (),
        text: str = "",
        origin: Origin = Origin.APP,
    ) -> Change:
        self._revision += 1
        ch = Change(kind, self._revision, tuple(sentences), text, origin)
        notify(self._listeners, ch)
        return ch

    # -- corpus and gold ------------------------------------------------------------------
    def open(
        self,
        corpus: Corpus,
        keep_runs: bool = True,
        type_masks: dict[str, np.ndarray] | None = None,
        reviewed: Iterable[bool] | np.ndarray | None = None,
        disk: Any = None,
        marks: Marks | None = None,
    ) -> None:
        """A new corpus: attachments and undo history are dropped. Runs trained on another
        corpus are kept and marked ``other_corpus`` with ``keep_runs``, else dropped.
        ``type_masks``: :func:`type_masks_of` the corpus, when a worker computed them already;
        ``reviewed``: its review states (default: as its file says, :mod:`.review`);
        ``disk``: the fingerprint of its file taken before it was read (see app.saving);
        ``marks``: its notes and flags (a :class:`~.review.Marks`; default: as its file says)."""
        from .review import read

        if reviewed is None or marks is None:
            on_file = read(corpus)
            reviewed = on_file[0] if reviewed is None else reviewed
            marks = on_file[1] if marks is None else marks
        states = np.array(reviewed, dtype=bool)
        if len(states) != len(corpus):
            raise ValueError(f"{len(states)} review states for {len(corpus)} sentences")
        if len(marks.flagged) != len(corpus):
            raise ValueError(f"{len(marks.flagged)} flags for {len(corpus)} sentences")
        self._reviewed, self._review_log, self._suggested = frozen(states), [], {}
        self._notes, self._flagged = dict(marks.notes), frozen(np.array(marks.flagged, bool))
        self._corpus = corpus
        self._disk = disk
        here = _same_file(corpus.path)
        for r in self._runs:
            r.other_corpus = _same_file(r.corpus_path) != here
        if not keep_runs:
            self._runs = [r for r in self._runs if not r.other_corpus]
        self._clear_attachments()
        self._history.clear()
        self._sentence_rev = np.zeros(len(corpus), dtype=np.int64)
        self._gold_revision = self.revision + 1  # the revision of the last gold change
        self._cache.clear()
        self._type_masks = type_masks if type_masks is not None else type_masks_of(corpus)
        self._types_rev = self.revision + 1
        self._saved_rev = self.revision + 1
        self._emit(ChangeKind.CORPUS)

    def spans(self, k: int) -> list[Span]:
        return list(self._opened().sentences[k].spans)

    def set_spans(self, k: int, spans: Iterable[Span], text: str = "edit") -> list[Span] | None:
        """Make ``spans`` the gold of sentence ``k`` as one undoable step (the annotator's edit;
        the sentence's review state stays: see :meth:`review_on_leave`); returns the spans it
        had, or None when nothing changes."""
        c = self._opened()
        new = checked_spans(c, k, spans)
        old = list(c.sentences[k].spans)
        if new == old:
            return None
        self._history.push(SetSpans.one(k, old, new, text, origin=Origin.USER))
        return old

    def set_many(
        self,
        edits: dict[int, list[Span]],
        text: str,
        reviewed: bool = False,
        origin: Origin = Origin.APP,
    ) -> list[int]:
        """Several sentences' gold as one undoable step (a recovery, a pre-annotation, a model's
        round; ``origin`` :attr:`Origin.USER` for the annotator's own, e.g. label all
        occurrences); returns those changed. ``reviewed``: they become reviewed too."""
        if not edits:
            return []
        c = self._opened()
        new = {k: checked_spans(c, k, v) for k, v in edits.items()}  # all, or none
        todo = tuple(
            (k, tuple(c.sentences[k].spans), tuple(v))
            for k, v in sorted(new.items())
            if v != list(c.sentences[k].spans)
        )
        if todo:
            reviews = tuple(k for k, _, _ in todo if not self._reviewed[k]) if reviewed else ()
            self._history.push(SetSpans(todo, text, reviews, origin=origin))
        return [k for k, _, _ in todo]

    def set_reviewed(
        self, ks: Iterable[int], value: bool = True, text: str | None = None, joined: bool = False
    ) -> list[int]:
        """Mark sentences ``ks`` reviewed as they are (the annotator accepts them) or, with
        ``value=False``, pre-annotated again, as one undoable step (with ``joined``, part of the
        step before it: undone and redone with it); returns those whose state changes."""
        todo = tuple(
            k for k in dict.fromkeys(map(self._sentence, ks)) if self._reviewed[k] != value
        )
        if todo:
            what = "accept" if value else "mark pre-annotated"
            text = text or f"{what} {len(todo)} sentence(s)"
            self._history.push(
                SetSpans(
                    (),
                    text,
                    todo,
                    value,
                    origin=Origin.USER,
                    joined=joined and self._history.can_undo(),
                    suggested=self._before(todo),
                )
            )
        return list(todo)

    def _before(self, ks: Iterable[int]) -> tuple[tuple[int, tuple[Span, ...]], ...]:
        """What sentences ``ks`` held before the annotator's edits (those they edited)."""
        return tuple((k, self._suggested[k]) for k in ks if k in self._suggested)

    def review_on_leave(self, k: int) -> bool:
        """The annotator leaves sentence ``k`` after editing it: it becomes reviewed (what it
        held before their edits goes to :attr:`review_log`). One step, undone and redone with
        the one before it when that is the annotator's edit of ``k`` (so one undo takes back
        the last edit and the review). Returns whether it changed."""
        k = self._sentence(k)
        if self._reviewed[k]:
            return False
        last = self._history.last()
        joined = (
            last is not None
            and last.origin is Origin.USER
            and last.sentences == (k,)
            and not last.reviews
        )
        self._history.push(
            SetSpans(
                (),
                f"review sentence {k + 1}",
                (k,),
                origin=Origin.USER,
                joined=joined,
                suggested=self._before((k,)),
            )
        )
        return True

    def marks(self) -> Marks:
        """The notes and flags now, as a :class:`~.review.Marks` copy (for a save)."""
        from .review import Marks

        return Marks(dict(self._notes), self._flagged.copy())

    def set_note(self, k: int, text: str) -> bool:
        """Make ``text`` the note of sentence ``k`` (blank: no note) as one undoable step;
        returns whether it changed."""
        k, text = self._sentence(k), text.strip()
        old = (self._notes.get(k, ""), bool(self._flagged[k]))
        if text == old[0]:
            return False
        what = "note on" if text else "remove the note of"
        self._history.push(
            SetSpans(
                (),
                f"{what} sentence {k + 1}",
                marks=((k, old, (text, old[1])),),
                origin=Origin.USER,
            )
        )
        return True

    def set_flag(self, k: int, value: bool) -> bool:
        """Flag sentence ``k`` (or, ``value=False``, take its flag away) as one undoable step;
        returns whether it changed."""
        k = self._sentence(k)
        old = (self._notes.get(k, ""), bool(self._flagged[k]))
        if old[1] == bool(value):
            return False
        what = "flag" if value else "unflag"
        self._history.push(
            SetSpans(
                (),
                f"{what} sentence {k + 1}",
                marks=((k, old, (old[0], bool(value))),),
                origin=Origin.USER,
            )
        )
        return True

    def opened(self) -> Corpus:
        """The open corpus, for code that runs only while there is one (IndexError if none)."""
        return self._opened()

    def _opened(self) -> Corpus:
        if self._corpus is None:
            raise IndexError("no corpus open")
        return self._corpus

    def _sentence(self, k: int) -> int:
        """``k`` as the index of a sentence of the corpus (IndexError when there is none)."""
        k = operator.index(k)
        if self._corpus is None or not 0 <= k < len(self._corpus):
            raise IndexError(f"no sentence {k}")
        return k

    def undo(self) -> SetSpans | None:
        return self._history.undo()

    def redo(self) -> SetSpans | None:
        return self._history.redo()

    def _apply(
        self,
        spans: dict[int, list[Span]],
        text: str,
        reviews: tuple[int, ...] = (),
        value: bool = True,
        marks: dict | None = None,
        origin: Origin = Origin.APP,
        suggested: dict[int, tuple[Span, ...]] | None = None,
    ) -> None:
        """Put a history step in place (its spans were checked when the step was made)."""
        if marks:
            for k, (note, flag) in marks.items():
                if note:
                    self._notes[k] = note
                else:
                    self._notes.pop(k, None)
                write(self._flagged, k, flag)
            self._emit(ChangeKind.MARKS, sorted(marks), text, origin)
        if value:  # the suggestions: what the sentences held before the annotator's edits
            c, given = self._opened(), suggested or {}
            self._review_log.extend((k, given.get(k, tuple(c.sentences[k].spans))) for k in reviews)
            for k in reviews:
                self._suggested.pop(k, None)
        else:
            gone = set(reviews)
            self._review_log = [e for e in self._review_log if e[0] not in gone]
        if reviews:  # first, so that the listeners of the gold change see the new states
            write(self._reviewed, list(reviews), value)
            self._emit(ChangeKind.REVIEW, sorted(reviews), text, origin)
        if spans:
            c = self._opened()
            for k, sp in spans.items():
                if origin is Origin.APP:  # a new suggestion
                    self._suggested.pop(k, None)
                elif origin is Origin.USER and not self._reviewed[k]:
                    self._suggested.setdefault(k, tuple(c.sentences[k].spans))
                c.sentences[k].spans = list(sp)
                self._sentence_rev[k] = self.revision + 1
            self._gold_revision = self.revision + 1
            self._emit(ChangeKind.GOLD, sorted(spans), text, origin)

    def changed_since(self, revision: int) -> np.ndarray:
        """Sentences whose gold changed after ``revision``."""
        return np.flatnonzero(self._sentence_rev > revision)

    # -- saved state ----------------------------------------------------------------------
    def is_dirty(self) -> bool:
        return self.corpus is not None and not self.history.is_clean()

    def unsaved(self) -> list[int]:
        """Sentences edited since the corpus was last saved (none when it is clean)."""
        if not self.is_dirty():
            return []
        return [int(k) for k in self.changed_since(self._saved_rev)]

    def save_point(self) -> tuple:
        """The state now, for :meth:`mark_saved` once a background save of it is written."""
        return self.history.position(), self.revision

    def set_disk(self, fingerprint: Any) -> None:
        """Record what the corpus's file holds now (an app.ownership.Fingerprint, or None: no
        file to compare). No event: the saver's bookkeeping, which nothing displays."""
        self._disk = fingerprint

    def mark_saved(self, path: str | None = None, at: tuple | None = None) -> None:
        """The corpus was written (to ``path``, now its file); ``at``: as it was at that
        :meth:`save_point` (edits made since stay unsaved)."""
        if path:
            self._opened().path = path
        if at is None:
            self._history.set_clean()
            self._saved_rev = self.revision
        else:
            self._history.set_clean_at(at[0])
            self._saved_rev = at[1]
        self._emit(ChangeKind.SAVED)

    # -- attachments ----------------------------------------------------------------------
    def attach_nbest(
        self,
        index: NBestIndex,
        path: str | None = None,
        stamp: FileStamp | None = None,
        kt: KTCandidates | None = None,
        scored: Scored | None = None,
    ) -> None:
        """Attach an N-best list (indexed by :func:`~nerstudio.app.attachments.index_nbest` at
        revision ``index.revision``); a previous list, its scores and candidates go."""
        self._nbest_index, self._nbest_path, self._nbest_file, self._kt = index, path, stamp, kt
        self._attached_rev = index.revision
        self._scored, self._scored_rev = scored, index.revision
        self._data_rev = index.revision
        self._emit(ChangeKind.NBEST)

    def install_scores(self, scored: Scored, revision: int | None = None) -> None:
        """A reranker's scores of the attached list, computed at ``revision``."""
        self._scored = scored
        self._scored_rev = self._data_rev = self.revision if revision is None else revision
        self._emit(ChangeKind.SCORES)

    def install_model(self, model: Any, path: str | None = None) -> None:
        self._model, self._model_path = model, path
        self._emit(ChangeKind.MODEL)

    def install_tagger(self, tagger: Any, path: str | None = None) -> None:
        self._tagger, self._tagger_path = tagger, path
        self._emit(ChangeKind.TAGGER)

    def set_dev_nbest(
        self, nbest: NBestList | None, path: str | None = None, stamp: FileStamp | None = None
    ) -> None:
        self._dev_nbest, self._dev_nbest_path, self._dev_nbest_file = nbest, path, stamp
        self._emit(ChangeKind.DEV)

    def install_kt_model(self, model: Any, path: str | None = None) -> None:
        self._kt_model, self._kt_model_path = model, path
        self._emit(ChangeKind.KT_MODEL)

    def model_saved(self, path: str, which: str = "model") -> None:
        """The installed ``which`` — ``model`` (the reranker), ``tagger`` or ``kt_model`` (the
        Kazama & Torisawa tagger) — was written to ``path``, now its file."""
        if which not in ("model", "tagger", "kt_model"):
            raise ValueError(f"no model kind {which!r}")
        if getattr(self, "_" + which) is None:
            raise ValueError(f"no {which} to have been saved")
        setattr(self, f"_{which}_path", path)
        self._emit(ChangeKind.MODEL_FILE, text=path)

    def record_run(self, run: Run) -> None:
        self._runs.append(run)
        self._emit(ChangeKind.RUN)

    def runs_from_other_corpora(self, path: str | None) -> list[Run]:
        """The recorded runs not trained on the corpus file ``path``."""
        here = _same_file(path)
        return [r for r in self.runs if _same_file(r.corpus_path) != here]

    # -- the attached list, kept in step with the gold ------------------------------------
    @property
    def nbest(self) -> NBestList | None:
        return self.nbest_index.nbest if self.nbest_index is not None else None

    def _sync(self) -> None:
        """Count again the candidates of sentences whose gold changed since the counts were made
        (in the index, then in the scored ranking data's correct / gold counts)."""
        ix = self.nbest_index
        if ix is None:
            return
        if ix.revision != self.revision:
            for k in self.changed_since(ix.revision):
                if ix.row_of[k] >= 0:
                    ix.recount(int(ix.row_of[k]))
            ix.revision = self.revision
        d = self.scored.data if self.scored is not None else None
        if d is None or self._data_rev == self.revision:
            return
        if (
            d.correct is not None
            and d.n_gold is not None
            and ix.correct is not None
            and ix.n_gold is not None
            and len(d) == len(ix.nbest)
        ):
            for k in self.changed_since(self._data_rev):
                i = int(ix.row_of[k])
                if i >= 0:
                    d.correct[d.rows(i)] = ix.correct[self.candidate_rows(i)]
                    d.n_gold[i] = ix.n_gold[i]
        self._data_rev = self.revision

    def _cached(self, key: str, make: Callable[[], Any]) -> Any:
        hit = self._cache.get(key)
        if hit is None or hit[0] != self.revision:
            hit = self._cache[key] = (self.revision, make())
        return hit[1]

    def nbest_row(self, k: int) -> int:
        """N-best sentence of corpus sentence ``k`` (-1 when it has no candidates)."""
        ix = self.nbest_index
        if ix is None or k < 0 or k >= len(ix.row_of):
            return -1
        return int(ix.row_of[k])

    def candidate_rows(self, i: int) -> slice:
        ix = self.nbest_index
        if ix is None:
            raise IndexError("no N-best list attached")
        return slice(int(ix.offsets[i]), int(ix.offsets[i + 1]))

    def span_f(self, i: int) -> np.ndarray | None:
        if self.nbest_index is None:
            return None
        self._sync()
        return self.nbest_index.span_f(i)

    def exact(self) -> np.ndarray | None:
        """Per candidate of the attached list: its entities are exactly the gold."""
        if self.nbest_index is None:
            return None
        self._sync()
        out: np.ndarray | None = self._cached("exact", self.nbest_index.exact)
        return out

    def scores_of(self, i: int) -> np.ndarray | None:
        if self.scored is None:
            return None
        out: np.ndarray = self.scored.scores[self.scored.data.rows(i)]
        return out

    def reranked_choice(self, i: int) -> int | None:
        return None if self.scored is None else int(self.scored.choice[i])

    def data_row(self, i: int, j: int) -> int | None:
        """Row of candidate ``j`` of N-best sentence ``i`` in the reranker's ranking data."""
        return None if self.scored is None else int(self.scored.data.offsets[i]) + j

    def scored_data(self) -> Any:
        """The scored ranking data, counted against the current gold."""
        self._sync()
        return None if self.scored is None else self.scored.data

    def scores_current(self) -> bool:
        """The scores' ranking data was built at the current gold (none changed since)."""
        return self.scored is not None and not len(self.changed_since(self._scored_rev))

    def nbest_snapshot(self) -> NBestList | None:
        """The attached list with the gold of this moment as a plain list (for a worker or a
        training run: later edits do not reach it), and each sentence's document
        (:func:`~nerstudio.app.attachments.list_documents`) when the list or the corpus says."""
        nb = self.nbest
        if nb is None:
            return None
        snapshot = getattr(nb.gold, "snapshot", None)  # a CorpusGold: the corpus's gold now
        gold = snapshot() if snapshot is not None else (None if nb.gold is None else list(nb.gold))
        docs = list_documents(nb)
        return NBestList(
            nb.tagset,
            nb.words,
            nb.candidates,
            nb.logprobs,
            gold,
            nb.ids,
            nb.meta if docs is None else {**nb.meta, "documents": docs},
            _span_cache=nb._span_cache,
        )

    def nbest_source(self) -> str | None:
        """The file holding exactly the attached list with the current gold (read from it, its
        gold equal to the corpus's then and not edited since, file unchanged), or None."""
        st, ix = self.nbest_file, self.nbest_index
        if st is None or ix is None or ix.differ:
            return None
        edited = self.changed_since(self._attached_rev)
        if len(edited) and (ix.row_of[edited] >= 0).any():
            return None
        return st.path if st.unchanged() else None

    def dev_nbest_source(self) -> str | None:
        st = self.dev_nbest_file
        return st.path if st is not None and st.unchanged() else None

    # -- derived per-sentence views -------------------------------------------------------
    @property
    def type_masks(self) -> dict[str, np.ndarray]:
        """Per entity type, the sentences whose gold has one."""
        ks = self.changed_since(self._types_rev)
        if len(ks):
            c = self._opened()
            for k in ks:
                labels = {sp.label for sp in c.sentences[k].spans}
                for lab in labels - set(self._type_masks):
                    self._type_masks[lab] = np.zeros(len(c), dtype=bool)
                for lab, m in self._type_masks.items():
                    m[k] = lab in labels
        self._types_rev = self.revision
        return self._type_masks

    def flags(self) -> dict[str, np.ndarray]:
        """Per corpus sentence: has_nbest, error (baseline top ≠ gold), changed (the reranker
        picked another candidate), missing (gold not among the candidates), rerank_error,
        unreviewed (see :attr:`reviewed`), flagged and noted (the annotator's flags and notes)."""
        out: dict[str, np.ndarray] = self._cached("flags", lambda: sentence_flags(self))
        return out


def _same_file(path: str | None) -> str:
    return os.path.realpath(path) if path else ""


def type_masks_of(corpus: Corpus) -> dict[str, np.ndarray]:
    """Per entity type, the sentences of ``corpus`` whose gold has one."""
    labels: dict[str, list[int]] = {}
    for k, s in enumerate(corpus.sentences):
        for sp in s.spans:
            lst = labels.setdefault(sp.label, [])
            if not lst or lst[-1] != k:
                lst.append(k)
    out = {}
    for lab, ks in sorted(labels.items()):
        m = np.zeros(len(corpus), dtype=bool)
        m[ks] = True
        out[lab] = m
    return out
