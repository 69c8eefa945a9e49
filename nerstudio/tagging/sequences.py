"""A corpus as the structured taggers see it: token runs of predicate ids with the way back to
sentences.

:class:`Sequences` is what :meth:`PerceptronTagger.prepare
<nerstudio.tagging.perceptron.PerceptronTagger.prepare>` makes of a corpus (documents or
sentences as sequences, K&T §6.1) and what the perceptron tagger and the joint trainer
(:mod:`nerstudio.tagging.joint`) decode and learn from; :func:`as_units` reads the documents of a
corpus, a list of documents or a list of sentences.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..corpus.model import Corpus, Document, Sentence, Span


@dataclass
class Sequences:
    """A corpus prepared for the tagger: predicate ids per token and the way back to sentences.

    ``indptr``/``ids``: CSR rows of predicate ids, one row per token of all sequences in order;
    ``seq_ptr``: token offset of every sequence (len = n_sequences + 1); ``starts``: 1 on the first
    token of every sentence; ``gold``: per sequence, its gold tag ids (int16) or ``None``;
    ``words``: per sequence, the concatenated words; ``sentence_offsets``: per sequence, the token
    offsets of its sentences inside it (len = its sentences + 1); ``sentence_index``: per sequence,
    the indices of its sentences in the corpus' sentence order; ``gold_spans``: gold spans per
    corpus sentence (untyped for the SCN task); ``names``: document ids (or sentence numbers).
    """

    indptr: np.ndarray
    ids: np.ndarray
    seq_ptr: np.ndarray
    starts: np.ndarray
    gold: list[np.ndarray] | None
    words: list[tuple[str, ...]]
    sentence_offsets: list[np.ndarray]
    sentence_index: list[np.ndarray]
    gold_spans: list[list[Span]] | None
    names: list[str]
    documents: bool = True
    gold_flat: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.seq_ptr) - 1

    @property
    def n_tokens(self) -> int:
        return int(self.seq_ptr[-1])

    @property
    def n_sentences(self) -> int:
        return sum(len(o) - 1 for o in self.sentence_offsets)

    def bounds(self, i: int) -> tuple[int, int]:
        """(first token, length) of sequence i."""
        a = int(self.seq_ptr[i])
        return a, int(self.seq_ptr[i + 1]) - a

    def split(self, i: int, tags: np.ndarray) -> list[np.ndarray]:
        """A tagging of sequence i cut into its sentences."""
        off = self.sentence_offsets[i]
        return [tags[off[j] : off[j + 1]] for j in range(len(off) - 1)]


def as_units(data) -> list[tuple[str, list[Sentence]]]:
    """(id, sentences) per document of a Corpus, a list of Documents or a list of Sentences
    (each sentence then being a document of its own)."""
    if isinstance(data, Corpus):
        return [(d.id or str(k + 1), list(d.sentences)) for k, d in enumerate(data.documents)]
    items = list(data)
    if all(isinstance(d, Document) for d in items):
        return [(d.id or str(k + 1), list(d.sentences)) for k, d in enumerate(items)]
    if all(isinstance(s, Sentence) for s in items):
        return [(str(k + 1), [s]) for k, s in enumerate(items)]
    raise TypeError("expected a Corpus, a list of Documents or a list of Sentences")
