"""The open project as plain Python: the document model behind the application (no Qt).

:class:`~nerstudio.app.document.Document` owns the open corpus — the only copy of the gold
spans — and everything attached to it (N-best lists, rerankers, taggers, training runs). Every
change goes through it, bumps its revision and is announced to its listeners; the undo
history (:mod:`~nerstudio.app.history`) acts on it. :mod:`~nerstudio.app.autosave` keeps a
recovery file in step with it. The Qt application (:mod:`nerstudio.gui`) only displays the
document and sends it edits; an import-linter contract keeps Qt and ``nerstudio.gui`` out of
this package.
"""
