"""The Suspects tab beside the gold entities: the shown sentence's suspect annotations, each with
the gold and the suggestion side by side, the evidence in words and what became of it, over a
line about the whole queue and the buttons that decide the current one.

A view only: the suspects controller gives it what to show (:meth:`SuspectsPanel.show_sentence`)
and owns the actions its buttons trigger.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...app.suspects import Status
from ...app.types import TypeScheme
from ...corpus.model import Span
from ...numfmt import num
from .palette import text_color_on, type_color

if TYPE_CHECKING:
    from ...label_errors import Suspect

CONTEXT = 3  # words shown on each side of a suspect's region
STATUS_COLOURS = {
    Status.OPEN: "#b35900",
    Status.ACCEPTED: "#2e7d32",
    Status.DISMISSED: "#546e7a",
    Status.EDITED: "#6a1b9a",
}
STATUS_WORDS = {
    Status.OPEN: "open",
    Status.ACCEPTED: "suggestion accepted",
    Status.DISMISSED: "dismissed: the gold is kept",
    Status.EDITED: "you changed this part since the ranking: the suggestion is not applied",
}
NO_LIST = (
    "No suspects list. <b>Annotate ▸ Find suspect annotations…</b> ranks this corpus's "
    "sentences by the evidence that their gold is wrong; <b>Annotate ▸ Open suspects list…</b> "
    "opens one written by <tt>nerstudio suspects --out</tt>."
)


@dataclass(frozen=True)
class Card:
    """One suspect as the panel shows it: its place in the queue (from 1), its status, whether
    the keys act on it, and the sentence's entities now (shown when the annotator changed the
    region)."""

    suspect: Suspect
    number: int
    status: Status
    current: bool
    now: tuple[Span, ...] = ()


def entities_html(
    words: Sequence[str], spans: Sequence[Span], start: int, end: int, scheme: TypeScheme
) -> str:
    """Words ``start``–``end`` (underlined, with a few of context, ``…`` where cut) with the
    entities of ``spans`` inside that region as coloured chips labelled with their type."""
    lo, hi = max(0, start - CONTEXT), min(len(words), end + CONTEXT)
    inside = sorted(sp for sp in spans if start <= sp.start and sp.end <= end)

    def plain(a: int, b: int) -> list[str]:
        return [
            f"<u>{html.escape(words[j])}</u>" if start <= j < end else html.escape(words[j])
            for j in range(a, b)
        ]

    out, i = ["…"] if lo > 0 else [], lo
    for sp in inside:
        out += plain(i, sp.start)
        bg = type_color(sp.label, scheme)
        fg = text_color_on(bg).name()
        text = html.escape(" ".join(words[sp.start : sp.end]))
        label = html.escape(sp.label)
        out.append(
            f"<span style='white-space:nowrap'><span style='background-color:{bg.name()}; "
            f"color:{fg}'>&nbsp;{text}&nbsp;</span><sub><b>{label}</b></sub></span>"
        )
        i = sp.end
    out += plain(i, hi)
    if hi < len(words):
        out.append("…")
    if not inside:
        out.append("<i style='color:#777777'>(no entity)</i>")
    return " ".join(out)


def card_html(card: Card, total: int, words: Sequence[str], scheme: TypeScheme) -> str:
    s = card.suspect
    colour = STATUS_COLOURS[card.status]
    keys = " — F9 accepts, Shift+F9 dismisses" if card.current else ""
    cells = [
        ("Gold", s.gold),
        ("Suggested", s.suggested),
    ]
    if card.status is Status.EDITED:
        cells.append(("Now", card.now))
    head = "".join(f"<th align='left'>{title}</th>" for title, _ in cells)
    row = "".join(
        f"<td width='{100 // len(cells)}%'>{entities_html(words, spans, s.start, s.end, scheme)}</td>"
        for _, spans in cells
    )
    weight = "bold" if card.current else "normal"
    return (
        f"<p style='margin-top:6px; margin-bottom:2px'><b>Suspect {card.number} of {total}</b>"
        f" · score {num(s.score, 3)} · <span style='color:{colour}; font-weight:{weight}'>"
        f"{html.escape(STATUS_WORDS[card.status])}</span>{keys}</p>"
        "<table width='100%' cellspacing='0' cellpadding='4' border='1' "
        "style='border-collapse:collapse; border-color:#bbbbbb'>"
        f"<tr>{head}</tr><tr>{row}</tr></table>"
        f"<p style='margin-top:2px'><i>{html.escape(s.evidence)}</i></p>"
    )


class SuspectsPanel(QWidget):
    """See the module docstring."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("suspectsPanel")
        self.summary = QLabel(NO_LIST)
        self.summary.setObjectName("suspectsSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.body = QTextBrowser()
        self.body.setObjectName("suspectsBody")
        self.body.setOpenLinks(False)
        self.buttons: list[QToolButton] = []
        self._row = QHBoxLayout()
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addWidget(self.summary)
        lay.addWidget(self.body, 1)
        lay.addLayout(self._row)

    def add_button(self, action: QAction, name: str) -> QToolButton:
        """A button that triggers ``action`` (enabled with it), its key in its text."""
        b = QToolButton()
        b.setObjectName(name)
        b.setDefaultAction(action)
        b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        b.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._row.insertWidget(self._row.count() - 1, b)
        self.buttons.append(b)
        return b

    def show_summary(self, text: str) -> None:
        self.summary.setText(text)

    def show_sentence(
        self,
        k: int,
        words: Sequence[str],
        cards: Sequence[Card],
        total: int,
        scheme: TypeScheme,
        hint: str = "",
    ) -> None:
        """The suspects of sentence ``k`` (or, none, ``hint``)."""
        if not cards:
            self.body.setHtml(f"<p>{hint}</p>")
            return
        head = (
            f"<p><b>Sentence {k + 1}</b>: {len(cards)} suspect{'s' if len(cards) > 1 else ''}</p>"
        )
        self.body.setHtml(head + "".join(card_html(c, total, words, scheme) for c in cards))

    def text(self) -> str:
        """What the panel shows, as plain text (tests, scripts)."""
        return self.summary.text() + "\n" + self.body.toPlainText()
