"""The window's side of owning the corpus file: saving, another program's changes, the lock,
recovery after a crash.

The rules live in the Qt-free :class:`~nerstudio.app.saving.CorpusFile` (fingerprint, check,
lock, write) and :class:`~nerstudio.app.autosave.Autosaver` (per-instance recovery files); this
part of the annotation controller (it is no controller of its own: only
:mod:`.annotation` uses it) asks the user through :class:`~nerstudio.gui.dialogs.Dialogs`:

* Save checks the disk first; a file another program changed (or deleted, or moved) is never
  overwritten silently: Reload, Keep both, Overwrite, Save as… or Cancel (``ask_disk_changed``).
* When the window becomes active again, and when the autosave timer fires, the disk is checked
  too: on activation the same question is asked (once per change on disk), on autosave the
  status bar says so.
* A corpus another window holds is read-only: a permanent status-bar label says who holds it,
  Save offers Save as… (``ask_locked``), and the lock is taken as soon as its holder lets go.
* Recovery files of instances that are gone are offered one by one, saying whose, how many
  sentences, of which file and how long ago (``ask_recover``): when the corpus opens, and when
  a read-only window takes the lock of a killed holder over (on activation or on Save).
* A large corpus is saved in a thread, from a snapshot taken when Save was pressed
  (:class:`~nerstudio.app.saving.PendingSave`): the window goes on, edits made meanwhile stay
  unsaved; closing the window waits for it.
"""

from __future__ import annotations

import os
import threading
import time

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel

from ...app import keepboth
from ...app.autosave import restore
from ...app.document import ChangeKind
from ...app.ownership import Fingerprint
from ...app.pacing import Pacer
from ...app.saving import CorpusFile, DiskChanged, Locked, PendingSave, same_path
from ...errors import NerstudioError
from ..dialogs import CORPUS_FILTER
from . import Context

BACKGROUND_TOKENS = (
    200_000  # a corpus this large is saved in a thread (settings: annotation/backgroundSaveTokens)
)


