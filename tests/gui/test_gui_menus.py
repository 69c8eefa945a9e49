"""The window's menus, toolbar and keys, whole: every menu's items in order with their text,
keys, tips, enabled and checked state, compared with tests/gui/menu_tree.json — with
nothing open, on the demo, and while a job runs — no key that two actions share, every row
built, shown and listed in the key reference, and every key the documentation names one of the
window's.

The file is the menus as they were built by hand before they became rows of data
(nerstudio/gui/menu_rows.py): a change to the menus shows here as a difference to read. After
changing them on purpose, write the file again with ``NERSTUDIO_WRITE_MENU_TREE=1`` and read
its diff. A key of Qt's standard set (Open, Save, Undo …) is written by its name
(``StandardKey.Open``), since the platform decides its keys (one with no key on the platform,
as Quit offscreen, shows as none).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest
from helpers import ROOT

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

GOLDEN = Path(__file__).parent / "menu_tree.json"
PORTABLE = QKeySequence.SequenceFormat.PortableText
STANDARD = ("Open", "Save", "Quit", "Find", "HelpContents", "Undo", "Redo")


def _keys(seqs) -> list[str]:
    return [s.toString(PORTABLE) for s in seqs]


def _standard_names() -> dict[tuple[str, ...], str]:
    """The platform's key of each standard key the window uses -> its name (an action takes
    the first of a standard key's bindings)."""
    out = {}
    for n in STANDARD:
        key = QKeySequence(getattr(QKeySequence.StandardKey, n)).toString(PORTABLE)
        if key:
            out[(key,)] = f"StandardKey.{n}"
    return out


def _action(w, a: QAction, recent: QMenu) -> dict | str:
    if a.isSeparator():
        return "---"
    keys = _keys(a.shortcuts())
    out = {
        "text": a.text(),
        "keys": _standard_names().get(tuple(keys), keys),
        "tip": a.toolTip(),
        "status": a.statusTip(),
        "enabled": a.isEnabled(),
        "checkable": a.isCheckable(),
        "checked": a.isChecked(),
        "visible": a.isVisible(),
        "context": a.shortcutContext().name,
        "icon": not a.icon().isNull(),
        "window_wide": a in w.actions(),
    }
    sub = a.menu()
    if isinstance(sub, QMenu):  # the recent files are the user's, not the window's
        out["menu"] = (
            "recent files" if sub is recent else [_action(w, x, recent) for x in sub.actions()]
        )
    return out


def menu_tree(w) -> dict:
    """The menu bar and the toolbar of window ``w``."""
    recent = w.files.recent_menu
    menus = [
        {"title": m.text(), "items": [_action(w, a, recent) for a in m.menu().actions()]}
        for m in w.menuBar().actions()
    ]
    toolbar = [
        "---"
        if a.isSeparator()
        else {
            "name": w.toolbar.widgetForAction(a).objectName(),
            "text": a.text(),
            "tip": a.toolTip(),
            "enabled": a.isEnabled(),
        }
        for a in w.toolbar.actions()
    ]
    return {"menus": menus, "toolbar": toolbar}


@pytest.fixture(scope="module")
def golden() -> dict:
    if not GOLDEN.exists():
        pytest.fail(f"{GOLDEN} is missing: write it with NERSTUDIO_WRITE_MENU_TREE=1")
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def _golden_text(data: dict) -> str:
    """The record as JSON with one line per menu item, toolbar button and key row, so that a
    change to one reads as one line of its diff."""

    def line(x) -> str:
        return json.dumps(x, ensure_ascii=False)

    def block(xs: list, ind: str) -> str:
        return "[\n" + ",\n".join(ind + line(x) for x in xs) + f"\n{ind[:-1]}]"

    parts = []
    for state, tree in data.items():
        if state == "keys":
            groups = ",\n".join(f"  [{line(t)}, {block(rows, '   ')}]" for t, rows in tree)
            parts.append(f' "keys": [\n{groups}\n ]')
            continue
        menus = ",\n".join(
            f'  {{"title": {line(m["title"])}, "items": {block(m["items"], "   ")}}}'
            for m in tree["menus"]
        )
        toolbar = block(tree["toolbar"], "  ")
        parts.append(f' {line(state)}: {{"menus": [\n{menus}\n ], "toolbar": {toolbar}}}')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _check(state: str, tree) -> None:
    if os.environ.get("NERSTUDIO_WRITE_MENU_TREE"):
        old = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
        old[state] = tree
        text = _golden_text(old)
        assert json.loads(text) == old
        GOLDEN.write_text(text, encoding="utf-8")
        return
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))[state]
    if state == "keys":
        assert tree == want
        return
    assert [m["title"] for m in tree["menus"]] == [m["title"] for m in want["menus"]]
    for got_menu, want_menu in zip(tree["menus"], want["menus"]):
        title = got_menu["title"]
        for k, (got, wanted) in enumerate(zip(got_menu["items"], want_menu["items"])):
            assert got == wanted, f"{title}, item {k}"
        assert len(got_menu["items"]) == len(want_menu["items"]), title
    assert tree["toolbar"] == want["toolbar"]


def test_the_menus_with_nothing_open(empty_window):
    _check("empty", menu_tree(empty_window))


def test_the_menus_on_the_demo(window):
    _check("demo", menu_tree(window))


