"""Training: reranker runs and K&T sequence-tagger runs, their curves, installing their results,
opening and saving sequence taggers, cancelling, and the state line of the window.

A run takes a snapshot of what it learns from — the attached N-best list with the corpus's gold
of that moment (:meth:`~nerstudio.app.document.Document.nbest_snapshot`), or the corpus file
when nothing is unsaved — and runs as a work job (its reranker stage in a child process). Its
results go into the document (``install_model``, ``install_scores``, ``attach_nbest``,
``record_run``); candidates computed during the run are counted again for edits made meanwhile.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from ...app.document import Change, ChangeKind, Run
from ...errors import NerstudioError
from ...learners import RERANKERS
from ...runs.describe import describe_model, kt_kind, tags_note
from ...runs.kazama import open_kt_model, run_kt_training
from ...runs.training import dev_baseline, run_training
from ..dialogs import MODEL_FILTER
from ..workers import job_of, release_in_background
from . import Context

if TYPE_CHECKING:  # built on first use, with its module
    from ..views.training_panel import TrainingPanel


def sibling_dev(path: str | None) -> str:
    """A development file next to a training file (dev.conll, eng.testa, …), or ''."""
    if not path:
        return ""
    p = Path(path).resolve()
    names = [
        "dev" + p.suffix,
        "dev.conll",
        p.stem.replace("train", "dev") + p.suffix,
        "eng.testa",
        "testa",
        p.stem + ".testa",
        p.stem + ".dev",
    ]
    for n in names:
        q = p.with_name(n)
        if q != p and q.is_file():
            return str(q)
    return ""


class TrainingController(QObject):
    busyChanged = Signal(bool)

    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self._executor: tuple[str, object] | None = (
            None  # (setting, executor) of the jackknife's folds
        )
        # the reranker stage of a training run goes to a child process (its own interpreter lock)
        self.train_in_child = os.environ.get("NERSTUDIO_TRAIN_IN_PROCESS", "") in ("", "0")
        self.child_pid: int | None = None
        self.run_curve: int | None = None
        self.last_error = ""
        self.last_run_timings: dict = {}
        self.last_install_ms = 0.0
        self._rev = 0
        self._curve_corpus: dict[
            int, tuple
        ] = {}  # id(curve) -> (curve, corpus path it was trained on)
        # what the training panel says of the latest job while it is not built yet (first used:
        # another page is shown): said to it, in order, once it is (_wire)
        self._job_calls: list[tuple[str, Callable[[TrainingPanel], object]]] = []
        views.when_built("training_panel", self._wire)  # built on first use
        j = ctx.jobs
        j.started.connect(self._on_started)
        j.progress.connect(self._on_progress)
        j.stats.connect(self._on_stats)
        j.finished.connect(lambda _name: self._tell_panel(lambda p: p.finish("done")))
        j.failed.connect(self._on_failed)
        j.cancelled.connect(self._on_cancelled)
        j.idle.connect(self._on_idle)
        ctx.events.changed.connect(self._on_change)

    def _wire(self, panel) -> None:
        panel.trainRequested.connect(self.start_training)
        panel.cancelRequested.connect(self.cancel_job)
        calls, self._job_calls = self._job_calls, []
        for _kind, call in calls:  # what it would have said of the latest job
            call(panel)
        if self.ctx.jobs.busy:  # built while a job runs
            panel.set_running(True)
        self.update_state()

    def _tell_panel(self, call: Callable[[TrainingPanel], object], kind: str = "") -> None:
        """Show a job's state in the training panel: now if it is built, else once it is (a
        new job's ``started`` drops the previous job's calls; a ``progress`` replaces the
        previous one): the jobs of the start-up do not build it."""
        panel = self.v.built("training_panel")
        if panel is not None:
            call(panel)
            return
        if kind == "started":
            self._job_calls.clear()
        elif kind == "progress" and self._job_calls and self._job_calls[-1][0] == "progress":
            self._job_calls.pop()
        self._job_calls.append((kind, call))

    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            corpus = self.doc.corpus
            sibling = sibling_dev(corpus.path if corpus else None)

            def dev_beside(panel) -> None:
                if not panel.dev_path.text():
                    panel.dev_path.setText(sibling)

            self.v.when_built("training_panel", dev_beside)  # not built for it
        elif ch.kind is ChangeKind.DEV and self.doc.dev_nbest_path:
            path = self.doc.dev_nbest_path

            def dev_list(panel) -> None:
                if panel.dev_path.text() == "" or not panel.running:
                    panel.dev_path.setText(path)

            self.v.when_built("training_panel", dev_list)
        if ch.kind is ChangeKind.CORPUS:
            self._follow_runs()
        if ch.kind is not ChangeKind.GOLD:
            self.update_state()

    # -- reranker runs --------------------------------------------------------------------
    def train_from_menu(self) -> None:
        self.v.training_dock.show()
        self.v.training_dock.raise_()
        self.v.training_panel.request_training()

    @Slot(object)
    def start_training(self, settings) -> bool:
        jobs, doc, plot = self.ctx.jobs, self.doc, self.v.curve_plot
        if jobs.busy:
            self.ctx.status(f"Busy ({jobs.name}): one run at a time", 4000)
            return False
        if settings.start == "kt":
            return self._start_kt(settings)
        rerank = settings.start == "reranker"
        if rerank and doc.nbest is None:
            self.ctx.dialogs.info(
                "No N-best list",
                "Open the N-best list of the training corpus (File ▸ Open N-best "
                "list…) or choose the full pipeline.",
            )
            return False
        # what its curve counts (an unknown name fails with its own message when the run starts)
        row = RERANKERS.get(settings.algo)
        unit = row.unit if row is not None else "epoch"
        base = (
            dev_baseline(doc.dev_nbest)
            if (rerank and not settings.dev_path and doc.dev_nbest is not None)
            else None
        )
        self.run_curve = self._start_curve(settings.label(), unit, base)
        dev_nb = doc.dev_nbest if rerank else None
        if (
            settings.dev_path
            and doc.dev_nbest_path
            and rerank
            and os.path.abspath(settings.dev_path) == os.path.abspath(doc.dev_nbest_path)
        ):
            settings = type(settings)(**{**settings.__dict__, "dev_path": ""})  # already loaded
        # lists read from files and unchanged since: the training process reads those files
        files = (
            doc.nbest_source() if rerank else None,
            doc.dev_nbest_source() if dev_nb is not None else None,
        )
        self._rev = doc.revision
        executor = None if rerank else self.fold_executor()
        job = job_of(
            run_training,
            settings,
            self.run_curve,
            doc.corpus,
            doc.nbest_snapshot() if rerank else None,
            dev_nb,
            doc.tagger,
            in_child=self.train_in_child,
            files=files,
            revision=self._rev,
            executor=executor,
        )
        self.v.tabs.setCurrentWidget(plot)
        return jobs.run(
            "train",
            job,
            self._install_training,
            self._on_partial,
            self._finish_curve("failed"),
            self._finish_curve("cancelled"),
        )

    # -- runs and the corpus they were trained on ----------------------------------------
    def _corpus_name(self) -> tuple[str, str]:
        c = self.doc.corpus
        path = os.path.abspath(c.path) if c is not None and c.path else ""
        return path, os.path.basename(path) if path else "unsaved corpus"

    def _start_curve(self, label: str, unit: str, base) -> int:
        """A new curve in the plot, named in the legend with the corpus it trains on."""
        plot = self.v.curve_plot
        path, name = self._corpus_name()
        run = plot.start_run(label, unit, base, corpus=name)
        self._curve_corpus[id(plot.runs[run])] = (plot.runs[run], path)
        return run

    def _record(self, res) -> None:
        path, name = self._corpus_name()
        self.doc.record_run(
            Run(res.settings, res.run_id, res.seconds, dict(res.timings), path, name)
        )

    def _follow_runs(self) -> None:
        """Another corpus is open: the curves of runs the document kept are marked as from
        another corpus, those it dropped (the user chose not to keep them) leave the plot."""
        plot = self.v.curve_plot
        kept = {r.corpus_path: r for r in self.doc.runs}
        here, _ = self._corpus_name()
        drop = []
        for key, (curve, path) in list(self._curve_corpus.items()):
            if all(r is not curve for r in plot.runs):
                del self._curve_corpus[key]
            elif path == here:
                _mark_curve(curve, os.path.basename(path), False)
            elif path in kept and kept[path].other_corpus:
                _mark_curve(curve, kept[path].corpus_name, True)
            elif curve.state != "running":
                drop.append(curve)
                del self._curve_corpus[key]
        if drop:
            plot.runs = [r for r in plot.runs if all(r is not d for d in drop)]
            plot.redraw()
        else:
            plot.schedule()

    def _finish_curve(self, how: str):
        def finish(*_args):
            if self.run_curve is not None:
                self.v.curve_plot.finish_run(self.run_curve, how)

        return finish

    def _on_partial(self, key: str, value) -> None:
        doc = self.doc
        if key == "tagger":
            doc.install_tagger(value, None)
        elif key == "nbest":
            old = [doc.scored, doc.nbest_index]
            doc.attach_nbest(value)
            release_in_background(old)
        elif key == "dev_nbest" and value is not doc.dev_nbest:  # a dev list new in this run
            doc.set_dev_nbest(value)
        elif key == "child":  # the reranker trains in this process
            self.child_pid = value
        elif key == "baseline" and self.run_curve is not None:
            self.v.curve_plot.runs[self.run_curve].baseline = value
            self.v.curve_plot.schedule()

    def _install_training(self, res) -> None:
        t0 = time.perf_counter()
        self._finish_curve("done")()
        self.last_run_timings = dict(res.timings)
        doc, plot = self.doc, self.v.curve_plot
        old = [doc.model, doc.scored]  # freed in another thread, see release_in_background
        if res.model is not None:
            doc.install_model(res.model, None)
        if res.scored is not None:
            doc.install_scores(res.scored, self._rev)
        if (
            res.dev_nbest is not None and res.dev_nbest is not doc.dev_nbest
        ):  # a dev list new in this run
            doc.set_dev_nbest(res.dev_nbest)
        run = plot.runs[res.run_id] if res.run_id < len(plot.runs) else None
        best = run.best() if run else None
        msg = f"Done in {res.seconds:.1f}s"
        if run is not None and best is not None:
            msg += f": best dev F {run.f[best]:.2f} at {run.unit} {int(run.steps[best])}"
            b = res.baseline if res.baseline is not None else run.baseline
            if b is not None:
                msg += f" (tagger baseline {b:.2f})"
        msg += "".join(f". Note: {n}" for n in res.notes)
        self._record(res)
        res.model = res.scored = None
        self._installed(msg, old)
        self.last_install_ms = (time.perf_counter() - t0) * 1000

    def _installed(self, msg: str, old: list) -> None:
        self._tell_panel(lambda p: p.set_message(msg))
        self.ctx.status(msg, 10000)
        release_in_background(old)

    # -- K&T sequence taggers -------------------------------------------------------------
    def _corpus_source(self) -> str | None:
        """The corpus file, if it holds exactly what the window shows (no unsaved edits)."""
        c = self.doc.corpus
        if c is None or not c.path or not os.path.isfile(c.path) or self.doc.is_dirty():
            return None
        return c.path

    def _start_kt(self, settings) -> bool:
        c = self.doc.corpus
        if c is None or not len(c):
            self.ctx.dialogs.info("No corpus", "Open the training corpus first.")
            return False
        note = ""
        if not settings.dev_path or settings.dev_path.lower().endswith(".npz"):
            # a dev N-best list cannot score a tagger: the corpus's sibling dev corpus, if any
            dev = sibling_dev(c.path)
            if dev and os.path.isfile(dev) and not dev.lower().endswith(".npz"):
                settings = type(settings)(**{**settings.__dict__, "dev_path": dev})
            else:
                note = " (no dev corpus: no curve; give one in the training panel)"
        self.run_curve = self._start_curve(settings.label(), "epoch", None)
        self._rev = self.doc.revision
        job = job_of(
            run_kt_training,
            settings,
            self.run_curve,
            c,
            self._corpus_source(),
            in_child=self.train_in_child,
            revision=self._rev,
        )
        self.v.tabs.setCurrentWidget(self.v.curve_plot)

        def done(res):
            self._finish_curve("done")()
            self._install_kt(res)

        ok = self.ctx.jobs.run(
            "train",
            job,
            done,
            self._on_partial,
            self._finish_curve("failed"),
            self._finish_curve("cancelled"),
        )
        if ok and note:
            self.ctx.status("Training a sequence tagger" + note, 8000)
        return ok

    def load_kt_model(self, path: str, n: int | None = None) -> bool:
        """Open a perceptron / joint tagger and show the open corpus's candidates under it
        (``n`` per document; default: the model's n', 20 for a perceptron tagger)."""
        if self.doc.corpus is None:
            self.ctx.dialogs.info(
                "No corpus", "Open a corpus first: the tagger's candidates are shown for it."
            )
            return False
        if self.ctx.jobs.busy:
            self.ctx.dialogs.info(
                "Busy",
                f"A job is running ({self.ctx.jobs.name}). Wait for it or cancel it "
                "(Shift+F5) first.",
            )
            return False
        self.run_curve = None
        job = job_of(
            open_kt_model,
            path,
            self.doc.corpus,
            self._corpus_source(),
            int(n) if n else None,
            revision=self.doc.revision,
        )
        return self.ctx.jobs.run("kt", job, self._install_kt, self._on_partial)

    def _install_kt(self, res) -> None:
        """A K&T tagger (trained or opened) and the open corpus's candidates under it."""
        t0 = time.perf_counter()
        self.last_run_timings = dict(res.timings)
        doc, plot = self.doc, self.v.curve_plot
        old = [doc.scored, doc.nbest_index, doc.kt, doc.kt_model]
        doc.install_kt_model(res.model, res.path)
        doc.attach_nbest(res.nbest_index, kt=res.kt)
        name = f"{kt_kind(res.model)} tagger"
        if 0 <= res.run_id < len(plot.runs):
            run = plot.runs[res.run_id]
            best = run.best()
            msg = f"{name} trained in {res.seconds:.1f}s"
            if best is not None:
                msg += f": best dev F {run.f[best]:.2f} at epoch {int(run.steps[best])}"
            self._record(res)
        else:
            msg = f"{name} opened: candidates of the corpus in {res.seconds:.1f}s"
            hist = getattr(res.model, "history_", None)
            if hist:
                from ...runtime.tagger_process import epoch_point

                pts = [p for p in (epoch_point(h) for h in hist) if p is not None]
                if pts:
                    run = plot.start_run(
                        f"{kt_kind(res.model)} [{os.path.basename(res.path or '')}]"
                    )
                    plot.add_points(run, pts)
                    plot.finish_run(run)
        msg += " — its candidates are in the N-best panel"
        res.model = res.nbest_index = res.kt = None
        self._installed(msg, old)
        self.last_install_ms = (time.perf_counter() - t0) * 1000

    def open_kt_dialog(self) -> None:
        path = self.ctx.dialogs.ask_open("Open sequence tagger", MODEL_FILTER, "model")
        if path:
            self.load_kt_model(path)

    def save_kt_dialog(self) -> None:
        m = self.doc.kt_model
        if m is None:
            self.ctx.status("No sequence tagger to save", 4000)
            return
        path = self.ctx.dialogs.ask_save(
            "Save sequence tagger", f"{kt_kind(m)}-tagger.npz", MODEL_FILTER
        )
        if path:
            try:
                m.save(path)
            except (OSError, NerstudioError) as exc:
                self.ctx.dialogs.critical("Cannot save", str(exc))
                return
            except Exception as exc:  # a bug, said so
                self.ctx.dialogs.internal_error("Saving the sequence tagger", exc)
                return
            self.doc.model_saved(path, "kt_model")
            self.ctx.status(f"Saved {path}", 5000)

    # -- where the folds run ----------------------------------------------------------------
    EXECUTOR_KEY = "experiments/executor"

    def executor_setting(self) -> str:
        return str(self.ctx.settings.value(self.EXECUTOR_KEY, "local") or "local")

    def fold_executor(self):
        """The executor the "Folds run on" setting names (None: this worker thread). One object per
        setting value, reused across runs (a Dask cluster connects on its first run)."""
        text = self.executor_setting()
        if self._executor is not None and self._executor[0] == text:
            return self._executor[1]
        self.close_executor()
        from ...runtime.dask_executor import executor_from_setting

        try:
            ex = executor_from_setting(text)
        except Exception as exc:
            self.ctx.status(f"Folds run here: the setting {text!r} cannot be used ({exc})", 8000)
            return None
        from ...runtime.folds import ProcessExecutor

        if isinstance(ex, ProcessExecutor):  # never fork a process that runs Qt threads
            ex = ProcessExecutor(ex.workers, start_method="spawn")
        self._executor = (text, ex)
        return ex

    def close_executor(self) -> None:
        if self._executor is not None and hasattr(self._executor[1], "close"):
            self._executor[1].close()
        self._executor = None

    def choose_executor(self) -> bool:
        """Train ▸ Folds run on…: where the full pipeline's jackknife folds run."""
        from ...errors import NerstudioError
        from ...runtime.dask_executor import SETTINGS_HELP, executor_from_setting

        text = self.ctx.dialogs.ask_text(
            "Folds run on",
            f"Where the jackknife's folds run ({SETTINGS_HELP}).\n"
            "local: in the window's worker, one fold after the other; dask-local:N: N worker processes of a "
            "local Dask cluster; dask://HOST:PORT: a running Dask scheduler (the corpus must be saved, and "
            "its file visible to the workers or sent to them).",
            self.executor_setting(),
        )
        if text is None:
            return False
        text = text.strip() or "local"
        try:
            ex = executor_from_setting(text)  # checks the text; connects nothing
        except NerstudioError as exc:  # a SettingsError naming what is wrong
            self.ctx.dialogs.warning("Folds run on", str(exc))
            return False
        if hasattr(ex, "close"):
            ex.close()
        self.ctx.settings.setValue(self.EXECUTOR_KEY, text)
        self.close_executor()
        self.ctx.status(f"The jackknife's folds now run on: {text}", 6000)
        return True

    # -- the job service's reports --------------------------------------------------------
    @Slot()
    def cancel_job(self) -> None:
        if self.ctx.jobs.busy:
            self.ctx.jobs.cancel()
            self._tell_panel(lambda p: p.set_message("Cancelling…"))
            self.ctx.status("Cancelling…", 3000)

    @Slot(str)
    def _on_started(self, name: str) -> None:
        import gc

        # Everything the window holds now lives for long: out of the collector's sight, so a
        # full collection triggered by the worker does not hold the interpreter lock for 100+ ms
        gc.freeze()
        message = {
            "train": "Training…",
            "model": "Opening the reranker…",
            "tagger": "Opening the tagger…",
            "kt": "Opening the sequence tagger…",
            "open": "Opening the corpus…",
            "preannotate": "Pre-annotating…",
        }.get(name, "Preparing the N-best list…")

        def started(panel) -> None:
            panel.set_running(True)
            panel.set_message(message)

        self._tell_panel(started, "started")
        self.busyChanged.emit(True)
        self.update_state()

    @Slot(str, int, int)
    def _on_progress(self, message: str, done: int, total: int) -> None:
        self._tell_panel(lambda p: p.show_progress(message, done, total), "progress")
        if message:
            self.ctx.status(message, 2000)

    @Slot(list)
    def _on_stats(self, batch: list) -> None:
        if self.run_curve is not None and self.ctx.jobs.name == "train":
            self.v.curve_plot.add_points(self.run_curve, batch)

    @Slot(str, str, str)
    def _on_failed(self, name: str, message: str, tb: str) -> None:
        what = {
            "train": "Training",
            "model": "Opening the reranker",
            "tagger": "Opening the tagger",
            "kt": "Opening the sequence tagger",
        }.get(name, name.capitalize())
        self._tell_panel(lambda p: _ended(p, "failed", f"Failed: {message}"))
        self.ctx.status(f"{what} failed: {message}", 30000)
        self.last_error = message
        if not tb:  # a clear message (bad input, a failed or killed child process): no dialog
            return
        if os.environ.get("NERSTUDIO_DEBUG"):
            print(tb)
        self.ctx.dialogs.bug(f"{name}: {message}", tb)

    @Slot(str, str)
    def _on_cancelled(self, name: str, _message: str) -> None:
        self._tell_panel(lambda p: _ended(p, "cancelled", "Cancelled"))
        self.ctx.status(f"{_JOB_NAMES.get(name, name)} cancelled", 5000)

    @Slot()
    def _on_idle(self) -> None:
        self._tell_panel(lambda p: p.set_running(False))
        self.busyChanged.emit(False)
        self.update_state()

    # -- state display --------------------------------------------------------------------
    def update_state(self) -> None:
        doc = self.doc
        parts, html = [], []
        ix = doc.nbest_index
        if ix is not None:
            name = os.path.basename(doc.nbest_path) if doc.nbest_path else "from this session"
            parts.append(f"N-best: {name} ({ix.matched:,}/{len(ix.row_of):,})")
            html.append(
                f"<b>N-best</b>: {name}, {len(ix.nbest):,} sentences, {ix.matched:,} matched"
            )
        else:
            html.append("<b>N-best</b>: none")
        if doc.dev_nbest is not None:
            name = (
                os.path.basename(doc.dev_nbest_path) if doc.dev_nbest_path else "from this session"
            )
            html.append(f"<b>Dev N-best</b>: {name}, {len(doc.dev_nbest):,} sentences")
        if doc.tagger is not None:
            html.append(
                f"<b>Tagger</b>: {os.path.basename(doc.tagger_path) if doc.tagger_path else 'trained now'} "
                f"({getattr(doc.tagger, 'task', '?')}/{getattr(doc.tagger, 'features', '?')}"
                + tags_note(doc.tagger)
                + ")"
            )
        if doc.kt_model is not None:
            where = os.path.basename(doc.kt_model_path) if doc.kt_model_path else "trained now"
            html.append(
                f"<b>Sequence tagger</b>: {kt_kind(doc.kt_model)} ({where}{tags_note(doc.kt_model)})"
                + (" — its candidates are shown" if doc.kt is not None else "")
            )
            if doc.kt is not None:
                parts.append(f"candidates: {kt_kind(doc.kt_model)} tagger")
        if doc.model is not None:
            desc = describe_model(doc.model)
            parts.append(f"reranker: {desc}")
            html.append(f"<b>Reranker</b>: {desc}")
        else:
            html.append("<b>Reranker</b>: none")
        if doc.scored is not None and doc.nbest is not None and doc.nbest.gold is not None:
            try:
                d = doc.scored_data()
                _, _, fb = d.prf(np.zeros(len(d), dtype=np.int64))
                _, _, fr = d.prf(doc.scored.choice)
                html.append(f"On this list: top candidate F {fb:.2f} → reranked F {fr:.2f}")
                parts.append(f"F {fb:.2f} → {fr:.2f}")
            except (ValueError, AttributeError):
                pass
        if self.ctx.jobs.busy:
            parts.append(f"running: {self.ctx.jobs.name}")
        self.v.state_label.setText(" · ".join(parts))
        panel = self.v.built("training_panel")  # else set when it is built (_wire)
        if panel is not None:
            panel.set_state_text("<br>".join(html))


OTHER_CORPUS = " (another corpus)"
_JOB_NAMES = {
    "train": "Training",
    "open": "Opening the corpus",
    "model": "Opening the reranker",
    "tagger": "Opening the tagger",
    "kt": "Opening the sequence tagger",
    "prepare": "Preparing the N-best list",
    "preannotate": "Pre-annotation",
}


def _ended(panel: TrainingPanel, how: str, message: str) -> None:
    panel.finish(how)
    panel.set_message(message)


def _mark_curve(curve, name: str, other: bool) -> None:
    """Name a curve's corpus in the legend, marked when it is not the open one."""
    curve.corpus = name + (OTHER_CORPUS if other else "")
