"""What every tagger offers its callers, whichever of the three it is.

The max-ent tagger decodes sentences by beam search, the perceptron taggers decode sentences or
documents exactly, the joint (K&T) taggers re-score document candidates. Callers that only need
a tagger's candidates of a corpus, its settings or its file ask :class:`Tagger` for them instead
of telling the classes apart; ``tests/test_conformance.py`` checks every tagger of the registry
(:mod:`nerstudio.learners`) against it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..corpus.model import Corpus
    from ..nbest import NBestList


@runtime_checkable
class Tagger(Protocol):
    def fit_corpus(
        self,
        corpus: Corpus,
        dev: Corpus | None = None,
        callback: Callable[[Any], None] | None = None,
        should_cancel: Callable[[], bool] | None = None,
    ) -> Tagger:
        """Train on ``corpus`` (curve points on ``dev``); a true ``should_cancel()`` stops it."""
        ...

    def candidate_lists(
        self, corpus: Corpus, n: int = 20, *, documents: bool = False, with_gold: bool = True
    ) -> NBestList:
        """The ``n`` best candidates of every sentence of ``corpus`` (``documents``: of every
        document, for the taggers that decode documents; the max-ent tagger refuses), with the
        corpus's gold entities unless ``with_gold`` is false."""
        ...

    def get_params(self) -> dict[str, Any]:
        """The constructor's settings."""
        ...

    def save(self, path: Any) -> None: ...
