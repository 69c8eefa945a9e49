"""Tree model over the terms of a reranker score: template groups at the top, features below.

Two modes share the model:

* **explain** — the global features of one candidate with their value, weight and contribution
  to its score (``RerankerModel.explain``); columns Feature, Value, Weight, Contribution;
* **compare** — the features that separate two candidates A and B, with each one's value in A
  and in B and how much it moves F(A) − F(B) (``RerankerModel.compare``).

Rows come in the order of :mod:`nerstudio.rerank.explanation` (features by |contribution|,
groups by the |sum| of theirs), the order the "why" sentence reads out; clicking a header sorts
through a proxy. Grouping by template can be switched off (a flat list). Group headers and
tooltips say what each template means, from the one glossary (:mod:`nerstudio.rerank.glossary`);
numbers go through :func:`nerstudio.numfmt.num` (never ``-0.000``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from ...numfmt import num
from ...rerank.explanation import group_terms, rank_terms
from ...rerank.glossary import LEGEND, describe_template, explain_feature
from .proxy import NeedleFilterProxy
from .roles import ALIGN_RIGHT, ALIGNMENT, DISPLAY, FONT, FOREGROUND, TOOLTIP, USER
from .tree import TreeModel

_TOP = 0xFFFFFFFF


@dataclass
class TermRow:
    name: str
    template: str
    a: float  # value in the candidate (in A when comparing)
    b: float | None  # value in B when comparing
    weight: float
    contribution: float


_Group = tuple[str, list[TermRow], float]  # a template, its rows, the sum of their contributions


def _get(obj, *names, default=None):
    for n in names:
        if isinstance(obj, dict) and n in obj:
            return obj[n]
        if hasattr(obj, n):
            return getattr(obj, n)
    return default


def rows_from_terms(terms, compare: bool = False) -> list[TermRow]:
    """Adapt the core's Term objects (namedtuple, dataclass or dict) to rows."""
    out = []
    for t in terms:
        name = str(_get(t, "name", default="?"))
        template = str(
            _get(t, "template", default="") or ("L(x)" if name == "L(x)" else name.split("=", 1)[0])
        )
        w = float(_get(t, "weight", default=0.0) or 0.0)
        c = float(_get(t, "contribution", "delta", default=0.0) or 0.0)
        if compare:
            a = _get(t, "value_a", "a", default=None)
            b = _get(t, "value_b", "b", default=None)
            if a is None or b is None:
                v = float(_get(t, "value", default=0.0) or 0.0)  # a − b
                a, b = (v, 0.0) if v >= 0 else (0.0, -v)
            out.append(TermRow(name, template, float(a), float(b), w, c))
        else:
            out.append(
                TermRow(name, template, float(_get(t, "value", default=1.0) or 0.0), None, w, c)
            )
    return out


