"""Training curves: dev F (and optionally P, R) against boosting rounds or perceptron epochs.

matplotlib through a :class:`~matplotlib.figure.Figure` (never pyplot), drawn by the render thread
of :mod:`.figure_image` from a snapshot of the runs, so a redraw never holds up the window.
Points arrive in batches from the worker's signals; redraw requests are coalesced (at most one
every 50 ms). Runs with the same unit are overlaid, each labelled with its settings and the
corpus it was trained on; each run's best point is marked. Boosting rounds and perceptron epochs
are different units, so they never share an x axis: each unit gets its own plot, side by side,
labelled with its unit (the dev-F axes are shared, so heights compare). Export as PNG/SVG (the
figure) or CSV (the numbers).
"""

from __future__ import annotations

import csv
import math
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from .count_axis import count_axis
from .figure_image import FigureImage

if TYPE_CHECKING:  # matplotlib itself is imported where figures are made, not at start-up
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

COLORS = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
]


@dataclass
class Run:
    label: str
    unit: str = "epoch"
    baseline: float | None = None  # dev F of the tagger's top candidates
    steps: list = field(default_factory=list)
    p: list = field(default_factory=list)
    r: list = field(default_factory=list)
    f: list = field(default_factory=list)
    extra: list = field(default_factory=list)  # (seconds, loss, mistakes)
    state: str = "running"  # running, done, cancelled, failed
    corpus: str = ""  # what it was trained on (shown in the legend)

    def legend(self) -> str:
        return f"{self.label} · on {self.corpus}" if self.corpus else self.label

    def best(self) -> int | None:
        vals = [(v, -i) for i, v in enumerate(self.f) if v is not None and not math.isnan(v)]
        return -max(vals)[1] if vals else None


def _val(obj, name):
    v = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return None if v is None else float(v)


