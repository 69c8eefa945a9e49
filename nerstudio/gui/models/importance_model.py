"""Tree model over a corpus-wide feature ranking (:class:`nerstudio.rerank.importance.ModelImportance`).

Templates at the top, ranked as the core ranks them (decisions moved, then contribution); under
each template its features, in the same order. Columns: the template or feature, what it means
(from the glossary), the decisions it moves and resists, and the contributions summed over them.
Sorting by any column goes through a proxy (:class:`ImportanceFilterProxy`), which also filters
by text in the name or the meaning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QFont

from ...numfmt import num
from ...rerank.glossary import describe_template, explain_feature
from .proxy import NeedleFilterProxy
from .roles import ALIGN_RIGHT, ALIGNMENT, DISPLAY, FONT, TOOLTIP, USER
from .tree import TreeModel

if TYPE_CHECKING:  # the ranking's module (scipy) loads with the first ranking, not at start-up
    from ...rerank.importance import Impact, ModelImportance

_TOP = 0xFFFFFFFF


class ImportanceTreeModel(TreeModel):
    SortRole = USER + 1
    COLUMNS = ("Template / feature", "Meaning", "Moves", "Resists", "For", "Against")
    NAME, MEANING, MOVES, RESISTS, FOR, AGAINST = range(6)
    TIPS = (
        "Template code (top level) or feature string (below it)",
        "What the template means, in words",
        "Decisions (sentences) where it pushes the reranker toward its pick. Click: list those sentences",
        "Decisions where it pushes against the pick. Click: list those sentences",
        "Its contributions toward the pick, summed over the decisions it moves",
        "Its contributions against the pick, summed over the decisions it resists",
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self._templates: list[Impact] = []
        self._children: list[list[Impact]] = []
        self._bold = QFont()
        self._bold.setBold(True)

    def set_result(self, result: ModelImportance | None) -> None:
        self.beginResetModel()
        if result is None:
            self._templates, self._children = [], []
        else:
            by: dict[str, list[Impact]] = {}
            for f in result.features:  # already ranked: children keep that order
                by.setdefault(f.template, []).append(f)
            self._templates = list(result.templates)
            self._children = [by.get(t.key, []) for t in self._templates]
        self.endResetModel()

    def impact_at(self, index) -> Impact | None:
        if not index.isValid():
            return None
        if index.internalId() == _TOP:
            return self._templates[index.row()]
        return self._children[index.internalId()][index.row()]

    def is_template(self, index) -> bool:
        return index.isValid() and index.internalId() == _TOP

    # -- structure ------------------------------------------------------------------------
    def index(self, row, column, parent=QModelIndex()):
        if row < 0 or not 0 <= column < len(self.COLUMNS):
            return QModelIndex()
        if not parent.isValid():
            return (
                self.createIndex(row, column, _TOP) if row < len(self._templates) else QModelIndex()
            )
        if parent.internalId() != _TOP or parent.column() != 0:
            return QModelIndex()
        g = parent.row()
        if g >= len(self._children) or row >= len(self._children[g]):
            return QModelIndex()
        return self.createIndex(row, column, g)

    def parent_of(self, index):
        if not index.isValid() or index.internalId() == _TOP:
            return QModelIndex()
        return self.createIndex(index.internalId(), 0, _TOP)

    def rowCount(self, parent=QModelIndex()):
        if not parent.isValid():
            return len(self._templates)
        if parent.internalId() == _TOP and parent.column() == 0:
            return len(self._children[parent.row()])
        return 0

    def columnCount(self, parent=QModelIndex()):
        return len(self.COLUMNS)

    def headerData(self, section, orientation, role=DISPLAY):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == DISPLAY:
            return self.COLUMNS[section]
        if role == TOOLTIP:
            return self.TIPS[section]
        return None

    def data(self, index, role=DISPLAY):
        x = self.impact_at(index)
        if x is None:
            return None
        from ...rerank.importance import L_TEMPLATE  # loaded by now: x came from a ranking

        c = index.column()
        top = index.internalId() == _TOP
        if role == DISPLAY:
            if c == self.NAME:
                return ("L(x)" if x.key == L_TEMPLATE else x.key) if top else x.key
            if c == self.MEANING:
                return describe_template(x.template) if top else explain_feature(x.key, x.template)
            return (
                None,
                None,
                str(x.n_for),
                str(x.n_against),
                num(x.total_for, sign=True),
                num(x.total_against, sign=True),
            )[c]
        if role == self.SortRole:
            return (
                x.key,
                describe_template(x.template),
                x.n_for,
                x.n_against,
                x.total_for,
                x.total_against,
            )[c]
        if role == TOOLTIP:
            what = (
                explain_feature(x.key, x.template)
                if not top
                else f"{'L(x)' if x.key == L_TEMPLATE else x.key}: {describe_template(x.template)}"
            )
            return (
                f"{what}\nmoves {x.n_for} decision(s) ({num(x.total_for, sign=True)}), resists "
                f"{x.n_against} ({num(x.total_against, sign=True)}); click to list the sentences"
            )
        if role == ALIGNMENT and c >= self.MOVES:
            return ALIGN_RIGHT
        if role == FONT and top:
            return self._bold
        return None


class ImportanceFilterProxy(NeedleFilterProxy):
    """Case-insensitive search in names and meanings; a template stays when a feature matches."""

    def __init__(self, parent=None):
        super().__init__(ImportanceTreeModel.SortRole, parent)

    def matches(self, row, parent, needle):
        src = cast(ImportanceTreeModel, self.sourceModel())
        x = src.impact_at(src.index(row, 0, parent))
        if x is None:
            return False
        return needle in x.key.lower() or needle in describe_template(x.template).lower()
