"""Application entry point: ``python main.py [CORPUS] [--screenshot PNG]`` or ``nerstudio gui``.

A corpus named on the command line opens exactly as through File ▸ Open: a file that cannot be
read is one clear message (a dialog, and the same line on stderr), never a traceback. Errors are
recorded in the log file (:mod:`nerstudio.logs`), and an exception that escapes everything (a
bug) is logged with its traceback and reported as one line instead of ending the application.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading


def set_app_icon(app) -> None:
    """The application's icon (every window's, and the launcher's on Wayland through the desktop
    file name) from the PNG sizes shipped in resources/desktop."""
    from PySide6.QtGui import QIcon

    from ..resources import desktop

    icon = QIcon()
    for size in desktop.ICON_SIZES:
        icon.addFile(str(desktop.icon_png(size)))
    app.setWindowIcon(icon)
    app.setDesktopFileName(desktop.APP_ID)


def default_corpus() -> str | None:
    """The bundled demo corpus, when the package has it (the window opens the user's copy of
    it: :mod:`nerstudio.app.demo_copy`)."""
    from ..demo import DEMO_CORPUS

    return str(DEMO_CORPUS) if DEMO_CORPUS.exists() else None


def __getattr__(name: str):
    """``DEMO_CORPUS``, ``DEMO_DIR``, ``DEMO_MODEL_DIR`` (re-exported for tests), read when asked
    for: the demo module is not needed by the first window."""
    if name in ("DEMO_CORPUS", "DEMO_DIR", "DEMO_MODEL_DIR"):
        from .. import demo

        return getattr(demo, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run(
    path: str | None = None,
    screenshot: str | None = None,
    argv: list[str] | None = None,
    view: str = "main",
) -> int:
    """Open the main window on ``path`` (the bundled demo corpus by default)."""
    from .. import logs

    logs.setup(debug=logs.is_debug())
    install_excepthooks()
    if screenshot and not os.environ.get("QT_QPA_PLATFORM") and not os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QCoreApplication, QSettings
    from PySide6.QtWidgets import QApplication

    QCoreApplication.setOrganizationName("nerstudio")
    QCoreApplication.setApplicationName("nerstudio")
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    set_app_icon(app)
    settings = QSettings()
    if screenshot:  # reproducible pictures: do not read or write the user's settings
        import tempfile

        shot_dir = tempfile.mkdtemp(prefix="nerstudio-shot-")
        settings = QSettings(os.path.join(shot_dir, "settings.ini"), QSettings.Format.IniFormat)
        settings.clear()
        # never offer a recovery
        settings.setValue("annotation/recoveryDir", os.path.join(shot_dir, "recovery"))
    if not screenshot:
        return _run_for_user(app, settings, path)
    from .main_window import MainWindow
    from .views.figure_image import RENDERER

    RENDERER.hold()  # matplotlib loads once the window is shown, not while it is being made
    win = MainWindow(settings)
    ok = (
        _load_or_fail(win, path)
        if path
        else (_load_shot_demo(win, shot_dir) if default_corpus() else True)
    )
    if not ok:
        return 1
    win.screen_fit.enabled = False  # the picture is 1280×800 whatever the (offscreen) screen
    win.resize(1280, 800)
    win.show()
    RENDERER.release()
    win.jobs.wait(60000)
    if view == "training":
        _stage_training(win)
    elif view == "comparison":
        _stage_comparison(win)
    elif view == "stepper":
        _stage_stepper(win)
    else:
        _stage_main(win)
    for _ in range(5):
        app.processEvents()
    win.curve_plot.render_now()
    for _ in range(5):
        app.processEvents()
    pix = win.grab()
    if not pix.save(screenshot):
        print(f"nerstudio: error: cannot write {screenshot}", file=sys.stderr)
        return 1
    print(f"wrote {screenshot} ({pix.width()}x{pix.height()})", file=sys.stderr)
    # the picture's window holds nothing of the user's (a temporary copy of the demo, runs made
    # for the picture): it closes without the unsaved-work questions, which nobody could answer
    win.dialogs.unattended = True
    win.close()
    settings.sync()
    import shutil

    shutil.rmtree(shot_dir, ignore_errors=True)
    return 0


def _load_shot_demo(win, shot_dir: str) -> bool:
    """The demo for a picture: a copy of the bundled files in the picture's temporary folder
    (reproducible whatever the user did to their copy, and nothing of theirs written)."""
    from pathlib import Path

    from ..app.demo_copy import prepare

    try:
        folder = prepare(Path(shot_dir) / "demo")
    except OSError as exc:
        print(f"nerstudio: error: cannot copy the demo to {shot_dir}: {exc}", file=sys.stderr)
        return False
    return win.load_demo(folder)


def _run_for_user(app, settings, path: str | None) -> int:
    """The window in phases: its shell on screen at once (nothing heavy imported yet); once it
    is exposed, for the demo, its views with the demo's first screen
    (:meth:`MainWindow.first_screen`: the first sentence, its candidates and features, before
    numpy and the document model load), painted; then the rest of the window
    (:meth:`MainWindow.finish`) and the corpus (``path``, else the demo), and the figures'
    renderer (matplotlib) once the window has painted them. Exit status 1 when the window could
    not be built (a bug)."""
    from .main_window import MainWindow

    win = MainWindow(settings, shell=True)
    win.show()
    wait_until_exposed(app, win)
    start = None
    if not path and default_corpus():
        start = win.first_screen()  # no figure in it
        if start is not None and start.corpus is not None:
            wait_until_painted(app, win)
    from .views.figure_image import RENDERER

    # matplotlib (the figures' render thread) loads once the corpus and its N-best list are on
    # screen: no figure is on the first page, and a second of importing would compete with them
    RENDERER.hold()
    if not win.finish():
        if win.failed is None:  # closed before it was built
            return 0
        from .. import logs

        print(
            f"nerstudio: internal error: {win.failed} (a bug; the details are in "
            f"{logs.log_path()})",
            file=sys.stderr,
        )
        app.exec()  # the window and the bug's report stay until the user closes them
        return 1
    if path:
        _open_from_command_line(win, path)
    elif default_corpus():
        win.load_demo(start=start)
    start = None  # the document has the corpus the first screen read
    from .painted import after_next_paint

    after_next_paint(win, RENDERER.release)
    # not visible: closed while the corpus was opening
    code = app.exec() if win.isVisible() else 0
    # the window's close shut its jobs down and the service refuses new ones after that; this
    # makes sure no worker thread is alive when the interpreter ends (Qt aborts the process then)
    win.jobs.shutdown()
    return code


def wait_until_exposed(app, win, fallback_ms: int = 3000) -> None:
    """Run the event loop until ``win`` is on screen and painted (the event loop's turn after its
    first Expose event), until it is closed, or for ``fallback_ms`` should it never be exposed
    (another desktop, minimised)."""
    from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer

    handle = win.windowHandle()
    if handle is not None and handle.isExposed():
        app.processEvents()
        return
    loop = QEventLoop()

    class _Watch(QObject):
        def eventFilter(self, obj, event):
            kind = event.type()
            if (kind == QEvent.Type.Expose and obj is handle and obj.isExposed()) or (
                kind == QEvent.Type.Close and obj is win
            ):
                QTimer.singleShot(0, loop, loop.quit)  # after the expose is painted
            return False

    # on the window and its native window only, never the application: an application-wide
    # filter is handed every object that gets an event, Qt's private ones too (the toolbar's
    # animation timer), and PySide loads every lazily loaded class looking for a wrapper for
    # them — some 70 enums nobody uses, 10–15 ms of the start before the window shows anything
    watch = _Watch()
    watched = [w for w in (win, handle) if w is not None]
    for w in watched:
        w.installEventFilter(watch)
    QTimer.singleShot(fallback_ms, loop, loop.quit)
    try:
        loop.exec()
    finally:
        for w in watched:
            w.removeEventFilter(watch)


def wait_until_painted(app, win, fallback_ms: int = 3000) -> None:
    """Run the event loop until ``win`` has painted what it shows now
    (:func:`~.painted.after_next_paint`), until it is closed, or for ``fallback_ms``."""
    from PySide6.QtCore import QEvent, QEventLoop, QObject

    from .painted import after_next_paint

    loop = QEventLoop()
    over = False

    def stop() -> None:
        nonlocal over
        over = True
        loop.quit()

    class _Watch(QObject):
        def eventFilter(self, obj, event):
            if obj is win and event.type() == QEvent.Type.Close:
                stop()
            return False

    watch = _Watch()
    win.installEventFilter(watch)
    after_next_paint(win, stop, fallback_ms)
    try:
        if not over:
            loop.exec()
    finally:
        win.removeEventFilter(watch)


def _interesting_sentence(win) -> int:
    """A sentence where the reranker fixes the tagger (else one it changes, else one with errors)."""
    flags = win.flags()
    import numpy as np

    for mask in (
        flags["changed"] & flags["error"] & ~flags.get("rerank_error", flags["error"]),
        flags["changed"],
        flags["error"],
    ):
        hits = np.flatnonzero(mask)
        if len(hits):
            # prefer a mid-length sentence so the picture stays readable
            lens = np.array([len(win.corpus.sentences[k]) for k in hits])
            good = hits[(lens >= 8) & (lens <= 22)]
            return int((good if len(good) else hits)[0])
    return 0


def _stage_main(win) -> None:
    """Main view: a sentence the reranker changes, its pick compared with the top candidate."""
    win.training_dock.hide()
    win.select_sentence(_interesting_sentence(win))
    chosen = win.nbest_panel.model.chosen()
    if chosen:
        win.nbest_panel.select(chosen, 0)


def _stage_training(win) -> None:
    """Training view: the panel open, three perceptron variants overlaid on the curve."""
    win.training_dock.show()
    win.curve_plot.clear()
    win.select_sentence(_interesting_sentence(win))
    panel = win.training_panel
    panel.min_sent.setValue(2)
    for algo, params in (
        ("perceptron", {"epochs": 12}),
        ("averaged", {"epochs": 12}),
        ("margin", {"epochs": 12}),
    ):
        panel.set_algorithm(algo)
        for k, v in params.items():
            try:
                panel.set_param(k, v)
            except KeyError:
                pass
        win.start_training(panel.snapshot())
        win.jobs.wait(120000)


def _stage_comparison(win) -> None:
    """Comparison tab: the demo's dev list, baseline against the reranked output, fixed sentences."""
    win.training_dock.hide()
    from pathlib import Path

    # the dev corpus beside the open (demo) training corpus
    c = win.corpus
    dev = Path(c.path).with_name("dev.conll") if c is not None and c.path else None
    if (
        dev is not None
        and win.corpus.path != str(dev)
        and dev.exists()
        and win.load_corpus(str(dev))
    ):
        win.jobs.wait(60000)
    win.tabs.setCurrentWidget(win.comparison_view)
    win.jobs.views.wait(60000)
    win.comparison_view.set_kind("fixed")
    if win.comparison_view.model.rowCount():
        win.comparison_view.activate(0)