class CurvePlot(QWidget):
    pointsChanged = Signal(int)  # total number of points

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("curvePlot")
        self.runs: list[Run] = []
        self.canvas = FigureImage()  # drawn by the render thread: no matplotlib in the main thread
        self.canvas.setObjectName("curveCanvas")
        self.canvas.setMinimumHeight(140)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(50)
        self._timer.timeout.connect(self.redraw)
        self.draws = 0  # how many times the figure was redrawn (tests, throttling checks)

        self.show_p = QCheckBox("Precision")
        self.show_p.setToolTip("Also draw dev precision (dashed)")
        self.show_r = QCheckBox("Recall")
        self.show_r.setToolTip("Also draw dev recall (dotted)")
        self.show_base = QCheckBox("Baseline")
        self.show_base.setChecked(True)
        self.show_base.setToolTip("Dev F of the tagger's top candidates (no reranking)")
        for cb in (self.show_p, self.show_r, self.show_base):
            cb.toggled.connect(self.schedule)
        self.info = QLabel("No training run yet")
        self.info.setObjectName("curveInfo")
        # never widens the window
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        # several runs' summaries wrap instead of being cut at the buttons
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.show_p.setText("P")
        self.show_r.setText("R")
        b_png = QPushButton("Image…")
        b_png.setToolTip("Save the figure as PNG or SVG")
        b_png.clicked.connect(self.export_image_dialog)
        b_csv = QPushButton("CSV…")
        b_csv.setToolTip("Save every point of every run as CSV")
        b_csv.clicked.connect(self.export_csv_dialog)
        b_clear = QPushButton("Clear")
        b_clear.setToolTip("Forget the finished runs")
        b_clear.clicked.connect(self.clear_finished)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.info, 1)
        for w in (self.show_p, self.show_r, self.show_base, b_png, b_csv, b_clear):
            top.addWidget(w)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.canvas, 1)
        self.redraw()

    # -- data -----------------------------------------------------------------------------
    def start_run(
        self,
        label: str,
        unit: str = "epoch",
        baseline: float | None = None,
        corpus: str | None = None,
    ) -> int:
        """A new run; ``corpus`` names what it is trained on (the legend says it)."""
        self.runs.append(Run(label, unit, baseline, corpus=corpus or ""))
        self.schedule()
        return len(self.runs) - 1

    def add_points(self, run: int, points) -> None:
        """Append RerankStats-like points (objects or dicts with step, dev_precision, ...)."""
        r = self.runs[run]
        for st in points:
            step = _val(st, "step")
            if step is None:
                continue
            unit = st.get("unit") if isinstance(st, dict) else getattr(st, "unit", None)
            if unit:
                r.unit = unit
            r.steps.append(step)
            r.p.append(_val(st, "dev_precision"))
            r.r.append(_val(st, "dev_recall"))
            r.f.append(_val(st, "dev_f1"))
            r.extra.append((_val(st, "seconds"), _val(st, "loss"), _val(st, "mistakes")))
        self.schedule()
        self.pointsChanged.emit(self.n_points())

    def finish_run(self, run: int, state: str = "done") -> None:
        if 0 <= run < len(self.runs):
            self.runs[run].state = state
            self.schedule()

    def n_points(self, run: int | None = None) -> int:
        if run is not None:
            return len(self.runs[run].steps)
        return sum(len(r.steps) for r in self.runs)

    def clear(self) -> None:
        self.runs = []
        self.redraw()

    @Slot()
    def clear_finished(self) -> None:
        self.runs = [r for r in self.runs if r.state == "running"]
        self.redraw()

    # -- drawing --------------------------------------------------------------------------
    @Slot()
    def schedule(self) -> None:
        """Redraw soon (coalesces bursts of points into one redraw per 50 ms)."""
        if not self._timer.isActive():
            self._timer.start()

    def _snapshot(self):
        """The runs and options as they are now: the render thread draws from this copy."""
        runs = [
            Run(
                r.label,
                r.unit,
                r.baseline,
                list(r.steps),
                list(r.p),
                list(r.r),
                list(r.f),
                [],
                r.state,
                r.corpus,
            )
            for r in self.runs
        ]
        opts = (self.show_p.isChecked(), self.show_r.isChecked(), self.show_base.isChecked())
        return lambda fig: draw_runs(fig, runs, *opts)

    @Slot()
    def redraw(self) -> None:
        """Update the summary line and ask the render thread for a new image of every run."""
        self.draws += 1
        best_txt = []
        for k, r in enumerate(self.runs):
            b = r.best()
            if b is not None:
                best_txt.append(f"run {k + 1}: best F {r.f[b]:.2f} at {r.unit} {int(r.steps[b])}")
        if best_txt:
            self.info.setText(" · ".join(best_txt[-3:]))
        elif not self.runs:
            self.info.setText("No training run yet")
        self.canvas.request(self._snapshot())

    def render_now(self) -> None:
        """Draw the current runs in this thread and show them at once (screenshots, tests)."""
        self._timer.stop()
        self.redraw()
        self.canvas.render_now()

    # -- export ---------------------------------------------------------------------------
    def export_image(self, path: str) -> None:
        """Save the figure (PNG or SVG) at the size it has on screen."""
        w, h = max(self.canvas.width(), 320), max(self.canvas.height(), 200)
        from matplotlib.figure import Figure  # imported when needed: the window starts faster

        fig = Figure(figsize=(w / 100, h / 100), dpi=100, layout="constrained")
        self._snapshot()(fig)
        fig.savefig(path, dpi=150 if path.lower().endswith(".png") else None)

    def export_csv(self, path: str) -> None:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(
                [
                    "run",
                    "settings",
                    "unit",
                    "step",
                    "dev_precision",
                    "dev_recall",
                    "dev_f1",
                    "best",
                    "seconds",
                    "loss",
                    "mistakes",
                    "corpus",
                ]
            )
            for k, r in enumerate(self.runs):
                b = r.best()
                for i, s in enumerate(r.steps):
                    sec, loss, mis = r.extra[i]
                    w.writerow(
                        [
                            k + 1,
                            r.label,
                            r.unit,
                            int(s),
                            _fmt(r.p[i]),
                            _fmt(r.r[i]),
                            _fmt(r.f[i]),
                            int(i == b),
                            _fmt(sec),
                            _fmt(loss),
                            "" if mis is None else int(mis),
                            r.corpus,
                        ]
                    )

    @Slot()
    def export_image_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export curve", "curve.png", "PNG image (*.png);;SVG image (*.svg)"
        )
        if path:
            try:
                self.export_image(path)
            except (OSError, ValueError) as exc:
                QMessageBox.critical(self, "Cannot export", str(exc))

    @Slot()
    def export_csv_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export curve data", "curve.csv", "CSV (*.csv)")
        if path:
            try:
                self.export_csv(path)
            except OSError as exc:
                QMessageBox.critical(self, "Cannot export", str(exc))


