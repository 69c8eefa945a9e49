"""Universal Dependencies' ``Entity=`` bracket annotation (CorefUD, GUM) read as entities.

UD treebanks with coreference or entity annotation mark each **mention** in the MISC column of
its words: ``Entity=(e3-person-1`` on its first word opens it, ``Entity=e3)`` on its last closes
it, ``Entity=(e3-person-1)`` is a one-word mention, and several brackets follow each other on a
word (``Entity=(e4-place-1)e3)``). The fields inside an opening bracket are named by the file's
``# global.Entity = eid-etype-head-other`` comment (GUM: ``GRP-etype-infstat-…``); the entity
type is the ``etype`` field. A mention split in parts has ``[1/2]`` after its id.

A mention becomes an entity of its type. What does not fit nerstudio's entities (one type, no
overlap, contiguous, inside one sentence) is set aside and counted, never silently:

* nested or overlapping mentions: the longest is kept (ties: the one that starts first), as for
  brat;
* discontinuous mentions (``[1/2]``), mentions without a type, and mentions left open at the end
  of their sentence are not read.

Note that ``Entity=`` marks every mention (pronouns and common noun phrases too), not only
names: the note that reports the reading says so.
"""

from __future__ import annotations

import bisect

DEFAULT_FIELDS = ("eid", "etype", "head", "other")


def fields_of(comment_body: str) -> tuple[str, ...] | None:
    """The field names of a ``global.Entity = …`` comment body (after ``#``), else ``None``."""
    key, eq, value = comment_body.partition("=")
    if eq and key.strip() == "global.Entity" and value.strip():
        return tuple(value.strip().split("-"))
    return None


def brackets(value: str) -> list[tuple[str, str]] | None:
    """``Entity=`` value → ``[("open" | "single" | "close", body)]``, or ``None`` if malformed."""
    out, i, n = [], 0, len(value)
    while i < n:
        if value[i] == "(":
            j = i + 1
            while j < n and value[j] not in "()":
                j += 1
            if j < n and value[j] == ")":
                out.append(("single", value[i + 1 : j]))
                i = j + 1
            else:
                out.append(("open", value[i + 1 : j]))
                i = j
        else:
            j = i
            while j < n and value[j] not in "()":
                j += 1
            if j >= n or value[j] != ")" or j == i:
                return None
            out.append(("close", value[i:j]))
            i = j + 1
    return out


class Mentions:
    """Mentions of one file, collected sentence by sentence (see the module docstring)."""

    def __init__(self) -> None:
        self.fields: tuple[str, ...] = DEFAULT_FIELDS
        self.aside: dict[str, list[int]] = {}  # reason -> lines
        self.read = 0

    def _set_aside(self, why: str, line: int) -> None:
        self.aside.setdefault(why, []).append(line)

    def sentence(self, values: list[str | None], lines: list[int]) -> list[tuple[int, int, str]]:
        """The kept ``(start, end, type)`` entities of one sentence, from each word's ``Entity=``
        value (``None``: none) and the line of each word."""
        etype_at = self.fields.index("etype") if "etype" in self.fields else 1
        open_: dict[str, list[tuple[int, str, int]]] = {}
        found: list[tuple[int, int, str, int]] = []
        for i, value in enumerate(values):
            if value is None:
                continue
            items = brackets(value)
            if items is None:
                self._set_aside("malformed", lines[i])
                continue
            for kind, body in items:
                parts = body.split("-")
                eid = parts[0]
                etype = parts[etype_at] if kind != "close" and len(parts) > etype_at else ""
                if kind == "close":
                    stack = open_.get(eid)
                    if not stack:
                        self._set_aside("malformed", lines[i])
                        continue
                    start, etype, line = stack.pop()
                    found.append((start, i + 1, etype, line))
                elif "[" in eid:  # a part of a discontinuous mention
                    if kind == "open":
                        open_.setdefault(eid, []).append((i, "\0discontinuous", lines[i]))
                    else:
                        self._set_aside("discontinuous", lines[i])
                elif kind == "open":
                    open_.setdefault(eid, []).append((i, etype, lines[i]))
                else:
                    found.append((i, i + 1, etype, lines[i]))
        for stack in open_.values():
            for _, etype, line in stack:
                self._set_aside("discontinuous" if etype == "\0discontinuous" else "unclosed", line)
        kept: list[tuple[int, int, str, int]] = []
        starts: list[int] = []
        for m in sorted(found, key=lambda m: (-(m[1] - m[0]), m[0], m[3])):
            if m[2] == "\0discontinuous":
                self._set_aside("discontinuous", m[3])
                continue
            if not m[2]:
                self._set_aside("untyped", m[3])
                continue
            k = bisect.bisect_left(starts, m[0])
            if (k < len(kept) and kept[k][0] < m[1]) or (k > 0 and kept[k - 1][1] > m[0]):
                self._set_aside("nested", m[3])
                continue
            starts.insert(k, m[0])
            kept.insert(k, m)
        self.read += len(kept)
        return [(a, b, t) for a, b, t, _ in kept]

    def notes(self) -> list[str]:
        out = [
            f"entities read from UD's Entity= bracket annotation (no NE=/NER= attribute): {self.read} "
            "mention(s), typed by the bracket's etype; Entity= marks every mention (pronouns and noun "
            "phrases too), not only names"
        ]
        texts = {
            "nested": "nested or overlapping mention(s) set aside (the longest kept)",
            "discontinuous": "discontinuous mention part(s) not read",
            "untyped": "mention(s) without an entity type not read",
            "unclosed": "mention(s) not closed within their sentence not read",
            "malformed": "Entity= value(s) that are not well-formed brackets not read",
        }
        for why, text in texts.items():
            if self.aside.get(why):
                out.append(f"{len(self.aside[why])} {text}, first at line {min(self.aside[why])}")
        return out
