"""The bundled lists' longest match (``Gazetteers.iob``), which looks up each word once for all
lists, against the plain left-to-right longest match over every list and word (issue 26: the K&T
taggers' feature extraction spends much of its time here)."""

import random

import pytest
from helpers.shared_data import SHARED_DATA

from nerstudio.corpus.formats import read_corpus
from nerstudio.demo import DEMO_DIR
from nerstudio.resources import Gazetteers, fold

CONLL = SHARED_DATA / "conll2003"

pytestmark = pytest.mark.slow  # the bundled lists against every word of a real corpus


def literal_iob(g: Gazetteers, words):
    out = {}
    n = len(words)
    for name in g.names:
        keys = [fold(w) for w in words] if g.fold[name] else list(words)
        longest = max(len(e) for e in g.entries[name])
        tags, i = ["O"] * n, 0
        while i < n:
            for m in range(min(longest, n - i), 0, -1):
                if tuple(keys[i : i + m]) in g.entries[name]:
                    tags[i] = "B"
                    tags[i + 1 : i + m] = ["I"] * (m - 1)
                    i += m
                    break
            else:
                i += 1
        out[name] = tags
    return out


@pytest.fixture(scope="module")
def gaz():
    return Gazetteers()


def test_iob_equals_literal_longest_match_on_entry_soup(gaz):
    rng = random.Random(0)
    entries = [list(e) for name in gaz.names for e in sorted(gaz.entries[name])[:300]]
    for _ in range(200):
        words = []
        for _ in range(rng.randint(1, 8)):
            e = rng.choice(entries)
            words += e[: rng.randint(1, len(e))] if rng.random() < 0.3 else e
            if rng.random() < 0.5:
                words.append(rng.choice(["the", "and", ",", "Mr.", "U.S."]))
        words = [w.capitalize() if rng.random() < 0.3 else w for w in words]
        assert gaz.iob(words) == literal_iob(gaz, words)


def test_iob_equals_literal_longest_match_on_real_text(gaz):
    sents = [s.words for s in read_corpus(f"{DEMO_DIR}/train.conll").sentences]
    if CONLL.exists():
        sents += [s.words for s in read_corpus(str(CONLL / "eng.testa")).sentences[:300]]
    hits = 0
    for words in sents:
        got = gaz.iob(words)
        assert got == literal_iob(gaz, words)
        hits += sum(t.count("B") for t in got.values())
    assert hits > 100
