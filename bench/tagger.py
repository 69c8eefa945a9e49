#!/usr/bin/env python3
"""Benchmark: the max-ent tagger's optimisers next to sklearn-crfsuite, same run, same features.

    python bench/tagger.py [--data ../shared/data/conll2003] [--features SET] [--cutoff K]
                           [--alphabet bilou|scn] [--max-iter N] [--epochs E] [--crf-iter N]
                           [--skip-lbfgs] [--skip-held-out] [--skip-crfsuite] [--json FILE]

Trains on CoNLL-2003 eng.train (dev = eng.testa, test = eng.testb), by default with the typed
experiment's tagger settings (``conll+rich+gaz+clusters``, cut-off 2, BILOU tags), in one run:

- the online optimiser (``optimizer="adagrad"``), its epochs chosen on the dev set;
- the same without the dev set: its epochs chosen on a held-out tenth of eng.train, then
  trained again on all of it (what each jackknife fold does);
- L-BFGS for ``--max-iter`` iterations (300: the experiment's);
- sklearn-crfsuite (a linear-chain CRF, L-BFGS for ``--crf-iter`` iterations, the same L2
  penalty and no L1) on the same feature strings: every token's predicates as our tagger keeps
  them (after the cut-off), so only the model and the optimiser differ.

For each: the fit's wall and CPU seconds (ours: the whole ``fit``, features and design
included, and the optimiser alone; crfsuite: ``CRF.fit`` on the prepared strings), iterations
or epochs, and F of the 1-best analysis on dev and test. The dev F of the first row is that of
the epoch the dev set chose, so it is the optimistic one: the test F is the fair comparison.
Wall seconds depend on what else runs: CPU seconds (all threads) are printed beside them, and
the load average before and after. Our compiled kernels are loaded (compiled on a first run,
then cached) before anything is timed. crfsuite needs the ``bench`` extra
(``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nerstudio.corpus import encode, read_corpus  # noqa: E402
from nerstudio.corpus.model import Span  # noqa: E402
from nerstudio.corpus.schemes import decode  # noqa: E402
from nerstudio.evaluation import evaluate_spans  # noqa: E402
from nerstudio.learners import TAGGERS  # noqa: E402
from nerstudio.tagging.maxent import MaxEntTagger  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def warm_up(data: Path) -> float:
    """Load (on a first run: compile) the tagger's numba kernels, as any earlier use would have."""
    t0 = time.perf_counter()
    sents = read_corpus(data / "eng.testa").sentences[:300]
    for optimizer in ("adagrad", "lbfgs"):
        MaxEntTagger(features="conll", optimizer=optimizer, max_iter=3, epochs=2).fit(sents)
    return time.perf_counter() - t0


def gold_of(sentences, typed: bool):
    return [list(s.spans) if typed else [Span(a, b, "") for a, b, _ in s.spans] for s in sentences]


def ours(name: str, params: dict, train, dev, test, select_on_dev: bool) -> tuple[dict, object]:
    """Fit the tagger with ``params``, timed; its F on dev and test."""
    marks: dict[str, float] = {}

    def cb(st) -> None:
        if "design" not in marks:  # the first report comes once the design is built
            marks["design"], marks["design_cpu"] = time.perf_counter(), time.process_time()

    tagger = MaxEntTagger(**params)
    t0, c0 = time.perf_counter(), time.process_time()
    tagger.fit(train.sentences, dev.sentences if select_on_dev else None, callback=cb)
    t1, c1 = time.perf_counter(), time.process_time()
    res = {
        "system": name,
        "fit_s": t1 - t0,
        "fit_cpu_s": c1 - c0,
        "optimiser_s": t1 - marks["design"],
        "optimiser_cpu_s": c1 - marks["design_cpu"],
        "steps": f"{tagger.n_iter_} {'epochs' if tagger.optimizer == 'adagrad' else 'it.'}"
        + (f" of {tagger.n_evals_} run" if tagger.optimizer == "adagrad" else ""),
        "stop": tagger.stop_reason_,
    }
    for split, corpus in (("dev", dev), ("test", test)):
        pred = tagger.predict_spans(corpus.sentences)
        res[f"{split}_f"] = evaluate_spans(gold_of(corpus.sentences, tagger.typed), pred).f1
    return res, tagger


def feature_strings(tagger, sentences) -> list[list[list[str]]]:
    """Every token's static predicates as the tagger keeps them, by name."""
    names = tagger.extractor_.names()
    X = tagger.extractor_.transform(sentences).tocsr()
    out, k = [], 0
    for s in sentences:
        rows = []
        for _ in s.words:
            rows.append([names[j] for j in X.indices[X.indptr[k] : X.indptr[k + 1]]])
            k += 1
        out.append(rows)
    return out


def crfsuite(tagger, train, dev, test, iterations: int, l2: float) -> dict | None:
    try:
        import sklearn_crfsuite
    except ImportError:
        print(
            "sklearn-crfsuite not installed (pip install -e '.[bench]'): skipped", file=sys.stderr
        )
        return None
    scheme = "bilou" if tagger.alphabet == "bilou" else "iob2"
    t0 = time.perf_counter()
    X = feature_strings(tagger, train.sentences)
    y = [encode(s.spans, len(s), scheme) for s in train.sentences]
    strings_s = time.perf_counter() - t0
    # crfsuite's penalty is c2·‖w‖², ours l2/2·‖w‖²
    crf = sklearn_crfsuite.CRF(
        algorithm="lbfgs",
        c1=0.0,
        c2=l2 / 2,
        max_iterations=iterations,
        all_possible_transitions=True,
    )
    t0, c0 = time.perf_counter(), time.process_time()
    crf.fit(X, y)
    t1, c1 = time.perf_counter(), time.process_time()
    res = {
        "system": f"sklearn-crfsuite, same features ({iterations} L-BFGS it.)",
        "fit_s": t1 - t0,
        "fit_cpu_s": c1 - c0,
        "strings_s": strings_s,
        "steps": f"{iterations} it.",
    }
    for split, corpus in (("dev", dev), ("test", test)):
        pred = crf.predict(feature_strings(tagger, corpus.sentences))
        spans = [decode(p, scheme)[0] for p in pred]
        res[f"{split}_f"] = evaluate_spans(gold_of(corpus.sentences, True), spans).f1
    return res


