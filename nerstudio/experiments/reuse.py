"""An experiment's tagger and N-best lists taken from an earlier run instead of made again.

Why: the tagger stage (jackknife, the whole-corpus model, decoding dev and test) is most of a
typed Collins run, and it does not depend on the rerankers' settings. An ablation of the
rerankers' resources (gazetteer lists, document context) changes only the later stages, so each
of its rows can start from one run's ``tagger.npz`` and ``{train,dev,test}-nbest.npz``
(``nerstudio experiment --lists-from DIR``). The lists are the same files a full run would have
made (the tagger is deterministic), so a row's figures are those of a full run with its settings.

Refused, with a one-line reason: lists made with other tagger settings (task, feature set, N,
folds, the tagger's regularisation and cut-off: recorded in each list's ``meta["made_by"]`` by :func:`made_by`), made for other sentences
(the words and gold entities of every sentence are compared with the corpora read now), or a
missing or unreadable file.
"""

from __future__ import annotations

import os
import shutil

from ..corpus.model import Corpus
from ..errors import DataError
from ..nbest import NBestList
from ..tagging.maxent import MaxEntTagger

LIST_NAMES = ("train", "dev", "test")


def made_by(tagger_params: dict, n: int, folds: int) -> dict:
    """What a run's N-best lists depend on (the tagger's settings, N, the folds), as recorded in
    their ``meta["made_by"]``: of the tagger's number of iterations and of epochs, only its
    optimiser's (the online one counts epochs, L-BFGS and GIS iterations)."""
    params = dict(tagger_params)
    params.pop("max_iter" if params.get("optimizer") == "adagrad" else "epochs", None)
    return {**params, "n": int(n), "folds": int(folds)}


def load_lists(folder, expected: dict, corpora: dict[str, Corpus]):
    """``(tagger, {"train": NBestList, "dev": …, "test": …})`` from ``folder``, checked against
    ``expected`` (:func:`made_by`) and against ``corpora`` (name → the corpus read now)."""
    folder = os.fspath(folder)
    tagger_path = os.path.join(folder, "tagger.npz")
    if not os.path.isfile(tagger_path):
        raise DataError(f"{folder}: no tagger.npz (not an experiment's output directory)")
    tagger = MaxEntTagger.load(tagger_path)
    lists = {}
    for name in LIST_NAMES:
        path = os.path.join(folder, f"{name}-nbest.npz")
        if not os.path.isfile(path):
            raise DataError(f"{path}: missing (not an experiment's output directory)")
        nb = NBestList.load(path)
        got = nb.meta.get("made_by")
        if got is None:
            raise DataError(
                f"{path}: the list does not record the settings it was made with "
                "(made by an older nerstudio): run the experiment without --lists-from"
            )
        # lists made before the tagger had a choice of tags were SCN, of optimiser L-BFGS's
        got = {"alphabet": "scn", "optimizer": "lbfgs", **got}
        if got != expected:
            diff = ", ".join(
                f"{k} {got.get(k)!r} (wanted {v!r})" for k, v in expected.items() if got.get(k) != v
            )
            raise DataError(f"{path}: made with other settings: {diff}")
        _check_sentences(path, nb, corpora[name], typed=expected["task"] == "typed")
        lists[name] = nb
    made = (tagger.task, tagger.features, tagger.alphabet)
    wanted = (expected["task"], expected["features"], expected.get("alphabet", "scn"))
    if made != wanted:
        raise DataError(f"{tagger_path}: a {'/'.join(made)} tagger, wanted {'/'.join(wanted)}")
    return tagger, lists


def copy_lists(folder, out_dir) -> None:
    """The tagger and lists of ``folder`` into ``out_dir`` (atomically, file by file; nothing
    to do when they are the same folder), so every run's directory holds its own inputs."""
    if os.path.samefile(folder, out_dir):
        return
    for name in ("tagger",) + tuple(f"{n}-nbest" for n in LIST_NAMES):
        src, dst = os.path.join(folder, f"{name}.npz"), os.path.join(out_dir, f"{name}.npz")
        tmp = dst + ".part"
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)


def _check_sentences(path: str, nb: NBestList, corpus: Corpus, typed: bool) -> None:
    sentences = corpus.sentences
    if len(nb) != len(sentences):
        raise DataError(f"{path}: {len(nb)} sentences, the corpus has {len(sentences)}")
    for i, s in enumerate(sentences):
        if tuple(nb.words[i]) != tuple(s.words):
            raise DataError(f"{path}: sentence {i + 1} has other words than the corpus")
        if nb.gold is not None:
            want = sorted((a, b, c if typed else "") for a, b, c in s.spans)
            have = sorted((a, b, c if typed else "") for a, b, c in nb.gold[i])
            if want != have:
                raise DataError(f"{path}: sentence {i + 1} has other gold entities than the corpus")
