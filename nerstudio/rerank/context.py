"""What the rerankers know of an entity from outside its candidate: the bundled gazetteers
(:func:`gazetteer_strings`), the document and corpus context from the first stage's own
output (:class:`DocumentContext`, two-stage aggregation after Krishnan & Manning 2006 and Ratinov
& Roth 2009), and how much of its sentence's N-best list agrees with it
(:func:`entity_posteriors`: the tagger's confidence in one entity, where the candidate's
log-probability L(x) is its confidence in the whole sentence).

``GZ=<list>`` when the entity's words are one whole entry of a list of
:mod:`nerstudio.resources`, ``GZF=<list>`` / ``GZL=<list>`` when its first / last word alone is.

The first stage is the tagger: its best candidate of every sentence of an N-best list. For the
training list those candidates are jackknifed by document (a tagger that never saw the
document labelled it), so the context says on training data what it will say on new data. For
an entity with words ``w`` in sentence ``i`` of document ``d``:

``DC=<label>``
    the label the first stage gives ``w`` most often in the *other* sentences of ``d``
    (absent when ``w`` is labelled nowhere else in ``d``);
``CC=<label>``
    the same over the sentences of the other documents of the list (corpus context).

Ties go to the alphabetically first label; boundary-only lists have the one label ``ENT``. The
rerankers' typed copies (``DC:ORG=PER``) then say whether the candidate agrees with the context.
Kazama & Torisawa's non-local features (:mod:`nerstudio.text.nonlocal_features`) look at the
same evidence inside one document labelling that is being scored; these look at a fixed first-
stage labelling, so a reranker can use them without searching over document labellings.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from ..choices import SCOPES
from ..errors import Msg, SettingsError
from ..nbest import NBestList, entity_types, scn_spans
from ..resources import Gazetteers, select_lists
from ..resources import gazetteers as shared_gazetteers


def gazetteer_strings(
    gz: Gazetteers, words: Sequence[str], s: int, e1: int, single: dict | None = None
) -> list[str]:
    """GZ / GZF / GZL strings of the entity ``words[s:e1]`` (``single`` caches one-word look-ups
    by position, within one sentence)."""
    single = {} if single is None else single

    def one(i):
        if i not in single:
            single[i] = gz.lists_of([words[i]])
        return single[i]

    out = [f"GZ={n}" for n in gz.lists_of(words[s:e1])]
    return out + [f"GZF={n}" for n in one(s)] + [f"GZL={n}" for n in one(e1 - 1)]


def entity_posteriors(
    logprobs, cands: np.ndarray, tagset: Sequence[str], spans: tuple | None = None
) -> dict:
    """How much of the N-best list's mass holds each entity: the candidates' scores turned into
    probabilities over the list (softmax), summed over the candidates that contain the entity.
    Keys ``(start, end, type)`` (the labelled entity) and ``(start, end)`` (the same words as an
    entity of any type); ``end`` exclusive. ``spans``: ``scn_spans(cands, tagset)`` when the
    caller has it already."""
    lp = np.asarray(logprobs, dtype=np.float64)
    if not len(lp):
        return {}
    p = np.exp(lp - lp.max())
    p = (p / p.sum()).tolist()
    cc, ss, ee, ll = spans if spans is not None else scn_spans(cands, tagset)
    types = entity_types(tagset)
    out: dict = {}
    for c, s, e, lab in zip(cc.tolist(), ss.tolist(), ee.tolist(), ll.tolist()):
        for key in ((s, e, types[lab]), (s, e)):
            out[key] = out.get(key, 0.0) + p[c]
    return out


def posterior_bucket(p: float) -> str:
    """A posterior as a feature value: tenths (``0.0`` … ``0.9``), ``1.0`` from 0.995 on."""
    return "1.0" if p >= 0.995 else f"0.{min(int(p * 10), 9)}"


def posterior_strings(post: dict, s: int, e1: int, label: str) -> list[str]:
    """``EP=<bucket>`` (the entity with its type) and, for typed entities, ``ES=<bucket>`` (its
    words as an entity of any type) from :func:`entity_posteriors` of the entity's sentence."""
    out = [f"EP={posterior_bucket(post[(s, e1, label)])}"]
    if label:
        out.append(f"ES={posterior_bucket(post[(s, e1)])}")
    return out


