"""Explanations in words and honest numbers, Qt-free: the glossary of template codes, the order
the feature table and the why sentence share, the corpus-wide feature ranking (against a
brute-force recomputation) and its CLI, and the number formatter."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from nerstudio.cli import main
from nerstudio.corpus.model import Span
from nerstudio.demo import DEMO_MODEL_DIR
from nerstudio.nbest import NBestList
from nerstudio.numfmt import num
from nerstudio.rerank import features as gfeat
from nerstudio.rerank.explanation import group_terms, rank_terms, why_sentence
from nerstudio.rerank.glossary import FALLBACK, GLOSSARY, describe, describe_template, template_code
from nerstudio.rerank.importance import decisions, model_importance
from nerstudio.rerank.model import RerankerModel, Term
from nerstudio.text import nonlocal_features as nlf
from nerstudio.text.shapes import build_lexicon

DEMO = DEMO_MODEL_DIR
pytestmark = pytest.mark.skipif(not (DEMO / "reranker.npz").exists(), reason="demo model not built")


@pytest.fixture(scope="module")
def demo():
    model = RerankerModel.load(DEMO / "reranker.npz")
    nb = NBestList.load(DEMO / "dev.nbest.npz")
    return model, nb, model.data(nb)


# -- the glossary ------------------------------------------------------------------------------

# A sentence built so that one entity has every window position inside the sentence, a short
# quotation with a word inside, and words that are never equal to their own shapes.
WORDS = [
    "Yesterday",
    "in",
    "the",
    "Dougherty",
    "Arts",
    "Center",
    '"',
    "Summer",
    "Nights",
    '"',
    "opened",
    ".",
]
ENTITY = (3, 6)  # Dougherty Arts Center: s = 3, e = 5


def _synthetic_candidates():
    tags_typed = ["N", "N", "N", "S-ORG", "C-ORG", "C-ORG", "N", "S-MISC", "C-MISC", "N", "N", "N"]
    tags_loose = ["N", "N", "N", "S-ORG", "C-ORG", "C-ORG", "N", "S-MISC", "S-LOC", "N", "N", "N"]
    tags_untyped = [t.split("-")[0] for t in tags_typed]
    return [tags_typed, tags_loose, tags_untyped]


def _nonlocal_document():
    words = [
        "Bill",
        "Clinton",
        "met",
        "Clinton",
        ".",
        "Clinton",
        "and",
        "Gore",
        ",",
        "U.S.",
        ",",
        "EU",
        ",",
        "and",
        "Japan",
        ".",
        "Clinton",
    ]
    typed = [
        Span(0, 2, "PER"),
        Span(3, 4, "PER"),
        Span(5, 6, "ORG"),
        Span(7, 8, "PER"),
        Span(9, 10, "LOC"),
        Span(11, 12, "ORG"),
        Span(14, 15, "LOC"),
    ]
    untyped = [Span(s.start, s.end, "") for s in typed]
    return words, [typed, untyped]


def emitted_feature_names() -> set[str]:
    """Every feature string the extractors produce on the demo N-best lists and on synthetic
    candidates built to trigger every template (quotes, every window variant, typed and untyped,
    non-local families), plus the terms of the explanations (L(x), the kernel's)."""
    names: set[str] = set()
    train = NBestList.load(DEMO / "train.nbest.npz")
    gf = gfeat.GlobalFeatures(min_sentences=1, gazetteers=True, clusters=True)
    gf.fit(train)  # the integer path
    names.update(gf.names_)
    lex = build_lexicon(train.words)
    for i in range(0, len(train), 7):  # the readable path, every candidate of some sentences
        for j in range(train.n_candidates(i)):
            tags = [train.tagset[t] for t in train.candidates[i][j]]
            names.update(gf.candidate_strings(train.words[i], tags, lex))
    for tags in _synthetic_candidates():
        names.update(gfeat.GlobalFeatures(typed=None).candidate_strings(WORDS, tags, lex))
    # document / corpus context: a sentence whose tagged entity recurs in its document and in another
    from nerstudio.rerank.context import DocumentContext

    i = next(k for k in range(len(train)) if train.spans(k, 0))
    ctx_nb = NBestList(
        train.tagset,
        [train.words[i]] * 3,
        [train.candidates[i][:1]] * 3,
        [train.logprobs[i][:1]] * 3,
    )
    tags = [train.tagset[t] for t in train.candidates[i][0]]
    names.update(
        gfeat.GlobalFeatures(context=True).candidate_strings(
            train.words[i], tags, lex, context=DocumentContext(ctx_nb, [0, 0, 1]), sentence=0
        )
    )
    from nerstudio.rerank.context import entity_posteriors

    post = entity_posteriors(train.logprobs[i], train.candidates[i], train.tagset)
    names.update(
        gfeat.GlobalFeatures(posterior=True).candidate_strings(
            train.words[i], tags, lex, posteriors=post
        )
    )
    words, labellings = _nonlocal_document()
    for spans in labellings:
        names.update(nlf.NonLocalFeatures().strings(words, spans))
    return names


def emitted_codes(names) -> set[str]:
    return {template_code(n) for n in names}


@pytest.mark.slow
@pytest.mark.ux
def test_every_template_the_extractors_emit_has_a_description():
    names = emitted_feature_names()
    codes = emitted_codes(names)
    # the enumeration reaches every template the modules declare, and every non-local family
    assert set(gfeat.TEMPLATES) <= codes
    assert {"PC", "SP", "MJ", "MJS", "MJT", "CJ"} <= codes
    for code in codes:
        assert describe_template(code) != FALLBACK, f"template {code} has no description"
    for name in names:
        text = describe(name)
        assert FALLBACK not in text and text.startswith(template_code(name)), name
    # the explanation terms: L(x) (every linear model) and the kernel perceptron's terms
    assert describe_template("L") != FALLBACK and describe_template("K") != FALLBACK
    # nothing in the table that no extractor emits, and no two templates described alike
    assert set(GLOSSARY) - {"L", "K"} <= codes
    assert len(set(GLOSSARY.values())) == len(GLOSSARY)


@pytest.mark.slow
@pytest.mark.ux
def test_kernel_and_linear_explanations_use_described_templates(demo):
    from nerstudio.rerank.kernel import KernelPerceptron

    model, _nb, data = demo
    ex = model.explain(data, 0)
    assert {t.template for t in ex.terms} >= {"L"}
    train = model.features.transform(NBestList.load(DEMO / "train.nbest.npz")).subset(np.arange(12))
    kp = RerankerModel(model.features, KernelPerceptron(beta=1.0, epochs=1).fit(train))
    terms = kp.explain(train, int(train.offsets[3])).terms
    templates = {t.template for t in terms}
    assert "K" in templates and "L" in templates
    for t in terms:
        assert FALLBACK not in describe(t.name, t.template)


def _position_of(phrase: str, s: int, e: int) -> int:
    """Where a described word is, read back from the description's words."""
    p = phrase.replace("its ", "the entity's ")
    p = p[4:] if p.startswith("the ") else p
    table = {
        "word 2 before the entity": s - 2,
        "word before the entity": s - 1,
        "entity's first word": s,
        "word after the entity's first word": s + 1,
        "word 2 before the entity's last word": e - 2,
        "word before the entity's last word": e - 1,
        "entity's last word": e,
        "word after the entity": e + 1,
    }
    return table[p]


@pytest.mark.ux
def test_window_descriptions_say_which_words_and_which_shapes():
    """Each BO/BE/TO/TO2/TE/TE2 description names, in order, the words the extractor puts in the
    value and whether each is the word itself or its shape."""
    lex = {"in", "the", "opened"}
    # one entity, s..e = 3..5
    tags = ["N", "N", "N", "S-ORG", "C-ORG", "C-ORG"] + ["N"] * (len(WORDS) - 6)
    got = gfeat.GlobalFeatures(typed=False, quotes=False).candidate_strings(WORDS, tags, lex)
    s, e = ENTITY[0], ENTITY[1] - 1
    shape = {i: gfeat._Prims(lex).of(w)[1] for i, w in enumerate(WORDS)}
    checked = 0
    for name in got:
        code = template_code(name)
        if code[:2] not in ("BO", "BE", "TO", "TE"):
            continue
        value = name.partition("=")[2].split(" ")
        parts = describe_template(code).split(" + ")
        assert len(parts) == len(value), name
        for part, v in zip(parts, value):
            is_shape = part.startswith("shape of ")
            i = _position_of(part[len("shape of ") :] if is_shape else part, s, e)
            assert v == (shape[i] if is_shape else WORDS[i]), (name, part)
        checked += 1
    assert checked == 40  # 4 BO + 4 BE + 4 × 8 TO/TO2/TE/TE2 variants
    assert describe("BO01=in Aa0") == "BO01: word before the entity + shape of its first word"


def test_describe_typed_and_nonlocal_qualifiers():
    assert describe("WE:ORG=Dougherty Arts Center") == "WE (ORG entities): the entity's words"
    assert describe("MJT:PER~ORG").startswith("MJT (PER and ORG): ")
    assert describe("SP:LOC<ORG").startswith("SP (LOC inside ORG): ")
    assert describe("PC:ORG~O").startswith("PC (ORG and unlabelled): ")
    assert describe("CJ=diff").startswith("CJ (different labels): ")
    assert describe("L(x)").startswith("L(x): the tagger's log-probability")
    assert describe("some junk").endswith(FALLBACK)


# -- one order for the table and the sentence ---------------------------------------------------


def _terms(*spec):
    return [Term(n, template_code(n) if n != "L(x)" else "L", 1.0, c, c) for n, c in spec]


def test_groups_rank_by_absolute_total_and_sentence_reads_the_same_order():
    terms = _terms(
        ("BO01=in Aa0", 0.5), ("BO01=the Aa0", 0.4), ("WE=Acme", -1.2), ("L(x)", 0.3), ("LW=x", 0.0)
    )
    groups = group_terms(terms)
    assert [g.template for g in groups] == ["WE", "BO01", "L", "LW"]
    assert [t.name for t in groups[1].terms] == ["BO01=in Aa0", "BO01=the Aa0"]
    delta = sum(t.contribution for t in terms)
    text = why_sentence(terms, delta, "candidate 2", "candidate 1", grouped=True, rich=False)
    we, bo = text.index("(WE)"), text.index("(BO01)")
    assert we < bo and "(L(x))" not in text  # the two top groups, in the table's order
    assert "the entity's words (WE): -1.200, for candidate 1" in text
    assert "2 features: +0.900, for candidate 2" in text
    assert "prefers candidate 2 to candidate 1" in text
    flat = why_sentence(terms, delta, "candidate 2", "candidate 1", grouped=False, rich=False)
    assert [t.name for t in rank_terms(terms)][:2] == ["WE=Acme", "BO01=in Aa0"]
    assert flat.index("“Acme”") < flat.index("“in Aa0”")
    assert "BO01=" not in flat and "WE=" not in flat  # words, not raw feature strings


def test_why_sentence_of_equal_scores_and_of_nothing_to_separate():
    assert "the same" in why_sentence([], 0.0, "candidate 1", "candidate 2", rich=False)
    assert "no feature separates" in why_sentence(_terms(("LW=x", 0.0)), 0.0, "a", "b", rich=False)


# -- the corpus-wide ranking ---------------------------------------------------------------------


def brute_force(model, data, against):
    """The ranking recomputed literally: compare() on every decision, terms summed in dicts."""
    scores = model.scores(data)
    pick = model.predict(data)
    feats = defaultdict(lambda: [0, 0, 0.0, 0.0, [], []])
    temps = defaultdict(lambda: [0, 0, 0.0, 0.0, [], []])

    def add(table, key, c, i):
        rec = table[key]
        if c > 0:
            rec[0] += 1
            rec[2] += c
            rec[4].append(i)
        elif c < 0:
            rec[1] += 1
            rec[3] += c
            rec[5].append(i)

    n_dec = 0
    for i in range(len(data)):
        rows = data.rows(i)
        m = rows.stop - rows.start
        p = int(pick[i])
        if against == "baseline":
            if p <= 0:
                continue
            o = 0
        else:
            if m < 2:
                continue
            order = sorted(range(m), key=lambda j: (-scores[rows.start + j], j))
            o = next(j for j in order if j != p)
        n_dec += 1
        cmp_ = model.compare(data, rows.start + p, rows.start + o)
        by_template = defaultdict(float)
        for t in cmp_.terms:
            add(feats, t.name, t.contribution, i)
            by_template[t.template] += t.contribution
        for k, c in by_template.items():
            add(temps, k, c, i)
    return n_dec, feats, temps


def _same(items, table):
    got = {x.key: x for x in items}
    want = {k: v for k, v in table.items() if v[0] or v[1]}
    assert set(got) == set(want)
    for k, (nf, na, tf, ta, sf, sa) in want.items():
        x = got[k]
        assert (x.n_for, x.n_against, x.sentences_for, x.sentences_against) == (nf, na, sf, sa), k
        assert x.total_for == pytest.approx(tf, abs=1e-9) and x.total_against == pytest.approx(
            ta, abs=1e-9
        )


@pytest.mark.parametrize("against", ["baseline", "runner-up"])
def test_importance_equals_brute_force_on_the_demo_model(demo, against):
    model, _nb, data = demo
    res = model_importance(model, data, against)
    n_dec, feats, temps = brute_force(model, data, against)
    assert len(res.decisions) == n_dec > 0
    _same(res.features, feats)
    _same(res.templates, {("L" if k == "L" else k): v for k, v in temps.items()})
    # ranked by decisions moved, then by contribution
    keys = [(-x.n_for, -x.total_for) for x in res.features]
    assert keys == sorted(keys)
    by = model_importance(model, data, against, sort="contribution")
    assert [x.total_for for x in by.templates] == sorted(
        (x.total_for for x in by.templates), reverse=True
    )


@pytest.mark.slow
def test_importance_of_a_perceptron_and_refusal_of_the_kernel(demo):
    from nerstudio.rerank.kernel import KernelPerceptron
    from nerstudio.rerank.perceptron import AveragedPerceptron

    model, _nb, data = demo
    train = model.features.transform(NBestList.load(DEMO / "train.nbest.npz"))
    ap = RerankerModel(model.features, AveragedPerceptron(epochs=2, seed=1).fit(train))
    res = model_importance(ap, data, "runner-up")
    n_dec, feats, temps = brute_force(ap, data, "runner-up")
    assert len(res.decisions) == n_dec
    _same(res.features, feats)
    _same(res.templates, temps)
    with pytest.raises(ValueError, match="no per-feature weights"):
        model_importance(RerankerModel(model.features, KernelPerceptron()), data)
    with pytest.raises(ValueError, match="unknown comparison"):
        decisions(np.zeros(2), np.array([0, 2]), np.array([0]), "oracle")


def test_cli_explain_model_prints_the_ranking(demo, capsys, tmp_path):
    model, _nb, data = demo
    assert (
        main(
            [
                "explain-model",
                str(DEMO / "reranker.npz"),
                str(DEMO / "dev.nbest.npz"),
                "--json",
                "--top",
                "5",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    res = model_importance(model, data)
    assert out["decisions"] == len(res.decisions)
    assert [t["key"] for t in out["templates"]] == [t.key for t in res.templates[:5]]
    assert out["features"][0]["sentences_for"] == res.features[0].sentences_for
    assert (
        main(
            ["explain-model", str(DEMO / "reranker.npz"), str(DEMO / "dev.nbest.npz"), "--top", "3"]
        )
        == 0
    )
    text = capsys.readouterr().out
    top = res.templates[0]
    assert describe_template(top.template)[:40] in text and "-0.000" not in text
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    assert main(["explain-model", str(DEMO / "reranker.npz"), str(bad)]) == 1
    assert "bad.npz" in capsys.readouterr().err


# -- numbers -----------------------------------------------------------------------------------


def test_numbers_never_print_as_negative_zero():
    assert num(-0.0) == "0.000" and num(-0.0004) == "0.000" and num(-0.0004, sign=True) == "0.000"
    assert num(-0.0, None, spec="g") == "0"
    assert num(-0.0006) == "-0.001" and num(0.5, sign=True) == "+0.500" and num(-2, 2) == "-2.00"
    assert num(None) == "" and num(float("nan")) == "nan" and num(float("-inf")) == "-inf"
