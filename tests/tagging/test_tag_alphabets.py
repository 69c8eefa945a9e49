"""The tagger's BILOU alphabet: valid sequences are segmentations, the beam against brute force,
lists in SCN, model files."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from helpers.tiny_corpus import tiny_sentences

from nerstudio.corpus.model import Sentence, Span
from nerstudio.errors import FormatError, SettingsError
from nerstudio.nbest import spans_to_tag_ids, tags_to_spans
from nerstudio.persist import load_npz, save_npz
from nerstudio.tagging.maxent import MaxEntTagger
from nerstudio.tagging.perceptron import PerceptronTagger
from nerstudio.tagging.tag_alphabets import (
    allowed_transitions,
    alphabet_of,
    final_allowed,
    make_tagset,
    scn_tagset,
    to_scn,
)


def valid(tagset, seq) -> bool:
    allowed, final = allowed_transitions(tagset), final_allowed(tagset)
    prev = len(tagset)
    for t in seq:
        if not allowed[prev, t]:
            return False
        prev = t
    return not seq or bool(final[seq[-1]])


def segmentations(n: int, labels):
    """Every set of non-overlapping typed spans over n words, by brute force."""
    out = []
    cuts = [(a, b) for a in range(n) for b in range(a + 1, n + 1)]
    for k in range(n + 1):
        for chosen in itertools.combinations(cuts, k):
            if all(x[1] <= y[0] for x, y in itertools.pairwise(chosen)):
                for labs in itertools.product(labels, repeat=k):
                    out.append(tuple(Span(a, b, lab) for (a, b), lab in zip(chosen, labs)))
    return out


@pytest.mark.parametrize("alphabet", ["scn", "bilou"])
@pytest.mark.parametrize("labels", [["LOC", "PER"], [""]])
def test_valid_sequences_are_exactly_the_segmentations(alphabet, labels):
    task = "scn" if labels == [""] else "typed"
    tagset = make_tagset([] if task == "scn" else labels, task, alphabet)
    assert alphabet_of(tagset) == alphabet
    n = 4
    seqs = [s for s in itertools.product(range(len(tagset)), repeat=n) if valid(tagset, s)]
    segs = segmentations(n, labels)
    assert len(seqs) == len(segs)
    scn = scn_tagset(tagset)
    to = to_scn(tagset)
    index = {t: k for k, t in enumerate(tagset)}
    decoded = set()
    for seq in seqs:
        spans = tuple(tags_to_spans(to[list(seq)], scn))
        decoded.add(spans)
        # gold ids of the decoded spans give back the sequence: one sequence per segmentation
        assert tuple(spans_to_tag_ids(list(spans), n, index, task == "typed", alphabet)) == seq
    assert decoded == set(segs)


def test_bilou_tags_and_their_constraints():
    tagset = make_tagset(["ORG", "LOC"], "typed", "bilou")
    assert tagset[:5] == ["N", "B-LOC", "I-LOC", "L-LOC", "U-LOC"]
    assert scn_tagset(tagset) == ["N", "S-LOC", "C-LOC", "S-ORG", "C-ORG"]
    a, ix = allowed_transitions(tagset), {t: k for k, t in enumerate(tagset)}
    start = len(tagset)
    assert not a[start, ix["I-LOC"]] and not a[start, ix["L-LOC"]] and a[start, ix["B-ORG"]]
    assert a[ix["B-LOC"], ix["L-LOC"]] and not a[ix["B-LOC"], ix["L-ORG"]]
    assert not a[ix["B-LOC"], ix["N"]] and not a[ix["I-ORG"], ix["U-ORG"]]
    assert a[ix["L-LOC"], ix["B-LOC"]] and a[ix["U-ORG"], ix["U-ORG"]]
    assert [t for t, ok in zip(tagset, final_allowed(tagset)) if not ok] == [
        "B-LOC",
        "I-LOC",
        "B-ORG",
        "I-ORG",
    ]
    # SCN keeps the tagger's historical constraint: C-X only after S-X or C-X
    scn = make_tagset(["LOC"], "typed", "scn")
    assert final_allowed(scn).all() and np.array_equal(to_scn(scn), np.arange(3))
    with pytest.raises(SettingsError, match="tag alphabet"):
        make_tagset(["LOC"], "typed", "bio")


@pytest.mark.parametrize("task", ["typed", "scn"])
def test_bilou_wide_beam_equals_brute_force_ranking(task):
    m = MaxEntTagger(task=task, features="paper", cutoff=1, max_iter=40, alphabet="bilou")
    m.fit(tiny_sentences())
    s = Sentence(["John", "visited", "Paris"])
    T = len(m.tagset_)
    allseq = [seq for seq in itertools.product(range(T), repeat=len(s)) if valid(m.tagset_, seq)]
    brute = sorted(((m.log_prob(s, seq), seq) for seq in allseq), key=lambda x: -x[0])
    nb = m.nbest([s], n=len(allseq) + 10, beam=len(allseq) + 10, with_gold=False)
    assert nb.tagset == scn_tagset(m.tagset_)
    got = [(lp, tuple(int(t) for t in c)) for lp, c in zip(nb.logprobs[0], nb.candidates[0])]
    assert len(got) == len(allseq) == len({c for _, c in got})  # distinct segmentations
    for (lp_b, _), (lp_g, _) in zip(brute, got):
        assert lp_g == pytest.approx(lp_b, abs=1e-9)
    to = to_scn(m.tagset_)
    assert [c for _, c in got][:5] == [tuple(int(t) for t in to[list(c)]) for _, c in brute][:5]
    # every candidate is a valid SCN sequence: C-X never after N or another type
    for _, c in got:
        spans = tags_to_spans(c, nb.tagset)
        assert all(sp.end > sp.start for sp in spans)
    assert math.fsum(math.exp(lp) for lp, _ in brute) <= 1 + 1e-9


def test_bilou_tagger_learns_saves_and_loads(tmp_path):
    sents = tiny_sentences()
    m = MaxEntTagger(
        task="typed",
        features="paper",
        cutoff=1,
        l2=0.5,
        optimizer="lbfgs",
        max_iter=60,
        alphabet="bilou",
    ).fit(sents)
    assert m.evaluate(tiny_sentences(1)) > 90.0
    path = tmp_path / "bilou.npz"
    m.save(path)
    m2 = MaxEntTagger.load(path)
    assert m2.alphabet == "bilou" and m2.tagset_ == m.tagset_
    a, b = m.nbest(tiny_sentences(1), n=5), m2.nbest(tiny_sentences(1), n=5)
    assert a.tagset == b.tagset == scn_tagset(m.tagset_)
    for x, y in zip(a.candidates, b.candidates):
        assert np.array_equal(x, y)
    # a header whose alphabet does not match its tag set is refused, naming the file
    header, arrays = load_npz(str(path), "nerstudio-maxent", 1, "a tagger model")
    bad = tmp_path / "bad.npz"
    save_npz(bad, {**header, "alphabet": "scn"}, {k: arrays[k] for k in arrays if k != "header"})
    with pytest.raises(FormatError, match="bad.npz"):
        MaxEntTagger.load(bad)


def test_train_tagger_command_with_bilou(tmp_path, capsys):
    from nerstudio.cli import main
    from nerstudio.demo import DEMO_DIR

    out = tmp_path / "t.npz"
    train = str(DEMO_DIR / "train.conll")
    assert main(["train-tagger", train, "--out", str(out), "--alphabet", "bilou"]) == 0
    m = MaxEntTagger.load(out)
    assert m.alphabet == "bilou" and "U-PER" in m.tagset_
    perceptron = tmp_path / "p.npz"
    args = ["train-tagger", train, "--out", str(perceptron), "--model", "perceptron"]
    assert main([*args, "--alphabet", "bilou", "--epochs", "2"]) == 0
    p = PerceptronTagger.load(perceptron)
    assert p.alphabet == "bilou" and "L-PER" in p.tagset_
