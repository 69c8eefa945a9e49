"""Malformed input: one clear error naming file and line (API and CLI); streaming of large files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from nerstudio.cli import main
from nerstudio.corpus import Reader, iter_sentences, read_corpus, write_corpus
from nerstudio.errors import FormatError

# name: (file bytes, extra reader options, expected line (None: none), message fragment)
BAD = {
    "ragged_columns": (
        b"EU NNP I-NP I-ORG\nrejects VBZ I-VP\n",
        {},
        2,
        "ragged columns: expected 4 columns",
    ),
    "ragged_after_blank": (
        b"a O\n\nb c O\n",
        {},
        3,
        "ragged columns: expected 2 columns as on earlier lines, found 3",
    ),
    "ragged_tsv": (b"a\tO\nb\tNN\tO\n", {}, 2, "ragged columns"),
    "one_column": (b"word\n", {}, 1, "a token line needs at least 2 columns"),
    "unknown_tag": (b"a B-PER\nb I-PER\nc X-PER\n", {}, 3, "unknown tag 'X-PER' for scheme IOB2"),
    "unknown_tag_second_sentence": (b"a B-PER\n\nb O\nc per\n", {}, 4, "unknown tag 'per'"),
    "empty_tag": (b"a\tO\nb\t\n", {}, 2, "the tag column is empty"),
    "non_utf8": (
        "Madrid NC B-LOC\nRío NC B-LOC\n".encode("latin-1"),
        {},
        2,
        "not valid utf-8 (byte 0xed at column 2); pass --encoding",
    ),
    "empty_file": (b"", {}, None, "no sentences: the file is empty"),
    "only_docstart": (b"-DOCSTART- -X- -X- O\n", {}, 1, "no sentences"),
    "only_blank_lines": (b"\n\n\t\n", {}, 1, "no sentences"),
    "invalid_json": (b'{"text": "a b"}\n{"text": "a\n', {"format": "jsonl"}, 2, "invalid JSON"),
    "json_not_object": (b'{"text": "a"}\n[1, 2]\n', {}, 2, "must be a JSON object"),
    "json_no_text": (b'{"spans": []}\n', {"format": "jsonl"}, 1, 'needs a "text" field'),
    "json_text_not_string": (b'{"text": 3}\n', {"format": "jsonl"}, 1, '"text" must be a string'),
    "json_tokens_not_strings": (
        b'{"tokens": ["a", 1]}\n',
        {"format": "jsonl"},
        1,
        '"tokens" must be a list',
    ),
    "json_token_not_in_text": (
        b'{"text": "a b", "tokens": ["a", "c"]}\n',
        {},
        1,
        "token 'c' not found",
    ),
    "json_bad_span": (b'{"text": "a b", "spans": [{"start": 0}]}\n', {}, 1, "cannot read span"),
    "json_span_outside": (b'{"text": "a b", "spans": [[0, 9, "X"]]}\n', {}, 1, "outside the text"),
    "json_span_not_on_tokens": (
        b'{"text": "New York", "tokens": ["New", "York"], "spans": [[0, 2, "LOC"]]}\n',
        {},
        1,
        "span [0, 2) 'Ne' does not fall on token boundaries",
    ),
    "json_overlapping": (
        b'{"text": "a"}\n{"text": "New York City", "spans": [[0, 8, "LOC"], [4, 13, "LOC"]]}\n',
        {},
        2,
        "overlapping spans",
    ),
    "strict_iob2": (
        b"a B-PER\nb I-PER\n\nc O\nd I-PER\n",
        {"strict": True, "scheme": "iob2"},
        5,
        "invalid transition: 'I-PER' does not continue an entity (after 'O')",
    ),
    "strict_iob2_detected": (
        b"a B-PER\nb I-PER\n\nc B-LOC\n\nd O\ne I-PER\n",
        {"strict": True},
        7,
        "invalid transition",
    ),
    "strict_scn": (b"a S-PER\nb N\nc C-PER\n", {"strict": True}, 3, "invalid transition"),
    "strict_iob1": (
        b"a I-PER\nb O\nc B-PER\n",
        {"strict": True, "scheme": "iob1"},
        3,
        "B-PER does not follow an entity of type PER",
    ),
    "strict_bioes_unclosed": (
        b"a B-PER\nb I-PER\n\nc S-LOC\n",
        {"strict": True},
        2,
        "not closed at sentence end",
    ),
}

CLI_READ_OPTS = {"format": "--from", "scheme": "--from-scheme"}


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _expected_prefix(path, line) -> str:
    return f"{path}:{line}: " if line is not None else f"{path}: "


@pytest.mark.parametrize("case", BAD)
def test_bad_input_api(tmp_path, case):
    data, opts, line, fragment = BAD[case]
    path = _write(tmp_path, f"{case}.txt", data)
    with pytest.raises(FormatError) as info:
        read_corpus(path, **opts)
    err = info.value
    assert err.path == str(path)
    assert err.line == line
    assert fragment in err.message
    assert str(err).startswith(_expected_prefix(path, line))
    assert "\n" not in str(err)
    # streaming reads report the same error
    with pytest.raises(FormatError) as info2:
        list(iter_sentences(path, **opts))
    assert str(info2.value) == str(err)


@pytest.mark.parametrize("command", ["stats", "convert"])
@pytest.mark.parametrize("case", BAD)
def test_bad_input_cli(tmp_path, capsys, case, command):
    data, opts, line, fragment = BAD[case]
    path = _write(tmp_path, f"{case}.txt", data)
    argv = [command, str(path)]
    out = tmp_path / "out.txt"
    if command == "convert":
        argv.append(str(out))
    for key, value in opts.items():
        argv += ["--strict"] if key == "strict" else [CLI_READ_OPTS[key], value]
    assert main(argv) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("nerstudio: error: " + _expected_prefix(path, line))
    assert fragment in lines[0]
    assert "Traceback" not in captured.err
    assert not out.exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_bad_input_evaluate(tmp_path, capsys):
    gold = _write(tmp_path, "gold.txt", b"a B-PER\nb O\n")
    pred = _write(tmp_path, "pred.txt", b"a B-PER\nb Q\n")
    assert main(["evaluate", str(gold), str(pred)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"nerstudio: error: {pred}:2: unknown tag 'Q' for scheme IOB2 (expected O, B-X, I-X)"
    ]


def test_non_utf8_works_with_latin1(tmp_path, capsys):
    data = "Madrid NC B-LOC\nRío NC B-LOC\n".encode("latin-1")
    path = _write(tmp_path, "esp.txt", data)
    c = read_corpus(path, encoding="latin-1")
    assert [list(s.words) for s in c] == [["Madrid", "Río"]]
    assert main(["stats", str(path), "--encoding", "latin-1", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["encoding"] == "latin-1" and st["tokens"] == 2 and st["entities"] == 2
    assert main(["convert", str(path), str(tmp_path / "out.txt"), "--encoding", "latin-1"]) == 0
    assert (tmp_path / "out.txt").read_bytes() == data


def test_unknown_encoding(tmp_path, capsys):
    path = _write(tmp_path, "a.txt", b"a O\n")
    with pytest.raises(FormatError, match="unknown encoding 'klingon'"):
        read_corpus(path, encoding="klingon")
    assert main(["stats", str(path), "--encoding", "klingon"]) == 1
    assert (
        capsys.readouterr().err.strip() == f"nerstudio: error: {path}: unknown encoding 'klingon'"
    )


def test_windows_line_endings(tmp_path, capsys):
    text = "-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\n\nPeter NNP I-NP I-PER\n"
    data = text.replace("\n", "\r\n").encode()
    path = _write(tmp_path, "win.txt", data)
    c = read_corpus(path)
    assert c.newline == "\r\n"
    assert [list(s.words) for s in c] == [["EU", "rejects"], ["Peter"]]
    assert all(not t.endswith("\r") for s in c for t in s.tags)
    write_corpus(c, tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_bytes() == data
    assert main(["convert", str(path), str(tmp_path / "cli.txt")]) == 0
    assert (tmp_path / "cli.txt").read_bytes() == data
    assert main(["stats", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entities"] == 2


def test_folder_and_missing_file(tmp_path, capsys):
    for path, message in (
        (
            tmp_path,
            "is a folder, not a corpus file (a folder opens as a brat collection when it holds "
            "NAME.txt + NAME.ann pairs)",
        ),
        (tmp_path / "nope.txt", "no such file"),
    ):
        with pytest.raises(FormatError) as info:
            read_corpus(path)
        assert str(info.value) == f"{path}: {message}"
        with pytest.raises(FormatError):
            list(iter_sentences(path))
        for argv in (
            ["stats", str(path)],
            ["convert", str(path), str(tmp_path / "o.txt")],
            ["evaluate", str(path), str(path)],
        ):
            assert main(argv) == 1
            err = capsys.readouterr().err
            assert err == f"nerstudio: error: {path}: {message}\n"


def test_error_in_second_file_of_evaluate(tmp_path, capsys):
    gold = _write(tmp_path, "gold.txt", b"a B-PER\n")
    assert main(["evaluate", str(gold), str(tmp_path / "missing.txt")]) == 1
    assert (
        capsys.readouterr().err == f"nerstudio: error: {tmp_path / 'missing.txt'}: no such file\n"
    )


def test_strict_rejects_with_file_and_line_in_cli(tmp_path, capsys):
    path = _write(tmp_path, "ner.iob2", b"a B-PER\nb I-PER\n\nc O\nd I-PER\n")
    # without --strict the stray I- is repaired and counted
    assert main(["stats", str(path), "--from-scheme", "iob2"]) == 0
    out = capsys.readouterr().out
    assert "invalid transitions repaired: 1" in out
    assert main(["stats", str(path), "--from-scheme", "iob2", "--strict"]) == 1
    assert capsys.readouterr().err.startswith(f"nerstudio: error: {path}:5: invalid transition")


@pytest.mark.slow
def test_subprocess_exit_code_and_single_line(tmp_path):
    path = _write(tmp_path, "bad.txt", b"a B C O\nb B C\n")
    proc = subprocess.run(
        [sys.executable, "-m", "nerstudio", "stats", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert (
        proc.stderr
        == f"nerstudio: error: {path}:2: ragged columns: expected 4 columns as on earlier lines, found 3\n"
    )
    assert proc.stdout == ""


# --------------------------------------------------------------------------------------------
# Streaming large files

N_TOKENS = 1_000_000
SENT_LEN = 20


def _write_distinct(path: Path, n_tokens: int) -> Path:
    """n_tokens tokens of distinct words (nothing to share), written in chunks."""
    tags = ["B-PER", "I-PER", "O", "B-LOC", "O", "O", "I-ORG", "I-ORG", "O", "O"]
    with open(path, "w", encoding="utf-8") as f:
        for chunk in range(0, n_tokens, 10_000):
            lines = []
            for i in range(chunk, min(chunk + 10_000, n_tokens)):
                lines.append(f"w{i:07d} NN I-NP {tags[i % 10]}\n")
                if i % SENT_LEN == SENT_LEN - 1:
                    lines.append("\n")
            f.write("".join(lines))
    return path


@pytest.fixture(scope="module")
def big_file(tmp_path_factory) -> Path:
    return _write_distinct(tmp_path_factory.mktemp("big") / "big.conll", N_TOKENS)


@pytest.fixture(scope="module")
def small_file(tmp_path_factory) -> Path:
    """The same kind of file at 1% of the size: what the command costs whatever the input."""
    return _write_distinct(tmp_path_factory.mktemp("small") / "small.conll", N_TOKENS // 100)


_PEAK_SCRIPT = r"""
import json, re, sys
from nerstudio.cli import main
from nerstudio.corpus import convert_file, iter_sentences

