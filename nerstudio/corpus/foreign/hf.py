"""Hugging Face token classification data: ``tokens`` and ``ner_tags`` per example, as
``datasets``' ``to_json`` writes it (JSON Lines), or one JSON array, or ``{"data": [...]}``.

Why a module of its own: the tags are usually **integers** whose names live outside the file,
so nerstudio's JSONL reader would see tokens without spans and read zero entities. Here the
names are looked for next to the file, in this order:

1. ``<stem>.labels.txt`` (``train.labels.txt`` for ``train.jsonl``), then ``labels.txt``: one
   name per line, line *k* naming tag *k* (the ``--labels`` file of Hugging Face's example
   scripts);
2. ``dataset_info.json`` (what ``datasets`` saves beside its data): the names of the tag
   feature's ``ClassLabel`` (``features.ner_tags.feature.names``); ``dataset_infos.json`` (one
   entry per configuration) too, from its first configuration that has them.

When several of these are present and name the tags differently, the first is read and a note
says which files disagree (``--strict`` refuses the file).

A file with integer tags and none of these is **one error** naming them, never zero entities.
String tags (``"B-PER"``) are read as tags directly. The tag key is ``ner_tags``, else ``tags``,
else ``ner``; the tokens are ``tokens``, else ``words`` (the ``{"words", "ner"}`` sample of the
transformers token-classification examples), and are written back under the same keys. The tag scheme is detected from all the tags, as for column files
(``--from-scheme`` forces it); invalid transitions are repaired the conlleval way and counted.
An example whose only token is ``-DOCSTART-`` starts a new document (some conversions keep
them); an example without tokens is skipped and counted.

Written: JSON Lines of ``{"id", "tokens", "ner_tags"}`` with integer tags in the scheme asked,
and the names beside it in ``<stem>.labels.txt`` (the two files are one save: both replaced, or
neither): ``O`` first, then each type's tags in the
scheme's order (types sorted); a corpus read from this format keeps its own names and ids (new
tags are appended) and its examples' other fields (``pos_tags``, ...). Document boundaries and
extra columns are not kept (reported).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...errors import FormatError
from ..atomic import atomic_files
from ..model import Corpus, Document, Sentence
from ..schemes import SchemeDetector, SchemeError, decode, encode, normalize_scheme
from . import _records as R

if TYPE_CHECKING:
    from ..writing import Losses

NAME = "hf"
TAG_KEYS = ("ner_tags", "tags", "ner")
TOKEN_KEYS = ("tokens", "words")  # "words" + "ner": the transformers examples' CoNLL sample
DOCSTART = "-DOCSTART-"
_TOKENS = re.compile(r'"(tokens|words)"\s*:\s*\[\s*("|\])')
_TAGS = re.compile(r'"(ner_tags|tags|ner)"\s*:\s*\[')
_ORDER = {"iob1": "IB", "iob2": "BI", "bioes": "BIES", "bilou": "BILU", "scn": "SC"}


def sniff(path: str, head: str) -> bool:
    obj = R.first_json_object(head)
    if (
        obj is not None
        and isinstance(obj.get("data"), list)
        and obj["data"]
        and "tokens" not in obj
    ):
        # {"data": [...]} on one line
        obj = obj["data"][0] if isinstance(obj["data"][0], dict) else None
        if obj is None:
            return False
    if obj is not None:
        tokens = next((obj[k] for k in TOKEN_KEYS if k in obj), None)
        return (
            isinstance(tokens, list)
            and any(isinstance(obj.get(k), list) for k in TAG_KEYS)
            and all(isinstance(t, str) for t in tokens)
        )
    h = head.lstrip("\ufeff \t\r\n")
    return h[:1] in "[{" and bool(_TOKENS.search(h)) and bool(_TAGS.search(h))


def sidecar(path: str) -> str:
    """The labels file written beside ``path`` (and read first)."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, os.path.splitext(name)[0] + ".labels.txt")


def label_names(path: str, key: str = "ner_tags") -> tuple[list[str], str] | None:
    """The tag names for the data file ``path`` and the file they came from (see the module
    docstring), or ``None``. A labels file that cannot be read is an error naming it."""
    found = all_label_names(path, key)
    return found[0] if found else None


def all_label_names(path: str, key: str = "ner_tags") -> list[tuple[list[str], str]]:
    """Every ``(names, file)`` found for ``path``, in the order of the module docstring."""
    folder = os.path.dirname(os.path.abspath(path))
    out = []
    for cand in (sidecar(path), os.path.join(folder, "labels.txt")):
        if os.path.isfile(cand):
            text = R.read_text(cand, "utf-8")
            names = [x.strip() for x in text.splitlines()]
            while names and not names[-1]:
                names.pop()
            if not names or not all(names):
                raise FormatError(
                    cand, None, "a labels file holds one tag name per line, no blank lines"
                )
            out.append((names, cand))
    for cand in ("dataset_info.json", "dataset_infos.json"):
        full = os.path.join(folder, cand)
        if not os.path.isfile(full):
            continue
        try:
            info = json.loads(R.read_text(full, "utf-8"))
        except (ValueError, RecursionError) as exc:
            raise FormatError(full, None, f"invalid JSON: {exc}") from None
        infos = (
            [info]
            if cand == "dataset_info.json"
            else list(info.values())
            if isinstance(info, dict)
            else []
        )
        for one in infos:
            feature = _feature_names(one, key)
            if feature:
                out.append((feature, full))
                break
    return out