def _fmt(v):
    return "" if v is None else f"{v:.6g}"


UNIT_NAMES = {"round": "boosting round", "epoch": "epoch", "update": "perceptron update"}


def units_of(runs: list[Run]) -> list[str]:
    """The units of the runs that have (or will have) points, in order of first appearance."""
    out: list[str] = []
    for r in runs:
        if (r.steps or r.state == "running") and r.unit not in out:
            out.append(r.unit)
    return out


class _Layout:
    """Where a figure's plots go (one per unit: side by side unless the area is tall) and how
    their legend labels wrap."""

    def __init__(self, fig: Figure, units: list[str]):
        self.units = units
        n = max(len(units), 1)
        self.w, h = fig.get_size_inches()
        # side by side unless the area is tall
        self.rows, self.cols = (n, 1) if n > 1 and self.w < 1.2 * h else (1, n)
        self.plot_pt = h * 72 / self.rows  # the height of one plot, in points (the legend's unit)

    def has_ylabel(self, k: int) -> bool:
        """Plot ``k`` names the y axis: the first of a row."""
        return k == 0 or self.rows > 1

    # legend labels wrapped to the width of one plot (a legend wider than its plot would leave
    # the constrained layout no room for the plot itself), counted in points, which do not
    # change with the screen's scale (the figure's dpi doubles at QT_SCALE_FACTOR=2, and so does
    # the font in pixels). Measured at size 8: about 4.4 pt a character; the y axis takes about
    # 81 pt where it has its label (the first plot of a row) and 49 pt where not; the legend's
    # line sample and padding 35 pt.
    def chars(self, k: int) -> int:
        axis = 81 if self.has_ylabel(k) else 49
        return max(16, int((self.w * 72 / self.cols - axis - 35) / 4.4))

    def label(self, text: str, unit: str) -> str:
        k = self.units.index(unit) if unit in self.units else 0
        return "\n".join(textwrap.wrap(text, self.chars(k), break_on_hyphens=False)) or text


def _make_axes(
    fig: Figure, runs: list[Run], layout: _Layout, show_p: bool, show_r: bool
) -> dict[str, Axes]:
    """One plot per unit (one unnamed plot without any), sharing the dev-F axis."""
    axes: dict[str, Axes] = {}
    for k, unit in enumerate(layout.units or [""]):
        ax = fig.add_subplot(
            layout.rows, layout.cols, k + 1, sharey=next(iter(axes.values()), None)
        )
        axes[unit] = ax
        ax.set_xlabel(UNIT_NAMES.get(unit, unit or "round / epoch"))
        # rounds and epochs are counts
        count_axis(
            ax, [s for r in runs if r.unit == unit for s, f in zip(r.steps, r.f) if f is not None]
        )
        ax.grid(True, alpha=0.3)
        if layout.has_ylabel(k):
            ax.set_ylabel("dev F / P / R (%)" if (show_p or show_r) else "dev F (%)")
    return axes


def _mark_best(a: Axes, r: Run, color: str) -> None:
    """The run's best point: a star and its F."""
    b = r.best()
    if b is None:
        return
    a.plot(
        [r.steps[b]],
        [r.f[b]],
        marker="*",
        ms=13,
        color=color,
        mec="black",
        mew=0.6,
        linestyle="none",
    )
    a.annotate(
        f"{r.f[b]:.2f}",
        (r.steps[b], r.f[b]),
        textcoords="offset points",
        xytext=(4, 6),
        fontsize=8,
        color=color,
    )


def _draw_f(a: Axes, r: Run, color: str, runs: list[Run], layout: _Layout):
    """The run's dev F curve (or, running without a point yet, its legend entry); returns the
    legend's handle, or None for a run that has nothing to show."""
    xs = [s for s, f in zip(r.steps, r.f) if f is not None]
    fs = [f for f in r.f if f is not None]
    state = "" if r.state == "done" else f" [{r.state}]"
    if xs:
        (h,) = a.plot(
            xs,
            fs,
            "-",
            color=color,
            lw=1.6,
            marker="." if len(xs) < 60 else None,
            label=layout.label(f"{r.legend()}{state}", r.unit),
        )
        _mark_best(a, r, color)
        return h
    if r.state == "running":
        (h,) = a.plot(
            [], [], "-", color=color, label=layout.label(f"{r.legend()} [waiting]", r.unit)
        )
        if not any(x.steps for x in runs if x.unit == r.unit):
            a.set_xlim(0, 1)  # no point yet: a plain axis rather than matplotlib's ±0.05
        return h
    return None


