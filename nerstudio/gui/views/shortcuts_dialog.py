"""The F1 list of keys: grouped by task, in columns, never taller or wider than the screen.

A message box grew with its text past the bottom of a 768-pixel screen; this dialog lays the
groups out in as many columns as the screen's width allows and scrolls what is left.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout


def groups_html(
    groups: list[tuple[str, list[tuple[str, str]]]], columns: int = 2, note: str = ""
) -> str:
    """``groups`` ((title, [(keys, what)])) as HTML, spread over ``columns`` columns of about
    equal length (a group is never split)."""
    cols: list[list[str]] = [[] for _ in range(max(1, columns))]
    lengths = [0] * len(cols)
    for title, rows in groups:
        if not rows:
            continue
        k = lengths.index(min(lengths))
        body = "".join(
            # a key's name is never broken: "Ctrl+Shift+R / eturn" read as two keys
            f"<tr><td style='padding-right:10px; white-space:nowrap'><b>{html.escape(key)}</b></td>"
            f"<td>{html.escape(what)}</td></tr>"
            for key, what in rows
        )
        cols[k].append(f"<h4>{html.escape(title)}</h4><table cellspacing=2>{body}</table>")
        lengths[k] += len(rows) + 2
    cells = "".join(
        f"<td valign='top' style='padding-right:24px'>{''.join(c)}</td>" for c in cols if c
    )
    return f"<table><tr>{cells}</tr></table>" + (f"<p>{html.escape(note)}</p>" if note else "")


class ShortcutsDialog(QDialog):
    def __init__(self, groups, note: str = "", parent=None):
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts")
        avail = (parent.screen() if parent is not None else self.screen()).availableGeometry()
        columns = (
            3
            if avail.width() >= 110 * self.fontMetrics().averageCharWidth() * 1.5
            else (2 if avail.width() >= 110 * self.fontMetrics().averageCharWidth() else 1)
        )
        self.text = QTextBrowser()
        self.text.setObjectName("shortcutsText")
        self.text.setHtml(groups_html(groups, columns, note))
        self.text.setOpenLinks(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        lay = QVBoxLayout(self)
        lay.addWidget(self.text, 1)
        lay.addWidget(buttons)
        doc = self.text.document()
        doc.setTextWidth(avail.width() * 0.85)
        want_w = int(doc.idealWidth()) + 48
        want_h = int(doc.size().height()) + 90
        self.resize(min(want_w, int(avail.width() * 0.9)), min(want_h, int(avail.height() * 0.85)))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