def resource_options(gazetteers, context) -> tuple:
    """A reranker's resource settings, checked and normalised: ``(gazetteers, context,
    Gazetteers or None)``. ``gazetteers``: True (every bundled list), False, or list or family
    names (:func:`nerstudio.resources.select_lists`: an ablation's choice), kept as list names;
    ``context``: True or ``"both"``, ``"document"`` (DC only), ``"corpus"`` (CC only), or False."""
    if not isinstance(gazetteers, (bool, int, type(None))):
        gazetteers = list(select_lists(gazetteers))
    else:
        gazetteers = bool(gazetteers)
    if isinstance(context, str):
        if context not in SCOPES:
            raise SettingsError(
                Msg.UNKNOWN.format(what="context scope", name=context, choices=SCOPES)
            )
        context = True if context == "both" else context
    else:
        context = bool(context)
    gz = shared_gazetteers(None if gazetteers is True else gazetteers) if gazetteers else None
    return gazetteers, context, gz


def _majority(c: Counter) -> str | None:
    best = [k for k, v in c.items() if v > 0 and v == max(c.values())]
    return min(best) if best else None


class DocumentContext:
    """The first-stage labels of an N-best list, counted per document and over the list.

    ``documents``: the document index of every sentence of the list; ``scope``: ``both``,
    ``document`` (DC only: the part that overlaps Kazama & Torisawa's document-level non-local
    features) or ``corpus`` (CC only)."""

    def __init__(self, nbest: NBestList, documents: Sequence[int], scope: str = "both"):
        if scope not in SCOPES:
            raise SettingsError(
                Msg.UNKNOWN.format(what="context scope", name=scope, choices=SCOPES)
            )
        self.scope = scope
        if len(documents) != len(nbest):
            raise ValueError(
                "documents must give one document index per sentence of the N-best list"
            )
        self.documents = [int(d) for d in documents]
        self.own: list[Counter] = []  # per sentence: (words, label) of its first-stage entities
        self.doc: dict[int, Counter] = defaultdict(Counter)
        self.corpus: Counter = Counter()
        for i in range(len(nbest)):
            c: Counter = Counter()
            if nbest.n_candidates(i):
                ws = nbest.words[i]
                for sp in nbest.spans(i, 0):
                    c[(tuple(ws[sp.start : sp.end]), sp.label or "ENT")] += 1
            self.own.append(c)
            self.doc[self.documents[i]].update(c)
            self.corpus.update(c)
        labels = sorted({lab for (_, lab) in self.corpus})
        self.labels = labels
        # the words the first stage labels anywhere: any other entity has no context at all
        self.labelled = {words for (words, _) in self.corpus}

    def strings(self, i: int, words: Sequence[str]) -> list[str]:
        """``DC=…`` / ``CC=…`` of the entity ``words`` in sentence ``i`` (see the module docstring)."""
        key = tuple(words)
        if key not in self.labelled:
            return []
        d = self.documents[i]
        doc_c = Counter(
            {lab: self.doc[d][(key, lab)] - self.own[i][(key, lab)] for lab in self.labels}
        )
        cor_c = Counter(
            {lab: self.corpus[(key, lab)] - self.doc[d][(key, lab)] for lab in self.labels}
        )
        out = []
        m = _majority(doc_c)
        if m is not None and self.scope != "corpus":
            out.append(f"DC={m}")
        m = _majority(cor_c)
        if m is not None and self.scope != "document":
            out.append(f"CC={m}")
        return out
