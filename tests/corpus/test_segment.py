"""Sentence splitting and tokenisation of running text (nerstudio.corpus.segment): offsets are
exact and every visible character is in exactly one token, whatever the spacing."""

import itertools

from helpers import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from nerstudio.corpus import segment

ODD = "Mr.  Smith\twent to Paris.\r\nHe didn't leave — café ½ U.S.A. at 3.5 p.m.!\n\n\u00a0New para: «Quoted.» Done"


def _check(text, sentences):
    flat = [t for s in sentences for t in s]
    assert all(a < b for a, b in flat)
    assert all(b1 <= a2 for (_, b1), (a2, _) in itertools.pairwise(flat)), (
        "tokens overlap or go backwards"
    )
    covered = set()
    for a, b in flat:
        assert text[a:b].strip() == text[a:b], "a token starts or ends with whitespace"
        covered.update(range(a, b))
    visible = {i for i, c in enumerate(text) if not c.isspace()}
    assert visible <= covered, "a visible character belongs to no token"


def test_real_text_with_odd_spacing():
    sents = segment.split(ODD)
    _check(ODD, sents)
    words = [[ODD[a:b] for a, b in s] for s in sents]
    assert words[0] == ["Mr.", "Smith", "went", "to", "Paris", "."]
    assert "U.S.A." in words[1] and "café" in words[1] and "½" in words[1]
    # no sentence crosses the blank line
    blank = ODD.index("\n\n")
    assert all(s[-1][1] <= blank or s[0][0] > blank for s in sents)


def test_cuts_split_words_at_entity_boundaries():
    text = "Obama's visit"
    toks = [text[a:b] for a, b in segment.tokens(text)]
    assert "Obama" in toks or "Obama's" in toks
    cut = [text[a:b] for s in segment.split(text, cuts=[5]) for a, b in s]
    assert cut[0] == "Obama" and "".join(cut[:2]) == "Obama's"


def test_merge_keeps_an_entity_in_one_sentence():
    text = "He met Dr. No. Smith came later."
    plain = segment.split(text)
    start = text.index("No")
    joined = segment.split(text, merge=[(start, text.index("Smith") + 5)])
    assert len(joined) <= len(plain)
    assert any(s[0][0] <= start and s[-1][1] >= text.index("Smith") + 5 for s in joined)


def test_real_file_offsets(tmp_path):

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    _check(text, segment.split(text))


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            list("ab .,!?'\"-\t\r\n\u00a0é½—(Mr)U.S.3") + ["\u200b", "\u2028"]
        ),
        max_size=80,
    )
)
def test_offsets_are_exact_for_any_text(text):
    sents = segment.split(text)
    _check(text, sents)
    cuts = list(range(0, len(text), 3))
    _check(text, segment.split(text, cuts=cuts))


def test_hyphenated_words_and_elided_names_are_one_token():
    """CoNLL writes ``mother-in-law``, ``Smith-Jones`` and ``O'Neill`` as one token and keeps
    clitics and free-standing dashes apart; syntok splits the first three, so segment glues them."""
    from nerstudio.corpus.segment import tokens

    text = "A mother-in-law of Smith-Jones met O'Neill and D’Alema - pro- and anti-war - Obama's don't."
    got = [text[a:b] for a, b in tokens(text)]
    assert got == [
        "A",
        "mother-in-law",
        "of",
        "Smith-Jones",
        "met",
        "O'Neill",
        "and",
        "D’Alema",
        "-",
        "pro",
        "-",
        "and",
        "anti-war",
        "-",
        "Obama",
        "'s",
        "do",
        "n't",
        ".",
    ]


def test_words_with_a_capital_inside_are_one_token_and_clitics_apart():
    """CoNLL-2003 writes ``McDonald``, ``McLaren``, ``VfB`` as one token and the clitic ``'s``
    as a token of its own (``John`` ``'s``); syntok cuts before an inner capital, so segment
    glues the word back, and the offsets still index the text exactly."""
    from nerstudio.corpus.segment import tokens

    text = "John's iPhone, McDonald's eBay shop and DeWitt's YouTube channel isn't JPMorgan's."
    spans = tokens(text)
    got = [text[a:b] for a, b in spans]
    assert got == [
        "John",
        "'s",
        "iPhone",
        ",",
        "McDonald",
        "'s",
        "eBay",
        "shop",
        "and",
        "DeWitt",
        "'s",
        "YouTube",
        "channel",
        "is",
        "n't",
        "JPMorgan",
        "'s",
        ".",
    ]
    assert [text.index(w, a) for w, (a, _) in zip(got, spans)] == [a for a, _ in spans]
    _check(text, segment.split(text))


def _conll_tokens(path):
    with open(path, encoding="utf-8") as f:
        return [line.split()[0] for line in f if line.strip() and not line.startswith("-DOCSTART-")]


def test_conll_2003_words_with_inner_capitals_stay_whole():
    """Every token of CoNLL-2003's training file that is a word with a capital inside
    (McLaren, VfB, DeWitt...) is one token of segment too, and ``'s`` after a word is apart."""
    import pathlib

    import pytest

    path = pathlib.Path("/work/shared/data/conll2003/eng.train")
    if not path.exists():
        pytest.skip("CoNLL-2003 is not on this machine (/work/shared/data/conll2003/eng.train)")
    from nerstudio.corpus.segment import tokens

    words = sorted(
        {
            w
            for w in _conll_tokens(path)
            if w.isalpha() and any(c.isupper() for c in w[1:]) and any(c.islower() for c in w)
        }
    )
    assert len(words) > 50
    split_up = [w for w in words if [w[a:b] for a, b in tokens(w)] != [w]]
    assert not split_up, split_up[:20]
    assert [("Reuters's"[a:b]) for a, b in tokens("Reuters's")] == ["Reuters", "'s"]


def test_api_jsonl_and_plain_text_tokenise_alike(tmp_path):
    """One tokeniser for running text: the API, a JSONL record without tokens and a plain-text
    file cut the same sentence into the same tokens."""
    from nerstudio.api import tokenize
    from nerstudio.corpus.formats import read_corpus

    text = "The U.S.-based firm Smith-Jones Inc. paid $1,000.50 to O'Neill's team in Linz."
    (tmp_path / "a.jsonl").write_text(f'{{"text": "{text}"}}\n', encoding="utf-8")
    (tmp_path / "a.txt").write_text(text + "\n", encoding="utf-8")
    from_jsonl = read_corpus(tmp_path / "a.jsonl").sentences[0].words
    from_text = read_corpus(tmp_path / "a.txt").sentences[0].words
    assert list(from_jsonl) == list(from_text) == tokenize(text)[0]
    assert "Inc." in from_jsonl and "Smith-Jones" in from_jsonl and "O'Neill" in from_jsonl