def _stage_stepper(win) -> None:
    """Step-through dock: a few boosting rounds on the demo list."""
    win.training_dock.hide()
    win.stepper_dock.show()
    win.jobs.views.wait(60000)
    for _ in range(6):
        win.stepper.step()
    win.jobs.views.wait(60000)
    win.stepper_panel.canvas.render_now()


def _load_or_fail(win, path: str) -> bool:
    from .. import logs
    from ..corpus.formats import read_corpus
    from ..errors import NerstudioError

    try:
        win.set_corpus(read_corpus(path))
    except NerstudioError as exc:
        logs.log_error(f"cannot open {path}: {exc}", name="app")
        print(f"nerstudio: error: {exc}", file=sys.stderr)
        return False
    return True


def _open_from_command_line(win, path: str) -> bool:
    """Open ``path`` the way File ▸ Open does (a dialog says why it cannot be read); the reason
    also goes to stderr and the log."""
    from .. import logs

    shown: list[str] = []
    show = win.dialogs.critical

    def critical(title: str, text: str) -> None:
        shown.append(text)
        show(title, text)

    win.dialogs.critical = critical  # the same dialog, its text kept for stderr and the log
    try:
        ok = win.load_corpus(path)
    finally:
        del win.dialogs.critical
    if not ok:
        message = shown[-1] if shown else f"cannot open {path}"
        logs.log_error(f"cannot open {path}: {message}", name="app")
        print(f"nerstudio: error: {message}", file=sys.stderr)
    return ok


