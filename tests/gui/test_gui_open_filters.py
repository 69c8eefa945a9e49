"""The Open corpus dialog's filters and the Open action's tooltip come from the format tables:
every format the readers take is offered, and a format added to the tables is offered too."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from nerstudio.corpus import foreign
from nerstudio.corpus.detect import own_extensions


def _groups(filt: str) -> dict[str, set[str]]:
    """``label -> patterns`` of a Qt filter string ``A (*.a *.b);;B (*.c)``."""
    out = {}
    for part in filt.split(";;"):
        label, _, pats = part.rpartition(" (")
        out[label] = set(pats.rstrip(")").split())
    return out


def test_every_registered_extension_is_in_the_open_filter():
    from nerstudio.gui.dialogs import CORPUS_FILTER

    groups = _groups(CORPUS_FILTER)
    everything = groups["Corpora"]
    registered = [e for h in foreign.HANDLERS for e in h.extensions] + list(own_extensions())
    assert registered
    for ext in registered:
        assert f"*{ext}" in everything, ext
        # and in the group of its own kind
        assert any(f"*{ext}" in pats for label, pats in groups.items() if label != "Corpora"), ext
    assert "*" in groups["All files"]
    for h in foreign.HANDLERS:
        if h.extensions:
            from nerstudio.corpus.file_kinds import handler_label

            assert groups[handler_label(h)] == {f"*{e}" for e in h.extensions}


def test_a_format_added_to_the_tables_is_offered(monkeypatch):
    from nerstudio.gui.dialogs import corpus_filter, corpus_formats_in_words

    extra = foreign.Handler("inkling", "inkling", "Inkling XML: made up for this test", (".ink",))
    monkeypatch.setattr(foreign, "HANDLERS", (*foreign.HANDLERS, extra))
    groups = _groups(corpus_filter())
    assert "*.ink" in groups["Corpora"] and groups["Inkling XML"] == {"*.ink"}
    assert corpus_formats_in_words().endswith(" or Inkling XML")


def test_the_open_action_names_every_format(empty_window):
    from nerstudio.corpus.file_kinds import handler_label

    tip = empty_window.act_open.toolTip()
    assert "spaCy DocBin" in tip
    for h in foreign.HANDLERS:  # spaCy DocBin among them
        assert handler_label(h) in tip, h.name
    for name in ("CoNLL", "TSV", "JSON Lines"):
        assert name in tip


def test_open_dialogs_start_beside_the_open_corpus_not_where_nerstudio_started(
    window, tmp_path, monkeypatch
):
    """The first Open N-best list… starts in the open corpus's folder (its lists and models are
    usually beside it); a folder the user chose for that kind of file is remembered; without a
    corpus and a memory, the home folder, never the folder nerstudio was started from."""
    import os

    from PySide6.QtWidgets import QFileDialog

    monkeypatch.chdir(tmp_path)
    seen = []
    monkeypatch.setattr(
        QFileDialog,
        "getOpenFileName",
        lambda parent, title, start, filt: (seen.append(start), ("", ""))[1],
    )
    window.files.open_nbest_dialog()
    corpus_dir = os.path.dirname(os.path.abspath(window.corpus.path))
    assert seen[-1] == corpus_dir != str(tmp_path)
    window.settings.setValue("files/nbestDir", str(tmp_path))
    window.files.open_nbest_dialog()
    assert seen[-1] == str(tmp_path)
    window.settings.remove("files/nbestDir")
    window.settings.remove("files/lastDir")
    monkeypatch.setattr(window, "_corpus_folder", lambda: "")
    window.dialogs.near = window._corpus_folder
    window.files.open_nbest_dialog()
    assert seen[-1] == os.path.expanduser("~")