def main() -> None:
    defaults = TAGGERS["maxent"].defaults
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "conll2003")
    ap.add_argument("--features", default="conll+rich+gaz+clusters")
    ap.add_argument("--cutoff", type=int, default=2)
    ap.add_argument("--alphabet", default="bilou")
    ap.add_argument("--max-iter", type=int, default=300, help="L-BFGS iterations")
    ap.add_argument("--epochs", type=int, default=defaults["epochs"], help="online: at most")
    ap.add_argument("--crf-iter", type=int, default=100, help="crfsuite's L-BFGS iterations")
    ap.add_argument("--skip-lbfgs", action="store_true")
    ap.add_argument("--skip-held-out", action="store_true")
    ap.add_argument("--skip-crfsuite", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = ap.parse_args()
    if not (args.data / "eng.train").exists():
        sys.exit(f"CoNLL-2003 not found at {args.data} (pass --data); nothing measured")
    extra = {"load_before": load(), "warm_up_s": warm_up(args.data)}
    train, dev, test = (read_corpus(args.data / f) for f in ("eng.train", "eng.testa", "eng.testb"))
    base = {
        "task": "typed",
        "features": args.features,
        "cutoff": args.cutoff,
        "alphabet": args.alphabet,
        "l2": 1.0,
    }
    rows = []
    print("online optimiser, epochs chosen on dev...", file=sys.stderr)
    online = {**base, "optimizer": "adagrad", "epochs": args.epochs}
    row, tagger = ours("online (AdaGrad), epochs on dev", online, train, dev, test, True)
    rows.append(row)
    if not args.skip_held_out:
        print("online optimiser, epochs chosen on held-out sentences...", file=sys.stderr)
        rows.append(ours("online, epochs on held-out", online, train, dev, test, False)[0])
    if not args.skip_lbfgs:
        print(f"L-BFGS, {args.max_iter} iterations...", file=sys.stderr)
        lbfgs = {**base, "optimizer": "lbfgs", "max_iter": args.max_iter}
        rows.append(ours(f"L-BFGS ({args.max_iter} it.)", lbfgs, train, dev, test, False)[0])
    if not args.skip_crfsuite:
        print("sklearn-crfsuite on the same feature strings...", file=sys.stderr)
        r = crfsuite(tagger, train, dev, test, args.crf_iter, base["l2"])
        if r:
            rows.append(r)
    extra["load_after"] = load()

    def fmt(v, spec):
        return "n/a" if v is None else format(v, spec) if isinstance(v, (int, float)) else str(v)

    cols = [
        ("fit_s", "fit s", ".1f"),
        ("fit_cpu_s", "fit CPU s", ".1f"),
        ("optimiser_s", "optimiser s", ".1f"),
        ("optimiser_cpu_s", "optim. CPU s", ".1f"),
        ("steps", "steps", "s"),
        ("dev_f", "dev F", ".2f"),
        ("test_f", "test F", ".2f"),
    ]
    print()
    print(
        f"CoNLL-2003 English, features {args.features}, cut-off {args.cutoff}, {args.alphabet} "
        f"tags; {os.cpu_count()} cores, load average {extra['load_before']} before, "
        f"{extra['load_after']} after"
    )
    print(
        f"{'system':<46}"
        + "".join(f"{h:>15}" for _, h, _ in cols[:4])
        + f"  {'steps':<22}"
        + "".join(f"{h:>8}" for _, h, _ in cols[5:])
    )
    for r in rows:
        print(
            f"{r['system']:<46}"
            + "".join(f"{fmt(r.get(k), s):>15}" for k, _, s in cols[:4])
            + f"  {r['steps']:<22}"
            + "".join(f"{fmt(r.get(k), s):>8}" for k, _, s in cols[5:])
        )
    lb = next((r for r in rows if r["system"].startswith("L-BFGS")), None)
    if lb:
        on = rows[0]
        print(
            f"\nonline / L-BFGS: fit {on['fit_s'] / lb['fit_s']:.3f}x wall, "
            f"{on['fit_cpu_s'] / lb['fit_cpu_s']:.3f}x CPU; optimiser alone "
            f"{on['optimiser_s'] / lb['optimiser_s']:.3f}x wall, "
            f"{on['optimiser_cpu_s'] / lb['optimiser_cpu_s']:.3f}x CPU; dev F "
            f"{on['dev_f'] - lb['dev_f']:+.2f}, test F {on['test_f'] - lb['test_f']:+.2f}"
        )
    crf = next((r for r in rows if r["system"].startswith("sklearn")), None)
    if crf:
        print(f"(crfsuite's feature strings took {crf['strings_s']:.1f}s to make, not counted)")
    print(f"(our compiled kernels loaded before timing in {extra['warm_up_s']:.1f}s)")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, **extra}, indent=2))


if __name__ == "__main__":
    main()
