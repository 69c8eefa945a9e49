"""Application entry point: ``python main.py [CORPUS] [--screenshot PNG]`` or ``nerstudio gui``."""

from __future__ import annotations

import argparse
import os
import sys

from .. import RESOURCES

DEMO_CORPUS = RESOURCES / "demo" / "train.conll"


def default_corpus() -> str | None:
    return str(DEMO_CORPUS) if DEMO_CORPUS.exists() else None


def run(path: str | None = None, screenshot: str | None = None, argv: list[str] | None = None) -> int:
    """Open the main window on ``path`` (the bundled demo corpus by default)."""
    if screenshot and not os.environ.get("QT_QPA_PLATFORM") and not os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QCoreApplication, QSettings
    from PySide6.QtWidgets import QApplication

    from .main_window import MainWindow

    QCoreApplication.setOrganizationName("nerstudio")
    QCoreApplication.setApplicationName("nerstudio")
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    settings = QSettings()
    if screenshot:  # reproducible pictures: do not read or write the user's settings
        settings = QSettings(os.path.join(os.path.dirname(os.path.abspath(screenshot)), ".nerstudio-shot.ini"),
                             QSettings.IniFormat)
        settings.clear()
    win = MainWindow(settings)
    target = path or default_corpus()
    ok = True
    if target:
        ok = win.load_corpus(target) if not screenshot else _load_or_fail(win, target)
    if screenshot:
        if not ok:
            return 1
        win.resize(1280, 800)
        win.show()
        for _ in range(5):
            app.processEvents()
        pix = win.grab()
        if not pix.save(screenshot):
            print(f"nerstudio: error: cannot write {screenshot}", file=sys.stderr)
            return 1
        print(f"wrote {screenshot} ({pix.width()}x{pix.height()})", file=sys.stderr)
        win.close()
        try:
            os.unlink(settings.fileName())
        except OSError:
            pass
        return 0
    win.show()
    return app.exec()


def _load_or_fail(win, path: str) -> bool:
    from ..corpus.formats import read_corpus
    from ..errors import NerstudioError
    try:
        win.set_corpus(read_corpus(path))
    except NerstudioError as exc:
        print(f"nerstudio: error: {exc}", file=sys.stderr)
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="main.py", description="nerstudio desktop application")
    parser.add_argument("path", nargs="?", help="corpus to open (default: the bundled demo corpus)")
    parser.add_argument("--screenshot", metavar="PNG", help="render the window to PNG after loading and exit")
    args = parser.parse_args(argv)
    return run(args.path, args.screenshot)