def _disagreement(found: list[tuple[list[str], str]]) -> str | None:
    """A note when the label files found name the tags differently (the first one is read)."""
    names, source = found[0]
    other = next(((n, f) for n, f in found[1:] if n != names), None)
    if other is None:
        return None
    k = next((i for i, (a, b) in enumerate(zip(names, other[0])) if a != b), None)
    if k is not None:
        why = f"tag {k} is {names[k]!r} in one, {other[0][k]!r} in the other"
    else:
        why = f"{len(names)} names against {len(other[0])}"
    return (
        f"the tag names of {os.path.basename(source)} and {os.path.basename(other[1])} "
        f"disagree ({why}): read with those of {os.path.basename(source)}"
    )


def _feature_names(info: object, key: str) -> list[str] | None:
    feats = info.get("features") if isinstance(info, dict) else None
    feat = feats.get(key) if isinstance(feats, dict) else None
    while isinstance(
        feat, dict
    ):  # Sequence(ClassLabel(names=[...])), possibly nested one level more
        names = feat.get("names")
        if isinstance(names, list) and names and all(isinstance(x, str) for x in names):
            return names
        feat = feat.get("feature")
    return None


def _examples(path: str, encoding: str) -> Iterator[tuple[int, object]]:
    text_head = R.read_text(path, encoding).lstrip(" \t\r\n")
    first = R.first_json_object(text_head) if text_head.startswith("{") else None
    if first is not None and not (isinstance(first.get("data"), list) and "tokens" not in first):
        yield from R.iter_jsonl(path, encoding)
    else:
        yield from R.iter_json_items(path, encoding, ("data",))


class _Names:
    """The names of a file's integer tags, looked for beside it at the first example that
    needs them (see the module docstring)."""

    def __init__(self, path: str):
        self.path = path
        self.names: list[str] | None = None
        self.source: str | None = None
        self.conflict: str | None = None  # a note: the label files found disagree

    def _find(self, key: str, line: int) -> list[str]:
        every = all_label_names(self.path, key)  # tags were found under key
        if not every:
            raise FormatError(
                self.path,
                line,
                "integer ner_tags but no label names: write them one per line "
                f"(line k names tag k) in {os.path.basename(sidecar(self.path))} or "
                "labels.txt next to the file, or put there the dataset_info.json "
                "that datasets saves (features.ner_tags.feature.names)",
            )
        self.names, self.source = every[0]
        self.conflict = _disagreement(every)
        return self.names

    def of(self, tags: list[int], key: str, line: int) -> list[str]:
        """The names of integer tags; a tag without a name is an error at its line."""
        names = self.names if self.names is not None else self._find(key, line)
        bad = next((t for t in tags if not 0 <= t < len(names)), None)
        if bad is not None:
            raise FormatError(
                self.path,
                line,
                f"tag {bad} has no name: {self.source} names {len(names)} tags "
                f"(0 to {len(names) - 1})",
            )
        return [names[t] for t in tags]


def _tokens_and_tags(
    path: str, line: int, ex: object
) -> tuple[dict, str, list[str], str | None, list]:
    """An example, its tokens' key and tokens, and its tags' key and tags, checked."""
    if not isinstance(ex, dict):
        raise FormatError(path, line, f"each example must be a JSON object, not {R.show(ex)}")
    words_key = next((k for k in TOKEN_KEYS if k in ex), "tokens")
    tokens = ex.get(words_key)
    key = next((k for k in TAG_KEYS if k in ex), None)
    tags = ex.get(key) if key else None
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise FormatError(
            path, line, f'"{words_key}" must be a list of strings, not {R.show(tokens)}'
        )
    if not isinstance(tags, list) or len(tags) != len(tokens):
        raise FormatError(
            path,
            line,
            f'"ner_tags" must be a list of one tag per token ({len(tokens)}), not {R.show(tags)}',
        )
    return ex, words_key, tokens, key, tags


def _named_tags(path: str, line: int, tags: list, key: str | None, names: _Names) -> list[str]:
    """String tags: integer tags named, string tags as they are; anything else an error."""
    if all(type(t) is int for t in tags) and tags:
        return names.of(tags, key or "ner_tags", line)
    if not all(isinstance(t, str) for t in tags):
        raise FormatError(
            path, line, f'"{key}" must be all integers or all strings, not {R.show(tags)}'
        )
    return tags


_Row = tuple[int, list[str], list[str], dict, "str | None"]  # line, tokens, tags, fields, key