def test_the_menus_while_a_job_runs(window):
    window.training.busyChanged.emit(True)
    try:
        _check("busy", menu_tree(window))
    finally:
        window.training.busyChanged.emit(False)
    assert menu_tree(window) == menu_tree(window)  # nothing left over from the busy state


def test_the_key_reference_help_shows(window):
    """Help ▸ Keyboard shortcuts (F1): the groups and their rows, from the menus."""
    _check("keys", [[title, [list(r) for r in rows]] for title, rows in window.shortcut_groups()])


def test_no_two_actions_share_a_key(window):
    """A key two actions of the window answer to would do one of them, at Qt's choice. The
    annotation keys (Delete, the type letters …) reach their actions through the sentence view's
    and the browser's router only, never as the window's shortcuts, so they are kept apart."""
    router = {id(a) for a in window.annotation.key_table().values()}
    owners = Counter()
    names: dict[str, list[str]] = {}
    for a in window.findChildren(QAction):
        if id(a) in router:
            continue
        for k in _keys(a.shortcuts()):
            owners[k] += 1
            names.setdefault(k, []).append(a.text())
    shared = {k: names[k] for k, n in owners.items() if n > 1}
    assert not shared, f"keys of more than one action: {shared}"
    assert len(owners) > 30  # the scan sees the window's keys


def test_every_row_is_built_shown_in_a_menu_and_in_the_key_reference(window):
    """The rows are the menus: each row's action is where its id says, in the menu that lists
    it, with the row's text and keys, and Help ▸ Keyboard shortcuts lists every row's keys."""
    from nerstudio.gui.actions import resolve
    from nerstudio.gui.menu_rows import ACTIONS, MENUS, ROWS, SEPARATOR

    listed = [i for m in MENUS for i in m.items if i != SEPARATOR and not i.startswith("@")]
    assert len(listed) == len(set(listed)) and set(listed) <= set(ROWS)
    # the Edit menu is the annotation commands ("@annotation"), the rows' undo, redo and accept
    # among them
    rest = {"annotation.act_undo", "annotation.act_redo", "annotation.act_accept"}
    assert set(ROWS) - set(listed) == rest
    assert {resolve(window, i) for i in rest} <= set(window.annotation.annotation_actions())
    bar = {m.text(): m.menu() for m in window.menuBar().actions()}
    reference = {(keys, text) for _g, rows in window.shortcut_groups() for keys, text in rows}
    for m in MENUS:
        shown = bar[m.title].actions()
        for item in m.items:
            if item in ROWS:
                a = resolve(window, item)
                assert a in shown and a.text() == ROWS[item].text, item
    for row in ACTIONS:
        a = resolve(window, row.id)
        keys = [QKeySequence(k) for k in row.keys]
        assert a.shortcuts() == [k for k in keys if not k.isEmpty()], row.id
        if a.shortcuts():
            native = ", ".join(
                k.toString(QKeySequence.SequenceFormat.NativeText) for k in a.shortcuts()
            )
            text = row.text.replace("&&", "\0").replace("&", "").replace("\0", "&")
            assert (native, text) in reference or row.id.startswith("annotation."), row.id


# keys the documentation names that are not the window's, with the reason
NOT_THE_WINDOWS = {"Ctrl+C": "interrupts a command in the terminal (command-line.md)"}
DOC_KEY = re.compile(r"\b(?:(?:Ctrl|Alt|Shift)\+)+[A-Za-z0-9=+\-]+(?:/[A-Za-z0-9]+)*|\bF1?\d\b")


def _doc_keys() -> dict[str, set[str]]:
    """Key -> the pages that name it ("Ctrl+Left/Right" names Ctrl+Left and Ctrl+Right)."""
    root = ROOT
    out: dict[str, set[str]] = {}
    for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        for m in DOC_KEY.finditer(page.read_text(encoding="utf-8")):
            first, *more = m.group(0).split("/")
            head = first.rpartition("+")[0]
            for key in [first, *(f"{head}+{k}" if head else k for k in more)]:
                last = key.rpartition("+")[2]
                if len(last) > 1 and last.islower():
                    continue  # a gesture in words ("Shift+click", "Ctrl+arrows")
                out.setdefault(key, set()).add(page.name)
    return out


def test_the_keys_the_docs_name_are_the_windows(window):
    """Every key a page of the documentation names is a key of the window: of an action built
    from the rows, an annotation command, a workspace, a caret key, or another binding of a
    standard key a row uses (Redo is Ctrl+Y or Ctrl+Shift+Z by platform)."""
    from nerstudio.gui.menu_rows import ACTIONS

    portable = QKeySequence.SequenceFormat.PortableText
    have = {s.toString(portable) for a in window.findChildren(QAction) for s in a.shortcuts()}
    for row in ACTIONS:
        for k in row.keys:
            if isinstance(k, QKeySequence.StandardKey):
                have |= {s.toString(portable) for s in QKeySequence.keyBindings(k)}
    for keys, _what in window.annotation.shortcut_rows():
        have |= {k.strip() for k in re.split(r",| / ", keys)}
    named = _doc_keys()
    assert {"Ctrl+Shift+A", "F7", "Alt+2", "Ctrl+Right"} <= set(named)  # the scan finds them
    wrong = {
        key: sorted(pages)
        for key, pages in named.items()
        if key not in NOT_THE_WINDOWS
        and QKeySequence(key).toString(portable) not in have
        and key not in have
    }
    assert not wrong, f"the docs name keys the window does not have: {wrong}"
