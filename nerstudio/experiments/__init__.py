"""Runs that combine the taggers and the rerankers: the layer above :mod:`nerstudio.tagging` and
:mod:`nerstudio.rerank`, below the command line and the application.

Folds by document and the jackknife (:mod:`.folds`, :mod:`.pipeline`), the Collins suite
(:mod:`.collins`) and the Kazama & Torisawa suite (:mod:`.kazama`) with their reports, the
comparison of system outputs (:mod:`.compare`), the step-by-step trainers behind the application's
stepper (:mod:`.stepthrough`), and training or decoding in a child process
(:mod:`.child_process`, :mod:`.tagger_process`, :mod:`.rerank_process`). Nothing here imports Qt.
"""
