"""The Qt desktop application: the only package of nerstudio that imports Qt.

It adapts core objects for display (item models over the corpus) and runs long work in
workers on QThreads; it computes nothing the core cannot.
"""

from . import qtcompat as _qtcompat  # noqa: E402,F401 - protects None/True/False from the binding's refcount leak