class FeatureTreeModel(TreeModel):
    SortRole = USER + 1
    EXPLAIN_COLUMNS = ("Feature", "Value", "Weight", "Contrib.")
    COMPARE_COLUMNS = ("Feature", "A", "B", "Weight", "Δ(A−B)")

    def __init__(self, parent=None):
        super().__init__(parent)
        self._compare = False
        self._grouped = True
        self._hide_zero = False
        self._shown: list[TermRow] = []  # rows after the zero-weight filter
        self._rows: list[TermRow] = []
        self._groups: list[_Group] = []  # template, rows, sum
        self._bold = QFont()
        self._bold.setBold(True)

    # -- content --------------------------------------------------------------------------
    def set_terms(self, rows: list[TermRow], compare: bool = False) -> None:
        self.beginResetModel()
        self._compare = compare
        self._rows = rank_terms(rows)
        self._regroup()
        self.endResetModel()

    def clear(self) -> None:
        self.set_terms([], self._compare)

    def set_grouped(self, grouped: bool) -> None:
        if grouped != self._grouped:
            self.beginResetModel()
            self._grouped = grouped
            self._regroup()
            self.endResetModel()

    def set_hide_zero(self, on: bool) -> None:
        """Leave out features with zero weight (boosting leaves most of them at zero)."""
        if on != self._hide_zero:
            self.beginResetModel()
            self._hide_zero = on
            self._regroup()
            self.endResetModel()

    def hidden_count(self) -> int:
        return len(self._rows) - len(self._shown)

    def _regroup(self) -> None:
        self._shown = [
            r
            for r in self._rows
            if not (self._hide_zero and r.weight == 0.0 and r.contribution == 0.0)
        ]
        self._groups = [(g.template, g.terms, g.total) for g in group_terms(self._shown)]

    @property
    def compare_mode(self) -> bool:
        return self._compare

    @property
    def grouped(self) -> bool:
        return self._grouped

    def terms(self) -> list[TermRow]:
        return list(self._rows)

    def shown_terms(self) -> list[TermRow]:
        """The terms the table lists (after the zero-weight filter), in its order."""
        return list(self._shown)

    def _columns(self):
        return self.COMPARE_COLUMNS if self._compare else self.EXPLAIN_COLUMNS

    # -- structure ------------------------------------------------------------------------
    def index(self, row, column, parent=QModelIndex()):
        # bounds checked here rather than with hasIndex(): this runs thousands of times a repaint
        if row < 0 or not 0 <= column < len(self._columns()):
            return QModelIndex()
        if not parent.isValid():
            n = len(self._groups) if self._grouped else len(self._shown)
            return self.createIndex(row, column, _TOP) if row < n else QModelIndex()
        if not self._grouped or parent.internalId() != _TOP or parent.column() != 0:
            return QModelIndex()
        g = parent.row()
        if g >= len(self._groups) or row >= len(self._groups[g][1]):
            return QModelIndex()
        return self.createIndex(row, column, g)

    def parent_of(self, index):
        if not index.isValid() or index.internalId() == _TOP:
            return QModelIndex()
        return self.createIndex(index.internalId(), 0, _TOP)

    def rowCount(self, parent=QModelIndex()):
        if not parent.isValid():
            return len(self._groups) if self._grouped else len(self._shown)
        if self._grouped and parent.internalId() == _TOP and parent.column() == 0:
            return len(self._groups[parent.row()][1])
        return 0

    def columnCount(self, parent=QModelIndex()):
        return len(self._columns())

    def headerData(self, section, orientation, role=DISPLAY):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == DISPLAY:
            return self._columns()[section]
        if role == TOOLTIP:
            cols = self._columns()
            tips = {
                "Feature": "Global feature (template=values); L(x) is the tagger's log-probability term. "
                "Words used in the template descriptions: " + LEGEND,
                "Value": "Value of the feature for this candidate (1 when present; L(x) itself)",
                "Weight": "Weight the reranker learned for the feature",
                "Contrib.": "Value × weight: what the feature adds to the candidate's score",
                "A": "Value of the feature for candidate A",
                "B": "Value of the feature for candidate B",
                "Δ(A−B)": "(value in A − value in B) × weight: how much the feature moves F(A) − F(B); "
                "positive favours A",
            }
            return tips.get(cols[section])
        return None

    def _row_of(self, index) -> TermRow | None:
        if self._grouped:
            if index.internalId() == _TOP:
                return None
            return self._groups[index.internalId()][1][index.row()]
        return self._shown[index.row()]

    def term_at(self, index) -> TermRow | None:
        return self._row_of(index) if index.isValid() else None

    def data(self, index, role=DISPLAY):
        if not index.isValid():
            return None
        c = index.column()
        last = len(self._columns()) - 1
        r = self._row_of(index)
        if r is None:  # a template group
            of_group = self._GROUP_DATA.get(role)
            return None if of_group is None else of_group(self, self._groups[index.row()], c, last)
        of_term = self._TERM_DATA.get(role)
        return None if of_term is None else of_term(self, r, c, last)

    # -- data() of a template group by role: (group, column, last column) -> value ------------
    def _group_display(self, g: _Group, c: int, last: int):
        t, rs, total = g
        if c == 0:
            return f"{_code_label(t)} · {describe_template(t)}  ({len(rs)})"
        return num(total, sign=True) if c == last else None

    def _group_sort_key(self, g: _Group, c: int, last: int):
        t, _rs, total = g
        return t if c == 0 else (total if c == last else 0.0)

    def _group_font(self, g: _Group, c: int, last: int):
        return self._bold

    def _group_foreground(self, g: _Group, c: int, last: int):
        return _sign_brush(g[2]) if c == last else None

    def _group_tooltip(self, g: _Group, c: int, last: int) -> str:
        t, rs, total = g
        return (
            f"{_code_label(t)}: {describe_template(t)}\n{len(rs)} feature(s), total "
            f"{num(total, 4, sign=True)}"
        )

    # -- data() of a feature by role: (row, column, last column) -> value -----------------------
    def _values(self, r: TermRow) -> tuple[str | float | None, ...]:
        if self._compare:
            return (r.name, r.a, r.b, r.weight, r.contribution)
        return (r.name, r.a, r.weight, r.contribution)

    def _term_display(self, r: TermRow, c: int, last: int):
        v = self._values(r)[c]
        if c == 0:
            return v
        if (self._compare and c in (1, 2)) or (not self._compare and c == 1):  # a value
            return num(v, None, spec="g") if r.name != "L(x)" else num(v)
        return num(v, sign=True) if c == last else num(v)

    def _term_sort_key(self, r: TermRow, c: int, last: int):
        return self._values(r)[c]

    def _term_foreground(self, r: TermRow, c: int, last: int):
        return _sign_brush(r.contribution) if c == last else None

    def _term_tooltip(self, r: TermRow, c: int, last: int) -> str:
        return (
            f"{explain_feature(r.name, r.template)}\n{r.name}\nweight {num(r.weight, 4)} · "
            f"contribution {num(r.contribution, 4, sign=True)}"
        )

    def _term_font(self, r: TermRow, c: int, last: int):
        if r.name != "L(x)":
            return None
        f = QFont()
        f.setItalic(True)
        return f

    def _right_after_first(self, _row, c: int, last: int):
        return ALIGN_RIGHT if c > 0 else None

    _GROUP_DATA: ClassVar[dict[int, Callable[[FeatureTreeModel, _Group, int, int], Any]]] = {
        DISPLAY: _group_display,
        SortRole: _group_sort_key,
        FONT: _group_font,
        FOREGROUND: _group_foreground,
        ALIGNMENT: _right_after_first,
        TOOLTIP: _group_tooltip,
    }
    _TERM_DATA: ClassVar[dict[int, Callable[[FeatureTreeModel, TermRow, int, int], Any]]] = {
        DISPLAY: _term_display,
        SortRole: _term_sort_key,
        FOREGROUND: _term_foreground,
        ALIGNMENT: _right_after_first,
        TOOLTIP: _term_tooltip,
        FONT: _term_font,
    }


def _code_label(template: str) -> str:
    return "L(x)" if template in ("L", "L(x)") else template


def _sign_brush(v: float):
    if v > 0:
        return QColor("#2e7d32")
    if v < 0:
        return QColor("#c62828")
    return None


class FeatureFilterProxy(NeedleFilterProxy):
    """Case-insensitive search in feature names; a group stays when one of its features matches."""

    def __init__(self, parent=None):
        super().__init__(FeatureTreeModel.SortRole, parent)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(0)

    def matches(self, row, parent, needle):
        src = cast(FeatureTreeModel, self.sourceModel())
        term = src.term_at(src.index(row, 0, parent))
        if term is None:  # group: accepted through its children, or by its template name
            return needle == src._groups[row][0].lower() if src.grouped else False
        return needle in term.name.lower() or needle == term.template.lower()
