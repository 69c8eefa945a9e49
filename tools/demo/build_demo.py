#!/usr/bin/env python3
"""Build (and check) the nerstudio demo corpus in CoNLL-2003 format.

The corpus is written by hand in a bracket markup under ``source/``::

    # doc train-01 politics
    [LOC Meridia] 's Prime Minister [PER Maria Del Toro Hastings] called an election .

One sentence per line, tokens separated by spaces, entities as ``[TYPE tokens]``
(TYPE is PER, ORG, LOC or MISC).  A token may carry a part-of-speech override as
``word|TAG``; otherwise the tag comes from ``source/lexicon.txt`` plus a few
deterministic rules (see :func:`pos_tags`).  Chunk tags are derived from the
part-of-speech tags by a small heuristic (see :func:`chunk_tags`).

Usage (standard library only)::

    python tools/demo/build_demo.py           # rewrite train/dev/test.conll
    python tools/demo/build_demo.py --check   # verify the .conll files, print counts

The build is deterministic: running it twice gives byte-identical files.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "source"
# the generated corpus lives inside the package, so that an installed nerstudio carries it
DEMO = HERE.parents[1] / "nerstudio" / "demo"
LEXICON = SOURCE / "lexicon.txt"
SPLITS = ("train", "dev", "test")
TYPES = ("PER", "ORG", "LOC", "MISC")
DOCSTART = "-DOCSTART- -X- -X- O"

PENN = {
    "CC",
    "CD",
    "DT",
    "EX",
    "FW",
    "IN",
    "JJ",
    "JJR",
    "JJS",
    "LS",
    "MD",
    "NN",
    "NNS",
    "NNP",
    "NNPS",
    "PDT",
    "POS",
    "PRP",
    "PRP$",
    "RB",
    "RBR",
    "RBS",
    "RP",
    "SYM",
    "TO",
    "UH",
    "VB",
    "VBD",
    "VBG",
    "VBN",
    "VBP",
    "VBZ",
    "WDT",
    "WP",
    "WP$",
    "WRB",
    '"',
    "''",
    "``",
    "(",
    ")",
    ",",
    ".",
    ":",
    "$",
    "#",
}
CHUNK_TYPES = {"NP", "VP", "PP", "ADJP", "ADVP", "SBAR", "PRT", "CONJP", "INTJ", "LST", "UCP"}

PUNCT = {
    '"': '"',
    ",": ",",
    ".": ".",
    ":": ":",
    ";": ":",
    "-": ":",
    "--": ":",
    "(": "(",
    ")": ")",
    "?": ".",
    "!": ".",
    "$": "$",
    "'s": "POS",
    "'": "POS",
}
NUMBER_RE = re.compile(r"^[+-]?\d[\d,.:/-]*\.?$")  # 12  4.25  50,000  2:08:41  6-4  1.  -11
ENTITY_RE = re.compile(r"\[(PER|ORG|LOC|MISC) ([^\[\]]+?)\]")

# Lower-case (or title-case) function words that occur inside names and titles.
NAME_FUNCTION_WORDS = {
    "of": "IN",
    "the": "DT",
    "a": "DT",
    "and": "CC",
    "for": "IN",
    "on": "IN",
    "in": "IN",
    "by": "IN",
    "at": "IN",
    "from": "IN",
    "under": "IN",
    "de": "FW",
    "la": "FW",
}

# A nationality word followed by one of these (or by punctuation) is used as a noun.
NOUN_USE_FOLLOWERS = {"and", "or", "who", "at", "in", "with", "to", "of", "for", "by", "from"}

# Verb-form classes in the lexicon, written like "VBD/VBN", are resolved by context.
HAVE_BE_GET = {
    "have",
    "has",
    "had",
    "having",
    "be",
    "is",
    "are",
    "was",
    "were",
    "been",
    "being",
    "get",
    "gets",
    "got",
    "'ve",
    "'re",
    "'m",
}
DO_FORMS = {"do", "does", "did"}

NP_TAGS = {
    "DT",
    "PDT",
    "JJ",
    "JJR",
    "JJS",
    "NN",
    "NNS",
    "NNP",
    "NNPS",
    "CD",
    "PRP",
    "PRP$",
    "POS",
    "WP",
    "WP$",
    "WDT",
    "EX",
    "FW",
    "$",
    "#",
}
NP_STARTERS = {"DT", "PDT", "PRP$", "PRP", "WP", "WDT", "EX", "$"}
NOUNISH = {"NN", "NNS", "NNP", "NNPS", "CD", "JJ", "JJR", "JJS", "VBG", "FW", "$", "#"}
VERB_TAGS = {"MD", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ"}
QUANTIFIER_WORDS = {"about", "nearly", "minus"}
SBAR_WORDS = {"that", "because", "if", "while", "although", "whether"}


class MarkupError(Exception):
    pass


# --------------------------------------------------------------------------- source


def load_lexicon(path: Path = LEXICON) -> tuple[dict[str, str], dict[str, str]]:
    """Return (general, names): ``word -> tag`` maps read from lexicon.txt.

    Each line is ``TAG: word word ...``.  The line ``[names]`` switches to the
    section used for tokens inside entities (default there: NNP), ``[general]``
    switches back.  A tag like ``VBD/VBN`` is a verb class resolved from the left
    context (see :func:`_resolve_verb`).  ``#`` starts a comment line.
    """
    general: dict[str, str] = {}
    names: dict[str, str] = {}
    current = general
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line in {"[names]", "[general]"}:
            current = names if line == "[names]" else general
            continue
        tag, sep, words = line.partition(":")
        tag = tag.strip()
        if not sep or not tag or any(t not in PENN for t in tag.split("/")):
            raise MarkupError(f"{path.name}:{lineno}: expected 'TAG: word word ...', got {raw!r}")
        for word in words.split():
            if word in current:
                raise MarkupError(f"{path.name}:{lineno}: {word!r} listed twice")
            current[word] = tag
    return general, names


def parse_line(line: str, where: str) -> list[tuple[str, str | None, str | None, int]]:
    """Split one markup line into (word, pos_override, entity_type, entity_id) tuples."""
    out: list[tuple[str, str | None, str | None, int]] = []

    def add(text: str, etype: str | None, eid: int) -> None:
        for tok in text.split():
            word, override = tok, None
            if "|" in tok:
                word, override = tok.rsplit("|", 1)
                if override not in PENN:
                    raise MarkupError(f"{where}: bad POS override in {tok!r}")
            if not word or "[" in word or "]" in word:
                raise MarkupError(f"{where}: malformed token {tok!r}")
            out.append((word, override, etype, eid))

    pos = 0
    eid = 0
    for m in ENTITY_RE.finditer(line):
        if m.start() > 0 and line[m.start() - 1] != " ":
            raise MarkupError(f"{where}: entity not preceded by a space: {m.group(0)!r}")
        if m.end() < len(line) and line[m.end()] != " ":
            raise MarkupError(f"{where}: entity not followed by a space: {m.group(0)!r}")
        add(line[pos : m.start()], None, 0)
        eid += 1
        add(m.group(2), m.group(1), eid)
        pos = m.end()
    add(line[pos:], None, 0)
    if not out:
        raise MarkupError(f"{where}: empty sentence")
    return out


def read_source(split: str) -> list[tuple[str, list[list[tuple]]]]:
    """Return the documents of a split as (doc_id, sentences)."""
    path = SOURCE / f"{split}.txt"
    docs: list[tuple[str, list[list[tuple]]]] = []
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        where = f"{path.name}:{lineno}"
        if line.startswith("# doc "):
            docs.append((line.split()[2], []))
            continue
        if not line or line.startswith("#"):
            continue
        if not docs:
            raise MarkupError(f"{where}: sentence before the first '# doc' header")
        if "  " in raw.strip():
            raise MarkupError(f"{where}: double space")
        docs[-1][1].append(parse_line(line, where))
    for doc_id, sents in docs:
        if not sents:
            raise MarkupError(f"{path.name}: document {doc_id} has no sentences")
    return docs


# --------------------------------------------------------------------------- tagging


def _resolve_verb(
    cls: str, prev_words: list[str], prev_tags: list[str], next_word: str | None
) -> str:
    """Pick one tag out of a verb class like ``VBD/VBN`` from the context.

    VB after a modal, "to" or do/does/did; VBN after a form of have/be/get, before
    "by" or at the start of a sentence ("Played on Friday :"); otherwise the finite
    form.  Adverbs and quote marks in between are skipped ("has not dropped").
    """
    options = cls.split("/")
    j = len(prev_tags) - 1
    while j >= 0 and prev_tags[j] in {"RB", '"'}:
        j -= 1
    pw = prev_words[j].lower() if j >= 0 else ""
    pt = prev_tags[j] if j >= 0 else ""
    if "VB" in options and (pt in {"MD", "TO"} or pw in DO_FORMS):
        return "VB"
    if "VBN" in options and (pw in HAVE_BE_GET or next_word == "by" or not prev_tags):
        return "VBN"
    for t in ("VBD", "VBP", "VBZ", "VB", "VBN"):
        if t in options:
            return t
    return options[0]


def pos_tags(
    sent: list[tuple], general: dict[str, str], names: dict[str, str], where: str
) -> list[str]:
    tags: list[str] = []
    words = [t[0] for t in sent]
    for i, (word, override, etype, _eid) in enumerate(sent):
        prev = words[i - 1] if i else None
        if override:
            tag = override
        elif word in PUNCT:
            tag = PUNCT[word]
        elif NUMBER_RE.match(word):
            tag = "CD"
        elif etype is not None:
            low = word.lower()
            if low in NAME_FUNCTION_WORDS and (
                word.islower() or word.isupper() or low not in {"de", "la"}
            ):
                tag = NAME_FUNCTION_WORDS[low]
            else:
                tag = names.get(word)
                if tag is None and word.isupper():
                    tag = names.get(word.capitalize())  # all-caps headline
                tag = tag or "NNP"
                if tag == "JJ":
                    # nationality / religion words: adjective before a noun ("Kenyan
                    # runner", "Brazilian Rui Carvalho"), proper noun otherwise
                    # ("taught English at", "the Norwegian who", "Meridian Central Bank").
                    last = i + 1 == len(sent) or sent[i + 1][3] != sent[i][3]
                    nxt = words[i + 1] if i + 1 < len(sent) else None
                    if not last or nxt is None or nxt in PUNCT or nxt.lower() in NOUN_USE_FOLLOWERS:
                        tag = "NNP"
        else:
            tag = general.get(word)
            if tag is None and word[:1].isupper():
                initial = i == 0 or prev in {'"', "(", ":", "-"} or word.isupper()
                if initial:
                    tag = general.get(word.lower())
            if tag is None:
                raise MarkupError(
                    f"{where}: no part-of-speech for {word!r} "
                    f"(add it to lexicon.txt or write {word}|TAG)"
                )
        if "/" in tag:
            nxt = words[i + 1] if i + 1 < len(words) else None
            tag = _resolve_verb(tag, words[:i], tags, nxt)
        tags.append(tag)
    return tags


def chunk_tags(sent: list[tuple], pos: list[str]) -> list[str]:
    """Heuristic IOB1 chunk tags in the style of CoNLL-2003."""
    n = len(pos)
    words = [t[0] for t in sent]
    ents = [t[3] if t[2] else 0 for t in sent]
    kinds: list[str | None] = []
    for i, (w, p) in enumerate(zip(words, pos)):
        nxt = pos[i + 1] if i + 1 < n else None
        if w.lower() in QUANTIFIER_WORDS and nxt == "CD":
            kinds.append("NP")  # "about 9,000 people", "minus 14 degrees"
        elif p in {"JJ", "JJR", "JJS"} and nxt not in NOUNISH | {"POS"} and not ents[i]:
            kinds.append("ADJP")
        elif p in NP_TAGS:
            kinds.append("NP")
        elif p in VERB_TAGS:
            kinds.append("VP")
        elif p == "TO":
            kinds.append("VP" if nxt in {"VB", "RB"} else "PP")
        elif p == "IN":
            kinds.append("SBAR" if w.lower() in SBAR_WORDS else "PP")
        elif p == "RP":
            kinds.append("PRT")
        elif p in {"RB", "RBR", "RBS", "WRB"}:
            kinds.append("ADVP")
        else:  # punctuation, CC, UH, SYM, LS ...
            kinds.append(None)
    # adverbs sitting between two verbs belong to the verb group ("has not dropped")
    for i in range(1, n - 1):
        if kinds[i] == "ADVP" and pos[i] != "WRB" and kinds[i - 1] == "VP" and kinds[i + 1] == "VP":
            kinds[i] = "VP"
    out: list[str] = []
    for i, kind in enumerate(kinds):
        if kind is None:
            out.append("O")
            continue
        prev_kind = kinds[i - 1] if i else None
        new_chunk = prev_kind != kind
        if not new_chunk and kind == "NP":
            p, pp = pos[i], pos[i - 1]
            if p in NP_STARTERS or p == "POS" or pp in {"PRP", "WDT", "WP", "EX"}:
                new_chunk = True
            elif ents[i] and ents[i - 1] and ents[i] != ents[i - 1] and pp != "JJ":
                new_chunk = True  # two adjacent names (but "Brazilian Rui Carvalho")
            elif ents[i] and not ents[i - 1] and pp == "CD":
                new_chunk = True  # "66 Callum Reid"
            elif not ents[i] and ents[i - 1] and p == "CD":
                new_chunk = True  # "Dalby United 3-1"
        if new_chunk and prev_kind == kind:
            out.append("B-" + kind)
        else:
            out.append("I-" + kind)
    return out


def ner_tags(sent: list[tuple]) -> list[str]:
    """IOB1 entity tags: B-X only where an entity follows another entity of type X."""
    out: list[str] = []
    prev_type, prev_eid = None, 0
    for _w, _o, etype, eid in sent:
        if etype is None:
            out.append("O")
        elif eid != prev_eid and prev_type == etype:
            out.append("B-" + etype)
        else:
            out.append("I-" + etype)
        prev_type, prev_eid = etype, eid
    return out


def build_split(split: str, general: dict[str, str], names: dict[str, str]) -> str:
    lines: list[str] = []
    for doc_id, sents in read_source(split):
        lines.append(DOCSTART)
        lines.append("")
        for k, sent in enumerate(sents, 1):
            where = f"{split}.txt {doc_id} sentence {k}"
            pos = pos_tags(sent, general, names, where)
            chunks = chunk_tags(sent, pos)
            ner = ner_tags(sent)
            for (word, *_), p, c, e in zip(sent, pos, chunks, ner):
                lines.append(f"{word} {p} {c} {e}")
            lines.append("")
    return "\n".join(lines) + "\n"


def build_all() -> dict[str, str]:
    general, names = load_lexicon()
    return {split: build_split(split, general, names) for split in SPLITS}


# --------------------------------------------------------------------------- checking

TAG_RE = re.compile(r"^(O|[IB]-(PER|ORG|LOC|MISC))$")
CHUNK_RE = re.compile(r"^(O|[IB]-([A-Z]+))$")


def read_conll(text: str, name: str) -> list[list[list[tuple[str, str, str, str]]]]:
    """Parse CoNLL-2003 text strictly; return documents -> sentences -> tokens."""
    errors: list[str] = []
    if "\r" in text:
        errors.append(f"{name}: contains carriage returns")
    if not text.endswith("\n\n") or text.endswith("\n\n\n"):
        errors.append(f"{name}: must end with the last token line, '\\n' and one empty line")
    lines = text.split("\n")[:-1]  # text ends with '\n'
    docs: list[list[list[tuple[str, str, str, str]]]] = []
    sent: list[tuple[str, str, str, str]] | None = None
    state = "start"
    for n, line in enumerate(lines, 1):
        where = f"{name}:{n}"
        if line == DOCSTART:
            if state not in {"start", "blank"} or (state == "blank" and not docs[-1]):
                errors.append(f"{where}: -DOCSTART- must be first or follow an empty line")
            docs.append([])
            state = "docstart"
        elif line == "":
            if state == "docstart":
                state = "doc-blank"
            elif state == "token":
                docs[-1].append(sent)
                sent = None
                state = "blank"
            else:
                errors.append(f"{where}: unexpected empty line")
        else:
            if state not in {"doc-blank", "blank", "token"}:
                errors.append(f"{where}: token line in the wrong place")
                if not docs:
                    docs.append([])
            parts = line.split(" ")
            if len(parts) != 4 or any(not p for p in parts) or "\t" in line:
                errors.append(f"{where}: expected 4 single-space separated columns: {line!r}")
                continue
            word, p, c, e = parts
            if p not in PENN:
                errors.append(f"{where}: unknown POS {p!r}")
            m = CHUNK_RE.match(c)
            if not m or (m.group(2) and m.group(2) not in CHUNK_TYPES):
                errors.append(f"{where}: bad chunk tag {c!r}")
            if not TAG_RE.match(e):
                errors.append(f"{where}: bad NER tag {e!r}")
            if sent is None:
                sent = []
            sent.append((word, p, c, e))
            state = "token"
    if state != "blank":
        errors.append(f"{name}: does not end after a sentence and one empty line")
    for d, doc in enumerate(docs, 1):
        if not doc:
            errors.append(f"{name}: document {d} is empty")
        for s in doc:
            for col, label in ((2, "chunk"), (3, "NER")):
                prev = "O"
                for tok in s:
                    tag = tok[col]
                    if tag.startswith("B-") and (prev == "O" or prev[2:] != tag[2:]):
                        errors.append(
                            f"{name}: doc {d}: IOB1 {label} violation: {tag} after "
                            f"{prev} at {tok[0]!r}"
                        )
                    prev = tag
    if errors:
        more = f"\n... {len(errors)} errors in total" if len(errors) > 50 else ""
        raise MarkupError("\n".join(errors[:50]) + more)
    return docs


def entities(sent: list[tuple[str, str, str, str]]) -> list[tuple[str, int, int]]:
    """IOB1 -> (type, start, end) spans."""
    spans: list[tuple[str, int, int]] = []
    cur: list | None = None
    for i, tok in enumerate(sent):
        tag = tok[3]
        if tag == "O":
            cur = None
            continue
        kind, typ = tag.split("-", 1)
        if cur is not None and cur[0] == typ and kind == "I":
            cur[2] = i + 1
        else:
            cur = [typ, i, i + 1]
            spans.append(cur)
    return [tuple(s) for s in spans]


def stats(docs) -> dict[str, int]:
    c: Counter = Counter()
    c["documents"] = len(docs)
    for doc in docs:
        for s in doc:
            c["sentences"] += 1
            c["tokens"] += len(s)
            for typ, a, b in entities(s):
                c[typ] += 1
                c["entities"] += 1
                if typ == "MISC" and a > 0 and s[a - 1][0] == '"' and b < len(s) and s[b][0] == '"':
                    c["quoted titles"] += 1
            for t in s:
                if t[3].startswith("B-"):
                    c["B- tags"] += 1
                    c[t[3]] += 1
            letters = [t[0] for t in s if t[0].isalpha()]
            if len(letters) > 1 and all(w.isupper() for w in letters):
                c["all-caps headlines"] += 1
            c["multi-word names"] += sum(1 for _t, a, b in entities(s) if b - a > 1)
            c["lower-case words in names"] += sum(
                1 for t in s if t[3] != "O" and t[0][:1].islower()
            )
            first = s[0]
            if first[3] == "O" and first[0][:1].isupper() and not first[0].isupper():
                c["sentence-initial capitalised O"] += 1
            if first[3] != "O":
                c["sentence-initial names"] += 1
    return c


ROWS = (
    "documents",
    "sentences",
    "tokens",
    "entities",
    "PER",
    "ORG",
    "LOC",
    "MISC",
    "B- tags",
    "B-PER",
    "B-ORG",
    "B-LOC",
    "B-MISC",
    "multi-word names",
    "quoted titles",
    "lower-case words in names",
    "sentence-initial capitalised O",
    "sentence-initial names",
    "all-caps headlines",
)

MINIMUM_B = {"train": 10, "dev": 2, "test": 2}


def check() -> int:
    table: dict[str, Counter] = {}
    problems: list[str] = []
    built = build_all()
    for split in SPLITS:
        path = DEMO / f"{split}.conll"
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(f"{path.name}: not UTF-8 ({exc})")
            continue
        if text != built[split]:
            problems.append(f"{path.name}: differs from what build_demo.py generates (re-run it)")
        try:
            docs = read_conll(text, path.name)
        except MarkupError as exc:
            problems.append(str(exc))
            continue
        c = stats(docs)
        table[split] = c
        for typ in TYPES:
            if c[typ] == 0:
                problems.append(f"{split}: no {typ} entities")
        if c["quoted titles"] < 3:
            problems.append(f"{split}: fewer than 3 quoted titles")
        if c["B- tags"] < MINIMUM_B[split]:
            problems.append(f"{split}: only {c['B- tags']} B- tags (need {MINIMUM_B[split]})")
        if c["sentence-initial capitalised O"] < 3:
            problems.append(f"{split}: too few sentence-initial capitalised non-entities")
    total = Counter()
    for c in table.values():
        total.update(c)
    table["total"] = total
    cols = [s for s in (*SPLITS, "total") if s in table]
    print("| | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for row in ROWS:
        print(f"| {row} | " + " | ".join(str(table[s][row]) for s in cols) + " |")
    if total["sentences"]:
        share = ", ".join(
            f"{s} {100 * table[s]['sentences'] / total['sentences']:.1f}%"
            for s in SPLITS
            if s in table
        )
        print(f"\nsentence share: {share}")
    if problems:
        print("\nPROBLEMS:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    print("\nall checks passed")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--check",
        action="store_true",
        help="verify the .conll files instead of writing them and print counts",
    )
    args = ap.parse_args(argv)
    try:
        if args.check:
            return check()
        for split, text in build_all().items():
            (DEMO / f"{split}.conll").write_bytes(text.encode("utf-8"))
            print(f"wrote {split}.conll")
    except MarkupError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