def _draw_p_r(a: Axes, r: Run, color: str, show_p: bool, show_r: bool) -> None:
    """Precision dashed, recall dotted, when asked for."""
    for shown, values, style, lw, alpha in (
        (show_p, r.p, "--", 1, 0.8),
        (show_r, r.r, ":", 1.2, 0.9),
    ):
        if shown:
            pts = [(st, v) for st, v in zip(r.steps, values) if v is not None]
            if pts:
                a.plot(*zip(*pts), style, color=color, lw=lw, alpha=alpha)


def _draw_baseline(a: Axes, baseline: float) -> None:
    a.axhline(baseline, color="#555555", lw=1, ls="-.", alpha=0.7)
    a.annotate(
        f"tagger baseline {baseline:.2f}",
        (0, baseline),
        xycoords=("axes fraction", "data"),
        xytext=(4, 3),
        textcoords="offset points",
        fontsize=8,
        color="#555555",
    )


def _set_ylim(first: Axes, drawn: list[Run], show_p: bool, show_r: bool, show_base: bool) -> None:
    """The shared dev-F axis spans every value drawn, with a margin."""
    ys = [v for r in drawn for v in r.f if v is not None]
    if show_p:
        ys += [v for r in drawn for v in r.p if v is not None]
    if show_r:
        ys += [v for r in drawn for v in r.r if v is not None]
    if show_base:
        ys += [r.baseline for r in drawn if r.baseline is not None]
    if ys:
        lo, hi = min(ys), max(ys)
        pad = max(1.0, 0.08 * (hi - lo))
        first.set_ylim(lo - pad, hi + pad)  # shared by every plot


def _legend(ax: Axes, handles: list, plot_pt: float) -> None:
    """Inside where it fits; below the plot (outside: the constrained layout makes room) when
    its lines would cover much of a short plot, as on a projector at scale 2."""
    lines = sum(line.get_label().count("\n") + 1 for line in handles)
    if lines * 13 + 12 > 0.25 * plot_pt:
        # under the tick labels and the axis label (the pad is in font sizes: 4.6 × 8 pt)
        ax.legend(
            handles=handles,
            loc="upper center",
            bbox_to_anchor=(0.5, 0),
            fontsize=8,
            framealpha=0.85,
            borderaxespad=4.6,
        )
    else:
        ax.legend(handles=handles, loc="best", fontsize=8, framealpha=0.85)


def draw_runs(fig: Figure, runs: list[Run], show_p: bool, show_r: bool, show_base: bool) -> dict:
    """Draw every run on ``fig``: one plot per unit (boosting rounds, perceptron epochs), side by
    side (stacked when the figure is taller than wide), each with its own x axis labelled with
    its unit. Returns ``{unit: axes}``."""
    layout = _Layout(fig, units_of(runs))
    axes = _make_axes(fig, runs, layout, show_p, show_r)
    handles: dict[str, list] = {u: [] for u in axes}
    bases: dict[str, set] = {u: set() for u in axes}
    for k, r in enumerate(runs):
        a = axes.get(r.unit)
        if a is None:  # a finished run without points: nothing to draw
            continue
        color = COLORS[k % len(COLORS)]
        h = _draw_f(a, r, color, runs, layout)
        if h is not None:
            handles[r.unit].append(h)
        _draw_p_r(a, r, color, show_p, show_r)
        if show_base and r.baseline is not None and round(r.baseline, 6) not in bases[r.unit]:
            bases[r.unit].add(round(r.baseline, 6))
            _draw_baseline(a, r.baseline)
    first = next(iter(axes.values()))  # one plot at least: units or [""]
    _set_ylim(first, [r for r in runs if r.unit in axes], show_p, show_r, show_base)
    for unit, ax in axes.items():
        if handles[unit]:
            _legend(ax, handles[unit], layout.plot_pt)
    if not any(handles.values()):
        first.text(
            0.5,
            0.5,
            "Train a reranker to see its dev-set curve here",
            ha="center",
            va="center",
            transform=first.transAxes,
            color="#777777",
        )
    return axes
