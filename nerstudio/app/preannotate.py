"""Pre-annotation: a model's entities become the starting gold of a corpus, so the annotator
corrects them instead of starting from nothing (plain text opened as a corpus has no entity).

The model is a model folder (:func:`load_model`: a tagger and optionally a reranker, as
``nerstudio.load`` reads them); each sentence gets the tagger's best candidate, or the
reranker's pick among the tagger's ``n`` best — exactly what :meth:`nerstudio.api.Pipeline.predict`
gives for the sentence alone, computed in batches with progress and cancellation. Which sentences
are predicted is the *policy*: by default only sentences with no entity (``replace=False``, "fill
empty": an annotator's work is never overwritten), or every sentence (``replace=True``).
Boundary-only models' entities get the placeholder type ``ENT`` (a corpus file needs a type).

A reranker with document context (``nerstudio experiment``'s default) chooses a sentence's
candidate from what the tagger finds in the other sentences of its document and of the corpus,
as in the experiment: then every non-empty sentence of the corpus is decoded, whatever the
policy, and the reranker chooses once over all of them (:func:`predict_corpus`).

The result is a plain :class:`Preannotation` — the sentences whose gold changes and their new
spans. ``nerstudio preannotate`` writes it into the corpus it saves (:func:`apply`); the
application hands it to :meth:`Document.set_many <nerstudio.app.document.Document.set_many>` as
one undoable edit, after dropping the sentences the annotator edited while the model ran
(:func:`edits_for` with ``skip``); its worker runs :func:`predict_folder`, which reads the
folder and predicts in two stages it reports. No Qt here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..corpus.model import Corpus, Sentence, Span
from ..errors import Cancelled, NerstudioError, SettingsError
from ..nbest import NBestList
from ..runtime.predictor import choices, load_model_folder, needs_documents, tagger_nbest
from .guards import checked_spans
from .progress import Progress

BATCH_SENTENCES = 100  # sentences decoded together: progress and cancellation come between batches
N_CANDIDATES = 20  # the tagger's candidates the reranker chooses from (as nerstudio.load's default)
PLACEHOLDER = "ENT"  # the type given to a boundary-only model's entities
STAGE_LOAD_MODEL = "reading the model"
STAGE_PREDICT = "predicting the entities"


@dataclass
class Model:
    """A loaded model folder: the tagger, the reranker (or None) and where they came from."""

    tagger: Any
    reranker: Any = None
    folder: str = ""

    def describe(self) -> str:
        name = type(self.tagger).__name__
        return f"{name} + {self.reranker.algo} reranker" if self.reranker is not None else name


def load_model(folder: str | os.PathLike[str], system: str | None = None) -> Model:
    """The model folder ``folder`` (see :func:`nerstudio.runtime.predictor.load_model_folder`)."""
    tagger, reranker = load_model_folder(folder, system)
    return Model(tagger, reranker, str(folder))


@dataclass
class Preannotation:
    """What pre-annotation changes: ``edits`` maps a sentence index to its new spans (only the
    sentences whose gold changes); ``predicted``: sentences the model ran on; ``kept``: sentences
    left alone because they had entities (fill-empty policy); ``skipped``: sentences edited by
    the annotator while the model ran (their edit wins); ``model``: what predicted."""

    edits: dict[int, list[Span]] = field(default_factory=dict)
    predicted: int = 0
    kept: int = 0
    skipped: int = 0
    model: str = ""

    @property
    def changed(self) -> int:
        return len(self.edits)

    @property
    def entities(self) -> int:
        return sum(len(v) for v in self.edits.values())

    def summary(self) -> str:
        """One line: how many sentences were pre-annotated, and with how many entities."""
        out = (
            f"pre-annotated {self.changed:,} of {self.predicted:,} sentence(s) with {self.entities:,} "
            f"entit{'y' if self.entities == 1 else 'ies'}"
        )
        if self.kept:
            out += f"; {self.kept:,} sentence(s) that had entities kept"
        if self.skipped:
            out += f"; {self.skipped:,} edited meanwhile left as edited"
        return out


def targets(sentences: Sequence[Sentence], replace: bool = False) -> list[int]:
    """The sentences to predict: every non-empty one with ``replace``, else those with no entity."""
    return [k for k, s in enumerate(sentences) if len(s.words) and (replace or not s.spans)]


def predict(
    model: Model,
    sentences: Sequence[Sentence | Sequence[str]],
    n: int = N_CANDIDATES,
    batch: int = BATCH_SENTENCES,
    progress: Callable[[int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    documents: Sequence[int] | None = None,
) -> list[list[Span]]:
    """The predicted spans of every sentence, in order. A sentence is a non-empty token list or a
    :class:`~nerstudio.corpus.model.Sentence` (its extra columns, POS and chunk, reach a model
    trained with them; its gold is not read). ``documents``: each sentence's document, for a
    reranker with context features (default: each sentence alone). ``progress(done, total)``
    after each batch; ``should_cancel()`` is asked before each and stops the work with
    :class:`~nerstudio.errors.Cancelled`."""
    if batch < 1:
        raise SettingsError("batch must be at least 1")
    total = len(sentences)
    whole = needs_documents(model.reranker)  # the reranker chooses once, over the whole list
    out: list[list[Span]] = []
    decoded = []
    if progress is not None:
        progress(0, total)
    for start in range(0, total, batch):
        if should_cancel is not None and should_cancel():
            raise Cancelled("pre-annotation cancelled")
        nb = tagger_nbest(model.tagger, sentences[start : start + batch], n)
        if whole:
            decoded.append(nb)
        else:
            out.extend(_chosen_spans(nb, choices(model.reranker, nb)))
        if progress is not None:
            progress(start + len(nb), total)
    if whole and decoded:
        nb = NBestList.concatenate(decoded)
        out = _chosen_spans(nb, choices(model.reranker, nb, documents))
    return out


def _chosen_spans(nb: NBestList, chosen: np.ndarray) -> list[list[Span]]:
    out = []
    for i, j in enumerate(chosen.tolist()):
        spans = nb.candidate_spans(i)[j]
        if not nb.typed:
            spans = [Span(sp.start, sp.end, PLACEHOLDER) for sp in spans]
        out.append(sorted(spans))
    return out


def predict_corpus(
    model: Model,
    sentences: Sequence[Sentence],
    documents: Sequence[int],
    ks: Sequence[int],
    n: int = N_CANDIDATES,
    batch: int = BATCH_SENTENCES,
    progress: Callable[[int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> list[list[Span]]:
    """The predicted spans of sentences ``ks`` of a corpus (``sentences``, with ``documents`` the
    document of each): only ``ks`` are decoded, unless the reranker has context features, which
    need every non-empty sentence (see the module docstring)."""
    if not needs_documents(model.reranker):
        return predict(model, [sentences[k] for k in ks], n, batch, progress, should_cancel)
    every = [k for k, s in enumerate(sentences) if len(s.words)]
    spans = predict(
        model,
        [sentences[k] for k in every],
        n,
        batch,
        progress,
        should_cancel,
        [documents[k] for k in every],
    )
    at = {k: i for i, k in enumerate(every)}
    return [spans[at[k]] for k in ks]


@dataclass
class PredictedSpans:
    """What :func:`predict_folder` found: ``spans[i]`` is the prediction for corpus sentence
    ``sentences[i]``; ``model`` says what predicted (a tagger, and its reranker)."""

    sentences: list[int]
    spans: list[list[Span]]
    model: str
    folder: str


def predict_folder(
    ctx: Progress,
    folder: str,
    ks: Sequence[int],
    sentences: Sequence[Sentence],
    system: str | None = None,
    documents: Sequence[int] | None = None,
) -> PredictedSpans:
    """Read the model folder ``folder`` and predict the entities of the corpus sentences ``ks``
    with :func:`predict_corpus`, reporting both stages to ``ctx``. ``sentences`` are copies of
    every corpus sentence (a reranker with document context reads them all) and ``documents``
    the document of each. A folder or model that cannot be used is a
    :class:`~nerstudio.errors.NerstudioError` (one clear line)."""
    docs = list(documents) if documents is not None else [0] * len(sentences)
    ctx.plan([STAGE_LOAD_MODEL, STAGE_PREDICT])
    ctx.stage(STAGE_LOAD_MODEL, os.path.basename(os.path.normpath(folder)))
    try:
        model = load_model(folder, system)
        ctx.stage(STAGE_PREDICT, "", 0, len(ks))
        spans = predict_corpus(
            model,
            sentences,
            docs,
            ks,
            progress=lambda d, n: ctx.progress(f"{d:,}/{n:,} sentences", d, n),
            should_cancel=ctx.should_cancel,
        )
    except NerstudioError:
        raise
    except OSError as exc:  # the folder the user chose cannot be used: say why in one line
        raise NerstudioError(f"{exc.filename or folder}: {exc.strerror or exc}") from None
    return PredictedSpans(list(ks), spans, model.describe(), folder)


def edits_for(
    sentences: Sequence[Sentence],
    ks: Sequence[int],
    predicted: Sequence[Sequence[Span]],
    replace: bool = False,
    skip: Iterable[int] = (),
) -> Preannotation:
    """The :class:`Preannotation` of predictions ``predicted`` for sentences ``ks`` of
    ``sentences`` as they are now: a sentence in ``skip`` (edited since the prediction started)
    and, without ``replace``, a sentence that has entities now are left alone; one whose gold
    already equals its prediction is no edit."""
    res = Preannotation(predicted=len(ks))
    skipped = {int(k) for k in skip}
    if not replace:  # the non-empty sentences not predicted had entities
        res.kept = sum(1 for s in sentences if len(s.words)) - len(ks)
    for k, spans in zip(ks, predicted):
        now = sentences[k].spans
        if k in skipped:
            res.skipped += 1
        elif now and not replace:
            res.kept += 1
        elif sorted(spans) != list(now):
            res.edits[k] = sorted(spans)
    return res


def preannotate(
    corpus: Corpus,
    model: Model,
    replace: bool = False,
    n: int = N_CANDIDATES,
    batch: int = BATCH_SENTENCES,
    progress: Callable[[int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> Preannotation:
    """Predict the sentences the policy names (see the module docstring) and say what changes;
    ``corpus`` itself is not changed (:func:`apply` does that)."""
    ks = targets(corpus.sentences, replace)
    documents = corpus.sentence_document()
    spans = predict_corpus(
        model, corpus.sentences, documents, ks, n, batch, progress, should_cancel
    )
    res = edits_for(corpus.sentences, ks, spans, replace)
    res.model = model.describe()
    return res


def apply(corpus: Corpus, result: Preannotation) -> Corpus:
    """Write ``result``'s spans into ``corpus`` (in place; returned for convenience), checked
    as the document checks every span it takes (:func:`~.guards.checked_spans`): all, or none
    when one is wrong."""
    checked = {k: checked_spans(corpus, k, spans) for k, spans in result.edits.items()}
    for k, spans in checked.items():
        corpus.sentences[k].spans = spans
    return corpus