def report_unhandled(exc_type, exc, tb, where: str = "") -> None:
    """Log an exception nothing caught (a bug) with its traceback; one line on stderr."""
    import traceback

    from .. import logs

    details = "".join(traceback.format_exception(exc_type, exc, tb))
    logs.log_error(f"unhandled {exc_type.__name__}{where}: {exc}", details, name="app")
    print(
        f"nerstudio: internal error: {exc_type.__name__}: {exc} (a bug; the details are in "
        f"{logs.log_path()})",
        file=sys.stderr,
    )


def install_excepthooks() -> None:
    """Route exceptions that escape a Qt slot or a thread to :func:`report_unhandled` (PySide6
    would print them and carry on; a plain thread would die with a traceback on stderr)."""
    if getattr(sys.excepthook, "_nerstudio", False):
        return

    def hook(exc_type, exc, tb):
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        report_unhandled(exc_type, exc, tb)

    def thread_hook(args):
        if args.exc_type is SystemExit:
            return
        report_unhandled(
            args.exc_type,
            args.exc_value,
            args.exc_traceback,
            f" in thread {args.thread.name if args.thread else '?'}",
        )

    hook._nerstudio = True  # type: ignore[attr-defined]
    sys.excepthook = hook
    threading.excepthook = thread_hook


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="main.py", description="nerstudio desktop application")
    parser.add_argument("path", nargs="?", help="corpus to open (default: the bundled demo corpus)")
    parser.add_argument(
        "--screenshot", metavar="PNG", help="render the window to PNG after loading and exit"
    )
    parser.add_argument(
        "--view",
        choices=("main", "training", "comparison", "stepper"),
        default="main",
        help="what --screenshot shows: the inspector (default), a training run, the comparison "
        "tab or the step-through dock",
    )
    args = parser.parse_args(argv)
    from . import binding_problem
    from .platform_check import xcb_problem

    # run() picks the offscreen platform
    offscreen_shot = args.screenshot and not os.environ.get("DISPLAY")
    problem = binding_problem() or (None if offscreen_shot else xcb_problem())
    if problem:
        print(f"nerstudio: error: {problem}", file=sys.stderr)
        return 1
    return run(args.path, args.screenshot, view=args.view)
