"""What every reranker shares: hyper-parameters, training statistics, scoring, explanations.

A reranker follows the scikit-learn shape: ``__init__`` stores hyper-parameters only,
``fit(train, dev, callback, should_cancel)`` returns self, learned state ends in ``_``.
Training reports one :class:`RerankStats` per boosting evaluation point or perceptron epoch
through ``callback`` and raises :class:`~nerstudio.errors.Cancelled` soon after
``should_cancel()`` turns true. With a development set, the state of the best step (highest
dev F) is what the fitted model keeps.

Linear rerankers score a candidate as ``F(x) = a0 · L(x) + Σ_k w_k h_k(x)``; they expose
``(a0, w)`` through :meth:`Reranker.linear_weights`, which is all :mod:`.explain` needs.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from ..errors import Cancelled
from .data import RankingData


@dataclass
class RerankStats:
    """One point of a training curve."""

    step: int  # boosting round or perceptron epoch (1-based)
    unit: str  # "round" or "epoch"
    seconds: float  # since fit started
    loss: float | None = None  # ExpLoss (boosting)
    mistakes: int | None = None  # updates made in the epoch (perceptrons)
    dev_precision: float | None = None
    dev_recall: float | None = None
    dev_f1: float | None = None
    best: bool = False  # the best dev F so far

    def as_dict(self) -> dict:
        return asdict(self)


Callback = Callable[[RerankStats], None] | None
CancelCheck = Callable[[], bool] | None


class Reranker:
    """Base class; subclasses set ``algo`` and ``unit`` and implement the learning."""

    algo = "base"
    unit = "epoch"

    # -- hyper-parameters ----------------------------------------------------------------------
    def get_params(self) -> dict:
        sig = inspect.signature(type(self).__init__)
        return {k: getattr(self, k) for k in sig.parameters if k != "self"}

    def describe(self) -> str:
        """Short settings label for curves and reports."""
        parts = [f"{k}={v}" for k, v in self.get_params().items() if v is not None]
        return f"{self.algo}(" + ", ".join(parts) + ")"

    # -- training ------------------------------------------------------------------------------
    def fit(
        self,
        train: RankingData,
        dev: RankingData | None = None,
        callback: Callback = None,
        should_cancel: CancelCheck = None,
    ) -> Reranker:
        raise NotImplementedError

    @staticmethod
    def _check_cancel(should_cancel: CancelCheck) -> None:
        if should_cancel is not None and should_cancel():
            raise Cancelled("training cancelled")

    def _start(self) -> None:
        self.history_: list[RerankStats] = []
        self.best_step_: int | None = None
        self._t0 = time.perf_counter()

    def _record(
        self, step: int, dev: RankingData | None, callback: Callback, score_fn=None, **kw
    ) -> RerankStats:
        """Evaluate on dev (if any) with ``score_fn`` (default: this model), append to history."""
        st = RerankStats(step=step, unit=self.unit, seconds=time.perf_counter() - self._t0, **kw)
        if dev is not None and dev.has_gold:
            choice = dev.argmax(score_fn(dev)) if score_fn is not None else self.predict(dev)
            st.dev_precision, st.dev_recall, st.dev_f1 = dev.prf(choice)
            prev = max((h.dev_f1 for h in self.history_ if h.dev_f1 is not None), default=None)
            st.best = prev is None or st.dev_f1 > prev
            if st.best:
                self.best_step_ = step
        self.history_.append(st)
        if callback is not None:
            callback(st)
        return st

    # -- scoring -------------------------------------------------------------------------------
    def decision_function(self, data: RankingData) -> np.ndarray:
        a0, w = self.linear_weights()
        return linear_scores(data, a0, w)

    def predict(self, data: RankingData) -> np.ndarray:
        """Chosen candidate (index within its sentence) per sentence."""
        return data.argmax(self.decision_function(data))

    def linear_weights(self) -> tuple[float, np.ndarray]:
        """``(a0, w)`` of ``F(x) = a0·L(x) + w·h(x)``; models that are not linear raise."""
        raise NotImplementedError(f"{self.algo} is not a linear model")

    # -- persistence (the model file is written by nerstudio.rerank.model) ----------------------
    def state(self) -> dict[str, np.ndarray]:
        """Learned arrays to store in a model file."""
        raise NotImplementedError

    def set_state(self, arrays: dict[str, np.ndarray], n_features: int) -> None:
        raise NotImplementedError

    def history_dicts(self) -> list[dict]:
        return [h.as_dict() for h in getattr(self, "history_", [])]


def linear_scores(data: RankingData, a0: float, w: np.ndarray) -> np.ndarray:
    s = data.X @ np.asarray(w, dtype=np.float64) if data.n_features else np.zeros(data.n_candidates)
    return a0 * data.L + s
