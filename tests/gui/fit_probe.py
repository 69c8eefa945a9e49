"""Run by test_gui_fit.py (beside it) in a child process with its own screen (offscreen
platform with a screen size, ``QT_SCALE_FACTOR``): opens the demo, walks every workspace and tab, and prints as
JSON what the test checks — the window's frame against the screen, whether a page had to scroll,
and every visible table column's width against its header's text."""

from __future__ import annotations

import json
import os
import sys
import tempfile


def columns(view) -> list[dict]:
    from PySide6.QtCore import Qt

    hdr = view.horizontalHeader() if hasattr(view, "horizontalHeader") else view.header()
    model = view.model()
    if model is None or not hdr.isVisible():
        return []
    fm = hdr.fontMetrics()
    out = []
    vp_w = view.viewport().width()
    for c in range(model.columnCount()):
        if hdr.isSectionHidden(c):
            continue
        text = str(
            model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole) or ""
        )
        out.append(
            {
                "column": c,
                "text": text,
                "width": hdr.sectionSize(c),
                "text_width": max(fm.horizontalAdvance(t) for t in text.split("\n")),
                "right": hdr.sectionViewportPosition(c) + hdr.sectionSize(c),
                "viewport": vp_w,
            }
        )
    return out


def main() -> int:
    from PySide6.QtCore import QCoreApplication, QSettings
    from PySide6.QtWidgets import QAbstractItemView, QApplication, QTableView, QTreeView

    app = QApplication(sys.argv[:1])
    d = tempfile.mkdtemp(prefix="nerstudio-fit-")
    st = QSettings(os.path.join(d, "settings.ini"), QSettings.Format.IniFormat)
    st.setValue("annotation/recoveryDir", os.path.join(d, "recovery"))
    from nerstudio.gui.main_window import MainWindow

    w = MainWindow(st)
    w.show()
    app.processEvents()
    w.load_demo()
    w.jobs.wait(60000)

    def settle():
        for _ in range(3):
            app.processEvents()
            w.jobs.wait(60000)
            w.jobs.views.wait(60000)
            QCoreApplication.sendPostedEvents()

    settle()
    scr = w.screen().availableGeometry()
    report = {"screen": [scr.x(), scr.y(), scr.width(), scr.height()], "views": []}
    host = w.workspaces
    stops = [
        ("annotate", None),
        ("inspect", w.feature_panel),
        ("inspect", w.comparison_view),
        ("inspect", w.model_features_view),
        ("inspect", w.views.what_if_view),
        ("train", None),
        ("teach", None),
    ]
    for name, tab in stops:
        host.activate(name)
        if tab is not None:
            w.tabs.setCurrentWidget(tab)
        if name == "teach":
            w.jobs.views.wait(60000)  # the step-through is set up in the window's worker
            for _ in range(3):
                w.stepper.step()
        settle()
        ws = host.spaces[name]
        f = w.frameGeometry()
        sc = ws.scroll
        views = []
        for v in ws.page.findChildren(QAbstractItemView):
            if isinstance(v, (QTableView, QTreeView)) and v.isVisible() and v.model() is not None:
                views.append({"name": v.objectName(), "columns": columns(v)})
        report["views"].append(
            {
                "workspace": name,
                "tab": tab.objectName() if tab is not None else "",
                "frame": [f.x(), f.y(), f.width(), f.height()],
                "page_min": [ws.page.minimumSizeHint().width(), ws.page.minimumSizeHint().height()],
                "viewport": [sc.viewport().width(), sc.viewport().height()],
                "scrolls": [
                    sc.horizontalScrollBar().maximum() > 0,
                    sc.verticalScrollBar().maximum() > 0,
                ],
                "status_visible": w.statusBar().isVisible(),
                "tables": views,
            }
        )
    print(json.dumps(report))
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
