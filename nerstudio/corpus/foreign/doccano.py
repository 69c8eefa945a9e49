"""doccano's JSONL for sequence labelling, in its two modes (import and export files alike).

* **label triples** (format ``doccano``): ``{"text": ..., "label": [[start, end, "LABEL"], ...]}``
  plus ``id`` and other fields (``Comments``, metadata); older exports call the key ``labels``,
  and some call the text ``data`` (read, and written back, under that name);
  doccano 1.x exports hold ``"annotations": [{"label": 2, "start_offset", "end_offset", "user"}]``
  where the label is the label's **id** in the project: read with the id as the label, counted
  in a note (the names are not in the file);
* **relation mode** (format ``doccano-rel``, module :mod:`.doccano_rel`): ``{"text": ...,
  "entities": [{"id", "label", "start_offset", "end_offset"}], "relations": [{"id", "from_id",
  "to_id", "type"}]}``.

Why a module of its own: nerstudio's JSONL reads ``label`` triples, but would write edited
spans back as objects, which doccano cannot import, and it cannot read relation-mode entities.
Offsets are characters; tokenisation and all checks are those of nerstudio's JSONL records
(a span boundary inside a word splits the word; overlapping spans are an error at their line).

A record's spans are read whatever its shape (triples, ``entities`` or ``annotations``); records
in the file's other mode are counted in a note and written back in the file's mode. Records
without a ``doc_id`` are documents of their own (see :mod:`._records`).

Choices: relations are **not kept** (nerstudio holds no relations): each file's count is a
``note:`` line, never silent, and relation-mode files written back have ``"relations": []``.
A record's other fields (``id``, ``Comments``, metadata) are given back when the corpus is written
in the same mode; documents are kept as a ``doc_id`` field (doccano keeps unknown fields as
metadata), and records with the same ``doc_id`` in a row are read as one document.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeGuard

from ...errors import FormatError
from ..model import Corpus
from . import _records as R
from . import utf8

if TYPE_CHECKING:
    from ..writing import Losses

NAME = "doccano"
REL = "doccano-rel"
_LABEL_KEYS = ("label", "labels")
_NERSTUDIO_KEYS = ("spans", "tokens", "columns")  # only nerstudio's own JSONL has these


def _is_triples(value: object) -> TypeGuard[list[list[Any]]]:
    return isinstance(value, list) and all(isinstance(x, list) and len(x) == 3 for x in value)


def sniff_mode(head: str) -> str | None:
    """``"label"``, ``"rel"`` or ``None`` from the first record; ``None`` too when a line of
    ``head`` has a key only nerstudio's own JSONL has (a file that mixes the two is nerstudio's)."""
    obj = R.first_json_object(head)
    if obj is None or _text_key(obj) is None:
        return None
    if any(f'"{k}"' in head for k in _NERSTUDIO_KEYS) and any(
        any(k in o for k in _NERSTUDIO_KEYS)
        for o in map(R.first_json_object, head.split("\n"))
        if o
    ):
        return None
    ents = obj.get("entities")
    if isinstance(ents, list) and (
        (ents and isinstance(ents[0], dict) and "start_offset" in ents[0])
        or (not ents and "relations" in obj)
    ):
        return "rel"
    if any(_is_triples(obj.get(k)) for k in _LABEL_KEYS) and "entities" not in obj:
        return "label"
    anns = obj.get("annotations")  # doccano 1.x exports: objects with label ids
    if isinstance(anns, list) and (
        not anns or (isinstance(anns[0], dict) and "start_offset" in anns[0])
    ):
        return "label"
    return None


def sniff(path: str, head: str) -> bool:
    return sniff_mode(head) == "label"


def _text_key(obj: dict) -> str | None:
    """Where a record keeps its text: ``text``, or ``data`` (what some doccano exports call it)."""
    return next((k for k in ("text", "data") if isinstance(obj.get(k), str)), None)


def _triples(obj: dict, path: str, line: int) -> tuple[str | None, list]:
    key = next((k for k in _LABEL_KEYS if k in obj), None)
    raw = obj.get(key) if key else []
    if not _is_triples(raw):
        raise FormatError(
            path,
            line,
            f'"{key}" must be a list of [start, end, "LABEL"] triples, not {R.show(raw)}',
        )
    return key, [list(x) for x in raw]


def _entities(
    obj: dict, path: str, line: int, key: str = "entities", tally: R.Tally | None = None
) -> list:
    raw = obj.get(key, [])
    if not isinstance(raw, list):
        raise FormatError(path, line, f'"{key}" must be a list, not {R.show(raw)}')
    out = []
    for e in raw:
        if not isinstance(e, dict) or not all(
            k in e for k in ("start_offset", "end_offset", "label")
        ):
            raise FormatError(
                path,
                line,
                f'cannot read entity {R.show(e)}: it needs "start_offset", '
                '"end_offset" and "label"',
            )
        label = e["label"]
        if type(label) is int:  # doccano 1.x exports name a label by its id in the project
            if tally is not None:
                tally.add("label_ids", line, f"label {label}")
            label = str(label)
        out.append([e["start_offset"], e["end_offset"], label])
    return out


def _record_spans(
    obj: dict, path: str, line: int, mode: str, tally: R.Tally
) -> tuple[str | None, list]:
    """Every span of a record, whatever shape it has: ``label``/``labels`` triples, relation-mode
    ``entities`` or 1.x ``annotations``; a shape other than the file's (``mode``) is counted."""
    key: str | None = None
    spans: list[list[Any]] = []
    if any(k in obj for k in _LABEL_KEYS):
        key, spans = _triples(obj, path, line)
        if mode == "rel":
            tally.add("other_mode", line, f'"{key}" triples in a relation-mode file')
    for k in ("entities", "annotations"):
        if k in obj:
            spans += _entities(obj, path, line, k, tally)
            if mode == "label" and k == "entities":
                tally.add("other_mode", line, '"entities" objects in a label-mode file')
    # the same span twice (several 1.x annotators, or given twice: doccano imports it) is one entity
    return key, R.unique_spans(spans, tally, line)