def status(key):
    with open("/proc/self/status") as f:
        return int(re.search(key + r":\s+(\d+) kB", f.read()).group(1))

what, path, out = sys.argv[1:4]
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak RSS (VmHWM): imports and compiling must not hide later growth
before = status("VmRSS")
if what == "stats":
    rc = main(["stats", path, "--json"])
elif what == "iter":
    print(json.dumps({"tokens": sum(len(s) for s in iter_sentences(path))}))
elif what == "convert":
    convert_file(path, out, to_format="jsonl", scheme="bioes")
print(f"PEAK_GROWTH_KB {status('VmHWM') - before}", file=sys.stderr)
"""


def _peak_growth_mb(what: str, path: Path, out: Path) -> tuple[float, str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, what, str(path), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    kb = int(proc.stderr.split("PEAK_GROWTH_KB")[1])
    return kb / 1024, proc.stdout


def _can_reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        with open("/proc/self/status") as f:
            return "VmHWM:" in f.read()
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(
    not _can_reset_peak_rss(), reason="needs Linux /proc/self/clear_refs to measure peak RSS"
)
@pytest.mark.parametrize("what", ["stats", "iter", "convert"])
def test_streaming_peak_memory_is_bounded(big_file, small_file, tmp_path, what):
    """Peak resident memory while streaming the 1,000,000-token (21 MB) file grows by far less
    than the file's size as Python objects (~100 MB if it were held).

    The growth is measured beyond the same command's on a file 100 times smaller, so that
    imports and compiling done on first use (which vary with the command and the versions
    installed) do not count as the input's cost."""
    out = tmp_path / "out.jsonl"
    base, _ = _peak_growth_mb(what, small_file, tmp_path / "small.jsonl")
    growth, stdout = _peak_growth_mb(what, big_file, out)
    extra = growth - base
    assert extra < 40, f"{what}: peak memory grew by {extra:.0f} MB more than on a small file"
    if what == "stats":
        st = json.loads(stdout)
        assert (st["documents"], st["sentences"], st["tokens"]) == (
            1,
            N_TOKENS // SENT_LEN,
            N_TOKENS,
        )
        assert st["longest_sentence"] == SENT_LEN
    elif what == "iter":
        assert json.loads(stdout)["tokens"] == N_TOKENS
    else:
        with open(out, encoding="utf-8") as f:
            first = json.loads(f.readline())
            n = 1 + sum(1 for _ in f)
        assert n == N_TOKENS // SENT_LEN
        assert first["tokens"][:2] == ["w0000000", "w0000001"]
        assert first["spans"][0] == {"start": 0, "end": 17, "label": "PER"}


