"""The controllers' shared :class:`~nerstudio.gui.controllers.Context` is typed field by field,
so that mypy checks what a controller does with the job service, the dialogs and the settings
(an ``Any`` there would let every call through unchecked)."""

from __future__ import annotations

import typing

import pytest

pytest.importorskip("PySide6")


def test_every_field_of_the_context_has_a_real_type():
    from PySide6.QtCore import QSettings

    from nerstudio.app.document import Document
    from nerstudio.gui.controllers import Context, DocumentEvents, SentenceCursor
    from nerstudio.gui.dialogs import Dialogs
    from nerstudio.gui.job_service import JobService

    hints = typing.get_type_hints(Context)
    assert not [name for name, hint in hints.items() if hint is typing.Any]
    assert hints["document"] is Document
    assert hints["events"] is DocumentEvents
    assert hints["jobs"] is JobService
    assert hints["dialogs"] is Dialogs
    assert hints["cursor"] is SentenceCursor
    assert hints["settings"] is QSettings
