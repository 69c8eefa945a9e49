"""The training panel: settings of a run, start / cancel, progress.

A second family trains sequence taggers after Kazama & Torisawa 2007 (``start="kt"``), with
their settings in :class:`~nerstudio.gui.views.kt_box.KTBox`. The task (typed /
SCN) and the tags (Collins' SCN or BILOU, :mod:`nerstudio.tagging.tag_alphabets`) sit above the
family boxes: they apply to the full pipeline's tagger and to sequence taggers; a sequence-tagger
run hides the max-ent "Tagger and N-best" box.

A reranker run goes through the core's stages — tagger training, jackknifed N-best lists of the training
corpus (plus the dev list), global features and the reranker — or starts from the loaded N-best
lists and trains only the reranker. The tagger's feature sets and the reranker's resource
families (gazetteers, document context, word clusters) offered are those the command line's
typed experiment uses (:data:`~nerstudio.runs.spec.TAGGER_FEATURE_CHOICES`,
:data:`~nerstudio.runs.spec.RERANK_RESOURCES`), so a run in the window can be the
experiment's. The reranker's settings are read from the core's learner
(``make_learner(algo).get_params()``), so new hyper-parameters show up without GUI changes.
While a run is in flight every setting is frozen; the run works on a snapshot
(:class:`RunSettings`), so what it produces always matches its label.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...runs.spec import (  # noqa: F401 - re-exported
    ALPHABET_CHOICES,
    KT_LOCAL_DEFAULTS,
    KT_NAMES,
    RERANK_RESOURCES,
    TAGGER_FEATURE_CHOICES,
    RunSettings,
    algorithm_tip,
    algorithms,
    demo_settings,
    kt_defaults,
    kt_label,
    learner_defaults,
    short_label,
)
from .choice_combo import choice_combo
from .flow_layout import FlowBox
from .kt_box import KTBox


class TrainingPanel(QWidget):
    trainRequested = Signal(object)  # RunSettings
    cancelRequested = Signal()

    def __init__(self, settings: QSettings | None = None, parent=None):
        super().__init__(parent)
        self.setObjectName("trainingPanel")
        self.qsettings = settings
        self._param_widgets: dict[str, QWidget] = {}
        self._running = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self.demo = demo = demo_settings()

        # what to run
        self.start_combo = QComboBox()
        self.start_combo.setObjectName("startCombo")
        self.start_combo.addItem("Reranker only (loaded N-best lists)", "reranker")
        self.start_combo.addItem("Full pipeline (tagger, jackknife, reranker)", "tagger")
        self.start_combo.addItem("Sequence tagger (Kazama & Torisawa 2007)", "kt")
        self.start_combo.setToolTip(
            "Train only the reranker on the N-best lists already loaded, first train the "
            "tagger and produce jackknifed N-best lists of the open corpus, or train a "
            "perceptron sequence tagger (local, or local + non-local features)"
        )
        self.start_combo.currentIndexChanged.connect(self._sync_enabled)
        lay.addWidget(self.start_combo)

        # task: the tagger's (full pipeline) or the sequence tagger's (K&T), one choice for both
        task_row = QHBoxLayout()
        self.task_label = QLabel("Task")
        self.task = QComboBox()
        self.task.setObjectName("taskCombo")
        self.task.addItems(["typed", "scn"])
        self.task.setCurrentText(demo["task"])
        self.task.setToolTip(
            "typed: PER/ORG/LOC/MISC entities; scn: untyped Start/Continue/None segmentation. "
            "For the full pipeline's tagger and for sequence taggers; a reranker-only run "
            "follows its N-best lists"
        )
        self.task_label.setBuddy(self.task)
        task_row.addWidget(self.task_label)
        task_row.addWidget(self.task, 1)
        # the tagger's tags, like the task one choice for both kinds of tagger
        self.alphabet_label = QLabel("Tags")
        self.alphabet = choice_combo(
            "alphabetCombo",
            [(text, name, tip) for name, text, tip in ALPHABET_CHOICES],
            "The tags the tagger decides between. Its N-best lists are Collins' start/continue "
            "segmentations either way, so the reranker and the views do not change",
        )
        self.alphabet.setCurrentIndex(max(0, self.alphabet.findData(demo["alphabet"])))
        self.alphabet_label.setBuddy(self.alphabet)
        task_row.addWidget(self.alphabet_label)
        task_row.addWidget(self.alphabet, 1)
        lay.addLayout(task_row)

        # tagger
        self.tagger_box = QGroupBox("Tagger and N-best")
        tf = QFormLayout(self.tagger_box)
        self.tagger_feats = choice_combo(
            "taggerFeatures",
            [(name, name, tip) for name, tip in TAGGER_FEATURE_CHOICES],
            "paper: the features of Collins 2002; conll: a richer CoNLL feature set; "
            "conll+rich+gaz+clusters: the typed experiment's, with the bundled gazetteers and "
            "word clusters",
        )
        if self.tagger_feats.findText(demo["tagger_features"]) < 0:  # a demo built otherwise
            self.tagger_feats.addItem(demo["tagger_features"])
        self.tagger_feats.setCurrentText(demo["tagger_features"])
        self.tagger_iter = QSpinBox()
        self.tagger_iter.setRange(1, 1000)
        self.tagger_iter.setValue(int(demo["tagger_iter"]))
        self.tagger_iter.setToolTip("Maximum number of L-BFGS iterations of the tagger")
        self.tagger_cutoff = QSpinBox()
        self.tagger_cutoff.setObjectName("taggerCutoff")
        self.tagger_cutoff.setRange(1, 1000)
        self.tagger_cutoff.setValue(int(demo["tagger_cutoff"]))
        self.tagger_cutoff.setToolTip(
            "Keep a tagger feature seen at least this many times in the training corpus "
            f"(default {demo['tagger_cutoff']}: the demo model's; the typed experiment uses 2)"
        )
        self.folds = QSpinBox()
        self.folds.setRange(2, 20)
        self.folds.setValue(int(demo["folds"]))
        self.folds.setToolTip(
            "Jackknife folds: each fold of the training corpus is decoded by a tagger trained "
            "on the others, so training candidates look like test candidates"
        )
        self.nbest_n = QSpinBox()
        self.nbest_n.setRange(1, 100)
        self.nbest_n.setValue(int(demo["n"]))
        self.nbest_n.setToolTip("Number of candidates per sentence")
        tf.addRow("Features", self.tagger_feats)
        tf.addRow("Iterations", self.tagger_iter)
        tf.addRow("Feature cut-off", self.tagger_cutoff)
        tf.addRow("Folds", self.folds)
        tf.addRow("N-best", self.nbest_n)
        lay.addWidget(self.tagger_box)

        # reranker
        self.rerank_box = QGroupBox("Reranker")
        self.rerank_form = QFormLayout(self.rerank_box)
        self.algo = choice_combo(
            "algoCombo", [(a, a, algorithm_tip(a)) for a in algorithms()], "Reranking algorithm"
        )
        if self.algo.findText(demo["algo"]) >= 0:
            self.algo.setCurrentText(demo["algo"])
        self.algo.currentTextChanged.connect(self._rebuild_params)
        self.rerank_form.addRow("Algorithm", self.algo)
        self.min_sent = QSpinBox()
        self.min_sent.setRange(1, 1000)
        self.min_sent.setValue(int(demo["min_sentences"]))
        self.min_sent.setToolTip(
            "Keep a global feature only if it occurs on at least this many training sentences "
            f"(default {demo['min_sentences']}: the bundled demo model's setting)"
        )
        self.rerank_form.addRow("Feature cut-off", self.min_sent)
        # wraps on a narrow panel (a small screen, presentation mode) instead of widening it
        resources_box = FlowBox(spacing=8)
        resources = resources_box.flow
        self.resources: dict[str, QCheckBox] = {}
        for name, label, tip in RERANK_RESOURCES:
            box = self.resources[name] = QCheckBox(label)
            box.setObjectName(f"resource_{name}")
            box.setToolTip(tip)
            box.setChecked(name in demo["resources"])
            resources.addWidget(box)
        self.rerank_form.addRow("Resources", resources_box)
        self._fixed_rows = self.rerank_form.rowCount()
        lay.addWidget(self.rerank_box)
        p = demo["params"]
        self.defaults_note = QLabel("<i>Defaults: the bundled demo model's settings</i>")
        self.defaults_note.setObjectName("defaultsNote")
        self.defaults_note.setToolTip(
            f"The demo model (File ▸ Open demo) was built with: {demo['task']} task, {demo['tagger_features']} "
            f"features, {demo['folds']} folds, {demo['n']}-best, {demo['algo']} "
            + ", ".join(f"{k} {v}" for k, v in p.items())
            + f", feature cut-off {demo['min_sentences']}. "
            "Settings you change are remembered; these are the starting values."
        )
        lay.addWidget(self.defaults_note)

        # sequence taggers (K&T 2007)
        self.kt_box = kt = KTBox(settings)
        # the box's widgets under the panel's names (the same objects, not copies)
        self.kt_algo, self.kt_C, self.kt_epochs, self.kt_bpm = kt.algo, kt.C, kt.epochs, kt.bpm
        self.kt_n, self.kt_ntest, self.kt_advanced = kt.n, kt.ntest, kt.advanced
        self.kt_features, self.kt_gazetteer = kt.features, kt.gazetteer
        self.kt_cutoff, self.kt_edges = kt.cutoff, kt.edges
        lay.addWidget(self.kt_box)

        # dev set
        self.dev_box = QGroupBox("Development set")
        dl = QHBoxLayout(self.dev_box)
        self.dev_path = QLineEdit()
        self.dev_path.setObjectName("devPath")
        self.dev_path.setPlaceholderText("dev corpus or dev N-best (.npz)")
        self.dev_path.setToolTip(
            "The dev-set curve and the choice of the best round/epoch use this set. A corpus is "
            "decoded by the tagger; an N-best file is used as is. Empty: the loaded dev N-best. "
            "Sequence taggers need a dev corpus."
        )
        browse = QToolButton()
        browse.setText("…")
        browse.setToolTip("Choose a dev corpus or dev N-best file")
        browse.clicked.connect(self._browse_dev)
        dl.addWidget(self.dev_path, 1)
        dl.addWidget(browse)
        lay.addWidget(self.dev_box)

        # run: the buttons, the progress and its message, in a footer of their own, which the
        # window keeps in sight below the settings (they scroll); alone, the panel shows it last
        self.footer = QWidget()
        self.footer.setObjectName("trainingFooter")
        foot = QVBoxLayout(self.footer)
        foot.setContentsMargins(6, 4, 6, 6)
        row = QHBoxLayout()
        self.train_button = QPushButton("Train")
        self.train_button.setObjectName("trainButton")
        self.train_button.setToolTip("Start the run with these settings (F5)")
        self.train_button.clicked.connect(self._on_train)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setToolTip("Stop the running job (Shift+F5); it stops within a second")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancelRequested)
        row.addWidget(self.train_button)
        row.addWidget(self.cancel_button)
        foot.addLayout(row)
        self.progress = QProgressBar()
        self.progress.setObjectName("trainingProgress")
        self.progress.setTextVisible(True)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("idle")
        foot.addWidget(self.progress)
        self.message = QLabel("Idle")
        self._progress_text = False  # the message is a running job's progress (cleared at its end)
        self.message.setObjectName("trainingMessage")
        self.message.setWordWrap(True)
        self.message.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        foot.addWidget(self.message)
        # what the session has loaded (several lines): with the settings, not in the footer
        self.state = QLabel()
        self.state.setObjectName("sessionState")
        self.state.setWordWrap(True)
        self.state.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.state)
        lay.addStretch(1)
        lay.addWidget(self.footer)
        self._lay = lay

        self._rebuild_params(self.algo.currentText())
        self._restore()
        self._sync_enabled()

    def detach_footer(self) -> QWidget:
        """The footer (Train, Cancel, the progress and its message), taken out of the panel for
        its host to place: the window keeps it in sight below the scrolling settings."""
        self._lay.removeWidget(self.footer)
        return self.footer

    # -- reranker parameters --------------------------------------------------------------
    @Slot(str)
    def _rebuild_params(self, algo: str) -> None:
        while self.rerank_form.rowCount() > self._fixed_rows:
            self.rerank_form.removeRow(self.rerank_form.rowCount() - 1)
        self._param_widgets = {}
        defaults = learner_defaults(algo)
        demo = self.demo["params"] if algo == self.demo["algo"] else {}
        for name, val in defaults.items():
            w = _param_widget(name, demo.get(name, val))
            if w is None:
                continue
            if name in demo and demo[name] != val:
                w.setToolTip(
                    f"{w.toolTip()}. Default {demo[name]}: the bundled demo model's setting (the "
                    f"learner's own default is {val})"
                )
            self._param_widgets[name] = w
            self.rerank_form.addRow(name.replace("_", " ").capitalize(), w)
        if not defaults:
            note = QLabel("<i>reranker core not available</i>")
            self.rerank_form.addRow("", note)
        self._restore_params(algo)

    def params(self) -> dict:
        out: dict[str, object] = {}
        for name, w in self._param_widgets.items():
            if isinstance(w, QCheckBox):
                out[name] = w.isChecked()
            elif isinstance(w, QSpinBox):
                out[name] = int(w.value())
            elif isinstance(w, QDoubleSpinBox):
                out[name] = float(w.value())
            elif isinstance(w, QLineEdit):
                t = w.text().strip()
                if t:
                    out[name] = _parse(t)
        return out

    def set_param(self, name: str, value) -> None:
        w = self._param_widgets.get(name)
        if isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
            w.setValue(value)
        elif isinstance(w, QLineEdit):
            w.setText(str(value))
        else:
            raise KeyError(name)

    # -- snapshot -------------------------------------------------------------------------
    def snapshot(self) -> RunSettings:
        return RunSettings(
            start=self.start_combo.currentData(),
            task=self.task.currentText(),
            alphabet=str(self.alphabet.currentData()),
            tagger_features=self.tagger_feats.currentText(),
            tagger_iter=self.tagger_iter.value(),
            tagger_optimizer=self.demo["tagger_optimizer"],  # the demo's, as its iterations box
            tagger_cutoff=self.tagger_cutoff.value(),
            folds=self.folds.value(),
            n=self.nbest_n.value(),
            algo=self.algo.currentText(),
            params=self.params(),
            feature_params={
                "min_sentences": self.min_sent.value(),
                **{name: box.isChecked() for name, box in self.resources.items()},
            },
            dev_path=self.dev_path.text().strip(),
            kt_algo=self.kt_algo.currentData(),
            kt_params=self.kt_params(),
        )

    # -- sequence taggers -----------------------------------------------------------------
    def kt_params(self) -> dict:
        """The K&T settings that apply to the chosen algorithm."""
        return self.kt_box.params()

    def set_kt_algorithm(self, kind: str) -> None:
        self.kt_box.set_algorithm(kind)

    def set_kt_param(self, name: str, value) -> None:
        self.kt_box.set_param(name, value)

    def set_start(self, start: str) -> None:
        k = self.start_combo.findData(start)
        if k >= 0:
            self.start_combo.setCurrentIndex(k)

    def set_algorithm(self, algo: str) -> None:
        k = self.algo.findText(algo)
        if k >= 0:
            self.algo.setCurrentIndex(k)

    @Slot()
    def request_training(self) -> None:
        """What the Train button does: emit ``trainRequested`` with the current settings."""
        self._on_train()

    def _on_train(self) -> None:
        if not self._running:
            s = self.snapshot()
            self._save(s)
            self.trainRequested.emit(s)

    # -- run state ------------------------------------------------------------------------
    def set_running(self, running: bool) -> None:
        """Freeze the settings while a run is in flight."""
        self._running = running
        for w in (
            self.start_combo,
            self.task,
            self.alphabet,
            self.tagger_box,
            self.rerank_box,
            self.kt_box,
            self.dev_box,
        ):
            w.setEnabled(not running)
        self.train_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if running:
            self.progress.setFormat("%p%")
            self.progress.setRange(0, 0)  # busy until the first progress report
        else:
            self._sync_enabled()  # the bar keeps what finish() said: never a stale 100%

    @property
    def running(self) -> bool:
        return self._running

    @Slot(str, int, int)
    def show_progress(self, message: str, done: int, total: int) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))
        else:
            self.progress.setRange(0, 0)
        if message:
            self.message.setText(message)
            self._progress_text = True

    def finish(self, how: str) -> None:
        """The job is over: ``done`` (a full bar), ``cancelled`` or ``failed`` (an empty bar
        saying so). A progress message ("computing …") does not outlive its job: unless the job's
        own ending has said something since, it is cleared."""
        self.progress.setRange(0, 1)
        self.progress.setValue(1 if how == "done" else 0)
        self.progress.setFormat(how)
        if self._progress_text:
            self.set_message("")

    def set_message(self, text: str) -> None:
        self.message.setText(text)
        self._progress_text = False

    def set_state_text(self, html: str) -> None:
        self.state.setText(html)

    @Slot()
    def _sync_enabled(self) -> None:
        if not self._running:
            start = self.start_combo.currentData()
            self.tagger_box.setEnabled(start == "tagger")
            self.tagger_box.setVisible(start != "kt")  # its task choice is above, shared with K&T
            for w in (self.task, self.task_label, self.alphabet, self.alphabet_label):
                w.setEnabled(start != "reranker")
            self.rerank_box.setVisible(start != "kt")
            self.defaults_note.setVisible(start != "kt")  # the K&T box's are the constructors'
            self.rerank_box.setEnabled(start != "kt")
            self.kt_box.setVisible(start == "kt")
            self.kt_box.setEnabled(start == "kt")

    @Slot()
    def _browse_dev(self) -> None:
        start = os.path.dirname(self.dev_path.text()) if self.dev_path.text() else ""
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Development set",
            start,
            "Corpora and N-best lists (*.conll *.txt *.tsv *.jsonl *.npz *.testa "
            "*.dev);;All files (*)",
        )
        if path:
            self.dev_path.setText(path)

    # -- preferences ----------------------------------------------------------------------
    def _save(self, s: RunSettings) -> None:
        q = self.qsettings
        if q is None:
            return
        q.setValue("training/start", s.start)
        q.setValue("training/task", s.task)
        q.setValue("training/alphabet", s.alphabet)
        q.setValue("training/taggerFeatures", s.tagger_features)
        q.setValue("training/taggerIter", s.tagger_iter)
        q.setValue("training/taggerCutoff", s.tagger_cutoff)
        q.setValue("training/folds", s.folds)
        q.setValue("training/n", s.n)
        q.setValue("training/algo", s.algo)
        q.setValue("training/minSentences", self.min_sent.value())
        for name, box in self.resources.items():
            q.setValue(f"training/resources/{name}", box.isChecked())
        for k, v in s.params.items():
            q.setValue(f"training/params/{s.algo}/{k}", v)
        q.setValue("training/ktAlgo", s.kt_algo)
        self.kt_box.save(s.kt_algo, s.kt_params)

    def _restore(self) -> None:
        q = self.qsettings
        if q is None:
            return
        self.set_start(str(q.value("training/start", "reranker")))
        for combo, key in ((self.task, "task"), (self.tagger_feats, "taggerFeatures")):
            v = q.value(f"training/{key}")
            if v is not None and combo.findText(str(v)) >= 0:
                combo.setCurrentText(str(v))
        k = self.alphabet.findData(str(q.value("training/alphabet", "")))
        if k >= 0:
            self.alphabet.setCurrentIndex(k)
        for spin, key in (
            (self.tagger_iter, "taggerIter"),
            (self.tagger_cutoff, "taggerCutoff"),
            (self.folds, "folds"),
            (self.nbest_n, "n"),
            (self.min_sent, "minSentences"),
        ):
            v = q.value(f"training/{key}")
            if v is not None:
                try:
                    spin.setValue(int(v))
                except (TypeError, ValueError):
                    pass
        for name, box in self.resources.items():
            v = q.value(f"training/resources/{name}")
            if v is not None:
                box.setChecked(str(v).lower() in ("true", "1"))
        algo = q.value("training/algo")
        if algo is not None:
            self.set_algorithm(str(algo))
        kt = q.value("training/ktAlgo")
        if kt is not None:
            self.set_kt_algorithm(str(kt))
        self.kt_box.load_defaults()

    def _restore_params(self, algo: str) -> None:
        q = self.qsettings
        if q is None:
            return
        for name, w in self._param_widgets.items():
            v = q.value(f"training/params/{algo}/{name}")
            if v is None:
                continue
            try:
                if isinstance(w, QCheckBox):
                    w.setChecked(str(v).lower() in ("true", "1"))
                elif isinstance(w, QSpinBox):
                    w.setValue(int(v))
                elif isinstance(w, QDoubleSpinBox):
                    w.setValue(float(v))
                elif isinstance(w, QLineEdit):
                    w.setText(str(v))
            except (TypeError, ValueError):
                pass


PARAM_TIPS = {
    "rounds": "Number of boosting rounds",
    "epochs": "Passes over the training sentences",
    "eval_every": "Evaluate on the dev set every this many rounds",
    "beta": "Weight of L(x) (the tagger's log-probability) relative to the global features",
    "C": "Margin / regularisation constant",
    "lam": "Kernel decay λ",
    "lambda_": "Kernel decay λ",
    "lmbda": "Kernel decay λ",
    "epsilon": "Smoothing constant of the boosting update",
    "eta": "Learning rate",
    "seed": "Random seed for the sentence order",
    "shuffle": "Visit training sentences in a random order each epoch",
}


def _parse(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def _param_widget(name: str, val: object) -> QWidget | None:
    w: QWidget
    if isinstance(val, bool):
        box = QCheckBox()
        box.setChecked(val)
        w = box
    elif isinstance(val, int):
        spin = QSpinBox()
        spin.setRange(-1 if val < 0 else 0, 10_000_000)
        spin.setValue(val)
        spin.setAccelerated(True)
        w = spin
    elif isinstance(val, float):
        dspin = QDoubleSpinBox()
        dspin.setDecimals(6 if abs(val) < 0.01 and val != 0 else 4)
        dspin.setRange(-1e9, 1e9)
        dspin.setSingleStep(max(abs(val) / 10, 1e-4) if val else 0.1)
        dspin.setValue(val)
        w = dspin
    elif val is None or isinstance(val, str):
        edit = QLineEdit("" if val is None else val)
        edit.setPlaceholderText("default")
        w = edit
    else:
        return None
    w.setObjectName(f"param_{name}")
    w.setToolTip(PARAM_TIPS.get(name, name))
    return w
