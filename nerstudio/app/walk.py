"""F7's walk through a review queue: "next" taken from the queue, not from the cursor.

The queue is the sentences the browser shows in its order (e.g. most uncertain first among the
sentences not reviewed). That order changes under the annotator: a model in the loop re-predicts
the sentences and the order is computed again, the sentence just left drops out of a "not
reviewed" filter. Stepping from the cursor's place in the order of the moment would then skip
whatever moved ahead of it. A :class:`Walk` remembers instead the sentences it has been through
(and the one the annotator was on when they pressed the key) and goes to the first sentence of
the queue *now* that it has not been through, so a walk visits every sentence of the queue in
order whatever reorders it or moves the cursor. It starts again when the queue's definition
(``key``: the measure, the filters) changes. No Qt here.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable


class Walk:
    """See the module docstring."""

    def __init__(self) -> None:
        self.key: Hashable = None
        self.path: list[int] = []  # the sentences walked through, in order

    def reset(self, key: Hashable = None) -> None:
        self.key, self.path = key, []

    def next(self, queue: Iterable[int], current: int, key: Hashable = None) -> int | None:
        """The first sentence of ``queue`` this walk has not been through, other than
        ``current`` (the one the annotator is on, now counted as been through); None when
        there is none. ``key``: what the queue is; another one starts a new walk."""
        if key != self.key:
            self.reset(key)
        if current >= 0 and current not in self.path:
            self.path.append(int(current))
        seen = set(self.path)
        target = next((int(k) for k in queue if int(k) not in seen), None)
        if target is not None:
            self.path.append(target)
        return target

    def back(self, current: int, key: Hashable = None) -> int | None:
        """The sentence the walk went through before ``current`` (before its last one when
        ``current`` is not on it); None at its start."""
        if key != self.key:
            self.reset(key)
            return None
        if current in self.path:
            i = self.path.index(current)
            return self.path[i - 1] if i > 0 else None
        return self.path[-1] if self.path else None
