"""What words and entity mentions look like, shared by the taggers and the rerankers.

:mod:`nerstudio.tagging` and :mod:`nerstudio.rerank` must not import each other (the layers are
checked by import-linter, see ``pyproject.toml``); the descriptions both need live here, below
them: word shapes and the lowercase lexicon (:mod:`.shapes`) and Kazama & Torisawa's non-local
features of an entity's mentions across a document (:mod:`.nonlocal_features`).
"""
