"""Where the application keeps its own files: ``<data>/nerstudio/recovery`` for crash-recovery
copies of unsaved annotations.

Qt's AppDataLocation appends the organisation and the application name, both "nerstudio", so it
names ``~/.local/share/nerstudio/nerstudio``. The folder here is the generic data location plus
one "nerstudio", and a recovery folder left at the old place by an earlier version is moved
(file by file when both exist), so no recovery file is forgotten.
"""

from __future__ import annotations

import os
import shutil

from PySide6.QtCore import QStandardPaths


def app_data_dir() -> str:
    base = QStandardPaths.writableLocation(
        QStandardPaths.StandardLocation.GenericDataLocation
    ) or os.path.expanduser("~/.local/share")
    return os.path.join(base, "nerstudio")


def _old_recovery_dir() -> str | None:
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return os.path.join(base, "recovery") if base else None


def recovery_dir() -> str:
    """The recovery folder, with what an earlier version left elsewhere moved into it."""
    new = os.path.join(app_data_dir(), "recovery")
    old = _old_recovery_dir()
    if old and os.path.realpath(old) != os.path.realpath(new) and os.path.isdir(old):
        try:
            if not os.path.exists(new):
                os.makedirs(os.path.dirname(new), exist_ok=True)
                shutil.move(old, new)
            else:
                for name in os.listdir(old):
                    if not os.path.exists(os.path.join(new, name)):
                        shutil.move(os.path.join(old, name), os.path.join(new, name))
            for d in (old, os.path.dirname(old)):  # the emptied nerstudio/nerstudio
                if os.path.isdir(d) and not os.listdir(d):
                    os.rmdir(d)
        except OSError:
            pass  # left where it was: the next start tries again
    return new
