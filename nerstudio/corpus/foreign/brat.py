"""brat standoff: a document's text in ``NAME.txt`` and its annotations in ``NAME.ann``.

Either file may be named (``nerstudio stats doc.ann`` or ``doc.txt`` when ``doc.ann`` is beside
it), or a **folder** of such pairs, as brat keeps a collection (``nerstudio stats collection/``):
each pair is one document, in the order of the file names (``NAME.TXT``/``NAME.ANN`` in upper
case too); a ``.txt`` without its ``.ann``, a ``.ann`` without its ``.txt``, an empty ``.txt``
and subfolders are not read (reported). The ``.ann`` holds one annotation per line: text-bound ``T1<TAB>LABEL START END<TAB>text``
(character offsets into the ``.txt``), and relations ``R``, events ``E``, attributes ``A``/``M``,
normalisations ``N``, notes ``#`` and equivalences ``*``.

Reading: the ``.txt`` is one document, split into sentences and tokens by
:mod:`nerstudio.corpus.segment`; tokens are cut at entity boundaries that fall inside words, and
a sentence break never falls inside an entity. Each entity's text must match the ``.txt`` at its
offsets (else the offsets are wrong: an error at the line). Choices, reported in
``Corpus.notes`` (printed by the CLI, shown by the application), never silent:

* **overlapping or nested entities**: nerstudio's entities do not overlap; the longest is kept
  (ties: the one that starts first, then the first in the file) and the others are set aside;
* **discontinuous entities** (``0 5;10 15``): kept as one entity from the first start to the
  last end when only whitespace lies between the fragments (a line break inside a name), else
  set aside like an overlapping one;
* whitespace at an entity's edges is not part of it (an entity is a run of tokens): the entity
  is shown and converted without it, and its line keeps its original offsets when saved back as
  brat (brat's own files are left as they were; other formats get the trimmed offsets);
* lines of other kinds (relations, events, attributes, notes) are not shown.

Nothing set aside is lost: writing back to brat a corpus read from brat writes every original
line of the ``.ann`` whose entities are unchanged (set-aside entities included), the lines that
refer only to entities still there, and new ``T`` lines (new ids) for new or changed entities;
lines left referring to an entity that was removed are dropped and counted in the report. Old
lines are matched one by one (an id used on two lines keeps both). brat holds the text, not its
tokens: the sentences whose sentence or token breaks the reader would not find again in the
written ``.txt`` are counted in the report (``--strict`` refuses them).
Writing writes the ``.txt`` (the document's text, from :meth:`Document.text_and_offsets`)
and the ``.ann`` as one save (:func:`~nerstudio.corpus.atomic.atomic_files`: every file of a pair
or a collection replaced, or none). Lines are split at ``\n`` only, as brat does: U+2028 and the
other characters ``str.splitlines`` breaks at are ordinary characters of an entity's text. A corpus of several documents is written into a folder (an
existing one: a folder read as brat, or ``nerstudio convert corpus.jsonl collection/ --to brat``), one pair
per document named by its id; a pair written back from a folder keeps its lines as above, and
files of the folder that are not the corpus's documents are left alone. To one pair of files, a
corpus of several documents is refused.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
from collections import Counter
from typing import TYPE_CHECKING

from ...errors import FormatError
from ..atomic import AtomicFiles, atomic_files
from ..model import Corpus, Document
from . import runtext, utf8

if TYPE_CHECKING:
    from ..writing import Losses

_T_LINE = re.compile(r"^T\d+\S*\t\S+ \d+ \d+(;\d+ \d+)*\t")
_OTHER = re.compile(r"^([REAMN*]\d*\S*\t|#\d*\S*\t)")
_LOOSE = re.compile(r"^\ufeff?[TREAMN#*]\S*\t")
_IDS = re.compile(r"(?<![\w])([TERAMN#]\d+)\b")


def pair(path: str) -> tuple[str, str]:
    """The ``(.txt, .ann)`` paths for either file of a pair (``NAME.ANN`` beside ``NAME.TXT``
    too: the partner is the file that exists, in lower or upper case)."""
    stem, ext = os.path.splitext(path)
    low = ext.lower()
    txt = path if low == ".txt" else _partner(stem, ".txt")
    ann = path if low == ".ann" else _partner(stem, ".ann")
    return txt, ann


def _partner(stem: str, ext: str) -> str:
    for cand in (stem + ext, stem + ext.upper()):
        if os.path.isfile(cand):
            return cand
    return stem + ext


def _members(names: list[str]) -> dict[str, dict[str, str]]:
    """``stem -> {".txt" or ".ann": file name}`` of the names of one folder (the extension in
    any case; hidden files left out; of two names differing in the extension's case, the first)."""
    out: dict[str, dict[str, str]] = {}
    for name in names:
        stem, ext = os.path.splitext(name)
        if not name.startswith(".") and ext.lower() in (".txt", ".ann"):
            out.setdefault(stem, {}).setdefault(ext.lower(), name)
    return out


def sniff(path: str, head: str) -> bool:
    low = path.lower()
    if low.endswith(".txt"):
        return os.path.isfile(pair(path)[1])
    if not low.endswith(".ann"):
        return False
    lines = [ln for ln in runtext.split_lines(head) if ln.strip()][:50]
    if not lines:
        return os.path.isfile(pair(path)[0])  # no annotation yet
    if all(_T_LINE.match(ln) or _OTHER.match(ln) for ln in lines):
        return True
    # beside its .txt, a .ann whose lines merely start like brat's is brat: the reader names the bad line
    return os.path.isfile(pair(path)[0]) and all(_LOOSE.match(ln) for ln in lines)


def _flat(s: str) -> str:
    """An entity's text as a .ann line holds it: line breaks as spaces."""
    return s.replace("\r", " ").replace("\n", " ")


def _entities(
    lines: list[str], text: str, ann: str, trimmed: list | None = None
) -> list[tuple[int, int, str, int, str, bool, bool]]:
    """``(start, end, label, lineno, id, discontinuous, joinable)`` of every T line, checked
    against the text; whitespace at an entity's edges is not part of it (``trimmed`` collects
    ``(lineno, the entity's text)`` of those that had some)."""
    out = []
    for lineno, line in enumerate(lines, 1):
        line = line.lstrip("\ufeff")  # a byte-order mark inside the file (.ann files concatenated)
        if not line.strip() or not line.startswith("T"):
            continue
        parts = line.split("\t")
        if len(parts) < 3 or " " not in parts[1]:
            raise FormatError(
                ann, lineno, "a text-bound annotation is 'T<n><TAB>LABEL START END<TAB>text'"
            )
        label, _, ranges = parts[1].partition(" ")
        frags = []
        for piece in ranges.split(";"):
            nums = piece.split()
            if len(nums) != 2 or not all(n.isascii() and n.isdigit() for n in nums):
                raise FormatError(
                    ann, lineno, f"bad offsets {ranges!r}: expected 'START END' (or 'S1 E1;S2 E2')"
                )
            a, b = int(nums[0]), int(nums[1])
            if not a < b <= len(text):
                raise FormatError(
                    ann,
                    lineno,
                    f"offsets {a} {b} are empty or outside the text ({len(text)} characters)",
                )
            frags.append((a, b))
        want = " ".join(text[a:b] for a, b in frags)
        got = "\t".join(parts[2:])
        if _flat(got) != _flat(want):
            raise FormatError(
                ann,
                lineno,
                f"the entity's text {got[:40]!r} is not the text at its offsets "
                f"({want[:40]!r}): are the .txt and the .ann from the same document?",
            )
        frags.sort()
        joinable = all(not text[b:a2].strip() for (_, b), (a2, _) in itertools.pairwise(frags))
        start, end = runtext.trim(text, frags[0][0], frags[-1][1])
        if start == end:
            raise FormatError(ann, lineno, f"the entity {label} covers only whitespace")
        if (start, end) != (frags[0][0], frags[-1][1]) and trimmed is not None:
            trimmed.append((lineno, text[frags[0][0] : frags[-1][1]]))
        out.append((start, end, label, lineno, parts[0], len(frags) > 1, joinable))
    return out


def _choose(ents: list[tuple[int, int, str, int, str, bool, bool]]) -> tuple[list, dict]:
    """Non-overlapping entities (longest first) and what was set aside, by reason. The kept
    ones are held sorted by start, so each test looks at two neighbours (n log n, not n²)."""
    starts: list[int] = []
    kept: list = []  # sorted by start, never overlapping
    aside: dict = {"overlap": [], "discontinuous": []}
    for e in sorted(ents, key=lambda e: (-(e[1] - e[0]), e[0], e[3])):
        if e[5] and not e[6]:
            aside["discontinuous"].append(e)
            continue
        i = bisect.bisect_left(starts, e[0])
        if (i < len(kept) and kept[i][0] < e[1]) or (i > 0 and kept[i - 1][1] > e[0]):
            aside["overlap"].append(e)
            continue
        starts.insert(i, e[0])
        kept.insert(i, e)
    return sorted(kept), aside


def folder_pairs(folder: str) -> tuple[list[tuple[str, str]], list[str], list[str], list[str]]:
    """The ``(.txt, .ann)`` pairs of a folder in name order (extensions in any case), the
    ``.txt`` files without a ``.ann``, the ``.ann`` files without a ``.txt`` and the subfolders
    (none of the three is read)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        raise FormatError(folder, None, f"cannot read the folder: {exc.strerror or exc}") from None
    subfolders = [
        n for n in names if not n.startswith(".") and os.path.isdir(os.path.join(folder, n))
    ]
    files = [n for n in names if not os.path.isdir(os.path.join(folder, n))]
    members = _members(files)
    pairs, lone, orphans = [], [], []
    for name in files:
        stem, ext = os.path.splitext(name)
        found = members.get(stem, {})
        if found.get(ext.lower()) != name:
            continue  # not a member (another extension, hidden, or a second case of one)
        if ext.lower() == ".ann":
            if ".txt" in found:
                pairs.append((os.path.join(folder, found[".txt"]), os.path.join(folder, name)))
            else:
                orphans.append(name)
        elif ".ann" not in found:
            lone.append(name)
    return pairs, lone, orphans, subfolders


def is_collection(path: str) -> bool:
    """Whether ``path`` is a folder holding at least one brat pair."""
    return os.path.isdir(path) and bool(folder_pairs(path)[0])


def _read_pair(
    txt: str, ann: str, encoding: str, raw: bool = False
) -> tuple[Document | None, list[str], str, bool, list]:
    """``(document or None if the text is empty, .ann lines, text, bom, notes)`` of one pair;
    ``raw``: the notes as ``(ann, (kind, count, line, example))`` losses, for a folder's summary."""
    text, bom = runtext.read_text(txt, encoding)
    ann_text, _ = runtext.read_text(ann, encoding)
    lines = runtext.split_lines(ann_text)
    trimmed: list = []
    ents = _entities(lines, text, ann, trimmed)
    kept, aside = _choose(ents)
    doc = runtext.document(
        text, [(a, b, lab, ln) for a, b, lab, ln, *_ in kept], ann, runtext.doc_id_of(txt)
    )
    losses = []  # (kind, count, first line, example or None), in the order of _KINDS
    joined = [e for e in kept if e[5]]
    if joined:
        losses.append(("joined", len(joined), min(e[3] for e in joined), None))
    for why in ("overlap", "discontinuous"):
        if aside[why]:
            losses.append((why, len(aside[why]), min(e[3] for e in aside[why]), None))
    if trimmed:
        losses.append(("trimmed", len(trimmed), trimmed[0][0], trimmed[0][1]))
    marks = [k for k, ln in enumerate(lines, 1) if ln.startswith("\ufeff")]
    if marks:
        losses.append(("bom", len(marks), marks[0], None))
    other = [
        k for k, ln in enumerate(lines, 1) if ln.strip() and not ln.lstrip("\ufeff").startswith("T")
    ]
    if other:
        losses.append(("other", len(other), other[0], None))
    notes = [(ann, x) for x in losses] if raw else _notes([(ann, x) for x in losses])
    return (doc if doc.sentences else None), lines, text, bom, notes


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    if os.path.isdir(path):
        return _read_folder(path, encoding, scheme)
    txt, ann = pair(path)
    for p in (txt, ann):
        if not os.path.isfile(p):
            raise FormatError(path, None, f"brat needs both files of a pair: {p} is missing")
    doc, lines, text, bom, notes = _read_pair(txt, ann, encoding)
    if doc is None:
        raise FormatError(txt, None, "no sentences: the text is empty")
    corpus = Corpus(
        [doc],
        path=os.fspath(path),
        format="brat",
        scheme=scheme or "iob2",
        encoding=encoding,
        newline="\r\n" if "\r\n" in text else "\n",
        bom=bom,
        final_newline=text.endswith("\n"),
        layout=lines,
    )
    corpus.notes.extend(notes)
    return corpus


_KINDS = {  # what each kind of note says; kept entities first, then what is set aside or not shown
    "joined": "discontinuous entit{ies} read as one span (only whitespace between the fragments)",
    "overlap": "overlapping or nested entit{ies} set aside (the longest kept; kept when saved back as brat)",
    "discontinuous": "discontinuous entit{ies} set aside (text between the fragments; kept when saved back as "
    "brat)",
    "trimmed": "entit{ies} with whitespace at their edges shown without it (their lines keep their offsets "
    "when saved back as brat)",
    "bom": "line(s) starting with a byte-order mark (U+FEFF) read without it",
    "other": "relation, event, attribute or note line(s) not shown (kept when saved back as brat)",
}


def _notes(losses: list) -> list[str]:
    """One note per kind: ``losses`` is ``[(ann file, (kind, count, line, example))]`` of one pair
    or of every pair of a folder (then counted over the files, the first one named)."""
    out = []
    for kind, what in _KINDS.items():
        found = [(ann, n, line, ex) for ann, (k, n, line, ex) in losses if k == kind]
        if not found:
            continue
        total = sum(n for _, n, _, _ in found)
        ann, _, line, ex = found[0]
        files = f" in {len(found)} files" if len(found) > 1 else ""
        plural = "y" if total == 1 else "ies"
        shown = f": {ex[:40]!r}" if ex is not None else ""
        out.append(
            f"{total} "
            + what.replace("{ies}", plural)
            + f"{files}, first at line {line} of {ann}{shown}"
        )
    return out


def _read_folder(folder: str, encoding: str, scheme: str | None) -> Corpus:
    """A brat collection: one document per pair; ``layout`` holds each document's ``.ann``
    lines (a list per document, in document order)."""
    pairs, lone, orphans, subfolders = folder_pairs(folder)
    if not pairs:
        raise FormatError(folder, None, "no brat pairs (NAME.txt with NAME.ann) in this folder")
    docs, layouts, notes, empty = [], [], [], []
    first_text, first_bom = None, False
    for txt, ann in pairs:
        doc, lines, text, bom, pair_losses = _read_pair(txt, ann, encoding, raw=True)
        if doc is None:
            empty.append(os.path.basename(txt))
            continue
        if first_text is None:
            first_text, first_bom = text, bom
        doc.path = txt
        docs.append(doc)
        layouts.append(lines)
        notes.extend(pair_losses)
    if not docs or first_text is None:
        raise FormatError(folder, None, "no sentences: every .txt of the folder is empty")
    corpus = Corpus(
        docs,
        path=os.fspath(folder),
        format="brat",
        scheme=scheme or "iob2",
        encoding=encoding,
        newline="\r\n" if "\r\n" in first_text else "\n",
        bom=first_bom,
        final_newline=first_text.endswith("\n"),
        layout=layouts,
    )
    corpus.notes.extend(_notes(notes))
    for what, names in (
        ("empty .txt file(s) not read (no sentence)", empty),
        (".txt file(s) without a .ann not read", lone),
        (".ann file(s) without a .txt not read (their entities have no text)", orphans),
        ("subfolder(s) not read", subfolders),
    ):
        if names:
            shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
            corpus.notes.append(f"{len(names)} {what}: {shown}")
    return corpus


def _current(
    doc: Document,
) -> tuple[str, list[tuple[int, int, str]], list[list[tuple[int, int]]]]:
    """The text of ``doc``, ``(start, end, label)`` of every entity in it, and each sentence's
    token offsets."""
    text, offsets = doc.text_and_offsets()
    ents = []
    for s, offs in zip(doc.sentences, offsets):
        for sp in s.spans:
            ents.append((offs[sp.start][0], offs[sp.end - 1][1], sp.label or "Entity"))
    return text, ents, offsets


def _count_breaks(
    text: str, ents: list[tuple[int, int, str]], offsets: list, doc: Document, losses: Losses
) -> None:
    """Count the sentences whose sentence or token breaks the reader would not give back (it
    splits the ``.txt`` again): brat holds running text, not tokens."""
    again = {tuple(s) for s in runtext.split(text, [(a, b) for a, b, _ in ents])}
    lost = [s for s, offs in zip(doc.sentences, offsets) if offs and tuple(offs) not in again]
    if lost:
        losses.add(
            "breaks",
            lost[0].line or None,
            len(lost),
            text="the sentence or token breaks of {n} sentence(s) not kept: {fmt} holds running "
            "text, which is split into sentences and tokens again when read (jsonl keeps them)",
        )


def _layouts(corpus: Corpus) -> list:
    """Per document, the ``.ann`` lines it was read with (None: not read from brat): a folder's
    list of line lists, or a pair's lines for its one document."""
    layout = corpus.layout if corpus.format == "brat" else None
    if layout is None:
        return [None] * len(corpus.documents)
    if layout and isinstance(layout[0], list):
        return layout
    return [layout] if len(corpus.documents) == 1 else [None] * len(corpus.documents)


def render(corpus: Corpus, losses: Losses, target: str = "") -> tuple[str, str]:
    """The ``.txt`` and ``.ann`` contents of a one-document ``corpus`` (see the module docstring)."""
    if len(corpus.documents) != 1:
        raise FormatError(
            corpus.path or target,
            None,
            f"brat holds one document per .txt/.ann pair, this corpus has "
            f"{len(corpus.documents)}: save into a folder (one pair per "
            "document), or as jsonl",
        )
    return render_document(corpus.documents[0], _layouts(corpus)[0], corpus.path or target, losses)


def render_document(
    doc: Document, old: list[str] | None, src: str, losses: Losses
) -> tuple[str, str]:
    """The ``.txt`` and ``.ann`` contents of ``doc``; ``old``: the ``.ann`` lines it was read
    with (kept as the module docstring says), or None."""
    text, ents, offsets = _current(doc)
    if not text.strip():
        raise FormatError(
            src,
            None,
            f"document {doc.id or ''} has no text (its tokens are empty or whitespace): "
            "a brat .txt without text is not read back; save as jsonl",
        )
    for a, b, label in ents:
        if not text[a:b].strip():
            raise FormatError(
                src,
                None,
                f"the entity {label} at characters {a}-{b} of document {doc.id or ''} "
                f"covers {'no text' if a >= b else 'only whitespace'} ({text[a:b]!r}): brat "
                "cannot hold it; save as jsonl",
            )
    _count_breaks(text, ents, offsets, doc, losses)
    out: list[str] = []
    todo = list(ents)
    if old is not None:
        out, todo = _keep_old_lines(old, text, doc, src, todo, losses)
    used = {int(m.group(1)) for ln in out for m in [re.match(r"T(\d+)", ln)] if m}
    n = max(used, default=0)
    for a, b, label in sorted(todo):
        n += 1
        # one line, same length
        surface = text[a:b].replace("\r\n", "  ").replace("\n", " ").replace("\r", " ")
        out.append(f"T{n}\t{label} {a} {b}\t{surface}")
    return text, "".join(ln + "\n" for ln in out)


def _keep_old_lines(
    old: list[str], text: str, doc: Document, src: str, ents: list, losses: Losses
) -> tuple[list[str], list]:
    """The lines of ``old`` to write again and the entities of ``ents`` that no kept ``T`` line
    holds. Lines are matched one by one (by line, not by id: an id may repeat), each current
    entity with at most one old line of the same offsets and label (a multiset: linear, where
    searching a list for each line was quadratic)."""
    found = _entities(old, text, src) if text == doc.text else []
    shown = {e[3] for e in _choose(found)[0]}  # the lines whose entities were shown
    left = Counter((a, b, label) for a, b, label in ents)
    alive = set()  # lines whose entity is still there (or was set aside: never shown, never edited)
    for e in found:
        key = (e[0], e[1], e[2])
        if e[3] not in shown:
            alive.add(e[3])
        elif left[key] > 0:
            left[key] -= 1
            alive.add(e[3])
    t_lines = {e[3] for e in found}
    alive_ids = {e[4] for e in found if e[3] in alive}
    out, dropped = [], 0
    for lineno, line in enumerate(old, 1):
        if lineno in t_lines:
            if lineno in alive:
                out.append(line)
            continue
        if line.startswith("T"):  # not an entity of this text (the text changed): not kept
            continue
        refs = [r for r in _IDS.findall("\t".join(line.split("\t")[1:])) if r[0] in "TE"]
        if all(r in alive_ids or not r.startswith("T") for r in refs):
            out.append(line)
        else:
            dropped += 1
    if dropped:
        losses.add("brat_refs", None, dropped)
    return out, list(left.elements())


def _file_name(name: str) -> bool:
    """Whether ``name`` can be a file name here (no NUL, no unpaired surrogate)."""
    try:
        os.fsencode(name)
    except UnicodeError:
        return False
    return "\x00" not in name


def _document_names(corpus: Corpus) -> list[str]:
    """A file stem per document: its id when the ids are usable, distinct and in the order a
    folder is read in (file names), else numbered."""
    ids = [d.id for d in corpus.documents]
    usable = all(
        i
        and i == os.path.basename(i)
        and i not in (".", "..")
        and not i.startswith(".")
        and _file_name(i)
        for i in ids
    )
    # a folder is read in name order
    in_order = [i + ".ann" for i in ids] == sorted(i + ".ann" for i in ids)
    if usable and in_order and len(set(ids)) == len(ids):
        return ids
    width = max(4, len(str(len(ids))))
    return [f"doc-{k + 1:0{width}d}" for k in range(len(ids))]


def write(corpus: Corpus, path: str, losses: Losses, scheme: str) -> None:
    for label in {e.label for s in corpus.sentences for e in s.spans}:
        if any(c.isspace() for c in label):
            raise FormatError(
                path, None, f"the label {label!r} cannot be a brat type (it holds whitespace)"
            )
    with atomic_files() as files:  # every file of the save replaced, or none
        if os.path.isdir(path):
            try:  # a pair already there keeps its names (NAME.ANN is not doubled by a NAME.ann)
                members = _members(os.listdir(path))
            except OSError as exc:
                raise FormatError(
                    path, None, f"cannot read the folder: {exc.strerror or exc}"
                ) from None
            for doc, stem, old in zip(corpus.documents, _document_names(corpus), _layouts(corpus)):
                found = members.get(stem, {})
                txt = os.path.join(path, found.get(".txt", stem + ".txt"))
                ann = os.path.join(path, found.get(".ann", stem + ".ann"))
                _write_pair(files, txt, ann, *render_document(doc, old, txt, losses), corpus)
            return
        _write_pair(files, *pair(path), *render(corpus, losses, path), corpus)


def _write_pair(
    files: AtomicFiles, txt: str, ann: str, text: str, ann_text: str, corpus: Corpus
) -> None:
    """The ``.txt`` (only when it changed) and the ``.ann``, in the save ``files``."""
    encoding = utf8(corpus.encoding)
    if (corpus.bom and corpus.format in ("brat", "text")) or text.startswith("\ufeff"):
        # offsets count from after it, as when read (a first U+FEFF of the text is kept)
        text = "\ufeff" + text
    same = False
    try:
        with open(txt, encoding=encoding, newline="") as f:
            same = f.read() == text
    except (OSError, UnicodeError):
        pass
    if not same:
        with files.open(txt, encoding=encoding) as f:
            f.write(text)
    with files.open(ann, encoding=encoding) as f:
        f.write(ann_text)
