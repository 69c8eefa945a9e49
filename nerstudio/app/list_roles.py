"""Which N-best list is a training list and which a dev list, however it was opened.

Teach trains on a training list and draws its dev F curve on a dev list. Either may reach the
session as the corpus's own list (File ▸ Open N-best list, or the list found beside a corpus)
or as the dev list (File ▸ Open dev N-best list), so the way a list came in does not say what
it is for; this module reads its role from the list itself (:func:`role_of`) and picks the two
lists Teach uses from those the session holds (:func:`pick_lists`). No Qt here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from ..nbest import NBestList


class Role(Enum):
    TRAIN = "train"  # a reranker may be trained on it
    DEV = "dev"  # held out: scored, never trained on (dev or test)


#: words of a file name that say its role (``eng.testa`` is CoNLL-2003's dev set)
TRAIN_WORDS = frozenset({"train", "training", "trn"})
DEV_WORDS = frozenset(
    {"dev", "devel", "development", "valid", "validation", "val", "heldout", "testa"}
    | {"test", "testb", "tst", "eval", "evaluation"}
)
_SUFFIXES = (".nbest.npz", ".npz", ".conll", ".conllu", ".txt", ".jsonl", ".json")


def name_words(path: str | None) -> list[str]:
    """The lower-case words of a file name (its folders and known suffixes left out)."""
    if not path:
        return []
    name = os.path.basename(path).lower()
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return [w for w in re.split(r"[^a-z0-9]+", name) if w]


def name_role(path: str | None) -> Role | None:
    """The role a file name says (``train.nbest.npz``, ``eng.testa``), else None."""
    words = set(name_words(path))
    train, dev = bool(words & TRAIN_WORDS), bool(words & DEV_WORDS)
    if train == dev:  # neither, or both (``train-dev``): the name does not say
        return None
    return Role.TRAIN if train else Role.DEV


def role_of(nb: NBestList, path: str | None, corpus_path: str | None = None) -> Role | None:
    """What ``nb`` (read from ``path``, attached to the corpus at ``corpus_path``) is for:

    * a jackknifed list (``meta["jackknife_folds"]``) is a training list: jackknifing is what
      gives candidates a reranker can learn from;
    * else what its file name says, else the name of the corpus it was decoded from
      (``meta["source"]``), else that of the corpus it is attached to;
    * else None (unknown).
    """
    if nb.meta.get("jackknife_folds"):
        return Role.TRAIN
    source = nb.meta.get("source")
    for name in (path, source if isinstance(source, str) else None, corpus_path):
        role = name_role(name)
        if role is not None:
            return role
    return None


def sibling(path: str | None, role: Role) -> str | None:
    """The list of the other role beside ``path`` (``model/dev.nbest.npz`` ↔
    ``model/train.nbest.npz``): the first word of the name that says the opposite role replaced
    by ``train`` or ``dev``; None when there is no such file."""
    if not path or name_role(path) is None or name_role(path) is role:
        return None
    head, name = os.path.split(path)
    other = TRAIN_WORDS if role is Role.DEV else DEV_WORDS
    new = "dev" if role is Role.DEV else "train"
    for m in re.finditer(r"[A-Za-z0-9]+", name):
        if m.group().lower() in other:
            cand = os.path.join(head, name[: m.start()] + new + name[m.end() :])
            return cand if os.path.isfile(cand) else None
    return None


@dataclass(frozen=True)
class Held:
    """A list the session holds, as Teach would name it."""

    nbest: NBestList
    path: str | None
    name: str

    @classmethod
    def of(cls, nb: NBestList, path: str | None, fallback: str) -> Held:
        return cls(nb, path, os.path.basename(path) if path else fallback)


def same_list(a: Held, b: Held) -> bool:
    """The same file, or lists of the same sentences."""
    if a.path and b.path and os.path.abspath(a.path) == os.path.abspath(b.path):
        return True
    x, y = a.nbest, b.nbest
    return len(x) == len(y) and all(list(u) == list(v) for u, v in zip(x.words, y.words))


@dataclass(frozen=True)
class TeachLists:
    """The lists Teach uses; ``*_attached``: that list is the corpus's (its gold is the corpus's
    and moves with the annotator's edits)."""

    train: Held | None
    dev: Held | None
    train_attached: bool = False
    dev_attached: bool = False


def pick_lists(
    attached: Held | None,
    dev: Held | None,
    remembered: Sequence[Held],
    corpus_path: str | None,
    load: Callable[[str], Held | None],
) -> TeachLists:
    """Teach's training list and dev list from the lists the session holds.

    ``attached``: the corpus's list; ``dev``: the list opened as the dev list; ``remembered``:
    training lists seen earlier in the session, newest first; ``load(path)`` reads a list found
    beside another (None if it cannot). Lists without gold are never used.

    The attached list is the dev list when it is the list opened as such or its role
    (:func:`role_of`) is dev; else it is the training list. A missing training list is the newest
    remembered one, else the ``train`` list beside the dev list; a missing dev list is the
    ``dev`` list beside the training list.
    """
    if attached is not None and attached.nbest.gold is None:
        attached = None
    if dev is not None and dev.nbest.gold is None:
        dev = None
    attached_role = None
    if attached is not None:
        is_dev = (dev is not None and same_list(attached, dev)) or role_of(
            attached.nbest, attached.path, corpus_path
        ) is Role.DEV
        attached_role = Role.DEV if is_dev else Role.TRAIN
    train = attached if attached_role is Role.TRAIN else None
    train_attached = train is not None
    held_dev = dev if dev is not None else (attached if attached_role is Role.DEV else None)
    dev_attached = held_dev is attached and attached is not None
    if train is None:
        for old in remembered:
            if old.nbest.gold is not None and (held_dev is None or not same_list(old, held_dev)):
                train = old
                break
    if train is None and held_dev is not None:
        path = sibling(held_dev.path, Role.TRAIN)
        found = load(path) if path else None
        train = found if found is not None and found.nbest.gold is not None else None
    if held_dev is None and train is not None:
        path = sibling(train.path, Role.DEV)
        found = load(path) if path else None
        held_dev = found if found is not None and found.nbest.gold is not None else None
    return TeachLists(train, held_dev, train_attached, dev_attached)
