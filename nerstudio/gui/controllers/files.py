"""Files: opening corpora, N-best lists, rerankers, taggers and saved results; saving them; the
recent-files menu; the bundled demo.

Whatever is read goes into the document (:meth:`~nerstudio.app.document.Document.open`,
:meth:`~nerstudio.app.document.Document.attach_nbest`, ``install_model`` …). Lining an N-best list
up with the corpus and scoring it run as work jobs: the list is counted against the corpus's
gold at the revision the job started from, and the document counts the edits made meanwhile.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from ...app.attachments import FileStamp, prepare
from ...app.reading import CorpusRead, read_corpus_file
from ...errors import FormatError, NerstudioError
from ...nbest import NBestList
from ...runs.describe import describe_model
from ...runs.training import dev_baseline
from ..dialogs import CORPUS_FILTER, MODEL_FILTER, NBEST_FILTER
from ..painted import after_next_paint
from ..workers import job_of, release_in_background
from . import Context

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMenu

    from ...app.first_screen import DemoStart

MAX_RECENT = 8
RECENT_WIDTH_PX = 520  # a longer path is elided in the middle (its file name stays visible)
SESSION_FILE = "session.json"


def companion_nbest(path: str | None) -> str | None:
    """An N-best list saved for this corpus: ``<stem>.nbest.npz`` beside it or in ``model/``."""
    if not path:
        return None
    p = Path(path)
    for q in (p.with_name(p.stem + ".nbest.npz"), p.parent / "model" / (p.stem + ".nbest.npz")):
        if q.is_file():
            return str(q)
    return None


class FilesController(QObject):
    corpusOpened = Signal()
    ktModelRequested = Signal(str, int)  # a results folder names a sequence tagger (path, n or 0)

    def __init__(self, ctx: Context, views, confirm_close, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self.confirm_close = confirm_close  # () -> bool: may the open corpus be closed?
        self.recent_menu: QMenu | None = None
        self._rescore_rev = 0

    def _busy(self) -> bool:
        if self.ctx.jobs.busy:
            self.ctx.dialogs.info(
                "Busy",
                f"A job is running ({self.ctx.jobs.name}). Wait for it or cancel it "
                "(Shift+F5) first.",
            )
            return True
        return False

    # -- corpus ---------------------------------------------------------------------------
    def _opener(self, path: str) -> Callable[[], object]:
        """Open Recent's action for ``path``."""
        return lambda: self.open_corpus(path)

    def open_corpus(
        self,
        path: str,
        attach: bool = True,
        encoding: str | None = None,
        then: Callable[[bool], None] | None = None,
    ) -> bool:
        """Read ``path`` in the worker (progress in the status bar and the training panel,
        cancellable with Shift+F5) and open it in the document: the window keeps responding.
        ``then(ok)`` is called once it is open (or could not be). False: nothing started."""
        if not self.confirm_close():
            return False
        if self.ctx.jobs.busy:
            self.ctx.status("A job is running: cancel it before opening another corpus", 5000)
            return False

        def done(res: CorpusRead) -> None:
            ok = self._opened(res, attach)
            if then is not None:
                then(ok)

        def over(*_args) -> None:  # failed (a bug: the job service reports it) or cancelled
            if then is not None:
                then(False)

        return self.ctx.jobs.run(
            "open",
            job_of(read_corpus_file, path, encoding),
            done,
            on_failed=over,
            on_cancelled=over,
        )

    def load_corpus(self, path: str, attach: bool = True, encoding: str | None = None) -> bool:
        """Open ``path`` and wait until it is open (scripts, tests, the demo); the window keeps
        processing events meanwhile. True when the corpus is open."""
        result: list[bool] = []
        if not self.open_corpus(path, attach, encoding, then=result.append):
            return False
        while not result and self.ctx.jobs.busy:
            self.ctx.jobs.wait(1000)
        return bool(result and result[0])

    def _opened(self, res: CorpusRead, attach: bool) -> bool:
        if res.corpus is None:
            if res.decoding:
                enc = self.ctx.dialogs.ask_reopen_encoding(res.path, res.error)
                if enc:  # read again, after this job's callbacks are over
                    QTimer.singleShot(0, lambda: self.open_corpus(res.path, attach, enc))
            else:
                self.ctx.dialogs.critical("Cannot open corpus", res.error)
            return False
        corpus = res.corpus
        self.set_corpus(corpus, res.type_masks, res.disk)
        res.corpus = res.type_masks = None
        gc.freeze()  # long-lived: keep full collections short
        self.add_recent(corpus.path or res.path)
        if attach:
            comp = companion_nbest(corpus.path or res.path)
            if comp:
                self.load_nbest(comp)
        return True

    def set_corpus(self, corpus, type_masks: dict | None = None, disk=None) -> None:
        self.ctx.jobs.cancel_view()
        doc = self.doc
        other = doc.runs_from_other_corpora(corpus.path)
        keep = True
        if other:
            names = sorted({r.corpus_name or "an unnamed corpus" for r in other})
            keep = self.ctx.dialogs.ask_keep_runs(
                len(other), ", ".join(names), os.path.basename(corpus.path or "") or "this corpus"
            )
        doc.open(corpus, keep_runs=keep, type_masks=type_masks, disk=disk)
        note = f"; {corpus.repairs} invalid tag transitions repaired" if corpus.repairs else ""
        note += "".join(f"; {n}" for n in corpus.notes)  # what another tool's format could not give
        self.ctx.status(
            f"Loaded {corpus.path}: {len(corpus.documents)} documents, {len(corpus)} sentences, "
            f"{corpus.n_tokens} tokens{note}",
            10000,
        )
        self.corpusOpened.emit()

    # -- N-best lists and models ----------------------------------------------------------
    def load_nbest(self, path: str) -> bool:
        if self.doc.corpus is None:
            self.ctx.dialogs.info("No corpus", "Open the corpus the N-best list belongs to first.")
            return False
        if self._busy():
            return False
        stamp = FileStamp.of(path)
        try:
            nb = NBestList.load(path)
        except (NerstudioError, OSError) as exc:  # a bad file is a FormatError; the rest are bugs
            self.ctx.dialogs.critical("Cannot open N-best list", str(exc))
            return False
        return self.attach_nbest(nb, path, stamp)

    def attach_nbest(
        self, nb: NBestList, path: str | None = None, stamp: FileStamp | None = None
    ) -> bool:
        if self.doc.corpus is None:
            self.ctx.dialogs.critical("Cannot open N-best list", "Open a corpus first")
            return False
        job = job_of(prepare, self.doc.corpus, nb, self.doc.model, revision=self.doc.revision)
        return self.ctx.jobs.run(
            "prepare", job, lambda res: self._install_prepared(res, path, stamp)
        )

    def _install_prepared(self, res, path, stamp: FileStamp | None = None) -> None:
        ix, scored = res
        res = None
        old = [self.doc.scored, self.doc.nbest_index]  # freed in another thread
        if ix is not None:
            self.doc.attach_nbest(ix, path, stamp, scored=scored)
            missing = len(ix.row_of) - ix.matched
            msg = f"N-best list {os.path.basename(path or 'new')}: {ix.matched:,} of {len(ix.row_of):,} sentences"
            if missing:
                msg += f" ({missing:,} without candidates)"
            if ix.differ:
                msg += (
                    f"; the gold of {ix.differ:,} sentence(s) in the list differed from the corpus: its "
                    "candidates are scored against the corpus"
                )
            self.ctx.status(msg, 15000)
        elif scored is not None:
            self.doc.install_scores(scored, self._rescore_rev)
        ix = scored = None
        release_in_background(old)

    def load_model(self, path: str) -> bool:
        """Open a reranker (read in the worker: a large feature index takes a while) and score
        the attached N-best list with it."""
        if self._busy():
            return False

        def job(ctx):
            from ...rerank.model import RerankerModel

            ctx.progress(f"reading the reranker {os.path.basename(path)}…")
            try:
                return RerankerModel.load(path)
            except OSError as exc:  # a damaged file is already a FormatError naming it
                raise FormatError(path, None, str(exc)) from None

        def failed(message, tb):
            if not tb:  # the user just chose this file: say why it cannot be used
                self.ctx.dialogs.critical("Cannot open reranker", message)

        return self.ctx.jobs.run(
            "model", job, lambda model: self._install_model(model, path), on_failed=failed
        )

    def _install_model(self, model, path: str | None) -> None:
        old = [self.doc.model]
        self.doc.install_model(model, path)
        model = None
        release_in_background(old)
        model = self.doc.model
        self.show_history(model, path)
        self.rescore()

    def rescore(self) -> bool:
        """Score the attached N-best list with the document's reranker (in the worker)."""
        doc = self.doc
        if doc.model is None or doc.nbest is None or doc.corpus is None:
            return True
        self._rescore_rev = doc.revision
        job = job_of(prepare, doc.corpus, None, doc.model, doc.nbest)
        return self.ctx.jobs.run(
            "prepare", job, lambda res: self._install_prepared(res, doc.nbest_path)
        )

    def show_history(self, model, path: str | None) -> None:
        """Show a loaded model's training curve (the model file keeps its history)."""
        learner = getattr(model, "learner", None)
        hist = getattr(learner, "history_", None) or getattr(model, "history_", None)
        if not hist:
            return
        unit = (
            getattr(hist[0], "unit", None)
            or (hist[0].get("unit") if isinstance(hist[0], dict) else None)
            or "epoch"
        )
        base = dev_baseline(self.doc.dev_nbest) if self.doc.dev_nbest is not None else None
        plot = self.v.curve_plot
        run = plot.start_run(
            f"{describe_model(model)} [{os.path.basename(path or '')}]", unit, base
        )
        plot.add_points(run, hist)
        plot.finish_run(run)

    def _read_model(self, path: str, quiet: bool = False) -> None:
        try:
            from ...rerank.model import RerankerModel

            model = RerankerModel.load(path)
        except (ImportError, NerstudioError, OSError) as exc:
            if quiet:
                self.ctx.status(f"reranker not loaded: {exc}", 8000)
            else:
                self.ctx.dialogs.warning("Cannot open reranker", str(exc))
            return
        self.doc.install_model(model, path)
        self.show_history(model, path)

    def load_tagger(self, path: str) -> bool:
        from ...tagging.maxent import MaxEntTagger

        try:
            tagger = MaxEntTagger.load(path)
        except (NerstudioError, OSError) as exc:
            self.ctx.dialogs.critical("Cannot open tagger", str(exc))
            return False
        self.doc.install_tagger(tagger, path)
        return True

    def load_dev_nbest(self, path: str) -> bool:
        stamp = FileStamp.of(path)
        try:
            nb = NBestList.load(path)
        except (NerstudioError, OSError) as exc:  # a bad file is a FormatError; the rest are bugs
            self.ctx.dialogs.critical("Cannot open N-best list", str(exc))
            return False
        self.doc.set_dev_nbest(nb, path, stamp)
        return True

    # -- results folders ------------------------------------------------------------------
    def load_results(self, folder: str) -> bool:
        """Resume a session saved with :meth:`save_results` (plain files listed in session.json)."""
        f = Path(folder)
        try:
            info = json.loads((f / SESSION_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            self.ctx.dialogs.critical("Cannot open results", f"{f / SESSION_FILE}: {exc}")
            return False
        if self._busy():
            return False
        corpus = info.get("corpus")
        c = self.doc.corpus
        other = corpus and (c is None or os.path.abspath(c.path or "") != os.path.abspath(corpus))
        if other and (not os.path.isfile(corpus) or not self.load_corpus(corpus, attach=False)):
            return False
        if info.get("tagger"):
            self.load_tagger(str(f / info["tagger"]))
        if info.get("dev_nbest"):
            self.load_dev_nbest(str(f / info["dev_nbest"]))
        if info.get("model"):
            self._read_model(str(f / info["model"]))
        if info.get("kt_model") and (info.get("nbest_from_kt") or not info.get("nbest")):
            # the shown candidates were the tagger's: decode again (their non-local features need it)
            self.ktModelRequested.emit(str(f / info["kt_model"]), int(info.get("kt_n") or 0))
            return True
        if info.get("nbest"):
            return self.load_nbest(str(f / info["nbest"]))
        return self.rescore()

    def save_results(self, folder: str) -> list[str]:
        doc = self.doc
        f = Path(folder)
        f.mkdir(parents=True, exist_ok=True)
        c = doc.corpus
        info: dict = {
            "format": "nerstudio-session",
            "version": 1,
            "corpus": os.path.abspath(c.path) if c and c.path else None,
        }
        stem = Path(c.path).stem if c and c.path else "corpus"
        snap = doc.nbest_snapshot()  # None without a list
        if snap is not None:
            snap.save(str(f / f"{stem}.nbest.npz"))
            info["nbest"] = f"{stem}.nbest.npz"
        if doc.dev_nbest is not None:
            doc.dev_nbest.save(str(f / "dev.nbest.npz"))
            info["dev_nbest"] = "dev.nbest.npz"
        if doc.tagger is not None:
            doc.tagger.save(str(f / "tagger.npz"))
            info["tagger"] = "tagger.npz"
        if doc.model is not None:
            doc.model.save(str(f / "reranker.npz"))
            info["model"] = "reranker.npz"
        if doc.kt_model is not None:
            doc.kt_model.save(str(f / "sequence-tagger.npz"))
            info["kt_model"] = "sequence-tagger.npz"
            info["nbest_from_kt"] = doc.kt is not None
            if doc.kt is not None:  # the size of the shown lists, to decode the same ones again
                nd = doc.kt.doc_nbest
                info["kt_n"] = max((nd.n_candidates(d) for d in range(len(nd))), default=0)
        (f / SESSION_FILE).write_text(json.dumps(info, indent=1), encoding="utf-8")
        for key in ("tagger", "model", "kt_model"):
            if key in info:  # saved now: quitting need not ask about it
                doc.model_saved(str(f / info[key]), key)
        return [k for k in ("nbest", "dev_nbest", "tagger", "model", "kt_model") if k in info]

    def load_demo(self, folder: Path | None = None, start: DemoStart | None = None) -> bool:
        """The demo: corpus, jackknifed N-best, dev N-best, reranker and tagger, from ``folder``,
        by default the user's copy of the bundled files (:mod:`nerstudio.app.demo_copy`: the
        installed package is never opened for writing). The candidates come first: the tagger
        (which nothing shows; its module and scipy take a quarter of a second) is read in the
        worker once the N-best list is in (wait for the job service to have it). ``start``: the
        demo as the window's first screen found it (``MainWindow.first_screen``); its corpus,
        read then, is opened here in one go (no turn of the event loop shows a half-open demo
        over that screen)."""
        if folder is None and start is not None:
            folder = start.folder
        if folder is None:
            from ...app.demo_copy import user_demo

            folder = user_demo()
            if folder is None:
                self.ctx.status("No folder to copy the demo to: it is not opened", 10000)
                return False
        path = str(folder / "train.conll")
        if start is not None and start.corpus is not None:
            if not self.confirm_close() or self.ctx.jobs.busy:
                return False
            read = CorpusRead(path, None, start.corpus, disk=start.disk)
            if not self._opened(read, attach=False):
                return False
        elif not self.load_corpus(path, attach=False):
            return False
        md = folder / "model"
        if (md / "dev.nbest.npz").is_file():
            self.load_dev_nbest(str(md / "dev.nbest.npz"))
        if (md / "reranker.npz").is_file():
            self._read_model(str(md / "reranker.npz"), quiet=True)
        ok = self._load_demo_nbest(folder) if (md / "train.nbest.npz").is_file() else True
        if (md / "tagger.npz").is_file():
            self._read_tagger(str(md / "tagger.npz"))
        return ok

    def _read_tagger(self, path: str) -> None:
        """Read the tagger ``path`` in the worker, once the window has painted the candidates
        (:func:`~nerstudio.gui.painted.after_next_paint`; at once in a window not shown), and
        install it; here and now when the worker is busy (scoring the N-best list)."""
        if self.ctx.jobs.busy:
            self.load_tagger(path)
            return

        def job(ctx):
            from ...tagging.maxent import MaxEntTagger

            try:  # no progress line: the status bar keeps what the N-best list's opening said
                return MaxEntTagger.load(path)
            except OSError as exc:  # a damaged file is already a FormatError naming it
                raise FormatError(path, None, str(exc)) from None

        def failed(message, tb):
            if not tb:
                self.ctx.dialogs.critical("Cannot open tagger", message)

        def start() -> None:
            if not self.ctx.jobs.run(
                "tagger",
                job,
                lambda tagger: self.doc.install_tagger(tagger, path),
                on_failed=failed,
            ):  # the user started a job meanwhile
                self.load_tagger(path)

        after_next_paint(self.v.nbest_panel.window(), start)

    def _load_demo_nbest(self, folder: Path) -> bool:
        """The demo's N-best list with the reranker's scores shipped beside it
        (``model/train.scored.npz``: :mod:`nerstudio.app.saved_scores`), attached at once; when
        they cannot be used (the user changed a file of their copy), scored in the worker as
        any list."""
        from ...app.saved_scores import attach_with_saved_scores

        path = str(folder / "model" / "train.nbest.npz")
        scores = folder / "model" / "train.scored.npz"
        doc = self.doc
        if (
            doc.model is None
            or not doc.model_path
            or doc.corpus is None
            or not doc.corpus.path
            or not scores.is_file()
            or self._busy()
        ):
            return self.load_nbest(path)
        stamp = FileStamp.of(path)
        try:
            nb = NBestList.load(path)
        except (NerstudioError, OSError):
            return self.load_nbest(path)  # says why
        sources = {"corpus": doc.corpus.path, "nbest": path, "model": doc.model_path}
        prepared = attach_with_saved_scores(
            doc.corpus, nb, doc.model, scores, sources, revision=doc.revision
        )
        if prepared is None:
            return self.attach_nbest(nb, path, stamp)
        self._install_prepared(prepared, path, stamp)
        return True

    # -- dialogs --------------------------------------------------------------------------
    def _ask_and_open(self, title: str, filt: str, key: str, open_path) -> None:
        path = self.ctx.dialogs.ask_open(title, filt, key)
        if path:
            open_path(path)

    def open_dialog(self) -> None:
        self._ask_and_open("Open corpus", CORPUS_FILTER, "last", self.open_corpus)

    def open_folder_dialog(self) -> None:
        """A brat collection: a folder of NAME.txt + NAME.ann pairs."""
        d = self.ctx.dialogs.ask_corpus_folder()
        if d:
            self.open_corpus(d)

    def open_nbest_dialog(self) -> None:
        self._ask_and_open("Open N-best list", NBEST_FILTER, "nbest", self.load_nbest)

    def open_dev_nbest_dialog(self) -> None:
        self._ask_and_open("Open dev N-best list", NBEST_FILTER, "nbest", self.load_dev_nbest)

    def open_model_dialog(self) -> None:
        self._ask_and_open("Open reranker model", MODEL_FILTER, "model", self.load_model)

    def open_tagger_dialog(self) -> None:
        self._ask_and_open("Open tagger model", MODEL_FILTER, "model", self.load_tagger)

    def open_results_dialog(self) -> None:
        d = self.ctx.dialogs.ask_folder("Open results folder")
        if d:
            self.load_results(d)

    def save_results_dialog(self) -> None:
        d = self.ctx.dialogs.ask_folder("Save results to folder")
        if d:
            try:
                written = self.save_results(d)
            except (OSError, NerstudioError) as exc:
                self.ctx.dialogs.critical("Cannot save", str(exc))
                return
            except Exception as exc:  # a bug, said so
                self.ctx.dialogs.internal_error("Saving the results", exc)
                return
            self.ctx.status(f"Saved {', '.join(written) or 'nothing'} to {d}", 8000)

    def _save_object(self, obj, what: str, title: str, default: str, filt: str) -> str | None:
        if obj is None:
            self.ctx.status(f"No {what} to save", 4000)
            return None
        path = self.ctx.dialogs.ask_save(title, default, filt)
        if path:
            try:
                obj.save(path)
            except (OSError, NerstudioError) as exc:
                self.ctx.dialogs.critical("Cannot save", str(exc))
                return None
            except Exception as exc:  # a bug, said so
                self.ctx.dialogs.internal_error(f"Saving the {what}", exc)
                return None
            self.ctx.status(f"Saved {path}", 5000)
        return path

    def save_nbest_dialog(self) -> None:
        self._save_object(
            self.doc.nbest_snapshot(), "N-best list", "Save N-best list", "", NBEST_FILTER
        )

    def save_model_dialog(self) -> None:
        path = self._save_object(
            self.doc.model, "reranker", "Save reranker model", "reranker.npz", MODEL_FILTER
        )
        if path and self.doc.model is not None:
            self.doc.model_saved(path)

    # -- models never saved ---------------------------------------------------------------
    def unsaved_models(self) -> list[str]:
        """The models trained in this session and saved nowhere."""
        d = self.doc
        return [
            name
            for name, model, path in (
                ("reranker", d.model, d.model_path),
                ("sequence tagger", d.kt_model, d.kt_model_path),
                ("tagger", d.tagger, d.tagger_path),
            )
            if model is not None and not path
        ]

    def confirm_unsaved_models(self) -> bool:
        """Before quitting: a trained model never saved is saved (to a results folder),
        discarded or the quit is cancelled, as the user says. True: go ahead."""
        what = self.unsaved_models()
        if not what:
            return True
        answer = self.ctx.dialogs.ask_unsaved_models(" and ".join(what))
        if answer != "save":
            return answer == "discard"
        folder = self.ctx.dialogs.ask_folder("Save results to folder")
        if not folder:
            return False
        try:
            self.save_results(folder)
        except (OSError, NerstudioError) as exc:
            self.ctx.dialogs.critical("Cannot save", str(exc))
            return False
        except Exception as exc:  # a bug, said so
            self.ctx.dialogs.internal_error("Saving the results", exc)
            return False
        return True

    # -- recent files, drag and drop ------------------------------------------------------
    def recent(self) -> list[str]:
        val = self.ctx.settings.value("files/recent", [])
        if isinstance(val, str):
            val = [val]
        return [v for v in val if isinstance(v, str)] if isinstance(val, list) else []

    def add_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        rec = [p for p in self.recent() if p != path]
        self.ctx.settings.setValue("files/recent", [path] + rec[: MAX_RECENT - 1])
        self.refresh_recent()

    def refresh_recent(self) -> None:
        if self.recent_menu is None:
            return
        self.recent_menu.clear()
        rec = self.recent()
        fm = self.recent_menu.fontMetrics()
        for k, p in enumerate(rec, 1):
            text = fm.elidedText(p, Qt.TextElideMode.ElideMiddle, RECENT_WIDTH_PX).replace(
                "&", "&&"
            )
            a = self.recent_menu.addAction(f"&{k}  {text}" if k < 10 else text, self._opener(p))
            a.setToolTip(p)
            a.setStatusTip(p)
            a.setData(p)
        self.recent_menu.setToolTipsVisible(True)
        self.recent_menu.setEnabled(bool(rec))

    def open_dropped(self, p: str) -> None:
        if p.endswith(".npz") and self.doc.corpus is not None:
            self.load_nbest(p)
        elif os.path.isdir(p) and os.path.isfile(os.path.join(p, SESSION_FILE)):
            self.load_results(p)
        else:
            self.open_corpus(p)
