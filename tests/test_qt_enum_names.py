"""Qt enum members are written in full (``Qt.AlignmentFlag.AlignLeft``), never by their short
Qt 5 names, which PySide6's stubs do not declare (tools/qt_enum_names.py finds and rewrites them).

The scan asks PySide6 which nested enum a ``Class.Member`` belongs to, so it follows PySide6's own
API rather than a list kept by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ROOT, tool

pytest.importorskip("PySide6")

qt_enum_names = tool("tools/qt_enum_names.py")

# Files edited on another branch while the short names were rewritten: the most short names each
# may still hold. Run `python tools/qt_enum_names.py --fix` on them and delete their entries.
NOT_YET: dict[str, int] = {}


@pytest.mark.slow
def test_no_short_enum_names_in_the_package_or_the_tests():
    found = qt_enum_names.scan([ROOT / p for p in qt_enum_names.DEFAULT_PATHS])
    per_file: dict[str, list[str]] = {}
    for s in found:
        per_file.setdefault(s.path.relative_to(ROOT).as_posix(), []).append(str(s))
    over = {f: names for f, names in per_file.items() if len(names) > NOT_YET.get(f, 0)}
    assert not over, "short Qt enum names (python tools/qt_enum_names.py --fix):\n" + "\n".join(
        n for names in over.values() for n in names
    )


def test_the_lookup_finds_the_enum_of_a_short_name_and_only_of_a_short_name():
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QHeaderView, QTableView

    assert qt_enum_names.enums_with(Qt, "AlignLeft") == ("AlignmentFlag",)
    assert qt_enum_names.enums_with(QHeaderView, "Stretch") == ("ResizeMode",)
    # an enum of a base class (QAbstractItemView), reached through the subclass
    assert qt_enum_names.enums_with(QTableView, "SelectRows") == ("SelectionBehavior",)
    # real attributes are not short names: a nested enum, a method, an inherited method
    assert qt_enum_names.enums_with(Qt, "AlignmentFlag") == ()
    assert qt_enum_names.enums_with(QHeaderView, "setSectionResizeMode") == ()
    assert qt_enum_names.enums_with(QTableView, "setModel") == ()
    assert qt_enum_names.enums_with(QHeaderView, "NoSuchMember") == ()


SOURCE = """\
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView as Header, QSizePolicy
import PySide6.QtCore


class Local:
    AlignLeft = 1


def build(label, header):
    label.setAlignment(Qt.AlignTop | Qt.AlignmentFlag.AlignLeft)
    header.setSectionResizeMode(Header.Stretch)
    label.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Policy.Fixed)
    return PySide6.QtCore.Qt.Horizontal, Local.AlignLeft, header.Stretch
"""

FIXED = """\
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView as Header, QSizePolicy
import PySide6.QtCore


class Local:
    AlignLeft = 1


def build(label, header):
    label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    header.setSectionResizeMode(Header.ResizeMode.Stretch)
    label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    return PySide6.QtCore.Qt.Orientation.Horizontal, Local.AlignLeft, header.Stretch
"""


def test_short_names_are_found_through_the_imports_and_rewritten_in_place():
    found = qt_enum_names.scan_source(SOURCE, Path("example.py"))
    assert [(s.line, s.owner, s.member, s.full) for s in found] == [
        (11, "Qt", "AlignTop", "Qt.AlignmentFlag.AlignTop"),
        (12, "Header", "Stretch", "Header.ResizeMode.Stretch"),
        (13, "QSizePolicy", "Expanding", "QSizePolicy.Policy.Expanding"),
        (14, "PySide6.QtCore.Qt", "Horizontal", "PySide6.QtCore.Qt.Orientation.Horizontal"),
    ]
    fixed = qt_enum_names.fix_source(SOURCE, found)
    assert fixed == FIXED
    assert qt_enum_names.scan_source(fixed, Path("example.py")) == []


def test_an_ambiguous_short_name_is_reported_but_not_rewritten():
    name = qt_enum_names.ShortName(Path("x.py"), 1, 3, "Qt", "A", ("One", "Two"))
    assert name.full is None
    assert "ambiguous" in str(name)
    assert qt_enum_names.fix_source("Qt.A\n", [name]) == "Qt.A\n"
