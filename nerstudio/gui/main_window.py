"""The main window: corpus browser, sentence view, entity table and corpus summary."""

from __future__ import annotations

import os
from collections import Counter

from PySide6.QtCore import QSettings, Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QMainWindow, QMessageBox, QSplitter, QTableWidget, QTableWidgetItem, QTabWidget,
                               QTreeView, QVBoxLayout, QWidget)

from .. import __version__
from ..corpus.formats import read_corpus
from ..corpus.model import Corpus
from ..errors import NerstudioError
from .models.corpus_model import CorpusTreeModel, SentenceFilterProxy
from .views.palette import type_color
from .views.sentence_view import SentenceView

MAX_RECENT = 8
CORPUS_FILTER = "Corpora (*.conll *.txt *.tsv *.jsonl *.train *.testa *.testb *.dev *.test);;All files (*)"


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        self.setObjectName("mainWindow")
        self.settings = settings or QSettings()
        self.corpus: Corpus | None = None
        self.setAcceptDrops(True)
        self._build_ui()
        self._build_actions()
        self._update_title()
        geo = self.settings.value("window/geometry")
        if geo is not None:
            self.restoreGeometry(geo)
        else:
            self.resize(1280, 800)

    # -- construction ---------------------------------------------------------------------
    def _build_ui(self) -> None:
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(4, 4, 4, 4)
        self.search = QLineEdit()
        self.search.setObjectName("corpusSearch")
        self.search.setPlaceholderText("Search sentences…  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._on_search)
        lv.addWidget(self.search)
        self.tree_model = CorpusTreeModel()
        self.proxy = SentenceFilterProxy(self)
        self.proxy.setSourceModel(self.tree_model)
        self.corpus_view = QTreeView()
        self.corpus_view.setObjectName("corpusView")
        self.corpus_view.setModel(self.proxy)
        self.corpus_view.setUniformRowHeights(True)
        self.corpus_view.setAlternatingRowColors(True)
        self.corpus_view.setSelectionMode(QAbstractItemView.SingleSelection)
        hdr = self.corpus_view.header()
        hdr.setSectionResizeMode(0, QHeaderView.Stretch)
        hdr.setSectionResizeMode(1, QHeaderView.ResizeToContents)
        hdr.setSectionResizeMode(2, QHeaderView.ResizeToContents)
        hdr.setStretchLastSection(False)
        self.corpus_view.selectionModel().currentChanged.connect(self._on_current_changed)
        lv.addWidget(self.corpus_view)

        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(4, 4, 4, 4)
        self.sentence_header = QLabel("No corpus loaded")
        self.sentence_header.setObjectName("sentenceHeader")
        self.sentence_header.setTextInteractionFlags(Qt.TextSelectableByMouse)
        rv.addWidget(self.sentence_header)
        self.sentence_view = SentenceView()
        rv.addWidget(self.sentence_view)
        self.legend = QLabel()
        self.legend.setObjectName("typeLegend")
        rv.addWidget(self.legend)

        self.tabs = QTabWidget()
        self.entity_table = QTableWidget(0, 4)
        self.entity_table.setObjectName("entityTable")
        self.entity_table.setHorizontalHeaderLabels(["Type", "Entity", "Tokens", "Length"])
        self.entity_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)
        self.entity_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.entity_table.verticalHeader().setVisible(False)
        self.tabs.addTab(self.entity_table, "Entities")
        self.summary = QLabel()
        self.summary.setObjectName("corpusSummary")
        self.summary.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.summary.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.summary.setMargin(8)
        self.tabs.addTab(self.summary, "Corpus")
        rv.addWidget(self.tabs, 1)

        split = QSplitter(Qt.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([480, 800])
        self.setCentralWidget(split)
        self.status = self.statusBar()

    def _build_actions(self) -> None:
        menu = self.menuBar()
        filem = menu.addMenu("&File")
        self.act_open = QAction("&Open corpus…", self, shortcut=QKeySequence.Open,
                                statusTip="Open a corpus file (CoNLL, TSV, JSONL)", triggered=self.open_dialog)
        filem.addAction(self.act_open)
        self.recent_menu = filem.addMenu("Open &recent")
        self._refresh_recent()
        filem.addSeparator()
        filem.addAction(QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close))

        navm = menu.addMenu("&Navigate")
        self.act_next = QAction("&Next sentence", self, shortcut=QKeySequence("Ctrl+Down"),
                                triggered=lambda: self.step_sentence(1))
        self.act_prev = QAction("&Previous sentence", self, shortcut=QKeySequence("Ctrl+Up"),
                                triggered=lambda: self.step_sentence(-1))
        self.act_find = QAction("&Find…", self, shortcut=QKeySequence.Find,
                                triggered=lambda: (self.search.setFocus(), self.search.selectAll()))
        for a in (self.act_next, self.act_prev, self.act_find):
            navm.addAction(a)

        helpm = menu.addMenu("&Help")
        helpm.addAction(QAction("&About nerstudio", self, triggered=self.about))

        tb = self.addToolBar("Main")
        tb.setObjectName("mainToolbar")
        tb.addAction(self.act_open)
        tb.addSeparator()
        tb.addAction(self.act_prev)
        tb.addAction(self.act_next)

    # -- corpus ---------------------------------------------------------------------------
    def load_corpus(self, path: str) -> bool:
        try:
            corpus = read_corpus(path)
        except (NerstudioError, OSError) as exc:
            QMessageBox.critical(self, "Cannot open corpus", str(exc))
            return False
        self.set_corpus(corpus)
        self._add_recent(corpus.path or path)
        return True

    def set_corpus(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.tree_model.set_corpus(corpus)
        if len(corpus.documents) <= 50:
            self.corpus_view.expandToDepth(0)
        self._update_summary()
        self._update_title()
        note = f"; {corpus.repairs} invalid tag transitions repaired" if corpus.repairs else ""
        self.status.showMessage(f"Loaded {corpus.path}: {len(corpus.documents)} documents, "
                                f"{len(corpus)} sentences, {corpus.n_tokens} tokens{note}", 10000)
        self.legend.setText("  ".join(
            f'<span style="background:{type_color(lab).name()};color:white;padding:2px">&nbsp;{lab or "entity"}&nbsp;</span>'
            for lab in corpus.labels) + "   <i>boxes: gold · bars: candidate · red: differs</i>")
        if len(corpus):
            self.select_sentence(0)

    def select_sentence(self, k: int) -> None:
        src = self.tree_model.index_of_sentence(k)
        idx = self.proxy.mapFromSource(src)
        if idx.isValid():
            self.corpus_view.scrollTo(idx)
            self.corpus_view.setCurrentIndex(idx)
        else:
            self.show_sentence(k)

    def current_sentence_index(self) -> int:
        return self.tree_model.sentence_index(self.proxy.mapToSource(self.corpus_view.currentIndex()))

    def step_sentence(self, delta: int) -> None:
        if not self.corpus or not len(self.corpus):
            return
        k = self.current_sentence_index()
        k = 0 if k < 0 else min(max(k + delta, 0), len(self.corpus) - 1)
        self.select_sentence(k)

    @Slot(object, object)
    def _on_current_changed(self, current, _previous) -> None:
        k = self.tree_model.sentence_index(self.proxy.mapToSource(current))
        if k >= 0:
            self.show_sentence(k)

    def show_sentence(self, k: int) -> None:
        s = self.corpus.sentences[k]
        doc = self.tree_model.document_of(k)
        where = f"{os.path.basename(self.corpus.path or '')}:{s.line}" if s.line else ""
        self.sentence_header.setText(f"<b>Sentence {k + 1}</b> of {len(self.corpus)} · document "
                                     f"{self.corpus.documents[doc].id} · {len(s)} tokens · {where}")
        self.sentence_view.set_sentence(s.words, s.spans)
        self.entity_table.setRowCount(len(s.spans))
        for r, sp in enumerate(s.spans):
            item = QTableWidgetItem(sp.label or "entity")
            item.setForeground(type_color(sp.label))
            self.entity_table.setItem(r, 0, item)
            self.entity_table.setItem(r, 1, QTableWidgetItem(sp.text(s.words)))
            self.entity_table.setItem(r, 2, QTableWidgetItem(f"{sp.start}–{sp.end - 1}"))
            self.entity_table.setItem(r, 3, QTableWidgetItem(str(len(sp))))

    def _update_summary(self) -> None:
        c = self.corpus
        if c is None:
            self.summary.setText("")
            return
        ents = Counter(sp.label for s in c.sentences for sp in s.spans)
        rows = "".join(f"<tr><td>{lab or '(untyped)'}</td><td align=right>{n:,}</td></tr>"
                       for lab, n in sorted(ents.items()))
        self.summary.setText(
            f"<b>{c.path}</b><br>format {c.format}, scheme {c.scheme.upper()}, {c.encoding}<br><br>"
            f"<table cellspacing=4><tr><td>documents</td><td align=right>{len(c.documents):,}</td></tr>"
            f"<tr><td>sentences</td><td align=right>{len(c):,}</td></tr>"
            f"<tr><td>tokens</td><td align=right>{c.n_tokens:,}</td></tr>"
            f"<tr><td>entities</td><td align=right>{sum(ents.values()):,}</td></tr>{rows}</table>")

    @Slot(str)
    def _on_search(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        if text:
            self.corpus_view.expandAll()

    # -- files ----------------------------------------------------------------------------
    def open_dialog(self) -> None:
        start = self.settings.value("files/lastDir", "")
        path, _ = QFileDialog.getOpenFileName(self, "Open corpus", start, CORPUS_FILTER)
        if path:
            self.settings.setValue("files/lastDir", os.path.dirname(path))
            self.load_corpus(path)

    def _recent(self) -> list[str]:
        val = self.settings.value("files/recent", [])
        if isinstance(val, str):
            val = [val]
        return [v for v in (val or []) if isinstance(v, str)]

    def _add_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        rec = [p for p in self._recent() if p != path]
        self.settings.setValue("files/recent", [path] + rec[: MAX_RECENT - 1])
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        rec = self._recent()
        for p in rec:
            self.recent_menu.addAction(os.path.basename(p), lambda p=p: self.load_corpus(p)).setToolTip(p)
        self.recent_menu.setEnabled(bool(rec))

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.load_corpus(url.toLocalFile())
                break

    # -- misc -----------------------------------------------------------------------------
    def _update_title(self) -> None:
        name = os.path.basename(self.corpus.path) if self.corpus and self.corpus.path else "no corpus"
        self.setWindowTitle(f"nerstudio — {name}")

    def about(self) -> None:
        QMessageBox.about(self, "About nerstudio", ABOUT_HTML.format(version=__version__))

    def closeEvent(self, event) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        super().closeEvent(event)


ABOUT_HTML = """<h3>nerstudio {version}</h3>
<p>Named-entity annotation and N-best reranking workbench.</p>
<p>The methods come from:</p>
<ul>
<li>M. Collins (2002). <i>Ranking Algorithms for Named-Entity Extraction: Boosting and the Voted
Perceptron.</i> ACL 2002.</li>
<li>M. Collins (2002). <i>Discriminative Training Methods for Hidden Markov Models: Theory and
Experiments with Perceptron Algorithms.</i> EMNLP 2002.</li>
<li>M. Collins and N. Duffy (2002). <i>New Ranking Algorithms for Parsing and Tagging: Kernels over
Discrete Structures, and the Voted Perceptron.</i> ACL 2002.</li>
<li>J. Kazama and K. Torisawa (2007). <i>A New Perceptron Algorithm for Sequence Labeling with
Non-local Features.</i> EMNLP-CoNLL 2007.</li>
</ul>"""
