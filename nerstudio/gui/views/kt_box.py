"""The training panel's settings of a Kazama & Torisawa 2007 sequence tagger.

A group box of its own so that the training panel stays readable: the algorithm (perceptron,
averaged, margin: local features; candidate = Alg. 4.1 and proposed = Alg. 4.2: local and
non-local features), C, epochs, BPM passes, n and n' (defaults from the constructors,
:func:`nerstudio.runtime.tagger_process.default_params`, then the values last used with
that algorithm), and, under "Advanced", the local model's features, gazetteer, feature cut-off
and edge templates. The box holds the widgets; the panel reads :meth:`KTBox.params` into its
:class:`~nerstudio.runs.spec.RunSettings` snapshot and saves them.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QSpinBox,
    QToolButton,
)

from ...errors import SettingsError
from ...runs.spec import KT_FEATURE_CHOICES, KT_GAZETTEER_CHOICES, kt_defaults
from .choice_combo import choice_combo

JOINT = ("candidate", "proposed")
NONE = "none"  # a combo's data for None (no gazetteer), also how the preferences store it


class KTBox(QGroupBox):
    def __init__(self, settings: QSettings | None = None, parent=None):
        super().__init__("Sequence tagger (Kazama && Torisawa 2007)", parent)
        self.setObjectName("ktBox")
        self.qsettings = settings
        kf = self.form = QFormLayout(self)
        from ...runtime.tagger_process import KIND_TIPS, KINDS

        self.algo = choice_combo(
            "ktAlgoCombo",
            [
                (a + ("  (local + non-local)" if a in JOINT else "  (local)"), a, KIND_TIPS[a])
                for a in KINDS
            ],
            "perceptron / averaged / margin: local features only; candidate (Alg. 4.1) and "
            "proposed (Alg. 4.2): local and non-local (document) features learned together",
        )
        self.algo.setCurrentIndex(len(KINDS) - 1)
        self.algo.currentIndexChanged.connect(self.load_defaults)
        kf.addRow("Algorithm", self.algo)
        self.C = QDoubleSpinBox()
        self.C.setObjectName("kt_C")
        self.C.setRange(0.0, 1e9)
        self.C.setDecimals(1)
        self.C.setToolTip("Margin C (margin perceptron; C = Cᵃ = Cˡ of Algorithms 4.1/4.2)")
        self.epochs = QSpinBox()
        self.epochs.setObjectName("kt_epochs")
        self.epochs.setRange(1, 100000)
        self.epochs.setToolTip(
            "Maximum number of passes over the training documents (the best dev epoch is kept)"
        )
        self.bpm = QSpinBox()
        self.bpm.setObjectName("kt_bpm")
        self.bpm.setRange(0, 1000)
        self.bpm.setToolTip(
            "BPM initialisation: start from the mean of this many single shuffled passes (0: off)"
        )
        self.n = QSpinBox()
        self.n.setObjectName("kt_n")
        self.n.setRange(2, 10000)
        self.n.setToolTip("n: size of the local n-best re-scored by the total model in training")
        self.ntest = QSpinBox()
        self.ntest.setObjectName("kt_ntest")
        self.ntest.setRange(1, 10000)
        self.ntest.setToolTip(
            "n': candidates re-scored at test time (joint trainers) and shown in the N-best panel"
        )
        kf.addRow("C", self.C)
        kf.addRow("Epochs", self.epochs)
        kf.addRow("BPM passes", self.bpm)
        kf.addRow("n (training)", self.n)
        kf.addRow("n' (test, shown)", self.ntest)
        self.advanced = QToolButton()
        self.advanced.setObjectName("ktAdvanced")
        self.advanced.setText("Advanced: local features")
        self.advanced.setCheckable(True)
        self.advanced.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced.setAutoRaise(True)
        self.advanced.toggled.connect(self.show_advanced)
        kf.addRow(self.advanced)
        self.features = choice_combo(
            "kt_features",
            [(name, name, tip) for name, tip in KT_FEATURE_CHOICES],
            "The local feature templates (K&T Table 1, richer shapes, word clusters); the K&T "
            "suite's default is kt+rich+clusters with the bundled gazetteer lists",
        )
        self.gazetteer = choice_combo(
            "kt_gazetteer",
            [(text, value or NONE, tip) for value, text, tip in KT_GAZETTEER_CHOICES],
            "Gazetteer features of the local model: entity names from the training text "
            "(each document left out of its own), the bundled lists (the K&T suite's default), "
            "both, or none",
        )
        self.cutoff = QSpinBox()
        self.cutoff.setObjectName("kt_cutoff")
        self.cutoff.setRange(1, 1000)
        self.cutoff.setToolTip(
            "Feature cut-off of the local model: keep a feature seen at least this many times "
            "in the training corpus"
        )
        self.edges = choice_combo(
            "kt_edges",
            [("current token", "current", None), ("all templates (K&T)", "all", None)],
            "Which local templates also get edge (previous tag × tag) features: the bias and "
            "the current-token templates (default), or every template as in K&T 2007 "
            "(about 4x the weights)",
        )
        # the settings chosen from a list: their box and the values it takes, for set_param's error
        self.choices: dict[str, tuple[QComboBox, str]] = {
            "edge_templates": (self.edges, "'current' or 'all'"),
            "features": (self.features, ", ".join(n for n, _ in KT_FEATURE_CHOICES)),
            "gazetteer": (self.gazetteer, "None, 'train', 'lists' or 'train+lists'"),
        }
        self.adv_rows = [
            ("Features", self.features),
            ("Gazetteer", self.gazetteer),
            ("Feature cut-off", self.cutoff),
            ("Edge features", self.edges),
        ]
        for label, w in self.adv_rows:
            kf.addRow(label, w)
        self.show_advanced(False)
        self.load_defaults()

    def params(self) -> dict:
        """The settings that apply to the chosen algorithm."""
        kind = self.algo.currentData()
        out: dict[str, object] = {
            "C": float(self.C.value()),
            "epochs": int(self.epochs.value()),
            "bpm": int(self.bpm.value()),
            "n_test": int(self.ntest.value()),
        }
        if kind in JOINT:
            out["n"] = int(self.n.value())
        out["cutoff"] = int(self.cutoff.value())
        out["edge_templates"] = str(self.edges.currentData())
        out["features"] = str(self.features.currentData())
        out["gazetteer"] = (
            None if self.gazetteer.currentData() == NONE else self.gazetteer.currentData()
        )
        return out

    @Slot(bool)
    def show_advanced(self, on: bool) -> None:
        self.advanced.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        for _, w in self.adv_rows:
            self.form.setRowVisible(w, on)

    def set_algorithm(self, kind: str) -> None:
        k = self.algo.findData(kind)
        if k >= 0:
            self.algo.setCurrentIndex(k)

    def set_param(self, name: str, value) -> None:
        if name in self.choices:
            combo, allowed = self.choices[name]
            k = combo.findData(value or NONE)
            if k < 0:
                raise SettingsError(f"{name.replace('_', ' ')} {value!r}: {allowed}")
            combo.setCurrentIndex(k)
            return
        _set_number(self.numbers()[name], value)

    def numbers(self) -> dict[str, QSpinBox | QDoubleSpinBox]:
        return {
            "C": self.C,
            "epochs": self.epochs,
            "bpm": self.bpm,
            "n": self.n,
            "n_test": self.ntest,
            "cutoff": self.cutoff,
        }

    @Slot()
    def load_defaults(self, *_args) -> None:
        """The chosen algorithm's defaults (the constructor's), then the values last used with it."""
        kind = self.algo.currentData()
        d = kt_defaults(kind)
        q = self.qsettings
        for name, (combo, _) in self.choices.items():
            value = d.get(name) or NONE
            if q is not None and q.contains(f"training/kt/{kind}/{name}"):
                value = str(q.value(f"training/kt/{kind}/{name}") or NONE)
            if combo.findData(value) >= 0:
                combo.setCurrentIndex(combo.findData(value))
        for name, w in self.numbers().items():
            v = d.get(name)
            if q is not None and q.value(f"training/kt/{kind}/{name}") is not None:
                try:
                    v = float(q.value(f"training/kt/{kind}/{name}"))
                except (TypeError, ValueError):
                    pass
            if v is not None:
                _set_number(w, v)
        self.n.setEnabled(kind in JOINT)
        self.C.setEnabled(kind not in ("perceptron", "averaged"))

    def save(self, kind: str, params: dict) -> None:
        q = self.qsettings
        if q is None:
            return
        for k, v in params.items():
            q.setValue(f"training/kt/{kind}/{k}", NONE if v is None else v)


def _set_number(w: QSpinBox | QDoubleSpinBox, value: float) -> None:
    if isinstance(w, QDoubleSpinBox):
        w.setValue(float(value))
    else:
        w.setValue(int(value))
