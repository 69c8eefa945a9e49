"""Label Studio's JSON export (a JSON array of tasks; also one task object, or one task per
line, as Label Studio imports them), read; and tasks with pre-annotations
(``predictions``) written, for Label Studio to import.

A task is ``{"id", "data": {"text": ...}, "annotations": [{"result": [{"type": "labels",
"from_name", "to_name", "value": {"start", "end", "text", "labels": [...]}}], "was_cancelled",
"created_at", "updated_at", ...}], "predictions": [...]}``; offsets are characters. Why a module
of its own: the annotations of a task are nested inside one JSON document, not one per line.

Choices when reading, each counted in a ``note:`` line (:attr:`Corpus.notes`), never silent:

* a task with several annotations is read from its **most recent one not cancelled**
  (``updated_at``, else ``created_at``; the last in the list when they tie): the latest
  correction wins; the count of such tasks is reported;
* a task without such an annotation is read from its most recent **prediction** (same rule);
  a task whose annotations were all cancelled and that has no prediction is skipped (the
  annotator refused it: reading it as "no entities" would be a wrong gold standard);
* a task with neither annotations nor predictions is read with no entities (text to annotate);
* results other than ``labels`` (relations, choices, text areas) are not kept; a region with
  several labels keeps its first; whitespace at a region's edges is not part of the entity
  (trimmed and counted, as for every record format: :mod:`._records`);
* the text is ``data.text``, or the task's only string in ``data`` under another name;
* Label Studio 0.x exports (one file per task, or an array of them) call the annotations
  ``completions``: read as annotations;
* a region's ``value.text``, when given, must be the text at its offsets; offsets counted in
  UTF-16 units (what Label Studio versions before 1.4 stored for text with emoji) are
  recognised by that check and converted.

Written: a JSON array of tasks, one per sentence, ``{"data": {"text", "doc_id"?}, "predictions":
[{"model_version", "score"?, "result": [labels regions]}]}``, for the usual NER labelling config
(``<Labels name="label" toName="text">`` and ``<Text name="text" value="$text"/>``; a task read
from Label Studio keeps its own names and its other ``data`` fields). ``model_version`` and
``score`` come from the sentence's ``meta`` when a tagger put them there, else ``"nerstudio"``
and no score.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...errors import FormatError
from ..model import Corpus
from . import _records as R
from . import utf8

if TYPE_CHECKING:
    from ..writing import Losses

NAME = "label-studio"


def sniff(path: str, head: str) -> bool:
    h = head.lstrip("\ufeff \t\r\n")
    if not ('"data"' in h and any(f'"{k}"' in h for k in _RESULTS)):
        return False
    if h.startswith("["):
        return True
    if not h.startswith("{"):
        return False
    obj = R.first_json_object(h)  # one task object (what Label Studio imports too), or one per line
    if obj is None:  # one object spread over lines: a task when a "data" object is among its keys
        return bool(_DATA_KEY.search(h))
    return isinstance(obj.get("data"), dict) and any(k in obj for k in _RESULTS)


# where a task keeps its labelled results: "completions" is Label Studio 0.x's "annotations"
_RESULTS = ("annotations", "completions", "predictions")
_DATA_KEY = re.compile(r'^\s*"data"\s*:\s*\{', re.M)


def _tasks(path: str, encoding: str) -> Iterator[tuple[int, object]]:
    """The tasks of an export: a JSON array, one task object, or one task object per line."""
    head = R.read_text(path, encoding).lstrip(" \t\r\n")
    if head.startswith("{") and R.first_json_object(head) is not None and "\n" in head.rstrip():
        yield from R.iter_jsonl(path, encoding)
    else:
        yield from R.iter_json_items(path, encoding, single=True)


def _utf16_to_index(text: str, units: int) -> int | None:
    """The character index at ``units`` UTF-16 code units into ``text`` (``None`` if inside a pair)."""
    n = 0
    for i, ch in enumerate(text):
        if n == units:
            return i
        n += 2 if ord(ch) > 0xFFFF else 1
    return len(text) if n == units else None


def _region(r: dict, text: str, path: str, line: int, notes: dict) -> list | None:
    value = r.get("value")
    if not isinstance(value, dict):
        raise FormatError(
            path, line, f'a labels result needs a "value" object, not {R.show(value)}'
        )
    labels = value.get("labels")
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
        raise FormatError(
            path, line, f'region {R.show(value)}: "labels" must be a non-empty list of strings'
        )
    if len(labels) > 1:
        _count(notes, "multi", line)
    a, b = value.get("start"), value.get("end")
    want = value.get("text")
    if isinstance(want, str) and type(a) is int and type(b) is int and text[a:b] != want:
        a16, b16 = _utf16_to_index(text, a), _utf16_to_index(text, b)
        if a16 is None or b16 is None or text[a16:b16] != want:
            raise FormatError(
                path,
                line,
                f"region {R.show(value)}: its text {want!r} is not the text at "
                f"[{a}, {b}) ({text[a:b]!r})",
            )
        a, b = a16, b16
    return [a, b, labels[0]]


def _latest(items: list) -> dict | None:
    best, best_key = None, None
    for k, item in enumerate(items):
        key = (str(item.get("updated_at") or item.get("created_at") or ""), k)
        if best_key is None or key > best_key:
            best, best_key = item, key
    return best


def _text(data: object, path: str, line: int) -> tuple[str, str]:
    if not isinstance(data, dict):
        raise FormatError(
            path, line, f'a Label Studio task needs a "data" object, not {R.show(data)}'
        )
    if isinstance(data.get("text"), str):
        return "text", data["text"]
    strings = [k for k, v in data.items() if isinstance(v, str)]
    if len(strings) == 1:
        return strings[0], data[strings[0]]
    raise FormatError(path, line, 'cannot tell which field of "data" is the text: name it "text"')


def _annotation(task: dict, path: str, line: int, counts: dict) -> tuple[bool, dict | None]:
    """Whether the task is read, and the annotation read: the most recent one not cancelled,
    else the most recent prediction (``None``: neither, read with no entities)."""
    anns = task.get("annotations") or task.get("completions") or []
    preds = task.get("predictions") or []
    if (
        not isinstance(anns, list)
        or not isinstance(preds, list)
        or not all(isinstance(a, dict) for a in anns + preds)
    ):
        raise FormatError(
            path,
            line,
            '"annotations" (or "completions") and "predictions" must be lists of objects',
        )
    live = [a for a in anns if not a.get("was_cancelled")]
    if len(live) > 1:
        _count(counts, "several", line)
    chosen = _latest(live)
    if chosen is None and preds:
        chosen = _latest(preds)
        _count(counts, "predictions", line)
    if chosen is None and anns:
        _count(counts, "cancelled", line)
        return False, None
    if chosen is None:
        _count(counts, "unlabelled", line)
    return True, chosen


def _labelled_regions(
    chosen: dict | None, text: str, path: str, line: int, counts: dict
) -> tuple[list, tuple[object, object] | None]:
    """The annotation's labelled regions as ``[start, end, label]`` and the ``from_name`` and
    ``to_name`` of the first one; results of other types are counted."""
    result = chosen.get("result", []) if chosen is not None else []
    if not isinstance(result, list):
        raise FormatError(path, line, f'"result" must be a list, not {R.show(result)}')
    spans, names = [], None
    for r in result:
        if not isinstance(r, dict):
            raise FormatError(path, line, f"each result must be an object, not {R.show(r)}")
        if r.get("type") != "labels":
            _count(counts, "other", line)
            continue
        names = names or (r.get("from_name"), r.get("to_name"))
        spans.append(_region(r, text, path, line, counts))
    return spans, names


def _kept(task: dict, key: str, names: tuple[object, object] | None) -> dict:
    """What a task keeps to be written back: its other data fields, its text's key, the
    names of its labelling tags and its meta."""
    data = {k: v for k, v in task["data"].items() if k != key}
    fields: dict = {"data": data, "_text_key": key}
    if names and all(isinstance(x, str) for x in names):
        fields["_names"] = list(names)
    if "meta" in task:
        fields["meta"] = task["meta"]
    return fields


def _read_task(b: R.CorpusBuilder, counts: dict, path: str, line: int, task: object) -> None:
    if not isinstance(task, dict):
        raise FormatError(path, line, f"each task must be a JSON object, not {R.show(task)}")
    key, text = _text(task.get("data"), path, line)
    read, chosen = _annotation(task, path, line, counts)
    if not read:
        return
    spans, names = _labelled_regions(chosen, text, path, line, counts)
    fields = _kept(task, key, names)
    doc_id = fields["data"].get("doc_id")
    spans = R.unique_spans(spans, b.tally, line)  # a region drawn twice is one entity
    b.add_text(text, spans, line, doc_id if isinstance(doc_id, (str, int)) else None, fields=fields)


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    b = R.CorpusBuilder(path, NAME, encoding, scheme)
    counts: dict = {}
    for line, task in _tasks(path, encoding):
        _read_task(b, counts, path, line, task)
    b.notes.extend(_notes(counts))
    return b.build()


_NOTES = (  # what each count means, in the order the notes are printed
    ("several", "task(s) with several annotations: the most recent not cancelled one was read"),
    ("predictions", "task(s) without annotation read from their (most recent) prediction"),
    ("cancelled", "task(s) whose annotations were all cancelled skipped"),
    ("unlabelled", "task(s) with neither annotation nor prediction read with no entities"),
    ("other", "result(s) other than labels (relations, choices, ...) not kept"),
    ("multi", "region(s) with several labels: the first label kept"),
)


def _count(counts: dict, key: str, line: int) -> None:
    """One more of ``key``; the line of the first one is kept (``key@``)."""
    counts[key] = counts.get(key, 0) + 1
    counts.setdefault(key + "@", line)


def _notes(c: dict) -> list[str]:
    return [f"{c[key]} {text}, first at line {c[key + '@']}" for key, text in _NOTES if c.get(key)]


def write(corpus: Corpus, path: str, losses: Losses, scheme: str) -> None:
    R.count_columns(corpus, losses, NAME)
    tasks = []
    for k, (doc_id, s, text, offsets) in enumerate(R.sentence_records(corpus, losses), 1):
        R.check_spans_writable(s, offsets, corpus.path or path, text)
        R.count_token_breaks(s, text, offsets, losses)
        R.check_reads_back(s, text, offsets, corpus.path or path, NAME)
        fields = R.kept_fields(s, NAME)
        from_name, to_name = fields.get("_names") or ("label", "text")
        data = {fields.get("_text_key", "text"): text, **fields.get("data", {})}
        if doc_id is not None:
            data["doc_id"] = doc_id
        result = [
            {
                "id": f"n{k}-{j}",
                "from_name": from_name,
                "to_name": to_name,
                "type": "labels",
                "value": {"start": a, "end": b, "text": text[a:b], "labels": [lab]},
            }
            for j, (a, b, lab) in enumerate(R.char_spans(s, offsets))
        ]
        meta = s.meta or {}
        pred: dict[str, object] = {"model_version": str(meta.get("model_version") or "nerstudio")}
        if isinstance(meta.get("score"), (int, float)) and not isinstance(meta.get("score"), bool):
            pred["score"] = float(meta["score"])
        pred["result"] = result
        task = {"data": data, "predictions": [pred]}
        if "meta" in fields:
            task["meta"] = fields["meta"]
        tasks.append(task)
    R.write_json(path, tasks, utf8(corpus.encoding))
