"""Which N-best list is a training list and which a dev list, whatever way it was opened."""

from __future__ import annotations

import numpy as np

from nerstudio.app.list_roles import Held, Role, name_role, pick_lists, role_of, sibling
from nerstudio.corpus.model import Span
from nerstudio.nbest import NBestList


def _list(words: list[list[str]], meta: dict | None = None, gold: bool = True) -> NBestList:
    cands = [np.zeros((1, len(w)), dtype=np.int32) for w in words]
    lps = [np.zeros(1) for _ in words]
    g: list[list[Span]] | None = [[] for _ in words] if gold else None
    return NBestList(["O"], words, cands, lps, g, [str(i) for i in range(len(words))], meta or {})


def test_names_say_the_role():
    assert name_role("model/train.nbest.npz") is Role.TRAIN
    assert name_role("/x/eng.testa.nbest.npz") is Role.DEV
    assert name_role("dev.conll") is Role.DEV and name_role("eng.testb") is Role.DEV
    assert name_role("devices.nbest.npz") is None and name_role("train-dev.npz") is None
    assert name_role(None) is None and name_role("lists.npz") is None


def test_a_jackknifed_list_is_a_training_list_whatever_its_name():
    nb = _list([["a"]], {"jackknife_folds": 5})
    assert role_of(nb, "dev.nbest.npz", "dev.conll") is Role.TRAIN
    plain = _list([["a"]], {"source": "/data/eng.testa"})
    assert role_of(plain, "lists.npz", None) is Role.DEV
    assert role_of(_list([["a"]]), "lists.npz", "/c/dev.conll") is Role.DEV
    assert role_of(_list([["a"]]), "lists.npz", "/c/corpus.conll") is None


def test_siblings(tmp_path):
    (tmp_path / "eng.train.nbest.npz").write_bytes(b"")
    (tmp_path / "dev.nbest.npz").write_bytes(b"")
    testa = str(tmp_path / "eng.testa.nbest.npz")
    assert sibling(testa, Role.TRAIN) == str(tmp_path / "eng.train.nbest.npz")
    assert sibling(str(tmp_path / "train.nbest.npz"), Role.DEV) == str(tmp_path / "dev.nbest.npz")
    assert sibling(str(tmp_path / "dev.nbest.npz"), Role.DEV) is None  # already a dev list
    assert sibling(str(tmp_path / "x.nbest.npz"), Role.TRAIN) is None


def test_a_dev_list_attached_to_the_corpus_is_never_trained_on(tmp_path):
    dev = Held.of(_list([["d"]]), str(tmp_path / "dev.nbest.npz"), "")
    train_path = str(tmp_path / "train.nbest.npz")
    (tmp_path / "train.nbest.npz").write_bytes(b"")
    train = Held.of(_list([["t"]], {"jackknife_folds": 5}), train_path, "")
    asked: list[str] = []

    def load(path: str) -> Held | None:
        asked.append(path)
        return train if path == train_path else None

    lists = pick_lists(dev, None, [], str(tmp_path / "dev.conll"), load)
    assert lists.train is train and lists.dev is dev and lists.dev_attached
    assert not lists.train_attached and asked == [train_path]
    # the same list opened both ways: the dev list
    lists = pick_lists(dev, dev, [train], None, load)
    assert lists.train is train and lists.dev is dev
    # a training list attached: trained on, and a list without gold is never used
    lists = pick_lists(train, Held.of(_list([["d"]], gold=False), None, "x"), [], None, load)
    assert lists.train is train and lists.train_attached and lists.dev is None
