"""Prodigy's JSONL (``ner`` and ``ner_manual`` tasks, as ``prodigy db-out`` writes them).

A task is ``{"text", "tokens": [{"text", "start", "end", "id", "ws"}], "spans": [{"start",
"end", "token_start", "token_end", "label"}], "_input_hash", "_task_hash", "answer", ...}``;
``token_end`` is inclusive. Why a module of its own: Prodigy's tokens are objects, not strings,
and its tasks carry an answer, so nerstudio's own JSONL reader cannot read them.

Choices, each reported (``note:`` lines of the CLI, :attr:`Corpus.notes`), never silent:

* only **accepted** tasks are read (a task without ``answer`` counts as accepted): a rejected
  ``ner_manual`` task is one the annotator refused to annotate, and a rejected binary ``ner``
  task says its one span is wrong, not which spans are right; ``reject`` and ``ignore`` tasks
  are skipped and counted;
* a task whose ``_input_hash`` is that of an earlier accepted task (the same text annotated
  again: another session, another annotator, ``ner.teach``'s one-span questions) is skipped and
  counted: the first annotation of a text is the one read;
* tokens are checked against the text (each token's ``start``/``end`` must hold its ``text``);
  whitespace tokens (spaCy makes one of each extra space) are not words and are left out; spans
  are read from their character offsets, which must fall on token boundaries, and their
  ``token_start``/``token_end``, when given, must agree with them; whitespace at a span's edges
  (a span starting on spaCy's whitespace token) is trimmed and counted;
* ``relations`` (``rel.manual``, ``dep`` tasks) are not read (nerstudio holds entities): counted,
  with the first one shown; a task keeps them among its other fields when written back;
* a task without ``meta.doc_id`` is a document of its own (tasks are independent texts).

Written: one accepted task per sentence with ``text``, ``tokens``, ``spans`` (with token
offsets) and ``answer: accept``, which ``prodigy db-in`` imports; a task read from Prodigy keeps
its other fields (``meta``, ``_input_hash``, ``_view_id``...), except ``_task_hash`` once its
spans were edited (Prodigy recomputes it). Documents are kept as ``meta.doc_id``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...errors import FormatError
from ..model import Corpus
from . import _records as R
from . import utf8

if TYPE_CHECKING:
    from ..jsonl import Record
    from ..writing import Losses

NAME = "prodigy"
_OWN = ("text", "tokens", "spans", "answer")


def sniff(path: str, head: str) -> bool:
    obj = R.first_json_object(head)
    if obj is None:
        return ('"_task_hash"' in head or '"token_start"' in head) and head.lstrip(
            "\ufeff \t\r\n"
        ).startswith("{")
    if "_task_hash" in obj or "_input_hash" in obj:
        return True
    tokens, spans = obj.get("tokens"), obj.get("spans")
    return (
        isinstance(obj.get("text"), str)
        and isinstance(tokens, list)
        and bool(tokens)
        and isinstance(tokens[0], dict)
        and "start" in tokens[0]
    ) or (
        isinstance(spans, list)
        and any(isinstance(sp, dict) and "token_start" in sp for sp in spans)
    )


def _tokens(
    raw: object, text: str, path: str, line: int
) -> tuple[list[str], list[tuple[int, int]]] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise FormatError(
            path, line, f'"tokens" must be a list of token objects, not {R.show(raw)}'
        )
    words: list[str] = []
    offsets: list[tuple[int, int]] = []
    for k, t in enumerate(raw):
        if not isinstance(t, dict) or not isinstance(t.get("text"), str):
            raise FormatError(
                path,
                line,
                f'token {k + 1} must be an object with "text", "start" and "end", not {R.show(t)}',
            )
        a, b = t.get("start"), t.get("end")
        if not (type(a) is int and type(b) is int and 0 <= a <= b <= len(text)):
            raise FormatError(
                path,
                line,
                f"token {k + 1} {R.show(t)}: start and end must be whole numbers "
                f"inside the text of {len(text)} characters",
            )
        if offsets and a < offsets[-1][1]:
            raise FormatError(
                path,
                line,
                f"token {k + 1} {R.show(t)} starts before the end of the token before it",
            )
        if text[a:b] != t["text"]:
            raise FormatError(
                path,
                line,
                f"token {k + 1} {t['text']!r} does not match the text at [{a}, {b}) "
                f"({text[a:b]!r})",
            )
        if t["text"].strip():
            words.append(t["text"])
            offsets.append((a, b))
    return words, offsets


def _spans(
    raw: object,
    text: str,
    path: str,
    line: int,
    tokens: list[Any] | None,  # the task's token objects
) -> list:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FormatError(path, line, f'"spans" must be a list of spans, not {R.show(raw)}')
    out = []
    for sp in raw:
        if not isinstance(sp, dict) or not all(k in sp for k in ("start", "end", "label")):
            raise FormatError(
                path, line, f'cannot read span {R.show(sp)}: it needs "start", "end" and "label"'
            )
        ts, te = sp.get("token_start"), sp.get("token_end")
        if tokens is not None and ts is not None and te is not None:
            if not (type(ts) is int and type(te) is int and 0 <= ts <= te < len(tokens)):
                raise FormatError(
                    path,
                    line,
                    f"span {R.show(sp)}: token_start and token_end must be token "
                    f"indices (0 to {len(tokens) - 1})",
                )
            if (tokens[ts].get("start"), tokens[te].get("end")) != (sp["start"], sp["end"]):
                raise FormatError(
                    path,
                    line,
                    f"span {R.show(sp)}: its tokens {ts}-{te} cover "
                    f"[{tokens[ts].get('start')}, {tokens[te].get('end')}), "
                    f"not [{sp['start']}, {sp['end']})",
                )
        out.append([sp["start"], sp["end"], sp["label"]])
    return out


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    b = R.CorpusBuilder(path, NAME, encoding, scheme)
    skipped = {"reject": 0, "ignore": 0}
    seen, duplicates = set(), 0
    first: dict = {}  # kind -> line of the first task skipped so
    for line, obj in R.iter_jsonl(path, encoding):
        answer = obj.get("answer", "accept")
        if answer in ("reject", "ignore"):
            skipped[answer] += 1
            first.setdefault("answer", line)
            continue
        if answer != "accept":
            raise FormatError(
                path, line, f'"answer" must be "accept", "reject" or "ignore", not {R.show(answer)}'
            )
        text = obj.get("text")
        if not isinstance(text, str):
            raise FormatError(
                path, line, f'a Prodigy task needs a "text" string, not {R.show(text)}'
            )
        key = obj.get("_input_hash")
        if isinstance(key, (int, str)):
            if key in seen:
                duplicates += 1
                first.setdefault("hash", line)
                continue
            seen.add(key)
        toks = _tokens(obj.get("tokens"), text, path, line)
        char_spans = R.unique_spans(
            _spans(obj.get("spans"), text, path, line, obj.get("tokens")), b.tally, line
        )
        rels = obj.get("relations")
        if isinstance(rels, list) and rels:  # rel.manual / dep tasks: arcs between tokens or spans
            b.tally.add("relations", line, _relation_example(rels[0], text), len(rels))
        fields = {k: v for k, v in obj.items() if k not in _OWN}
        meta = fields.get("meta")
        doc_id = meta.get("doc_id") if isinstance(meta, dict) else None
        if toks is None:
            b.add_text(text, char_spans, line, doc_id, fields=fields)
        else:
            rec = _checked(text, toks, char_spans, path, line)
            b.trimmed(rec, line)
            b.add_tokens(text, rec.words, rec.offsets, rec.spans, line, doc_id, fields=fields)
    if skipped["reject"] or skipped["ignore"]:
        what = " and ".join(f"{n} {k}ed" for k, n in skipped.items() if n).replace(
            "ignoreed", "ignored"
        )
        b.notes.append(
            f"only accepted tasks read: {what} task(s) skipped, first at line {first['answer']}"
        )
    if duplicates:
        b.notes.append(
            f"{duplicates} task(s) with the _input_hash of an earlier accepted task skipped "
            f"(the first annotation of each text is read), first at line {first['hash']}"
        )
    return b.build()


def _relation_example(rel: object, text: Any) -> str:
    """A relation of a task, for a note: its label and the texts or tokens it joins."""
    if not isinstance(rel, dict):
        return R.show(rel)
    ends = []
    for k in ("head", "child"):
        sp = rel.get(f"{k}_span")
        a, b = (sp.get("start"), sp.get("end")) if isinstance(sp, dict) else (None, None)
        ok = type(a) is int and type(b) is int and isinstance(text, str) and 0 <= a < b <= len(text)
        ends.append(repr(text[a:b]) if ok else f"token {rel.get(k)}")
    return f"{R.show(rel.get('label'))} from {ends[0]} to {ends[1]}"


def _checked(
    text: str,
    toks: tuple[list[str], list[tuple[int, int]]],
    char_spans: list,
    path: str,
    line: int,
) -> Record:
    """The spans checked against the tokens the way nerstudio's JSONL records are."""
    from ..jsonl import parse_object

    words, offsets = toks
    rec = parse_object(
        {"text": text, "tokens": words, "spans": char_spans}, path, line, check_unicode=True
    )
    if rec.offsets != offsets:
        k = next(i for i, (x, y) in enumerate(zip(rec.offsets, offsets)) if x != y)
        raise FormatError(
            path,
            line,
            f"token {k + 1} {words[k]!r} at {list(offsets[k])} also occurs between it and "
            "the token before: characters between tokens must be whitespace",
        )
    return rec


