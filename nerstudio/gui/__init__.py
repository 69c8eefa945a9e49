"""The Qt desktop application: the only package of nerstudio that imports Qt.

It displays the Qt-free document model (:mod:`nerstudio.app`) and sends it the user's edits:
the main window builds the views and one controller per feature (:mod:`.controllers`), item
models adapt core objects for display, and long work runs in workers on QThreads through one
job service. It computes nothing the core cannot; docs/architecture.md draws the whole.
"""

import sys as _sys

#: Releases of the Qt binding that must not run here: PySide6 6.12.0 leaks references to None
#: and True on Python < 3.12, and CPython aborts in a long session ("none_dealloc").
#: ``pyproject.toml`` excludes it; this catches an environment that installed it anyway.
BROKEN_BINDINGS = {"6.12.0": (3, 12)}  # version -> first Python on which it is harmless


def binding_problem() -> str | None:
    """One line saying why the installed PySide6 cannot be used, or ``None``."""
    try:  # the package's own version (PySide6-Essentials'): importlib.metadata costs 50 ms
        import PySide6

        have = PySide6.__version__
    except Exception:
        return None
    fixed_on = BROKEN_BINDINGS.get(have)
    if fixed_on is not None and _sys.version_info < fixed_on:
        return (
            f"PySide6 {have} is known to crash on Python {_sys.version_info[0]}.{_sys.version_info[1]} "
            f"(reference-count bug); install another release: pip install 'PySide6-Essentials!={have}'"
        )
    return None
