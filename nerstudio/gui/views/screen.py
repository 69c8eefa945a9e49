"""What the window's views show on opening a corpus, as plain values, and back: the demo's
first screen.

:func:`capture` takes from a built window that opened the demo what its views show — the
browser's marks, order and counts, the first sentence and its header, the candidate table with
its scores, the features behind the reranker's pick, the status bar — as JSON values
(``tools/demo/build_first_screen.py`` ships them: :mod:`nerstudio.app.first_screen`); :func:`show`
gives them back to the views of a window not yet built, over the corpus read from the user's
copy, so that the application shows the demo before numpy, the document model and the
controllers have loaded (:meth:`~nerstudio.gui.main_window.MainWindow.first_screen`). The built
window then shows the same again: tests/gui/test_first_screen.py compares the two pictures.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...corpus.model import Corpus, Span
    from ..main_window import MainWindow
    from ..window_views import Views


def capture(win: MainWindow) -> dict[str, Any]:
    """What the views of ``win`` (built, a corpus open) show on its first screen, as JSON
    values: what :func:`show` gives back."""
    v = win.views
    tree = v.tree_model
    values, title, tip, marks = tree.uncertainty()
    view = v.sentence_view
    nb = v.nbest_panel
    shown = v.feature_panel.shown()
    features: dict[str, Any] = (
        {"message": v.feature_panel.header.text()}
        if shown is None
        else {
            "terms": [[r.name, r.template, r.a, r.b, r.weight, r.contribution] for r in shown[0]],
            "header": shown[1],
            "compare": shown[2],
        }
    )
    corpus = win.document.opened()
    return {
        "format": corpus.format,
        "title": win.windowTitle(),
        "sentence": win.sentence_cursor.k,
        "header": v.sentence_header.text(),
        "types": list(view.scheme.labels),
        "type_filter": [v.type_filter.itemData(i) for i in range(1, v.type_filter.count())],
        "filter_count": v.filter_count.text(),
        "expanded": [
            d
            for d in range(tree.rowCount())
            if v.corpus_view.isExpanded(v.proxy.mapFromSource(tree.index(d, 0)))
        ],
        "status": tree.statuses(),
        "uncertainty": {
            "values": None if values is None else [_number(x) for x in values],
            "title": title,
            "tip": tip,
            "marks": None if marks is None else [bool(x) for x in marks],
        },
        "measures": v.uncertainty_bar.availability(),
        "sentence_view": {
            "words": list(view.words()),
            "gold": [list(s) for s in view.gold()],
            "candidates": [[[list(s) for s in spans], name] for spans, name in view.candidates()],
        },
        "nbest": {
            **nb.model.candidates(),
            "score_label": nb.model.score_label,
            "header": nb.header.text(),
            "selected": nb.selected(),
        },
        "features": features,
        "message": v.status.currentMessage(),
        "state": v.state_label.text(),
    }


def show(win: MainWindow, v: Views, screen: dict[str, Any], corpus: Corpus) -> None:
    """Fill the views ``v`` of ``win`` with ``screen`` (:func:`capture`'s) over ``corpus``."""
    from ...app.types import TypeScheme
    from ..models.feature_model import TermRow

    tree = v.tree_model
    tree.set_corpus(corpus)
    v.type_filter.blockSignals(True)
    for label in screen["type_filter"]:
        v.type_filter.addItem(label or "(untyped)", label)
    v.type_filter.blockSignals(False)
    tree.set_status_texts(screen["status"])
    unc = screen["uncertainty"]
    values = unc["values"]
    tree.set_uncertainty(
        None if values is None else [math.nan if x is None else x for x in values],
        unc["title"],
        unc["tip"],
        unc["marks"],
    )
    if screen["measures"] is not None:
        v.uncertainty_bar.set_available(screen["measures"])
    v.filter_count.setText(screen["filter_count"])
    if len(screen["expanded"]) == len(corpus.documents):
        v.corpus_view.expandToDepth(0)
    else:
        for d in screen["expanded"]:
            v.corpus_view.setExpanded(v.proxy.mapFromSource(tree.index(d, 0)), True)
    here = v.proxy.mapFromSource(tree.index_of_sentence(screen["sentence"]))
    v.corpus_view.scrollTo(here)
    v.corpus_view.setCurrentIndex(here)
    v.sentence_header.setText(screen["header"])
    scheme = TypeScheme.of(screen["types"])
    v.sentence_view.set_scheme(scheme)
    v.legend.set_scheme(scheme)
    sv = screen["sentence_view"]
    drawn = [(_spans(spans), name) for spans, name in sv["candidates"]]
    first, second = (drawn + [(None, "candidate"), (None, "B")][len(drawn) :])[:2]
    v.sentence_view.set_sentence(sv["words"], _spans(sv["gold"]), *first, *second)
    nb = screen["nbest"]
    v.nbest_panel.set_score_label(nb["score_label"])
    v.nbest_panel.set_candidates(
        nb["words"],
        [_spans(s) for s in nb["spans"]],
        nb["logprobs"],
        nb["scores"],
        nb["f"],
        nb["chosen"],
        nb["exact"],
        header=nb["header"],
    )
    if nb["selected"]:
        v.nbest_panel.select(*nb["selected"])
    f = screen["features"]
    if "terms" in f:
        rows = [TermRow(*t) for t in f["terms"]]
        v.feature_panel.show_terms(rows, f["header"], f["compare"])
    else:
        v.feature_panel.show_message(f["message"])
    v.status.showMessage(screen["message"])
    v.state_label.setText(screen["state"])
    win.setWindowTitle(screen["title"])
    win.setWindowModified(False)


def _spans(rows: list[list[Any]]) -> list[Span]:
    from ...corpus.model import Span

    return [Span(int(a), int(b), str(lab)) for a, b, lab in rows]


def _number(x: Any) -> float | None:
    """A value of a column of numbers, JSON's way: NaN (no value) is null."""
    x = float(x)
    return None if math.isnan(x) else x