class FileOwner(QObject):
    """See the module docstring. ``reloadWanted(path, encoding)``: read the corpus again (the
    window's files controller does it); the unsaved edits are discarded already."""

    reloadWanted = Signal(str, str)
    lockChanged = Signal(bool)  # read-only now?
    pathChanged = Signal(str)  # saved under another name (Save as…): the corpus's file now
    _written = Signal(object)  # a background save's PendingSave is written (emitted in its thread)

    def __init__(self, ctx: Context, autosaver, status_bar, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.autosaver = ctx, ctx.document, autosaver
        self.file = CorpusFile(self.doc, autosaver.instance)
        ctx.suspects.follow(self.file)  # its list beside the corpus: written by the holder only
        self.reloading = False  # the unsaved edits may go without asking (the user chose Reload)
        val = ctx.settings.value("annotation/backgroundSaveTokens")
        self.background_tokens = int(val) if val not in (None, "") else BACKGROUND_TOKENS
        self._pending: PendingSave | None = None  # a background save, and its thread
        self._thread: threading.Thread | None = None
        self._written.connect(self._on_written, Qt.ConnectionType.QueuedConnection)
        self._asked: Fingerprint | None = (
            None  # the disk state last asked about on activation (not asked twice)
        )
        self._busy = False
        self.label = QLabel()
        self.label.setObjectName("readOnlyLabel")
        self.label.setStyleSheet("QLabel { color: #a04000; font-weight: bold; }")
        self.label.hide()
        self._window = status_bar.window() if status_bar is not None else None
        if status_bar is not None:
            status_bar.addPermanentWidget(self.label)
        # after the CorpusFile's own subscription: it has taken the lock
        self.doc.subscribe(self._on_change)
        app = QGuiApplication.instance()  # the application's state: a GUI application's
        self._app = app if isinstance(app, QGuiApplication) else None
        if self._app is not None:
            self._app.applicationStateChanged.connect(self._on_app_state)

    # -- the lock ---------------------------------------------------------------------------
    def _on_change(self, ch) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self._asked = None
            self.reloading = False
            self._show_lock()
            if self.file.read_only:
                self.ctx.status(
                    f"{self._name()} is open in another window ({self.file.holder()}): read-only here; "
                    "Save as… saves a copy",
                    15000,
                )

    def _name(self) -> str:
        return os.path.basename(self.file.path or "") or "the corpus"

    def _show_lock(self) -> None:
        ro = self.file.read_only
        if ro:
            self.label.setText(f"Read-only: open in another window ({self.file.holder()})")
            self.label.setToolTip(
                f"{self.file.path} is being edited in another nerstudio window. Edits here can be "
                "saved under another name (Save as…); Save works once the other window closes it."
            )
        self.label.setVisible(ro)
        self.lockChanged.emit(ro)

    def close(self) -> None:
        """The window closes: the lock goes, this instance ends (its recovery file is removed
        with the edits by the caller when they are saved or discarded)."""
        self.wait_save()
        if self._app is not None:
            self._app.applicationStateChanged.disconnect(self._on_app_state)
            self._app = None
        self.file.close()

    # -- activation ---------------------------------------------------------------------------
    def _on_app_state(self, state) -> None:
        if state == Qt.ApplicationState.ApplicationActive and (
            self._window is None or self._window.isVisible()
        ):
            self.on_activated()

    def on_activated(self) -> None:
        """The window is active again: take the lock if it is free now, look at the disk."""
        if self._busy or self._pending is not None or self.doc.corpus is None:
            return
        if self.file.read_only:
            if self.file.retry_lock():
                self._took_over()
            else:  # still read-only: the holder may be another window now (one was killed)
                self._show_lock()
        state = self.file.check()
        if state is None or state.same:
            if state is not None:
                self.file.acknowledge(state)
            return
        if self._asked == state.now:
            return
        self._asked = state.now
        self.resolve(state, saving=False)

    def _took_over(self) -> list[int]:
        """The lock is this window's now (its holder closed, or was killed): say so, and offer
        what a killed holder left in its recovery file (only the lock's holder is offered it);
        returns the sentences recovered."""
        self._show_lock()
        self.ctx.status(
            f"{self._name()} was closed in the other window: you can save it now", 10000
        )
        return self.offer_recovery()

    def note_disk(self) -> None:
        """At autosave: say in the status bar when the file changed on disk (no question while
        the user is typing; it is asked on activation and on Save)."""
        state = self.file.check()
        if state is not None and not state.same:
            self.ctx.status(disk_note(self._name(), state.status), 15000)

    # -- saving ---------------------------------------------------------------------------------
    def save(self, path: str | None = None, overwrite: bool = False, wait: bool = False) -> bool:
        """Save (to ``path``). A corpus of :attr:`background_tokens` tokens or more is written in
        a thread from a snapshot, the window going on meanwhile: True then means started (the
        status bar says when it is saved); ``wait``: written before this returns."""
        if self.doc.corpus is None:
            return False
        if self._pending is not None:
            if not wait:
                self.ctx.status(f"Still saving {self._pending.target}…", 4000)
                return False
            self.wait_save()
        target = self.file.target(path)
        if target is None:
            return self.save_as(wait)
        if (  # a read-only window saving the file: take the lock over first, if free now
            same_path(target[0], self.file.path)
            and self.file.read_only
            and self.file.retry_lock()
            and self._took_over()
        ):
            self.ctx.status(
                "Not saved yet: edits of the window that held the file were recovered; "
                "review them (Ctrl+Z undoes them), then save",
                15000,
            )
            return False
        try:
            pending = self.file.begin_save(path, overwrite=overwrite)
        except Locked as exc:
            if self.ctx.dialogs.ask_locked(exc.path, exc.holder) == "save_as":
                return self.save_as(wait)
            self.ctx.status("Not saved", 5000)
            return False
        except DiskChanged as exc:
            return self.resolve(exc.state, saving=True, wait=wait)
        except (NerstudioError, OSError) as exc:
            self.ctx.dialogs.critical("Cannot save corpus", str(exc))
            return False
        except Exception as exc:  # a bug: the save did not happen, and the user is told why
            self.ctx.dialogs.internal_error("Saving the corpus", exc)
            return False
        if wait or self.file.n_tokens < self.background_tokens:
            pending.run()
            return self._saved(pending, wait)
        self._pending = pending
        self.ctx.status(f"Saving {pending.target}…", 0)
        self._thread = threading.Thread(target=self._write, args=(pending,), name="nerstudio-save")
        self._thread.start()
        return True

    def _write(self, pending) -> None:  # in the save thread
        pending.run(Pacer())  # the window's thread keeps the interpreter when it needs it
        self._written.emit(pending)

    def _on_written(self, pending) -> None:
        if pending is self._pending:  # not already finished by wait_save
            self.wait_save(wait=False)

    def wait_save(self, wait: bool = True) -> None:
        """Finish a background save (before closing, quitting, or another save); ``wait``: a
        save that follows (the file had changed on disk) is written before this returns."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        thread, self._thread = self._thread, None
        if thread is not None:  # always, with a pending save
            thread.join()
        self._saved(pending, wait)

    @property
    def saving(self) -> bool:
        return self._pending is not None

    def _saved(self, pending, wait: bool = False) -> bool:
        try:
            res = self.file.finish_save(pending)
        except DiskChanged as exc:  # found by the write, which wrote nothing
            return self.resolve(exc.state, saving=True, wait=wait)
        except (NerstudioError, OSError) as exc:
            self.ctx.dialogs.critical("Cannot save corpus", str(exc))
            return False
        except Exception as exc:  # a bug: the save did not happen, and the user is told why
            self.ctx.dialogs.internal_error("Saving the corpus", exc)
            return False
        if res.moved:  # (the recovery file moved with it: app.autosave)
            self._show_lock()
            self.pathChanged.emit(res.path)
        self._asked = None
        self.ctx.status(f"Saved {res.path}", 5000)
        return True

    def save_as(self, wait: bool = False) -> bool:
        c = self.doc.corpus
        if c is None:
            return False
        default = c.path or ""
        if (
            default and self.file.target() is None
        ):  # propose a format that keeps the entities and offsets
            default = os.path.splitext(default)[0] + ".jsonl"
        path = self.ctx.dialogs.ask_save("Save corpus as", default, CORPUS_FILTER)
        return bool(path) and self.save(path, wait=wait)

    # -- another program's version --------------------------------------------------------------
    def resolve(self, state, saving: bool, wait: bool = False) -> bool:
        """Ask what to do with a file changed or gone on disk, and do it. True: the corpus was
        saved (only when ``saving``)."""
        self._busy = True
        try:
            return self._resolve(state, saving, wait)
        finally:
            self._busy = False

    def _resolve(self, state, saving: bool, wait: bool) -> bool:
        path, corpus = self.file.path, self.doc.corpus
        if path is None or corpus is None:  # no corpus file open: nothing changed under it
            return False
        self._asked = state.now
        n = len(self.file.edited())
        theirs, plan = None, None
        if state.status == "changed" and n:
            try:
                theirs = self.file.read_theirs()
                plan = self.file.plan_keep_both(theirs)
                keep = keepboth.describe(plan)
            except (NerstudioError, OSError) as exc:
                keep = f"Keep both is not possible: the file on disk cannot be read ({exc})."
        else:
            keep = ""
        when = (
            time.strftime("%H:%M:%S", time.localtime(state.now.mtime_ns / 1e9))
            if state.now.exists
            else ""
        )
        choice = self.ctx.dialogs.ask_disk_changed(
            path,
            state.status,
            n,
            keep,
            plan is not None and plan.aligned,
            when,
            not self.file.read_only,
        )
        if choice == "reload":
            self.autosaver.discard()
            self.reloading = True
            self.reloadWanted.emit(path, corpus.encoding)
            return False
        if choice == "keep_both" and theirs is not None and plan is not None and plan.aligned:
            done = self.file.keep_both(theirs, state, plan)
            if done:
                self.ctx.cursor.go(done[0])
            if plan.conflicts:
                self.ctx.dialogs.info(
                    "Changed in both versions",
                    keepboth.describe(plan, prefix="Kept both versions: ")
                    + " Review them, then save.",
                )
                return False
            self.ctx.status(
                keepboth.describe(plan, prefix="Kept both versions: ") + " Ctrl+Z undoes it.", 15000
            )
            return self.save(wait=wait) if saving else False
        if choice == "overwrite":
            return self.save(overwrite=True, wait=wait)
        if choice == "save_as":
            return self.save_as(wait)
        if saving:
            self.ctx.status("Not saved: the file on disk was left as it is", 8000)
        return False

    # -- recovery -------------------------------------------------------------------------------
    def offer_recovery(self) -> list[int]:
        """After a corpus opens: offer the edits of every recovery file whose instance is gone
        (oldest first, each one undoable step); returns the sentences changed."""
        changed: list[int] = []
        offers = self.autosaver.offers()
        for i, offer in enumerate(offers):
            if offer.edits is None:
                kept = self.autosaver.set_aside(offer)
                self.ctx.dialogs.warning(
                    "Cannot recover", offer.summary() + (f"; kept as {kept}" if kept else "")
                )
                continue
            summary = offer.summary() + (f" ({i + 1} of {len(offers)})" if len(offers) > 1 else "")
            answer = self.ctx.dialogs.ask_recover(offer.path, summary)
            if answer is None:
                continue  # later: the file stays
            if not answer:
                self.autosaver.reject(offer)
                continue
            # spans, review states, notes and flags; the suspects dismissed
            done = restore(self.doc, offer, self.autosaver.queue)
            self.autosaver.adopt(offer)
            changed += [k for k in done if k not in changed]
        if changed:
            changed.sort()
            self.ctx.cursor.go(changed[0])
            shown = ", ".join(str(k + 1) for k in changed[:12]) + (
                ", …" if len(changed) > 12 else ""
            )
            self.ctx.status(
                f"Recovered edits of {keepboth.sentences(len(changed))} ({shown}); Ctrl+Z undoes them, "
                "save to keep them",
                15000,
            )
        return changed


def disk_note(name: str, status: str) -> str:
    """The status bar's line when the open file changed on disk: what happened, what Save does."""
    if status == "missing":
        return (
            f"{name} was deleted or moved by another program: "
            "Save writes this window's version there again (Save as… puts it elsewhere)"
        )
    return (
        f"{name} was changed by another program: "
        "Save asks whether to keep both versions, reload or overwrite"
    )
