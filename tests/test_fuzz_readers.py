"""Property-based fuzzing of every reader: real-looking files, mutated, must be read or refused
with the project's own error (:class:`NerstudioError`), never another exception.

Corpus files (every format) are mutated byte by byte with tokens that matter to the formats
(separators, ``-DOCSTART-``, tags, JSON punctuation, non-finite numbers, deep nesting, bad bytes);
JSONL records are also generated field by field; model and N-best files have their JSON header
and their arrays replaced by wrong values, types and shapes, and their bytes corrupted. What
reads is then used a little (written back and read again; an N-best list's top candidates and
oracle), so that a reader that "succeeds" on a broken file is caught too. The examples are few
and the deadline off: the whole module takes a few seconds (``NERSTUDIO_FUZZ_SCALE=50`` runs fifty
times as many examples, for a longer hunt)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT
from helpers.samples import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nerstudio.corpus import convert_file, iter_sentences, read_corpus, write_corpus
from nerstudio.errors import NerstudioError

DEMO = ROOT / "nerstudio" / "demo"
SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}
SCALE = int(os.environ.get("NERSTUDIO_FUZZ_SCALE", "1"))  # more examples for a longer local hunt

SEEDS = {
    "conll2003": b"-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\nGerman JJ I-NP I-MISC\n\n"
    b"Peter NNP I-NP I-PER\nBlackburn NNP I-NP I-PER\n\n-DOCSTART- -X- -X- O\n\nParis NNP I-NP B-LOC\n",
    "conll2002": b"-DOCSTART- -DOCSTART- O\nDe Art O\ntekst N O\nJustitie N B-ORG\n\nJan N B-PER\nPeeters N I-PER\n",
    "columns": b"010 I-MISC\nis O\nRussian I-MISC\n\n-DOCSTART- O\n\nBobby S-PER\n. O\n",
    "tsv": b"@paulwalk\tO\nEmpire\tB-location\nState\tI-location\n\t\nFrom\tO\n\tO\nApple \tB-corporation\n",
    "jsonl": b'{"text": "EU rejects German call.", "spans": [{"start": 0, "end": 2, "label": "ORG"}]}\n'
    b'{"doc_id": "d2", "text": "Peter  Blackburn", "tokens": ["Peter", "Blackburn"], '
    b'"spans": [[0, 16, "PER"]], "columns": [["NNP", "NNP"]]}\n'
    b'{"doc_id": 3, "text": "Anti-Nazi \\u00e9t\\u00e9", "label": [[5, 9, "MISC"]], "meta": {"k": 1}}\n',
}
PIECES = [
    b" ",
    b"\t",
    b"\n",
    b"\r\n",
    b"\r",
    b"",
    b"-DOCSTART-",
    b"-DOCSTART- -X- -X- O\n",
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b",",
    b":",
    b"B-",
    b"I-",
    b"E-",
    b"S-",
    b"L-",
    b"U-",
    b"C-",
    b"O",
    b"N",
    b"B-X",
    b"I-X",
    b"x y z",
    b"\x00",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"\xc3",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e400",
    b"-1",
    b"1.5",
    b"0",
    b"99999999999999999999",
    b"null",
    b"true",
    b'"spans": 5',
    b'"label": null',
    b'"tokens": []',
    b'"text": ""',
    b'"columns": [[]]',
    b'"doc_id": []',
    b"\\ud800",
    b"[" * 3000,
    b'{"a": ' * 3000,
    b"PK\x03\x04",
    b"\x1f\x8b",
]

_op = st.one_of(
    st.tuples(st.just("insert"), st.floats(0, 1), st.sampled_from(PIECES)),
    st.tuples(st.just("replace"), st.floats(0, 1), st.integers(1, 8), st.sampled_from(PIECES)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 12)),
    st.tuples(st.just("duplicate"), st.floats(0, 1), st.integers(1, 40)),
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("byte"), st.floats(0, 1), st.binary(min_size=1, max_size=3)),
)


def mutate(data: bytes, ops) -> bytes:
    for op in ops:
        k = int(op[1] * len(data))
        if op[0] == "insert":
            data = data[:k] + op[2] + data[k:]
        elif op[0] == "replace":
            data = data[:k] + op[3] + data[k + op[2] :]
        elif op[0] == "delete":
            data = data[:k] + data[k + op[2] :]
        elif op[0] == "duplicate":
            data = data[: k + op[2]] + data[k:]
        elif op[0] == "truncate":
            data = data[:k]
        else:
            data = data[:k] + op[2] + data[k + len(op[2]) :]
    return data


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="nerstudio-fuzz-") as d:
        yield Path(d)


def _read_use(path: Path, fmt: str | None, out: Path) -> None:
    """Read ``path`` whole and streamed; what reads is written back (own format, JSONL, CoNLL)
    and read again. Anything but a NerstudioError fails the test."""
    try:
        c = read_corpus(path, format=fmt)
    except NerstudioError:
        with pytest.raises(NerstudioError):
            list(iter_sentences(path, format=fmt))
        return
    streamed = list(iter_sentences(path, format=fmt))
    assert [s.words for s in streamed] == [s.words for s in c]
    assert [s.spans for s in streamed] == [s.spans for s in c]
    for target in (None, "jsonl", "conll2003"):
        try:
            write_corpus(c, out, format=target)
        except NerstudioError:
            continue
        back = read_corpus(out, format=target or c.format)
        assert [s.words for s in back] == [s.words for s in c]
        assert [s.spans for s in back] == [s.spans for s in c]
    try:
        convert_file(path, out, from_format=fmt, to_format="tsv", scheme="bioes")
    except NerstudioError:
        return
    assert [s.spans for s in read_corpus(out, format="tsv")] == [s.spans for s in c]


@pytest.mark.parametrize("seed", list(SEEDS))
@settings(max_examples=40 * SCALE, **SETTINGS)
@given(ops=st.lists(_op, min_size=1, max_size=6), forced=st.booleans())
def test_mutated_corpus_files_are_read_or_refused(workdir, seed, ops, forced):
    path = workdir / f"mutated.{seed}"
    path.write_bytes(mutate(SEEDS[seed], ops))
    _read_use(path, seed if forced else None, workdir / "out")


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6),
    lambda kids: (
        st.lists(kids, max_size=4)
        | st.dictionaries(st.sampled_from(["start", "end", "label", "x"]), kids, max_size=4)
    ),
    max_leaves=12,
)
_spanlike = st.one_of(
    st.lists(
        st.tuples(
            st.integers(-2, 30), st.integers(-2, 30), st.sampled_from(["PER", "", "a b", None])
        ).map(list),
        max_size=4,
    ),
    st.lists(
        st.fixed_dictionaries(
            {
                "start": st.integers(-1, 30),
                "end": st.integers(-1, 30),
                "label": st.sampled_from(["ORG", "-", "\t"]),
            }
        ),
        max_size=3,
    ),
    _json,
)
_record = st.fixed_dictionaries(
    {},
    optional={
        "text": st.one_of(st.text(alphabet="ab .'\u00e9-\t", max_size=30), _json),
        "tokens": st.one_of(st.lists(st.text(alphabet="ab.' ", max_size=4), max_size=6), _json),
        "spans": _spanlike,
        "entities": _spanlike,
        "label": _spanlike,
        "doc_id": st.one_of(st.text(max_size=3), st.integers(), _json),
        "columns": st.one_of(
            st.lists(st.lists(st.sampled_from(["NN", "X", ""]), max_size=6), max_size=2), _json
        ),
    },
)


@pytest.mark.slow
@settings(max_examples=80 * SCALE, **SETTINGS)
@given(records=st.lists(st.one_of(_record, _json), min_size=1, max_size=5))
def test_generated_jsonl_records_are_read_or_refused(workdir, records):
    path = workdir / "generated.jsonl"
    path.write_text(
        "\n".join(json.dumps(r, allow_nan=True) for r in records) + "\n", encoding="utf-8"
    )
    _read_use(path, "jsonl", workdir / "out.jsonl")


# --------------------------------------------------------------------------------------------
# Other tools' files (issue 22): line-level and field-level mutators on real-shaped samples

FOREIGN_SEEDS = {
    "prodigy": FIXTURES / "shapes" / "prodigy-rel-manual.jsonl",
    "prodigy-ner": FIXTURES / "real" / "prodigy-ner-news-headlines.jsonl",
    "doccano": FIXTURES / "shapes" / "doccano-mixed.jsonl",
    "doccano-1x": FIXTURES / "real" / "doccano-1x-export.jsonl",
    "doccano-rel": FIXTURES / "real" / "doccano-relation.jsonl",
    "label-studio": FIXTURES / "shapes" / "label-studio-task.json",
    "conllu": FIXTURES / "shapes" / "ud-entity.conllu",
    "webanno": FIXTURES / "real" / "webanno-tsv3-stacked.tsv",
    "brat": FIXTURES / "shapes" / "brat" / "visit.ann",  # the .ann mutated, its .txt beside it
    "jsonl-text": None,  # nerstudio's own JSONL cut from running text (offset/before/after), made below
}
LABEL_CHARS = ["A\nB", "A\tB", "A B", "A|B", "A\u2028B", "A]", "", "B-", "\ufeffA", "A\x0bB", "O"]


def _seed_bytes(name: str, workdir: Path) -> bytes:
    if FOREIGN_SEEDS[name] is None:
        src = workdir / "seed.txt"
        src.write_text("Tom met Ann Lee. She waved.\n\nBob left Paris.\n", encoding="utf-8")
        out = workdir / "seed.jsonl"
        convert_file(src, out, to_format="jsonl")
        return out.read_bytes()
    return FOREIGN_SEEDS[name].read_bytes()


def _strings(obj, path=()):
    """Paths to every string of a JSON value (keys excluded)."""
    if isinstance(obj, str):
        yield path
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _strings(v, path + (i,))


def _replace_in_json_line(line: bytes, pick: float, make) -> bytes:
    try:
        obj = json.loads(line)
    except (
        ValueError,
        RecursionError,
    ):  # not JSON, or nested past the decoder's depth: left as it is
        return line
    paths = list(_strings(obj))
    if not paths:
        return line
    where = paths[int(pick * len(paths)) % len(paths)]
    obj = _set(obj, where, make(_get(obj, where)))
    return json.dumps(obj, ensure_ascii=True).encode()


def _get(obj, path):
    for k in path:
        obj = obj[k]
    return obj


_line_op = st.one_of(
    st.tuples(st.just("concat")),  # the file twice (two exports concatenated)
    st.tuples(st.just("dup"), st.floats(0, 1)),  # a line repeated
    st.tuples(st.just("drop"), st.floats(0, 1)),
    st.tuples(st.just("swap"), st.floats(0, 1), st.floats(0, 1)),
    st.tuples(st.just("bom"), st.floats(0, 1)),  # a byte-order mark at a line's start
    st.tuples(
        st.just("surrogate"),
        st.floats(0, 1),
        st.floats(0, 1),
        st.sampled_from(["\ud800", "\udfff"]),
    ),
    st.tuples(st.just("label"), st.floats(0, 1), st.sampled_from(LABEL_CHARS)),
    st.tuples(st.just("mode"), st.floats(0, 1)),  # a doccano record in the other mode
    st.tuples(st.just("bytes"), st.floats(0, 1), st.sampled_from(PIECES)),
)


def mutate_lines(data: bytes, ops) -> bytes:
    for op in ops:
        lines = data.split(b"\n")
        k = int(op[1] * len(lines)) % len(lines) if len(op) > 1 else 0
        if op[0] == "concat":
            data = data + (b"" if data.endswith(b"\n") else b"\n") + data
            continue
        if op[0] == "dup":
            lines.insert(k, lines[k])
        elif op[0] == "drop":
            del lines[k]
        elif op[0] == "swap":
            j = int(op[2] * len(lines)) % len(lines)
            lines[k], lines[j] = lines[j], lines[k]
        elif op[0] == "bom":
            lines[k] = b"\xef\xbb\xbf" + lines[k]
        elif op[0] == "surrogate":
            lines[k] = _replace_in_json_line(lines[k], op[2], lambda v, c=op[3]: v + c)
        elif op[0] == "label":
            labelled = [
                i
                for i, ln in enumerate(lines)
                if b'"label' in ln or b"NE=" in ln or b"Entity=(" in ln
            ]
            if labelled:
                i = labelled[k % len(labelled)]
                lines[i] = re.sub(
                    rb'("label": ?)"[^"]*"',
                    lambda m: m.group(1) + json.dumps(op[2]).encode(),
                    lines[i],
                    count=1,
                )
                lines[i] = re.sub(
                    rb"(Entity=\(\w+-)[^-()|\t]*",
                    lambda m: m.group(1) + op[2].encode("utf-8", "surrogatepass"),
                    lines[i],
                    count=1,
                )
        elif op[0] == "mode":
            try:
                obj = json.loads(lines[k])
            except (
                ValueError,
                RecursionError,
            ):  # the mutator's own decoding: not a record to switch
                continue
            if isinstance(obj, dict) and isinstance(obj.get("label"), list):
                obj["entities"] = [
                    {"id": i, "start_offset": x[0], "end_offset": x[1], "label": x[2]}
                    for i, x in enumerate(obj.pop("label"))
                    if isinstance(x, list) and len(x) == 3
                ]
            elif isinstance(obj, dict) and isinstance(obj.get("entities"), list):
                obj["label"] = [
                    [e.get("start_offset"), e.get("end_offset"), e.get("label")]
                    for e in obj.pop("entities")
                    if isinstance(e, dict)
                ]
            lines[k] = json.dumps(obj).encode()
        else:
            at = int(op[1] * len(data))
            data = data[:at] + op[2] + data[at:]
            continue
        data = b"\n".join(lines)
    return data


def _summary(reader_or_corpus_stats):
    st = reader_or_corpus_stats
    return st["documents"], st["sentences"], st["entities"]


@pytest.mark.data_integrity
@pytest.mark.parametrize("seed", list(FOREIGN_SEEDS))
@settings(max_examples=30 * SCALE, **SETTINGS)
@given(ops=st.lists(_line_op, min_size=1, max_size=4))
def test_mutated_tool_files_read_alike_streamed_and_whole(workdir, seed, ops):
    """``stats``' streamed reading and the whole-file reading accept and refuse the same files,
    with the same documents, sentences, entities and notes; what is read holds no lone surrogate
    (every string can be written back), and writing it out fails only with a NerstudioError."""
    from nerstudio.cli.commands.stats import corpus_stats
    from nerstudio.corpus.formats import Reader

    suffix = {"label-studio": ".json", "conllu": ".conllu", "webanno": ".tsv", "brat": ".ann"}.get(
        seed, ".jsonl"
    )
    path = workdir / f"tool{suffix}"
    if seed == "brat":
        (workdir / "tool.txt").write_bytes(FOREIGN_SEEDS["brat"].with_suffix(".txt").read_bytes())
    path.write_bytes(mutate_lines(_seed_bytes(seed, workdir), ops))
    try:
        c = read_corpus(path)
    except NerstudioError:
        with pytest.raises(NerstudioError):
            corpus_stats(Reader(str(path)))
        return
    r = Reader(str(path))
    st = corpus_stats(r)
    n_ents = sum(len(s.spans) for s in c.sentences)
    assert _summary(st) == (len(c.documents), len(c.sentences), n_ents)
    assert list(r.notes) == list(c.notes)
    for s in c.sentences:
        for text in (*s.words, *(sp.label for sp in s.spans), *(v for col in s.extra for v in col)):
            text.encode("utf-8")  # a lone surrogate would fail here, and later in every writer
    for d in c.documents:
        (d.id or "").encode("utf-8")
    for target in (None, "jsonl"):
        try:
            write_corpus(
                c, workdir / f"back{suffix if target is None else '.jsonl'}", format=target
            )
        except NerstudioError:
            pass


# --------------------------------------------------------------------------------------------
# Model and N-best files


def _train_small_models(folder: Path) -> dict[str, Path]:
    from nerstudio.tagging.joint import JointTagger
    from nerstudio.tagging.perceptron import PerceptronTagger

    train = read_corpus(DEMO / "dev.conll")
    PerceptronTagger(epochs=1).fit(train).save(folder / "perceptron.npz")
    JointTagger("proposed", n=3, epochs=1).fit(train).save(folder / "joint.npz")
    return {"perceptron": folder / "perceptron.npz", "joint": folder / "joint.npz"}


@pytest.fixture(scope="module")
def model_files(workdir):
    files = {
        "nbest": DEMO / "model" / "dev.nbest.npz",
        "maxent": DEMO / "model" / "tagger.npz",
        "reranker": DEMO / "model" / "reranker.npz",
    }
    files.update(_train_small_models(workdir))
    out = {}
    for kind, path in files.items():
        with np.load(path, allow_pickle=False) as z:
            out[kind] = {k: z[k] for k in z.files}
    return out


def _load(kind: str, path: Path):
    from nerstudio.nbest import NBestList
    from nerstudio.rerank.model import RerankerModel
    from nerstudio.tagging import load_tagger

    if kind == "nbest":
        nb = NBestList.load(path)
        nb.top()
        if nb.gold is not None:
            nb.oracle_indices()
        return nb
    if kind == "reranker":
        return RerankerModel.load(path)
    return load_tagger(path)


_DTYPES = [np.int8, np.int16, np.int64, np.uint8, np.float32, np.float64, np.bool_]
_array_op = st.one_of(
    st.tuples(st.just("astype"), st.sampled_from(_DTYPES)),
    st.tuples(st.just("shorter"), st.integers(0, 5)),
    st.tuples(st.just("longer"), st.integers(1, 5)),
    st.tuples(
        st.just("2d"),
    ),
    st.tuples(
        st.just("value"),
        st.floats(0, 1),
        st.sampled_from([np.nan, np.inf, -1, -(2**40), 2**40, 0, 1, 255]),
    ),
    st.tuples(st.just("json"), _json),
    st.tuples(
        st.just("drop"),
    ),
)
_header_op = st.tuples(st.just("header"), st.integers(0, 50), _json | st.just("__delete__"))
_bytes_op = st.tuples(st.just("bytes"), st.floats(0, 1), st.binary(min_size=1, max_size=4))


def _change_array(a: np.ndarray, op) -> np.ndarray | None:
    kind = op[0]
    if kind == "astype":
        with np.errstate(all="ignore"):
            return a.astype(op[1])
    if kind == "shorter":
        return a.reshape(-1)[: max(0, a.size - 1 - op[1])]
    if kind == "longer":
        flat = a.reshape(-1)
        return np.concatenate([flat, flat[: op[1]] if flat.size else np.zeros(op[1], a.dtype)])
    if kind == "2d":
        return a.reshape(1, -1)
    if kind == "value":
        if a.size == 0:
            return a
        b = a.copy().reshape(-1)
        with np.errstate(all="ignore"):
            try:
                b[int(op[1] * (b.size - 1))] = op[2]
            except (ValueError, OverflowError):
                return b.astype(np.float64) if op[2] != op[2] or abs(op[2]) == np.inf else b
        return b.reshape(a.shape)
    if kind == "json":
        return np.frombuffer(json.dumps(op[1], allow_nan=True).encode(), dtype=np.uint8)
    return None  # drop


def _paths(obj, prefix=()):
    """Every key path of a JSON document (to pick one to change)."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:5]):
            yield from _paths(v, prefix + (i,))