@pytest.mark.slow
def test_iter_sentences_tracemalloc(big_file):
    """Every Python allocation traced while streaming: the peak is small, and once the scheme is
    detected (first 5,000 sentences) memory held stops growing. Tracing costs ~10x, so this
    walks the first 300,000 tokens only; the RSS test above covers the whole file."""
    tracemalloc.start()
    try:
        reader = Reader(big_file)
        n = 0
        held = {}
        for s in reader.sentences():
            n += len(s)
            if n in (150_000, 300_000):
                held[n] = tracemalloc.get_traced_memory()[0]
                if n == 300_000:
                    break
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reader.scheme == "iob2"
    assert peak < 50 * 2**20, f"peak {peak / 2**20:.1f} MB"
    growth = held[300_000] - held[150_000]
    assert growth < 2 * 2**20, f"memory held grew by {growth / 2**20:.1f} MB over 150,000 tokens"


def test_token_with_a_space_cannot_be_written_to_a_space_separated_format(tmp_path):
    from nerstudio.corpus import convert_file

    src = tmp_path / "in.tsv"
    src.write_bytes(b"ke s\tB-PER\nx\tO\n")
    dst = tmp_path / "out.conll"
    dst.write_bytes(b"old contents\n")
    with pytest.raises(FormatError, match=r"in.tsv:1: token 1 'ke s' contains a space"):
        convert_file(src, dst, to_format="conll2003")
    assert dst.read_bytes() == b"old contents\n"  # nothing written half-way
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_trailing_space_names_the_problem(tmp_path):
    from nerstudio.corpus import read_corpus

    src = tmp_path / "t.conll"
    src.write_bytes(b"a NN O\nb NN O \n")
    with pytest.raises(FormatError, match=r"t.conll:2: the line ends with a column separator"):
        read_corpus(src)


@pytest.mark.parametrize("first", ["%PDF", "BZh", "%PDF-x"])
def test_a_corpus_whose_first_word_looks_like_a_magic_number_is_read(tmp_path, first):
    # hypothesis found a TSV whose first token was "%PDF" refused as "a PDF document"
    from nerstudio.corpus import read_corpus

    path = tmp_path / "c.tsv"
    path.write_text(f"{first}\tB-PER\nleft\tO\n", encoding="utf-8")
    corpus = read_corpus(str(path))
    assert list(corpus.sentences[0].words) == [first, "left"]


@pytest.mark.parametrize(
    ("head", "what"),
    [(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "a PDF document"), (b"BZh91AY&SY\x00\x01", "bzip2")],
)
def test_real_binary_files_are_still_named(tmp_path, head, what):
    from nerstudio.corpus import read_corpus
    from nerstudio.errors import FormatError

    path = tmp_path / "c.conll"
    path.write_bytes(head + b"\x00" * 64)
    with pytest.raises(FormatError, match=what):
        read_corpus(str(path))