def read_mode(path: str, encoding: str, scheme: str | None, mode: str) -> Corpus:
    fmt = REL if mode == "rel" else NAME
    b = R.CorpusBuilder(path, fmt, encoding, scheme)
    relations = records_with = 0
    first_rel = None
    for line, obj in R.iter_jsonl(path, encoding):
        text_key = _text_key(obj)
        if text_key is None:
            raise FormatError(
                path,
                line,
                f'a doccano record needs a "text" string (or "data"), not {R.show(obj.get("text"))}',
            )
        text = obj[text_key]
        mixed = next((k for k in _NERSTUDIO_KEYS if k in obj), None)
        if mixed:
            raise FormatError(
                path,
                line,
                f"\"{mixed}\" is a field of nerstudio's own JSONL, not of doccano's: "
                "the file mixes the two (read it with --from jsonl)",
            )
        key, spans = _record_spans(obj, path, line, mode, b.tally)
        rels = obj.get("relations") or []
        if not isinstance(rels, list):
            raise FormatError(path, line, f'"relations" must be a list, not {R.show(rels)}')
        relations += len(rels)
        records_with += bool(rels)
        if rels and first_rel is None:
            first_rel = line
        if mode == "rel":
            fields = {
                k: v
                for k, v in obj.items()
                if k not in (text_key, "entities", "relations", *_LABEL_KEYS)
            }
        else:
            fields = {
                k: v
                for k, v in obj.items()
                if k not in (text_key, "entities", "annotations", *_LABEL_KEYS)
            }
            fields["_key"] = key or "label"
        if text_key != "text":
            fields["_text_key"] = text_key
        doc_id = obj.get("doc_id")
        if doc_id is not None and (isinstance(doc_id, bool) or not isinstance(doc_id, (str, int))):
            raise FormatError(
                path, line, f'"doc_id" must be a string or an integer, not {R.show(doc_id)}'
            )
        b.add_text(text, spans, line, doc_id, fields=fields)
    if relations:
        b.notes.append(
            f"{relations} relation(s) in {records_with} record(s) not kept: nerstudio holds entities "
            f"only, first at line {first_rel}"
        )
    return b.build()


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    return read_mode(path, encoding, scheme, "label")


def write_mode(corpus: Corpus, path: str, losses: Losses, scheme: str, mode: str) -> None:
    fmt = REL if mode == "rel" else NAME
    R.count_columns(corpus, losses, fmt)
    n_ent = [0]

    def records() -> Iterator[dict[str, object]]:
        for k, (doc_id, s, text, offsets) in enumerate(R.sentence_records(corpus, losses), 1):
            R.check_spans_writable(s, offsets, corpus.path or path, text)
            R.count_token_breaks(s, text, offsets, losses)
            R.check_reads_back(s, text, offsets, corpus.path or path, fmt)
            fields = R.kept_fields(s, fmt)
            key = fields.pop("_key", "label")
            rec = {"id": fields.pop("id", k)}
            if doc_id is not None:
                rec["doc_id"] = doc_id
                fields.pop("doc_id", None)
            rec[fields.pop("_text_key", "text")] = text
            spans = R.char_spans(s, offsets)
            if mode == "rel":
                ents = []
                for a, e, lab in spans:
                    n_ent[0] += 1
                    ents.append({"id": n_ent[0], "label": lab, "start_offset": a, "end_offset": e})
                rec["entities"] = ents
                rec["relations"] = []
            else:
                rec[key] = [[a, e, lab] for a, e, lab in spans]
            rec.update(fields)
            yield rec

    R.write_json_lines(path, records(), utf8(corpus.encoding))


def write(corpus: Corpus, path: str, losses: Losses, scheme: str) -> None:
    write_mode(corpus, path, losses, scheme, "label")
