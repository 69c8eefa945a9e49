"""Sentence splitting and tokenisation of running text (nerstudio.corpus.segment): offsets are
exact and every visible character is in exactly one token, whatever the spacing."""

from hypothesis import given, settings, strategies as st

from nerstudio.corpus import segment

ODD = "Mr.  Smith\twent to Paris.\r\nHe didn't leave — café ½ U.S.A. at 3.5 p.m.!\n\n\u00a0New para: «Quoted.» Done"


def _check(text, sentences):
    flat = [t for s in sentences for t in s]
    assert all(a < b for a, b in flat)
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(flat, flat[1:])), "tokens overlap or go backwards"
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
    import pathlib
    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    _check(text, segment.split(text))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .,!?'\"-\t\r\n\u00a0é½—(Mr)U.S.3") + ["\u200b", "\u2028"]),
               max_size=80))
def test_offsets_are_exact_for_any_text(text):
    sents = segment.split(text)
    _check(text, sents)
    cuts = [i for i in range(0, len(text), 3)]
    _check(text, segment.split(text, cuts=cuts))
