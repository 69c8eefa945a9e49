"""Step-through panel: what boosting's round, or the perceptron's update, did.

No behaviour: the Teach controller (:class:`~nerstudio.gui.controllers.stepper.StepperController`)
owns the stepper of :mod:`nerstudio.experiments.stepthrough` — it builds it, steps it, takes
steps back, plays them while Run is down and decides what runs in the background — and shows
the results here. The panel says what the user asked (:attr:`StepperPanel.stepRequested`,
``backRequested``, ``resetRequested`` for Reset or another algorithm or parameter,
``runToggled``) and shows what it is given: the step — the feature chosen with its δ, W+ and W−
and the loss before and after, or the sentence whose top candidate was wrong, which features
moved and the mistake count — the margins or scores of the affected candidates before and
after, and the dev F curve growing one point per step, drawn by the render thread of
:mod:`.figure_image`.
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSlider,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...numfmt import num
from .figure_image import FigureImage
from .flow_layout import FlowLayout
from .step_curve import draw_history
from .step_texts import INTRO, NO_DATA

MAX_ROWS = 40  # affected pairs / candidates listed per step
PAIR_FEATURES = 8  # features listed per side of a perceptron update


class StepperPanel(QWidget):
    stepRequested = Signal()
    backRequested = Signal()
    resetRequested = Signal()  # Reset pressed, or another algorithm or parameter chosen
    runToggled = Signal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("stepperPanel")
        self._train = None  # the ranking data and feature names the shown step refers to
        self._names: list[str] = []
        self.algo = QComboBox()
        self.algo.setObjectName("stepperAlgorithm")
        self.algo.addItem("Boosting (one round per step)", "boost")
        self.algo.addItem("Perceptron (one update per step)", "perceptron")
        # one spin box, two meanings: boosting's smoothing ε or the perceptron's β; each mode keeps
        # its own value and its own label, so the perceptron never shows (or uses) boosting's ε
        self._values = {"boost": 0.0025, "perceptron": 1.0}
        self.param_label = QLabel("ε")
        self.param_label.setObjectName("stepperParamLabel")
        self.param = QDoubleSpinBox()
        self.param.setObjectName("stepperParam")
        self.param.setDecimals(4)
        self.param.setRange(0.0, 10.0)
        self.param.setSingleStep(0.0025)
        self.param.setValue(0.0025)
        self.param_label.setBuddy(self.param)
        self.param.valueChanged.connect(self._on_param)
        self.algo.currentIndexChanged.connect(self._on_algo)
        self.step_button = QPushButton("Step")
        self.step_button.setObjectName("stepButton")
        self.step_button.setToolTip("One boosting round / one perceptron update (F10)")
        self.step_button.clicked.connect(lambda: self.stepRequested.emit())
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("runButton")
        self.run_button.setCheckable(True)
        self.run_button.toggled.connect(self._on_run)
        self.back_button = QPushButton("Back")
        self.back_button.setObjectName("backButton")
        self.back_button.setToolTip(
            "Take the last step back: the learner as it was before it (Shift+F10)"
        )
        self.back_button.clicked.connect(lambda: self.backRequested.emit())
        self.reset_button = QPushButton("Reset")
        self.reset_button.setObjectName("resetButton")
        self.reset_button.clicked.connect(lambda: self.resetRequested.emit())
        self.speed = QSlider(Qt.Orientation.Horizontal)
        self.speed.setObjectName("speedSlider")
        self.speed.setRange(1, 50)
        self.speed.setValue(5)
        self.speed.setToolTip("Steps per second while running")
        row = FlowLayout()  # wraps on a narrow window (1024 px, scale 2) instead of widening it
        for w in (
            self.algo,
            self.param_label,
            self.param,
            self.back_button,
            self.step_button,
            self.run_button,
            self.reset_button,
            QLabel("Speed"),
            self.speed,
        ):
            row.addWidget(w)
        self.speed.setFixedWidth(self.fontMetrics().horizontalAdvance("M") * 12)
        self.sources = QLabel()  # which lists it trains on and scores on (set by the controller)
        self.sources.setObjectName("stepperSources")
        self.sources.setWordWrap(True)
        self.sources.setTextFormat(Qt.TextFormat.RichText)
        self.info = QLabel(NO_DATA)
        self.info.setObjectName("stepperInfo")
        self.info.setWordWrap(True)
        self.info.setTextFormat(Qt.TextFormat.RichText)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, 4)  # at most MAX_ROWS rows
        self.table.setObjectName("stepperTable")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        hdr = self.table.horizontalHeader()
        hdr.setSectionResizeMode(
            QHeaderView.ResizeMode.Stretch
        )  # sentence and candidate share the width …
        for c in (2, 3):  # … the two numbers get what they need
            hdr.setSectionResizeMode(c, QHeaderView.ResizeMode.Fixed)
            hdr.resizeSection(c, self.table.fontMetrics().horizontalAdvance("Margin before") + 24)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        # one line per pair / candidate; the full text is in the tooltip
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.canvas = FigureImage()  # drawn in the render thread: a step never waits for matplotlib
        self.canvas.setObjectName("stepperCurve")
        self.canvas.setMinimumHeight(120)
        # before the first step the table's place explains what stepping shows
        self.intro = QLabel()
        self.intro.setObjectName("stepperIntro")
        self.intro.setWordWrap(True)
        self.intro.setTextFormat(Qt.TextFormat.RichText)
        self.intro.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.intro.setMargin(12)
        self.pages = QStackedWidget()
        # a long text on a small screen scrolls, never pushes the curve away
        self.intro_page = QScrollArea()
        self.intro_page.setObjectName("stepperIntroPage")
        self.intro_page.setWidget(self.intro)
        self.intro_page.setWidgetResizable(True)
        self.intro_page.setFrameShape(QFrame.Shape.NoFrame)
        self.pages.addWidget(self.intro_page)
        # a perceptron update: the two candidates of the pair side by side, with the features that moved
        self.pair = QLabel()
        self.pair.setObjectName("stepperPair")
        self.pair.setWordWrap(True)
        self.pair.setTextFormat(Qt.TextFormat.RichText)
        self.pair.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.pair.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.pair.hide()
        self.step_page = QSplitter(Qt.Orientation.Vertical)
        self.step_page.setObjectName("stepperStepPage")
        self.step_page.setChildrenCollapsible(False)
        pair_scroll = QScrollArea()
        pair_scroll.setWidget(self.pair)
        pair_scroll.setWidgetResizable(True)
        pair_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.pair_scroll = pair_scroll
        # it scrolls; on a small screen the table and the curve keep their room
        pair_scroll.setMinimumHeight(self.fontMetrics().lineSpacing() * 2)
        pair_scroll.hide()
        self.step_page.addWidget(pair_scroll)
        self.step_page.addWidget(self.table)
        self.pages.addWidget(self.step_page)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.pages)
        split.addWidget(self.canvas)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(row)
        lay.addWidget(self.sources)
        lay.addWidget(self.info)
        lay.addWidget(split, 1)
        self.set_buttons(False)
        self._show_mode()

    def hasHeightForWidth(self) -> bool:
        """No: the panel fills the height its page gives it. With the word-wrapped lines' height
        for width, the page's scroll area made the page as tall as every part's preferred height
        (the curve's too), and on a small screen or at a large zoom the curve scrolled away."""
        return False

    def after_zoom(self) -> None:  # the zoom changed the font
        self.speed.setFixedWidth(self.fontMetrics().horizontalAdvance("M") * 12)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)

    # -- the parameter and the empty state ------------------------------------------------
    @property
    def mode(self) -> str:
        return self.algo.currentData()

    @property
    def value(self) -> float:
        """The parameter of the algorithm shown: boosting's ε or the perceptron's β."""
        return self._values[self.mode]

    def set_epsilon(self, epsilon: float) -> None:
        """Boosting's ε (the loaded reranker's), shown when boosting is."""
        self._values["boost"] = float(epsilon)
        if self.mode == "boost":
            self.param.blockSignals(True)
            self.param.setValue(float(epsilon))
            self.param.blockSignals(False)

    def _show_mode(self) -> None:
        boost = self.mode == "boost"
        self.param.blockSignals(True)
        self.param.setValue(self._values[self.mode])
        self.param.blockSignals(False)
        self.param_label.setText("ε" if boost else "β")
        self.param.setToolTip(
            "Smoothing ε of boosting (Collins 2002, section 3.3)"
            if boost
            else "β, the weight of the tagger's score L(x) in the perceptron's representation"
        )
        self.intro.setText(INTRO[self.mode])

    @Slot(int)
    def _on_algo(self, _i: int) -> None:
        self._show_mode()
        self.resetRequested.emit()

    @Slot(float)
    def _on_param(self, v: float) -> None:
        self._values[self.mode] = float(v)
        self.resetRequested.emit()

    @Slot(bool)
    def _on_run(self, on: bool) -> None:
        self.run_button.setText("Pause" if on else "Run")
        self.runToggled.emit(on)

    def interval(self) -> int:
        """Milliseconds between two steps while running (the speed slider: steps a second)."""
        return max(1, int(1000 / max(1, self.speed.value())))

    # -- states ---------------------------------------------------------------------------
    def set_buttons(self, on: bool, can_go_back: bool = False) -> None:
        for w in (self.step_button, self.run_button, self.reset_button):
            w.setEnabled(on)
        self.back_button.setEnabled(on and can_go_back)

    def set_running(self, on: bool) -> None:
        """Run down (playing) or up, without asking for it again."""
        self.run_button.blockSignals(True)
        self.run_button.setChecked(on)
        self.run_button.blockSignals(False)
        self.run_button.setText("Pause" if on else "Run")

    def set_note(self, text: str) -> None:
        """A line about work going on (in italics)."""
        self.info.setText(f"<i>{text}</i>")

    def set_info(self, text: str) -> None:
        self.info.setText(text)

    def set_sources(self, text: str) -> None:
        """Say which lists the steps train on and score on (rich text)."""
        self.sources.setText(text)

    def show_start(self) -> None:
        """Before the first step: the introduction in the table's place."""
        self.table.setRowCount(0)
        self.pages.setCurrentWidget(self.intro_page)

    def show_no_data(self, text: str | None = None) -> None:
        """Nothing to step through: why (``text``, else the default hint)."""
        self.show_start()
        self.sources.setText("")
        self.info.setText(text or NO_DATA)

    def show_ready_boosting(self, pairs: int, loss: float, alpha0: float) -> None:
        self.info.setText(
            f"Boosting ready: {pairs:,} pairs, ExpLoss {num(loss, 2)}, α0 = {num(alpha0)}. "
            "Press Step (F10)."
        )

    def show_ready_perceptron(self, sentences: int, beta: float) -> None:
        self.info.setText(
            f"Perceptron ready: {sentences:,} informative sentences, β = {beta:g}. "
            "Press Step (F10)."
        )

    def show_exhausted(self, rounds: int) -> None:
        self.info.setText(f"No feature can reduce the loss any more after {rounds} rounds.")

    def show_step(self, r, boosting: bool, train, names: list[str]) -> None:
        """What step ``r`` did (a boosting round, a perceptron update or an epoch's end) on the
        ranking data ``train`` whose features are ``names``."""
        from ...experiments.stepthrough import EpochEnd

        self._train, self._names = train, names
        self.pages.setCurrentWidget(self.step_page)
        paired = not isinstance(r, EpochEnd)  # a round's or an update's two candidates
        self.pair_scroll.setVisible(paired)
        self.pair.setVisible(paired)
        if boosting:
            self._show_round(r)
        elif isinstance(r, EpochEnd):
            self._show_epoch(r)
        else:
            self._show_update(r)
        if paired:  # once the splitter has laid the shown pair out
            QTimer.singleShot(0, self._fit_pair)

    @Slot()
    def _fit_pair(self) -> None:
        """Give the pair above the table the height its text needs (at most half the space),
        unless it has it already: a projector's large type must not cut the two candidates off."""
        sizes = self.step_page.sizes()
        total = sum(sizes)
        if len(sizes) != 2 or total <= 0 or not self.pair_scroll.isVisible():
            return
        bar = self.pair_scroll.verticalScrollBar().sizeHint().width()
        need = self.pair.heightForWidth(max(100, self.step_page.width() - bar))
        # its own height for its width, not QLabel's guess for some narrower width
        self.pair.setMinimumHeight(need)
        top = min(need + 2 * self.pair_scroll.frameWidth() + 2, total // 2)
        if sizes[0] < top:
            self.step_page.setSizes([top, total - top])

    def draw_curve(self, history: list, unit: str) -> None:
        """The dev F curve: (step, F) points of rounds or updates."""
        self.canvas.request(lambda fig: draw_history(fig, history, unit))

    # -- display --------------------------------------------------------------------------
    def _words(self, i: int) -> str:
        nb = getattr(self._train, "nbest", None)
        return " ".join(nb.words[i]) if nb is not None else f"sentence {i + 1}"

    def _spans(self, row: int, i: int) -> str:
        nb = getattr(self._train, "nbest", None)
        if nb is None:
            return ""
        j = row - int(self._train.offsets[i])
        return (
            ", ".join(f"{s.label} {s.text(nb.words[i])}" for s in nb.spans(i, j)) or "(no entities)"
        )

    def _show_round(self, r) -> None:
        inf = r.info
        dev = f" · dev F {r.dev_f1:.2f}" if r.dev_f1 is not None else ""
        from ...rerank.glossary import decode_value, describe

        value = decode_value(r.feature_name)  # the shape codes in words
        self.info.setText(
            f"<b>Round {inf.round}</b>: feature <b>{html.escape(r.feature_name)}</b> "
            f"<i>({html.escape(describe(r.feature_name).split(': ', 1)[-1])}"
            + (f" — {html.escape(value)}" if value else "")
            + f")</i>, δ = {num(inf.delta, 4, sign=True)} "
            f"(W+ {num(inf.w_plus)}, W− {num(inf.w_minus)}, BestLoss {num(inf.best_loss)}) · ExpLoss "
            f"{num(inf.loss_before)} → <b>{num(inf.loss_after)}</b> · {len(inf.pairs):,} pairs affected{dev}"
        )
        n = min(MAX_ROWS, len(inf.pairs))
        order = np.argsort(-np.abs(inf.margins_after - inf.margins_before), kind="stable")[:n]
        self.pair.setText(self._round_pair_html(r, int(order[0])) if n else "")
        self._set_columns(
            ["Sentence", "Better (oracle)", "Worse", "Feature", "Margin before", "Margin after"]
        )
        self.table.horizontalHeaderItem(3).setToolTip(
            "The chosen feature's value on the better and on the worse candidate"
        )
        self.table.setRowCount(n)
        off = self._train.offsets
        for row, p in enumerate(order.tolist()):
            i = int(r.sentences[p])
            ro, rw = int(r.oracle_rows[p]), int(r.other_rows[p])
            vals = [
                self._words(i)[:80],
                f"{ro - int(off[i]) + 1}: {self._spans(ro, i)}",
                f"{rw - int(off[i]) + 1}: {self._spans(rw, i)}",
                f"{r.oracle_values[p]:g} / {r.other_values[p]:g}",
                num(inf.margins_before[p]),
                num(inf.margins_after[p]),
            ]
            for c, v in enumerate(vals):
                self.table.setItem(row, c, _item(v))
        self.table.scrollToTop()  # the pair moved most first

    def _set_columns(self, labels: list[str]) -> None:
        """The table's headers: the text columns share the width, the numbers get what they need."""
        self.table.setColumnCount(len(labels))
        self.table.setHorizontalHeaderLabels(labels)
        hdr = self.table.horizontalHeader()
        wide = self.table.fontMetrics().horizontalAdvance("Margin before") + 24
        for c, label in enumerate(labels):
            numeric = label.startswith(("Margin", "Score", "Feature"))
            hdr.setSectionResizeMode(
                c, QHeaderView.ResizeMode.Fixed if numeric else QHeaderView.ResizeMode.Stretch
            )
            if numeric:
                hdr.resizeSection(c, wide)

    def _round_pair_html(self, r, p: int) -> str:
        """The pair a round moved most, its two candidates side by side: entities, correct tags,
        the chosen feature's value and the score before and after the round."""
        d, i = self._train, int(r.sentences[p])
        before = r.scores_before(p)

        def column(title, row, value, score_before, score_after):
            return (
                f"<td valign='top' width='50%'><b>{title}: candidate "
                f"{row - int(d.offsets[i]) + 1}</b><br>{html.escape(self._spans(row, i))}<br>"
                f"correct tags {d.quality[row]:g} · {html.escape(r.feature_name)} = {value:g}"
                f"<br>score {num(score_before)} → <b>{num(score_after)}</b></td>"
            )

        inf = r.info
        return (
            f"<p>On “{html.escape(self._words(i)[:90])}”:</p>"
            "<table width='100%' cellspacing='6'><tr>"
            + column(
                "Better (oracle)",
                int(r.oracle_rows[p]),
                r.oracle_values[p],
                before[0],
                r.oracle_scores[p],
            )
            + column("Worse", int(r.other_rows[p]), r.other_values[p], before[1], r.other_scores[p])
            + f"</tr></table><p>margin {num(inf.margins_before[p])} → "
            f"<b>{num(inf.margins_after[p])}</b> (above 0: the better candidate is ranked first)</p>"
        )

    def _show_update(self, u) -> None:
        d = self._train
        i = u.sentence
        jt, jo = u.top_row - u.rows.start, u.oracle_row - u.rows.start
        moved = [f"+{html.escape(self._names[f])}" for f in u.plus[:6].tolist()] + [
            f"−{html.escape(self._names[f])}" for f in u.minus[:6].tolist()
        ]
        more = len(u.plus) + len(u.minus) - len(moved)
        dev = f" · dev F {u.dev_f1:.2f}" if u.dev_f1 is not None else ""
        self.info.setText(
            f"<b>Epoch {u.epoch}, update {u.updates}</b> (example {u.example + 1}, mistakes this epoch "
            f"<b>{u.mistakes}</b>): on “{html.escape(self._words(i)[:90])}” candidate <b>{jt + 1}</b> was on top "
            f"but candidate <b>{jo + 1}</b> (the oracle) has more correct tags ({d.quality[u.oracle_row]:g} vs "
            f"{d.quality[u.top_row]:g}). Features moved: {', '.join(moved) or 'none'}"
            + (f" and {more} more" if more > 0 else "")
            + f"; wL {num(u.dwL, sign=True)}{dev}"
        )
        self.pair.setText(self._pair_html(u))
        self._set_columns(["Candidate", "Entities", "Score before", "Score after"])
        # the two compared candidates first, in bold, whatever their places in the N-best list
        # (an oracle far down would be out of view), then the others in order
        others = [j for j in range(len(u.scores_before)) if j not in (jt, jo)]
        order = [jt, jo] + others[: MAX_ROWS - 2]
        self.table.setRowCount(len(order))
        for row, j in enumerate(order):
            tag = " (oracle)" if j == jo else (" (wrong top)" if j == jt else "")
            vals = [
                f"{j + 1}{tag}",
                self._spans(u.rows.start + j, i),
                num(u.scores_before[j]),
                num(u.scores_after[j]),
            ]
            for c, v in enumerate(vals):
                item = _item(v)
                if row < 2:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(row, c, item)
        self.table.scrollToTop()

    def _pair_html(self, u) -> str:
        """The wrong top candidate and the oracle side by side: entities, correct tags, scores
        before and after, and the features whose weight went down (only in the wrong one) or up
        (only in the oracle), each in words."""
        from ...rerank.glossary import explain_feature

        d, i = self._train, u.sentence
        jt, jo = u.top_row - u.rows.start, u.oracle_row - u.rows.start

        def feats(ids, sign):
            lines = [
                f"{sign}1 <b>{html.escape(self._names[f])}</b><br><i>{html.escape(explain_feature(self._names[f]))}</i>"
                for f in ids[:PAIR_FEATURES].tolist()
            ]
            more = len(ids) - len(lines)
            return (
                "<br>".join(lines) + (f"<br>… and {more} more" if more > 0 else "")
                if lines
                else "<i>none</i>"
            )

        def column(j, row, title, ids, sign, moved):
            return (
                f"<td valign='top' width='50%'><b>{title}: candidate {j + 1}</b><br>"
                f"{html.escape(self._spans(row, i))}<br>correct tags {d.quality[row]:g} · score "
                f"{num(u.scores_before[j])} → <b>{num(u.scores_after[j])}</b><br><br>"
                f"<u>{moved}</u><br>{feats(ids, sign)}</td>"
            )

        return (
            "<table width='100%' cellspacing='6'><tr>"
            + column(jt, u.top_row, "Wrong top", u.minus, "−", "Weights down (features only here)")
            + column(jo, u.oracle_row, "Oracle", u.plus, "+", "Weights up (features only here)")
            + f"</tr></table><p>wL {num(u.dwL, sign=True)} (the weight of the tagger's score L(x))</p>"
        )

    def _show_epoch(self, e) -> None:
        dev = f" · dev F {e.dev_f1:.2f}" if e.dev_f1 is not None else ""
        self.info.setText(
            f"<b>End of epoch {e.epoch}</b>: {e.mistakes} mistakes, {e.updates} updates in all{dev}. "
            "Step again to start the next epoch."
        )


def _item(text: str) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setToolTip(text)
    return it
