"""Table model over the candidates of one sentence (rows are computed on demand).

Columns: rank by the tagger, L(x), reranker score, rank after reranking, span F against gold,
and the entities that differ from the top candidate. Score columns hold ``None`` when no
reranker is loaded (the view hides them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from ...corpus.model import Span
from ...numfmt import num
from .roles import ALIGN_RIGHT, ALIGNMENT, DISPLAY, FONT, FOREGROUND, TOOLTIP, USER


def span_diff(spans: list[Span], reference: list[Span], words: Sequence[str]) -> str:
    """``+TYPE text`` for entities only in ``spans``, ``−TYPE text`` for those only in ``reference``."""
    a, b = set(spans), set(reference)
    parts = [f"+{s.label or 'ENT'} {s.text(words)}" for s in sorted(a - b)]
    parts += [f"−{s.label or 'ENT'} {s.text(words)}" for s in sorted(b - a)]
    return "  ".join(parts)


def _floats(values) -> list[float] | None:
    """A row per candidate as Python floats (the document gives numpy arrays; a sentence has a
    few dozen candidates at most, and the table needs no numpy of its own)."""
    return None if values is None else [float(x) for x in values]


def _ranks(scores: list[float]) -> list[int]:
    """Each candidate's rank after reranking: by score, best first, ties in the tagger's order,
    a score that is not a number last."""
    order = sorted(range(len(scores)), key=lambda j: (math.isnan(scores[j]), -scores[j]))
    ranks = [0] * len(scores)
    for rank, j in enumerate(order, 1):
        ranks[j] = rank
    return ranks


class NBestTableModel(QAbstractTableModel):
    RANK, LOGP, SCORE, RERANK, F, DIFF = range(6)
    COLUMNS: tuple[str, ...] = (
        "Rank",
        "L(x)",
        "Score",
        "Rerank",
        "F",
        "Differs from top candidate",
    )
    TIPS: tuple[str, ...] = (
        "Rank of the candidate by the tagger (1 = its best guess)",
        "L(x): the tagger's log-probability of the candidate",
        "F(x): the reranker's score (higher is better)",
        "Rank of the candidate after reranking",
        "Span F-measure of the candidate against the gold entities",
        "Entities this candidate adds (+) or drops (−) compared with the tagger's top candidate",
    )
    SortRole = USER + 1

    def __init__(self, parent=None):
        super().__init__(parent)
        self._words: tuple = ()
        self._spans: list = []
        self._logp: list[float] = []
        self._scores: list[float] | None = None
        self._rerank: list[int] | None = None
        self._f: list[float] | None = None
        self._diff: list[str] = []
        self._text: list[tuple] = []
        self._exact: list[bool] | None = None
        self._chosen: int | None = None
        self.score_label = "L(x)"
        self._bold = QFont()
        self._bold.setBold(True)

    # -- content --------------------------------------------------------------------------
    def set_candidates(
        self,
        words,
        spans: list[list],
        logprobs,
        scores=None,
        f=None,
        chosen: int | None = None,
        exact=None,
    ) -> None:
        """``spans[j]``: entities of candidate j (best first); ``scores``: reranker scores or None."""
        self.beginResetModel()
        self._words = tuple(words)
        self._spans = list(spans)
        self._logp = _floats(logprobs) or []
        self._scores = _floats(scores)
        self._rerank = _ranks(self._scores) if self._scores else None
        self._f = _floats(f)
        self._exact = None if exact is None else [bool(x) for x in exact]
        self._chosen = chosen
        top = self._spans[0] if self._spans else []
        self._diff = [
            span_diff(s, top, self._words) if j else "" for j, s in enumerate(self._spans)
        ]
        self._text = [self._row_text(j) for j in range(len(self._spans))]  # display strings, once
        self.endResetModel()

    def set_score_label(self, label: str) -> None:
        """The second column's title: "L(x)" for a probabilistic tagger, "score" for a
        perceptron / joint tagger whose candidates carry Φ·w (the total score of the best
        document candidate showing the sentence candidate)."""
        if label == self.score_label:
            return
        self.score_label = label
        cols = list(self.COLUMNS)
        cols[self.LOGP] = label
        self.COLUMNS = tuple(cols)
        tips = list(self.TIPS)
        tips[self.LOGP] = (
            NBestTableModel.TIPS[self.LOGP]
            if label == "L(x)"
            else "score: the sequence tagger's total score Φ·w (local + non-local features) of the best "
            "document candidate showing this sentence candidate"
        )
        self.TIPS = tuple(tips)
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, self.LOGP, self.LOGP)

    def set_quality(self, f=None, exact=None) -> None:
        """New span F and exact-match marks (the gold changed); rows and selection stay."""
        self._f = _floats(f)
        self._exact = None if exact is None else [bool(x) for x in exact]
        self._text = [self._row_text(j) for j in range(len(self._spans))]
        if self._spans:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self._spans) - 1, len(self.COLUMNS) - 1)
            )

    def _row_text(self, j: int) -> tuple:
        if j == 0:
            diff = "(top candidate)" if self._spans[0] else "(top candidate: no entities)"
        else:
            diff = self._diff[j] or "(same entities, other tags)"
        return (
            str(j + 1),
            num(self._logp[j]),
            None if self._scores is None else num(self._scores[j]),
            None if self._rerank is None else str(int(self._rerank[j])),
            None if self._f is None else f"{self._f[j]:.1f}",
            diff,
        )

    def clear(self) -> None:
        self.set_candidates((), [], [])

    @property
    def has_scores(self) -> bool:
        return self._scores is not None

    @property
    def has_gold(self) -> bool:
        return self._f is not None

    def exact_marks(self) -> list[bool] | None:
        """Per candidate: its entities are exactly the gold (None: no gold)."""
        return None if self._exact is None else list(self._exact)

    def candidates(self) -> dict[str, Any]:
        """What the table shows, as :meth:`set_candidates` was given it (as plain values)."""
        return {
            "words": list(self._words),
            "spans": [list(s) for s in self._spans],
            "logprobs": list(self._logp),
            "scores": None if self._scores is None else list(self._scores),
            "f": None if self._f is None else list(self._f),
            "chosen": self._chosen,
            "exact": None if self._exact is None else list(self._exact),
        }

    def spans(self, j: int) -> list:
        return self._spans[j]

    def chosen(self) -> int | None:
        return self._chosen

    # -- Qt API ---------------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._spans)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section, orientation, role=DISPLAY):
        if orientation == Qt.Orientation.Horizontal:
            if role == DISPLAY:
                return self.COLUMNS[section]
            if role == TOOLTIP:
                return self.TIPS[section]
            if role == ALIGNMENT and section == self.DIFF:
                # left: centred, a title wider than its column would lose both ends
                return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index, role=DISPLAY):
        if not index.isValid():
            return None
        j, c = index.row(), index.column()
        if role == DISPLAY:  # the most frequent question: answered here, from the row's strings
            return self._text[j][c]
        answer = self._ROLE_DATA.get(role)
        return None if answer is None else answer(self, j, c)

    # -- data() by role: (row, column) -> value ---------------------------------------------
    def _sort_key(self, j: int, c: int):
        if c == self.RANK:
            return j
        if c == self.DIFF:
            return self._diff[j]
        values = (None, self._logp, self._scores, self._rerank, self._f)[c]
        if values is None:
            return None
        return int(values[j]) if c == self.RERANK else float(values[j])

    def _alignment(self, j: int, c: int):
        return ALIGN_RIGHT if c != self.DIFF else None

    def _font(self, j: int, c: int):
        return self._bold if self._chosen is not None and j == self._chosen else None

    def _foreground(self, j: int, c: int):
        if c == self.F and self._exact is not None and self._exact[j]:
            return QColor("#2e7d32")
        if c == self.DIFF and j > 0:
            return QColor("#555555")
        return None

    def _tooltip(self, j: int, c: int) -> str:
        ents = (
            "; ".join(f"{s.label or 'ENT'}: {s.text(self._words)}" for s in self._spans[j])
            or "no entities"
        )
        tip = f"Candidate {j + 1}: {ents}"
        if self._exact is not None and self._exact[j]:
            tip += "\n(exactly the gold entities)"
        if self._chosen is not None and j == self._chosen:
            tip += "\n(the reranker's choice)"
        return tip

    _ROLE_DATA: ClassVar[dict[int, Callable[[NBestTableModel, int, int], Any]]] = {
        SortRole: _sort_key,
        ALIGNMENT: _alignment,
        FONT: _font,
        FOREGROUND: _foreground,
        TOOLTIP: _tooltip,
    }
