#!/usr/bin/env python3
"""Build the demo models that ``python main.py`` opens, from the demo corpus alone.

    python tools/demo/build_model.py            # writes nerstudio/demo/model/

Outputs (deterministic: same corpus and code, same files):

* ``model/tagger.npz`` — max-ent tagger (typed task, paper features) trained on train.conll;
* ``model/train.nbest.npz`` — jackknifed 20-best lists of train.conll (5 folds by document),
  what the reranker learns from;
* ``model/dev.nbest.npz`` — 20-best lists of dev.conll from the tagger above;
* ``model/reranker.npz`` — a boosting reranker trained on train.nbest, dev.nbest choosing the
  best round; the file keeps its dev-set curve (P, R, F every 100 rounds);
* ``model/train.scored.npz`` — that reranker's features and scores of train.nbest, which the
  window shows at once when it opens the demo (``build_scored.py``).

Everything is computed by nerstudio itself (no external data or models).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # run from a checkout without installing

from nerstudio.corpus.formats import read_corpus  # noqa: E402
from nerstudio.evaluation import evaluate_spans  # noqa: E402
from nerstudio.runtime.pipeline import jackknife  # noqa: E402
from nerstudio.tagging.maxent import MaxEntTagger  # noqa: E402

DEMO = HERE.parents[1] / "nerstudio" / "demo"  # the package carries corpus and models
OUT = DEMO / "model"
TAGGER = {"task": "typed", "features": "paper", "max_iter": 100}
FOLDS, N = 5, 20
RERANKER = ("boost", {"rounds": 3000, "eval_every": 100})
FEATURES = {"min_sentences": 2}


def main() -> int:
    OUT.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    train = read_corpus(DEMO / "train.conll")
    dev = read_corpus(DEMO / "dev.conll")
    params = dict(TAGGER, labels=train.labels)
    tagger = MaxEntTagger(**params).fit(train.sentences)
    tagger.train_seconds_ = None  # timings would make the files differ from run to run
    tagger.save(OUT / "tagger.npz")
    jk = jackknife(train, folds=FOLDS, n=N, tagger_params=params, workers=1)
    jk.nbest.meta.pop("fold", None)  # per-sentence fold ids: not needed by the demo
    jk.nbest.save(OUT / "train.nbest.npz")
    dev_nb = tagger.nbest(dev.sentences, n=N, ids=[f"dev.conll:{s.line}" for s in dev.sentences])
    dev_nb.save(OUT / "dev.nbest.npz")
    base = evaluate_spans(dev_nb.gold, dev_nb.top()).overall.f1
    print(
        f"tagger + N-best lists in {time.perf_counter() - t0:.1f}s; dev F of the top candidates {base:.2f}"
    )
    try:
        from nerstudio.rerank.model import train_reranker
    except ImportError:
        print("nerstudio.rerank.model is missing: no demo reranker written", file=sys.stderr)
        return 0
    algo, rparams = RERANKER
    history = []
    model = train_reranker(
        jk.nbest, dev_nb, algo, dict(rparams), dict(FEATURES), callback=history.append
    )
    for k in [k for k in model.meta if k.endswith("seconds")]:
        model.meta[k] = 0.0
    for h in getattr(model.learner, "history_", []):
        h.seconds = 0.0
    model.save(OUT / "reranker.npz")
    best = max((h for h in history if h.dev_f1 is not None), key=lambda h: h.dev_f1, default=None)
    if best is not None:
        print(
            f"reranker {model.learner.describe()}: best dev F {best.dev_f1:.2f} at {best.unit} {best.step} (baseline {base:.2f})"
        )
    from build_scored import SCORED, build  # the window's scores of the demo list

    build(DEMO, OUT / SCORED)
    for p in sorted(OUT.iterdir()):
        print(f"  {p.relative_to(DEMO)}  {p.stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
