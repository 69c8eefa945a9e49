"""What every reranker offers its callers (:class:`Reranker`), checked for every reranker of the
registry (:mod:`nerstudio.learners`) by ``tests/test_conformance.py``. The learners share most
of it through their base class (:class:`nerstudio.rerank.base.Reranker`); this is the interface
alone, for callers and for a learner written without the base class."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from .data import RankingData


@runtime_checkable
class Reranker(Protocol):
    algo: str  # its registry name
    unit: str  # what its curve counts: "round" or "epoch"

    def get_params(self) -> dict[str, Any]: ...

    def fit(
        self,
        train: RankingData,
        dev: RankingData | None = None,
        callback: Callable[[Any], None] | None = None,
        should_cancel: Callable[[], bool] | None = None,
    ) -> Any:
        """Learn from ``train`` (dev picks the round or epoch); a true ``should_cancel()``
        stops it with :class:`~nerstudio.errors.Cancelled`."""
        ...

    def decision_function(self, data: RankingData) -> np.ndarray:
        """The score of every candidate (row) of ``data``."""
        ...

    def predict(self, data: RankingData) -> np.ndarray:
        """Per sentence, the index of the chosen candidate."""
        ...

    def state(self) -> dict[str, np.ndarray]:
        """The learned arrays a model file stores."""
        ...

    def set_state(self, arrays: dict[str, np.ndarray], n_features: int) -> None: ...