def write(corpus: Corpus, path: str, losses: Losses, scheme: str) -> None:
    R.count_columns(corpus, losses, NAME)

    def tasks() -> Iterator[dict[str, object]]:
        for doc_id, s, text, offsets in R.sentence_records(corpus, losses):
            R.check_spans_writable(s, offsets, corpus.path or path, text)
            for i, w in enumerate(s.words):
                if not w.strip():  # Prodigy's whitespace tokens are not words: it would vanish
                    raise FormatError(
                        corpus.path or path,
                        s.line or None,
                        f"token {i + 1} {w!r} is empty or only whitespace: Prodigy reads such a "
                        "token as spacing, not as a word, so it cannot be written as prodigy; "
                        "save as jsonl",
                    )
            kept = R.kept_fields(s, NAME)
            if not R.spans_unchanged(s, NAME):
                kept.pop("_task_hash", None)
            if doc_id is not None:
                meta = kept.get("meta")
                kept["meta"] = {**(meta if isinstance(meta, dict) else {}), "doc_id": doc_id}
            ws = [
                offsets[i + 1][0] > b if i + 1 < len(offsets) else b < len(text)
                for i, (_, b) in enumerate(offsets)
            ]
            task = {
                "text": text,
                "tokens": [
                    {"text": w, "start": a, "end": b, "id": i, "ws": ws[i]}
                    for i, (w, (a, b)) in enumerate(zip(s.words, offsets))
                ],
                "spans": [
                    {
                        "start": offsets[sp.start][0],
                        "end": offsets[sp.end - 1][1],
                        "token_start": sp.start,
                        "token_end": sp.end - 1,
                        "label": sp.label,
                    }
                    for sp in s.spans
                ],
                **kept,
                "answer": "accept",
            }
            yield task

    R.write_json_lines(path, tasks(), utf8(corpus.encoding))
