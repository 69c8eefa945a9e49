"""Fixed label keys: one order per set of entity types, the same in every session.

The digit keys 1–9 set the type at that position of the corpus's type order, and the letter keys
go to each type's first free letter in that order, so the order *is* the keyboard. It used to be
the order in which the labels were met (sorted when the file opened, new types appended), which
changed between sessions: a blank file offered PER first, a pre-annotation then brought ORG
first, and the same data reopened as JSONL put LOC first — an annotator typing digits mislabelled
without noticing. Here the order depends on the *set* of types only, never on the file, its
format or the order in which the entities appear:

* a set inside a **known** one gets the known set's order, complete: any CoNLL subset is
  PER ORG LOC MISC (a file with only PER entities still offers ORG as 2);
* an exact set met before gets the order it had (**remembered** in a small JSON file in the
  user's configuration folder, keyed by the set), and a set inside a remembered one gets that
  one's order;
* otherwise the largest known or remembered set inside it keeps its order and the new types
  follow, sorted; the result is remembered;
* during a session a type that appears (an accepted candidate, a pre-annotation) is appended to
  the order in use, so nothing on the keyboard moves while the annotator works.

No Qt here; :func:`nerstudio.app.types.document_types` asks :func:`label_orders`.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable

from ..corpus.atomic import atomic_open

log = logging.getLogger(__name__)

CONLL_ORDER = ("PER", "ORG", "LOC", "MISC")
WNUT_ORDER = ("corporation", "creative-work", "group", "location", "person", "product")
KNOWN_ORDERS = (CONLL_ORDER, WNUT_ORDER)

ENV = "NERSTUDIO_LABEL_KEYS"  # the file of remembered orders (tests point it at a temporary file)


def default_path() -> str:
    env = os.environ.get(ENV)
    if env:
        return env
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "nerstudio", "label-keys.json")


class LabelOrders:
    """The known orders plus those remembered in the JSON file ``path`` (None: not kept)."""

    def __init__(self, path: str | None = None):
        self.path = path
        self.remembered: list[tuple[str, ...]] = []
        if path and os.path.exists(path):
            try:
                with open(path, encoding="utf-8") as f:
                    data = json.load(f)
                self.remembered = [
                    tuple(str(x) for x in o) for o in data.get("orders", []) if isinstance(o, list)
                ]
            except (OSError, ValueError, AttributeError) as exc:  # unreadable: start afresh, say so
                log.warning(
                    "%s: cannot read the remembered label keys (%s); starting afresh", path, exc
                )

    def _entries(self) -> list[tuple[str, ...]]:
        return [*KNOWN_ORDERS, *self.remembered]

    def order(
        self, labels: Iterable[str], current: tuple[str, ...] | None = None
    ) -> tuple[str, ...]:
        """The type order for ``labels``; ``current``: the order in use this session (kept, new
        types appended)."""
        want = set(labels)
        if current is not None:
            new = sorted(want - set(current))
            if not new:
                return tuple(current)
            return self._remember((*current, *new))
        entries = self._entries()
        for e in entries:
            if set(e) == want:
                return e
        supersets = [e for e in entries if want <= set(e)]
        if supersets:
            return min(supersets, key=len)
        subsets = [e for e in entries if set(e) <= want]
        base = max(subsets, key=len) if subsets else ()
        return self._remember((*base, *sorted(want - set(base))))

    def _remember(self, order: tuple[str, ...]) -> tuple[str, ...]:
        if not order or any(set(e) == set(order) for e in self._entries()):
            return order
        self.remembered.append(order)
        if self.path:
            try:
                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
                with atomic_open(self.path) as f:
                    json.dump(
                        {"orders": [list(o) for o in self.remembered]},
                        f,
                        ensure_ascii=False,
                        indent=1,
                    )
            except OSError as exc:  # the keys still hold for this session
                log.warning("%s: cannot remember the label keys (%s)", self.path, exc)
        return order


_STORES: dict[str, LabelOrders] = {}


def label_orders() -> LabelOrders:
    """The store of the user's configuration folder (one per path, read once)."""
    path = default_path()
    if path not in _STORES:
        _STORES[path] = LabelOrders(path)
    return _STORES[path]