def _rows(path: str, encoding: str, names: _Names) -> tuple[list[_Row], int]:
    """The examples with tokens, and the number of examples without."""
    rows: list[_Row] = []
    empty = 0
    for line, raw in _examples(path, encoding):
        ex, words_key, tokens, key, tags = _tokens_and_tags(path, line, raw)
        tags = _named_tags(path, line, tags, key, names)
        if not tokens:
            empty += 1
            continue
        fields = {k: v for k, v in ex.items() if k not in (words_key, key)}
        if words_key != "tokens":
            fields["_words_key"] = words_key
        rows.append((line, tokens, tags, fields, key))
    if not rows:
        raise FormatError(
            path,
            None,
            "no sentences: "
            + (f"{empty} example(s), none with tokens" if empty else "no examples"),
        )
    return rows, empty


def _detect(rows: list[_Row]) -> str:
    det = SchemeDetector()
    for _, tokens, tags, _, _ in rows:
        if tokens != [DOCSTART]:
            det.add(tags)
    return det.result()


def _documents(path: str, rows: list[_Row], scheme: str) -> tuple[list[Document], int]:
    """The documents (an example whose only token is ``-DOCSTART-`` starts one) and the
    repairs made decoding the tags."""
    docs, repairs = [Document()], 0
    for line, tokens, tags, fields, key in rows:
        if tokens == [DOCSTART]:
            docs.append(Document(docstart=None))
            continue
        try:
            spans, fixed = decode(tags, scheme)
        except SchemeError as exc:
            raise FormatError(path, line, f"token {exc.index + 1}: {exc.message}") from None
        repairs += fixed
        fields["_key"] = key
        docs[-1].sentences.append(
            Sentence(tokens, spans, tags=tags, line=line, meta=R.origin(NAME, fields, spans))
        )
    docs = [d for d in docs if d.sentences]
    for k, d in enumerate(docs):
        d.id = str(k + 1)
    return docs, repairs


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    names = _Names(path)
    rows, empty = _rows(path, encoding, names)
    scheme = normalize_scheme(_detect(rows) if scheme is None else scheme)
    docs, repairs = _documents(path, rows, scheme)
    notes = [f"{empty} example(s) without tokens skipped"] if empty else []
    if names.conflict:
        notes.append(names.conflict)
    return Corpus(
        docs,
        path=path,
        format=NAME,
        scheme=scheme,
        encoding=encoding,
        layout=None,
        repairs=repairs,
        notes=notes,
    )


def _tag_order(tags: set[str], scheme: str) -> list[str]:
    outside = "N" if scheme == "scn" else "O"
    prefixes = _ORDER[scheme]
    types = sorted({t.partition("-")[2] for t in tags if t != outside})
    full = [outside] + [f"{p}-{lab}" if lab else p for lab in types for p in prefixes]
    return full + sorted(tags - set(full))


def _check_writable(s: Sentence, tags: list[str], src: str) -> None:
    """Refuse what the reader would read otherwise: a tag name that is not one line of the
    labels file as written (a line break of any kind inside it, whitespace at its ends, which
    the reader strips), and a sentence whose only token is ``-DOCSTART-`` (a document boundary)."""
    for t, sp in ((t, span) for span in s.spans for t in tags[span.start : span.end]):
        if t.splitlines() != [t] or t != t.strip():
            raise FormatError(
                src,
                s.line or None,
                f"the label {sp.label!r} cannot be written as hf: its tag "
                f"{t!r} would not be one line of the labels file (a line break, "
                "or whitespace at its ends); save as jsonl",
            )
    if list(s.words) == [DOCSTART]:
        raise FormatError(
            src,
            s.line or None,
            f"a sentence whose only token is {DOCSTART} reads back from hf as a "
            "document boundary; save as jsonl",
        )


def write(corpus: Corpus, path: str, losses: Losses, scheme: str) -> None:
    scheme = normalize_scheme(scheme)
    R.count_columns(corpus, losses, NAME)
    if len(corpus.documents) > 1:
        losses.add(
            "documents",
            n=len(corpus.documents),
            text="the boundaries of {n} documents not kept: {fmt} has examples, not documents",
        )
    tagged = [(s, encode(s.spans, len(s.words), scheme)) for s in corpus.sentences if s.words]
    src = corpus.path or path
    for s, tags in tagged:
        _check_writable(s, tags, src)
    used = {t for _, tags in tagged for t in tags}
    names: list[str] = []
    if corpus.format == NAME and corpus.path and corpus.scheme == scheme:
        found = label_names(corpus.path)
        names = list(found[0]) if found else []
    names += [t for t in _tag_order(used, scheme) if t not in names]
    index = {t: i for i, t in enumerate(names)}

    def examples() -> Iterator[dict[str, object]]:
        for k, (s, tags) in enumerate(tagged):
            fields = R.kept_fields(s, NAME)
            key = fields.pop("_key", "ner_tags")
            ex = {
                "id": fields.pop("id", str(k)),
                fields.pop("_words_key", "tokens"): list(s.words),
                key: [index[t] for t in tags],
            }
            ex.update(fields)
            yield ex

    # the data and its names are one save: both files replaced, or neither (atomic_files)
    with atomic_files() as files:
        with files.open(sidecar(path), encoding="utf-8") as f:
            f.write("".join(n + "\n" for n in names))
        with files.open(path, encoding="utf-8") as f:
            R.dump_json_lines(f, path, examples())
