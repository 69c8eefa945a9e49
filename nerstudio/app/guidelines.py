"""Annotation guidelines: the Markdown file beside a corpus, and the label descriptions in it.

A team keeps its guidelines in a Markdown file next to the corpus; the application shows it
while annotating (a tab, reloaded when the file changes) and puts each label's description in
the tooltip of the label's chip in the legend. This module finds the file and reads the
descriptions; no Qt here.

**Which file** (:func:`find_guidelines`): for a corpus ``NAME.EXT`` (or a brat folder ``NAME``),
the first that exists in its folder of ``NAME.guidelines.md``, ``NAME.EXT.guidelines.md``,
``guidelines.md``, ``GUIDELINES.md`` (any case of ``guidelines.md``); a folder corpus is also
searched inside. A file chosen in the application's settings comes first.

**Label descriptions** (:func:`label_descriptions`), two conventions, either or both:

* a heading that is a label, optionally followed by ``:`` or a dash and a short title: the
  description is that title and the first paragraph under the heading::

      ## PER — Person
      Names of people, including fictional ones; not titles ("Mr").

* a list item that starts with a label and ``:`` or a dash::

      - ORG: companies, institutions, teams, bands
      - **LOC** — places, countries, regions

A label is a word of letters, digits, ``_``, ``-`` or ``.`` (optionally in backticks or bold);
the first description of a label wins; a heading's paragraph ends at a blank line, a heading
or a list. Markdown emphasis marks are taken out of the text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from ..errors import DataError

MAX_BYTES = 2_000_000  # a guidelines file larger than this is not read (not a guidelines file)
NAMES = ("guidelines.md",)

_LABEL = r"[`*_]{0,2}([A-Za-z0-9][\w.\-]*)[`*_]{0,2}"
_SEP = r"\s*(?::|—|–|-{1,2})\s*"
_HEADING = re.compile(rf"^\s{{0,3}}#{{1,6}}\s+{_LABEL}\s*(?:{_SEP}(.*?))?\s*#*\s*$")
_ITEM = re.compile(rf"^\s*(?:[-*+]|\d+[.)])\s+{_LABEL}{_SEP}(.+?)\s*$")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)(.+?)\1")


def find_guidelines(corpus_path: str | None, chosen: str | None = None) -> str | None:
    """The guidelines file of the corpus at ``corpus_path`` (see the module docstring), or None.
    ``chosen``: a file picked in the settings, used when it exists."""
    if chosen and os.path.isfile(chosen):
        return chosen
    if not corpus_path:
        return None
    path = os.fspath(corpus_path).rstrip("/\\")
    folder, base = os.path.split(path)
    stem = os.path.splitext(base)[0]
    places = [(folder or ".", [f"{stem}.guidelines.md", f"{base}.guidelines.md"])]
    if os.path.isdir(path):
        places.insert(0, (path, []))
    for where, own in places:
        try:
            names = sorted(os.listdir(where))
        except OSError:
            continue
        lower = {n.lower(): n for n in reversed(names) if os.path.isfile(os.path.join(where, n))}
        for want in [*own, *NAMES]:
            hit = lower.get(want.lower())
            if hit:
                return os.path.join(where, hit)
    return None


def read_guidelines(path: str) -> str:
    """The text of the guidelines file at ``path`` (undecodable bytes replaced). Raises OSError
    (the file cannot be read) or ValueError (larger than :data:`MAX_BYTES`)."""
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        raise DataError(
            f"{os.path.basename(path)} is {size:,} bytes: too large for a guidelines file"
        )
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _plain(text: str) -> str:
    return " ".join(_EMPHASIS.sub(r"\2", text).split())


def label_descriptions(markdown: str, labels: Iterable[str] | None = None) -> dict[str, str]:
    """Label → description found in ``markdown`` (see the module docstring); with ``labels``,
    only those labels (without, any one-word heading with a paragraph counts as a label)."""
    wanted = set(labels) if labels is not None else None
    out: dict[str, str] = {}
    lines = markdown.splitlines()
    in_code = False
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code:
            continue
        m = _HEADING.match(line)
        if m:
            label, title = m.group(1), (m.group(2) or "").strip()
            para = []
            j = i
            while j < len(lines) and not lines[j].strip():
                j += 1
            while (
                j < len(lines)
                and lines[j].strip()
                and not lines[j].lstrip().startswith(("#", "```", "~~~"))
                and not _LIST.match(lines[j])
            ):
                para.append(lines[j].strip())
                j += 1
            text = _plain(" — ".join(x for x in (title, " ".join(para)) if x))
            if text and (wanted is None or label in wanted):
                out.setdefault(label, text)
            continue
        m = _ITEM.match(line)
        if m and (wanted is None or m.group(1) in wanted):
            text = _plain(m.group(2))
            if text:
                out.setdefault(m.group(1), text)
    return out
