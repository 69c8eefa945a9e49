"""The "What if" tab: the current sentence, editable; on each edit (after a short pause) the tagger
decodes it, the reranker scores the candidates and each candidate's score change against the
sentence as it is is explained (:mod:`nerstudio.experiments.what_if`: tens of milliseconds on the
demo model, so it runs in the main thread). Nothing reaches the corpus."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer

from ...app.document import Change, ChangeKind
from ...errors import NerstudioError
from . import Context

if TYPE_CHECKING:
    from ...experiments.what_if import WhatIf

DELAY_MS = 120  # after the last key press


class WhatIfController(QObject):
    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self._original: list[str] = []
        # analysis of the original sentence (by the tagger and the reranker of _models, their ids)
        self._old: WhatIf | None = None
        self._models: tuple[int, int] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DELAY_MS)
        self._timer.timeout.connect(self.update)
        views.when_built("what_if_view", self._wire)  # built on first use
        ctx.cursor.moved.connect(self._on_sentence)
        ctx.events.changed.connect(self._on_change)
        views.tabs.currentChanged.connect(lambda _i: self._shown() and self.update())

    @property
    def view(self):
        return self.v.what_if_view

    def _wire(self, view) -> None:
        view.edited.connect(lambda _t: self._timer.start())
        view.resetRequested.connect(self.reset)

    def _shown(self) -> bool:
        return self.v.shows("what_if_view")

    def _on_change(self, ch: Change) -> None:
        if ch.kind in (ChangeKind.MODEL, ChangeKind.TAGGER):
            self._forget()

    def _forget(self) -> None:
        self._old = None
        if self._shown():
            self.update()

    def _on_sentence(self, k: int) -> None:
        c = self.doc.corpus
        self._original = list(c.sentences[k].words) if c is not None and 0 <= k < len(c) else []
        self._old = None
        self.view.set_sentence(" ".join(self._original))
        if self._shown():
            self.update()

    def reset(self) -> None:
        self.view.set_sentence(" ".join(self._original))
        self.update()

    def update(self) -> bool:
        """Analyse the sentence in the edit box against the sentence as it is."""
        from ...experiments.what_if import analyse, compare

        doc = self.doc
        tagger, model = doc.tagger, doc.model
        if tagger is None or model is None or getattr(model, "features", None) is None:
            self.view.show_message(
                "What if needs the tagger and a reranker (File ▸ Open tagger model…, "
                "Open reranker model…; the demo has both)."
            )
            return False
        words = self.view.edit.text().split()
        if not words:
            self.view.show_message("Type a sentence (tokens separated by spaces).")
            return False
        t0 = time.perf_counter()
        try:
            if self._old is None or (self._models != (id(tagger), id(model))):
                self._old = analyse(tagger, model, self._original or words)
                self._models = (id(tagger), id(model))
            new = analyse(tagger, model, words)
            changes = compare(model, self._old, new)
        except NerstudioError as exc:  # e.g. a tagger that needs POS columns; anything else a bug
            self.view.show_message(f"Cannot analyse this sentence: {exc}")
            return False
        self.last_ms = (time.perf_counter() - t0) * 1000
        self.view.show_result(new, changes, self.last_ms, words == self._original)
        self.last = new
        return True