def _set(obj, path, value):
    if not path:
        return value
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    if value == "__delete__":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return obj


@pytest.mark.parametrize("kind", ["nbest", "maxent", "reranker", "perceptron", "joint"])
@settings(max_examples=25 * SCALE, **SETTINGS)
@given(
    ops=st.lists(
        st.one_of(st.tuples(st.integers(0, 30), _array_op), _header_op, _bytes_op),
        min_size=1,
        max_size=3,
    )
)
def test_mutated_model_and_nbest_files_are_loaded_or_refused(workdir, model_files, kind, ops):
    arrays = dict(model_files[kind])
    raw_ops = []
    for op in ops:
        if op[0] == "header":
            try:
                header = json.loads(arrays["header"].tobytes())
            except (KeyError, ValueError):  # an earlier op broke or dropped it already
                continue
            paths = list(_paths(header))
            header = _set(header, paths[op[1] % len(paths)], op[2])
            arrays["header"] = np.frombuffer(
                json.dumps(header, allow_nan=True).encode(), dtype=np.uint8
            )
        elif op[0] == "bytes":
            raw_ops.append(op)
        else:
            names = sorted(arrays)
            name = names[op[0] % len(names)]
            new = _change_array(arrays[name], op[1])
            if new is None:
                del arrays[name]
            else:
                arrays[name] = new
    path = workdir / f"mutated-{kind}.npz"
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    if raw_ops:
        data = path.read_bytes()
        for _, where, junk in raw_ops:
            k = int(where * len(data))
            data = data[:k] + junk + data[k + len(junk) :]
        path.write_bytes(data)
    try:
        _load(kind, path)
    except NerstudioError as exc:
        assert str(exc).startswith(str(path)), exc  # every error names the file
