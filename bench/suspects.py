#!/usr/bin/env python3
"""Suspect annotations: does the ranking find errors put into a corpus on purpose?

    python bench/suspects.py --model TAGGER.npz [--corpus eng.testa] [--rate 0.05] [--seed 0]
    python bench/suspects.py --train eng.train [--cache /tmp/tagger.npz]   # trains the model
    python bench/suspects.py --folds 5 [--with eng.train]                  # the K-fold path

Known errors go into ``--rate`` of the corpus's entities (seeded), a quarter of each kind: an
entity's type swapped for another, one of its boundaries moved one token left or right, an entity
deleted, a spurious one-word entity added where there was none. Then every sentence is ranked,
most suspect first, by

* nerstudio (:func:`nerstudio.label_errors.find_suspects`; each measure of
  :data:`~nerstudio.label_errors.MEASURES`, the first being the one it uses);
* cleanlab's ``token_classification.rank.get_label_quality_scores`` over the same model's token
  probabilities (exact marginals, :func:`nerstudio.tagging.maxent_probs.token_marginals`), its
  classes the entity types with O, and the IOB2 tags (needs ``pip install cleanlab``, part of
  the ``bench`` extra; its lines are skipped, saying so, without it);
* plain disagreement: the sentences where the model's best tagging differs from gold first;
* random order.

A sentence is a hit when it holds an injected error. Printed for each: precision at k (hits among
the first k), the recall of injected errors at k (errors whose sentence is among the first k),
and the area under the precision–recall curve over the whole ranking (average precision). For
nerstudio also: how often its suggestion restores the original annotation of a hit. The corpus's
own errors count as misses, so every figure is a lower bound. With ``--model`` (a tagger trained
on eng.train, which never saw eng.testa) every sentence is judged by one model; ``--folds`` runs
the K-fold path instead.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.label_errors import MEASURES, apply_suggestion, rank
from nerstudio.label_errors.evidence import judge
from nerstudio.label_errors.views import jackknife_views, model_views

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "conll2003")
KS = (50, 100, 300)
KINDS = ("type", "boundary", "deleted", "spurious")


# ------------------------------------------------------------------------------------------------
# the injected errors


def _free(spans, start, end, skip=None) -> bool:
    """No entity but ``skip`` touches ``[start, end)`` or its neighbours."""
    return all(s is skip or s.end < start or s.start > end for s in spans)


def inject(corpus, rate: float, seed: int):
    """A copy of ``corpus`` with errors in ``rate`` of its entities; ``(noisy, errors)``, an
    error being ``(sentence, kind, original spans)``."""
    rng = random.Random(seed)
    sents = corpus.sentences
    types = corpus.labels
    entities = [(k, sp) for k, s in enumerate(sents) for sp in s.spans]
    total = round(rate * len(entities))
    spans = [list(s.spans) for s in sents]
    touched: set = set()
    errors = []
    order = entities[:]
    rng.shuffle(order)
    pool = iter(order)
    for e in range(total):
        kind = KINDS[e % len(KINDS)]
        if kind == "spurious":
            while True:
                k = rng.randrange(len(sents))
                words = sents[k].words
                if k in touched or not words:
                    continue
                i = rng.randrange(len(words))
                if words[i][:1].isalpha() and _free(spans[k], i, i + 1):
                    break
            errors.append((k, kind, list(spans[k])))
            spans[k] = sorted([*spans[k], Span(i, i + 1, rng.choice(types))])
            touched.add(k)
            continue
        while True:
            k, sp = next(pool)
            if k in touched:
                continue
            if kind == "type":
                new = [Span(sp.start, sp.end, rng.choice([t for t in types if t != sp.label]))]
            elif kind == "deleted":
                new = []
            else:
                n = len(sents[k].words)
                moves = [
                    (sp.start - 1, sp.end),
                    (sp.start + 1, sp.end),
                    (sp.start, sp.end - 1),
                    (sp.start, sp.end + 1),
                ]
                moves = [
                    (a, b) for a, b in moves if 0 <= a < b <= n and _free(spans[k], a, b - 1, sp)
                ]
                if not moves:
                    continue
                a, b = rng.choice(moves)
                new = [Span(a, b, sp.label)]
            break
        errors.append((k, kind, list(spans[k])))
        spans[k] = sorted([x for x in spans[k] if x != sp] + new)
        touched.add(k)
    return corpus.with_spans(spans), errors


# ------------------------------------------------------------------------------------------------
# figures


def figures(order, errors) -> dict:
    """Precision and error recall at each k, and average precision, of a ranking (sentences)."""
    hit_sents = {k for k, _, _ in errors}
    hits = np.array([k in hit_sents for k in order], dtype=float)
    per_sentence = {}
    for k, _, _ in errors:
        per_sentence[k] = per_sentence.get(k, 0) + 1
    out = {}
    for k in KS:
        out[f"P@{k}"] = hits[:k].mean()
        out[f"R@{k}"] = sum(per_sentence.get(s, 0) for s in order[:k]) / len(errors)
    cum = np.cumsum(hits)
    ranks = np.arange(1, len(hits) + 1)
    out["AUPRC"] = float((cum / ranks * hits).sum() / max(hits.sum(), 1))
    return out


def line(name: str, f: dict) -> str:
    cells = " ".join(f"{f[c]:7.3f}" for c in COLS)
    return f"{name:<34} {cells}"


COLS = [f"P@{k}" for k in KS] + [f"R@{k}" for k in KS] + ["AUPRC"]


def cleanlab_orders(tagger, corpus, seed: int):
    """cleanlab's sentence order (lowest label quality first) for two class sets; or the reason
    it cannot run."""
    try:
        from cleanlab.token_classification.rank import get_label_quality_scores
    except ImportError as exc:
        return None, f"cleanlab is not installed ({exc}); pip install cleanlab"
    from nerstudio.tagging.maxent_probs import tag_ids, token_marginals

    sents = list(corpus.sentences)
    keep = [k for k, s in enumerate(sents) if len(s.words)]
    marg = token_marginals(tagger, [sents[k] for k in keep])
    tags = tagger.tagset_
    types = sorted({t.partition("-")[2] for t in tags if t != "N"})
    out = {}
    for scheme in ("entity types", "IOB2 tags"):
        if scheme == "entity types":
            classes = ["O", *types]
            of = [0 if t == "N" else 1 + types.index(t.partition("-")[2]) for t in tags]
        else:
            classes = ["O"] + [f"{p}-{x}" for x in types for p in "BI"]
            of = [
                0
                if t == "N"
                else classes.index(("B-" if t[0] in "SBU" else "I-") + t.partition("-")[2])
                for t in tags
            ]
        M = np.zeros((len(tags), len(classes)))
        M[np.arange(len(tags)), of] = 1.0
        probs = [m @ M for m in marg]
        labels = [
            [of[t] for t in tag_ids(tagger, sents[k].spans, len(sents[k].words))] for k in keep
        ]
        scores, _ = get_label_quality_scores(labels, probs)
        order = [keep[i] for i in np.argsort(scores, kind="stable")]
        order += [k for k in range(len(sents)) if k not in set(keep)]
        out[scheme] = order
    return out, None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=os.path.join(DATA, "eng.testa"))
    ap.add_argument("--model", help="a max-ent tagger trained without the corpus (tagger.npz)")
    ap.add_argument("--train", help="train the model on this corpus first (e.g. eng.train)")
    ap.add_argument(
        "--cache",
        default="/tmp/nerstudio-suspects-tagger.npz",
        help="where --train keeps the model it trains",
    )
    ap.add_argument(
        "--folds", type=int, default=0, help="K-fold over the corpus instead of --model"
    )
    ap.add_argument("--with", dest="more", action="append", default=[], help="extra training data")
    ap.add_argument("--rate", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=20)
    args = ap.parse_args()
    if not os.path.exists(args.corpus):
        print(f"skipped: {args.corpus} is absent (give --corpus)")
        return 0
    corpus = read_corpus(args.corpus)
    noisy, errors = inject(corpus, args.rate, args.seed)
    n_ent = sum(len(s.spans) for s in corpus.sentences)
    kinds = {k: sum(1 for e in errors if e[1] == k) for k in KINDS}
    print(
        f"{args.corpus}: {len(corpus.sentences):,} sentences, {n_ent:,} entities; "
        f"{len(errors)} errors injected ({', '.join(f'{v} {k}' for k, v in kinds.items())}) "
        f"into {len({e[0] for e in errors})} sentences (seed {args.seed})"
    )
    tagger = None
    t = time.perf_counter()
    if args.folds:
        more = [read_corpus(p) for p in args.more]
        views = jackknife_views(
            noisy,
            more,
            args.folds,
            args.n,
            progress=lambda d, n, m: print(f"  {m}", flush=True) if "done" in m else None,
        )
        how = f"{args.folds}-fold over the corpus" + (
            f" with {', '.join(args.more)}" if more else ""
        )
    else:
        from nerstudio.label_errors import load_tagger_model
        from nerstudio.label_errors.views import default_tagger_params
        from nerstudio.tagging.maxent import MaxEntTagger

        path = args.model
        if path is None:
            path = args.cache
            if not os.path.exists(path):
                if not args.train:
                    print("give --model TAGGER.npz, --train CORPUS or --folds K")
                    return 1
                print(f"training the tagger on {args.train} (cached in {path})…", flush=True)
                MaxEntTagger(**default_tagger_params()).fit(read_corpus(args.train).sentences).save(
                    path
                )
        tagger = load_tagger_model(path)
        views = model_views(noisy, tagger, args.n)
        how = f"one model, {path}, which never saw the corpus"
    secs = time.perf_counter() - t
    print(f"judged by {how}: {secs:.0f} s\n")
    print(f"{'ranking':<34} " + " ".join(f"{c:>7}" for c in COLS))
    results = {}
    for measure in MEASURES:
        sus = rank([judge(k, v, measure) for k, v in enumerate(views)])
        order = [s.sentence for s in sus]
        name = "nerstudio" if measure == MEASURES[0] else f"nerstudio, measure {measure}"
        results[name] = (figures(order, errors), sus)
        print(line(name, results[name][0]))
    if tagger is not None:
        orders, why = cleanlab_orders(tagger, noisy, args.seed)
        if orders is None:
            print(f"{'cleanlab':<34} skipped: {why}")
        else:
            for scheme, order in orders.items():
                print(line(f"cleanlab ({scheme})", figures(order, errors)))
    else:
        print(f"{'cleanlab':<34} skipped: the K-fold path has no single model's probabilities")
    rng = random.Random(args.seed)
    differ = [
        k for k, v in enumerate(views) if v.candidates and set(v.candidates[0]) != set(v.gold)
    ]
    agree = [k for k in range(len(views)) if k not in set(differ)]
    rng.shuffle(differ), rng.shuffle(agree)
    print(line("disagreement with the model", figures(differ + agree, errors)))
    order = list(range(len(views)))
    rng.shuffle(order)
    print(line("random order", figures(order, errors)))
    sus = results["nerstudio"][1]
    original = {k: spans for k, _, spans in errors}
    top = [s for s in sus[:300] if s.sentence in original]
    fixed = sum(
        1
        for s in top
        if apply_suggestion(noisy.sentences[s.sentence].spans, s) == original[s.sentence]
    )
    print(
        f"\nnerstudio's suggestion restores the original annotation of {fixed} of the "
        f"{len(top)} hits among its first 300"
    )
    by_kind = {k: [0, 0] for k in KINDS}
    pos = {s.sentence: r for r, s in enumerate(sus)}
    for k, kind, _ in errors:
        by_kind[kind][1] += 1
        by_kind[kind][0] += pos[k] < 300
    print(
        "errors found among nerstudio's first 300, by kind: "
        + ", ".join(f"{k} {a}/{b}" for k, (a, b) in by_kind.items())
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
