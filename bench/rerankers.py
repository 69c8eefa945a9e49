#!/usr/bin/env python3
"""Benchmark: nerstudio's rerankers on CoNLL-2003 N-best lists, next to LightGBM's lambdarank.

    python bench/rerankers.py [--nbest DIR] [--data ../shared/data/conll2003] [--task typed|scn]
                              [--rounds 300000] [--skip-lightgbm] [--json]

N-best lists come from DIR (``train-nbest.npz``, ``dev-nbest.npz``, ``test-nbest.npz``, as written
by ``nerstudio experiment``) or, without ``--nbest``, are made first by the jackknife (minutes).
Prints, measured in this run:

* global features for the training lists (seconds, candidates, features, non-zeros);
* boosting: seconds for ``--rounds`` rounds (dev F tracked every 1000 rounds), seconds per
  round, best dev F and its round, test F at that round;
* perceptrons: seconds per epoch (averaged, fixed β = 0.3), voted decoding time of the dev set
  after 5 epochs, dev/test F;
* LightGBM lambdarank on the very same sparse matrix (plus L(x) as a column) and the same
  groups, with graded relevance from the number of correct tags: its best dev F over the
  boosting iterations and the training time to reach it; and nerstudio boosting's time to
  reach the same dev F.

Needs the ``bench`` extra (``pip install -e ".[bench]"``) for LightGBM.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nerstudio.corpus.formats import read_corpus  # noqa: E402
from nerstudio.evaluation import relative_error_reduction  # noqa: E402
from nerstudio.nbest import NBestList  # noqa: E402
from nerstudio.rerank.boosting import Boosting  # noqa: E402
from nerstudio.rerank.features import GlobalFeatures  # noqa: E402
from nerstudio.rerank.perceptron import AveragedPerceptron, VotedPerceptron  # noqa: E402
from nerstudio.runtime.pipeline import jackknife, sentence_ids  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def make_nbest(data: Path, task: str, out: Path) -> None:
    train = read_corpus(data / "eng.train")
    dev = read_corpus(data / "eng.testa")
    test = read_corpus(data / "eng.testb")
    t0 = time.perf_counter()
    jk = jackknife(
        train,
        5,
        20,
        {"task": task, "features": "conll"},
        full=True,
        decode={
            "dev": (dev.sentences, sentence_ids(dev)),
            "test": (test.sentences, sentence_ids(test)),
        },
        progress=lambda p: print("  jackknife:", p.message, file=sys.stderr) if p.final else None,
    )
    jk.nbest.save(out / "train-nbest.npz")
    jk.decoded["dev"].save(out / "dev-nbest.npz")
    jk.decoded["test"].save(out / "test-nbest.npz")
    print(f"  N-best lists made in {time.perf_counter() - t0:.0f}s", file=sys.stderr)


def relevance(d) -> np.ndarray:
    """Graded relevance per candidate: 3 for the best number of correct tags in its sentence,
    2, 1 for one or two tags fewer, 0 below."""
    q = d.quality
    mx = np.maximum.reduceat(q, d.offsets[:-1])[d.group]
    return np.clip(3 - (mx - q), 0, 3).astype(np.int32)


def lightgbm_run(tr, dv, te, max_iter: int, eval_every: int, budget: float) -> dict:
    import lightgbm as lgb

    Xtr = sp.hstack(
        [tr.X.astype(np.float32), sp.csr_matrix(tr.L[:, None].astype(np.float32))]
    ).tocsr()
    Xdv = sp.hstack(
        [dv.X.astype(np.float32), sp.csr_matrix(dv.L[:, None].astype(np.float32))]
    ).tocsr()
    Xte = sp.hstack(
        [te.X.astype(np.float32), sp.csr_matrix(te.L[:, None].astype(np.float32))]
    ).tocsr()
    # the same training signal as ours: only sentences with ranking information
    keep = np.flatnonzero(tr.informative())
    rows = np.concatenate([np.arange(tr.offsets[i], tr.offsets[i + 1]) for i in keep])
    ds = lgb.Dataset(
        Xtr[rows],
        label=relevance(tr)[rows],
        group=tr.sizes[keep],
        params={
            "verbosity": -1,
            "min_data_in_bin": 1,
            "feature_pre_filter": False,
            "max_bin": 2,
            "force_row_wise": True,
        },
    )
    params = {
        "objective": "lambdarank",
        "metric": "None",
        "learning_rate": 0.1,
        "num_leaves": 31,
        "min_data_in_leaf": 20,
        "verbosity": -1,
        "num_threads": os.cpu_count() or 1,
        "lambdarank_truncation_level": 20,
        "max_bin": 2,
        "min_data_in_bin": 1,
        "force_row_wise": True,
    }
    # one training call; a callback time-stamps every iteration; dev F of every `eval_every`-th
    # iteration is computed afterwards (prediction time is not training time)
    stamps = {}
    t0 = time.perf_counter()

    def stamp(env):
        stamps[env.iteration + 1] = time.perf_counter() - t0
        if stamps[env.iteration + 1] > budget:  # wall-clock budget: stop and keep what was trained
            raise lgb.callback.EarlyStopException(env.iteration, [])

    booster = lgb.train(params, ds, num_boost_round=max_iter, callbacks=[stamp])
    last = max(stamps) if stamps else 0
    eval_every = max(1, min(eval_every, last))
    curve = []
    for it in range(eval_every, last + 1, eval_every):
        f = dv.prf(dv.argmax(booster.predict(Xdv, num_iteration=it)))[2]
        curve.append((it, f))
    setup = 0.0  # Dataset construction happens inside lgb.train and is in the time stamps
    best = int(np.argmax([f for _, f in curve]))
    it, f_best = curve[best]
    f_test = te.prf(te.argmax(booster.predict(Xte, num_iteration=it)))[2]
    return {
        "best_dev_f1": f_best,
        "best_iteration": it,
        "seconds_to_best": stamps[it] + setup,
        "seconds_total": stamps[last],
        "iterations": last,
        "test_f1_at_best": f_test,
        "curve": curve,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nbest", type=Path, help="directory with train/dev/test-nbest.npz")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "conll2003")
    ap.add_argument("--task", choices=("typed", "scn"), default="typed")
    ap.add_argument("--rounds", type=int, default=300000)
    ap.add_argument("--epsilon", type=float, default=0.0025)
    ap.add_argument("--lgb-iterations", type=int, default=300)
    ap.add_argument(
        "--lgb-budget", type=float, default=900.0, help="LightGBM wall-clock budget (seconds)"
    )
    ap.add_argument("--skip-lightgbm", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    nb_dir = args.nbest
    if nb_dir is None:
        if not (args.data / "eng.train").exists():
            print(f"CoNLL-2003 not found at {args.data}: pass --data or --nbest", file=sys.stderr)
            return 1
        nb_dir = Path(tempfile.mkdtemp(prefix="nerstudio-bench-"))
        print(f"making {args.task} N-best lists in {nb_dir} ...", file=sys.stderr)
        make_nbest(args.data, args.task, nb_dir)
    tr_nb = NBestList.load(nb_dir / "train-nbest.npz")
    dv_nb = NBestList.load(nb_dir / "dev-nbest.npz")
    te_nb = NBestList.load(nb_dir / "test-nbest.npz")
    out: dict = {"task": "typed" if tr_nb.typed else "scn", "machine_cores": os.cpu_count()}

    # warm the compiled loops (numba caches them on disk; the first use of a fresh install compiles)
    t = time.perf_counter()
    gf0 = GlobalFeatures(min_sentences=1)
    small = NBestList(
        tr_nb.tagset, tr_nb.words[:50], tr_nb.candidates[:50], tr_nb.logprobs[:50], tr_nb.gold[:50]
    )
    d0 = gf0.fit_transform(small)
    Boosting(rounds=10, eval_every=5).fit(d0, d0)
    VotedPerceptron(epochs=1, beta=0.3).fit(d0, d0)
    out["warmup_s"] = time.perf_counter() - t

    t = time.perf_counter()
    gf = GlobalFeatures()
    tr = gf.fit_transform(tr_nb)
    out["features"] = {
        "train_s": time.perf_counter() - t,
        "candidates": tr.n_candidates,
        "features": gf.n_features,
        "nonzeros": int(tr.X.nnz),
        "sentences": len(tr),
    }
    t = time.perf_counter()
    dv, te = gf.transform(dv_nb), gf.transform(te_nb)
    out["features"]["dev_test_s"] = time.perf_counter() - t
    base_dev, base_test = dv.prf(np.zeros(len(dv), int))[2], te.prf(np.zeros(len(te), int))[2]
    out["baseline"] = {"dev_f1": base_dev, "test_f1": base_test}
    print(f"features: {out['features']}", file=sys.stderr)

    # boosting
    hist = []
    t = time.perf_counter()
    b = Boosting(rounds=args.rounds, epsilon=args.epsilon, eval_every=1000).fit(
        tr, dv, callback=hist.append
    )
    secs = time.perf_counter() - t
    f_test = te.prf(b.predict(te))[2]
    best = max(hist, key=lambda h: (h.dev_f1, -h.step))
    out["boosting"] = {
        "rounds": b.rounds_run_,
        "seconds": secs,
        "us_per_round": 1e6 * secs / max(b.rounds_run_, 1),
        "best_round": best.step,
        "best_dev_f1": best.dev_f1,
        "test_f1": f_test,
        "test_rel_error_reduction": relative_error_reduction(base_test, f_test),
    }
    print(f"boosting: {out['boosting']}", file=sys.stderr)

    # perceptrons
    t = time.perf_counter()
    ap_ = AveragedPerceptron(epochs=10, beta=0.3).fit(tr, dv)
    secs = time.perf_counter() - t
    f_test = te.prf(ap_.predict(te))[2]
    out["averaged"] = {
        "epochs": ap_.epochs_run_,
        "seconds": secs,
        "s_per_epoch_with_dev_eval": secs / ap_.epochs_run_,
        "best_epoch": ap_.best_step_,
        "best_dev_f1": max(h.dev_f1 for h in ap_.history_),
        "test_f1": f_test,
        "test_rel_error_reduction": relative_error_reduction(base_test, f_test),
    }
    v = VotedPerceptron(epochs=5, beta=0.3, keep_best=False).fit(tr)
    t = time.perf_counter()
    ch = v.predict(dv)
    vote_dev = time.perf_counter() - t
    f_test = te.prf(v.predict(te))[2]
    out["voted"] = {
        "epochs": 5,
        "train_s": v.seconds_,
        "s_per_epoch": v.seconds_ / 5,
        "updates": len(v.counts_) - 1,
        "decode_dev_s": vote_dev,
        "dev_f1": dv.prf(ch)[2],
        "test_f1": f_test,
        "test_rel_error_reduction": relative_error_reduction(base_test, f_test),
    }
    print(f"averaged: {out['averaged']}\nvoted: {out['voted']}", file=sys.stderr)

    if not args.skip_lightgbm:
        try:
            lg = lightgbm_run(tr, dv, te, args.lgb_iterations, 10, args.lgb_budget)
        except ImportError:
            print("LightGBM is not installed (pip install -e '.[bench]'): skipped", file=sys.stderr)
        else:
            curve = lg.pop("curve")
            out["lightgbm"] = lg
            out["lightgbm"]["test_rel_error_reduction"] = relative_error_reduction(
                base_test, lg["test_f1_at_best"]
            )
            # our time to reach LightGBM's best dev F (boosting curve, 1000-round resolution)
            reach = next(
                (h for h in hist if h.dev_f1 is not None and h.dev_f1 >= lg["best_dev_f1"]), None
            )
            out["boosting"]["seconds_to_lightgbm_best"] = reach.seconds if reach else None
            out["boosting"]["round_to_lightgbm_best"] = reach.step if reach else None
            out["lightgbm_curve"] = curve
            print(f"lightgbm: {lg}", file=sys.stderr)
    out["peak_mb"] = peak_mb()

    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    f = out["features"]
    bo = out["boosting"]
    print(
        f"\nCoNLL-2003 {out['task']} reranking, {out['machine_cores']} cores; baseline dev/test F "
        f"{base_dev:.2f} / {base_test:.2f}"
    )
    print("| measure | nerstudio | peer / target |\n|---|---|---|")
    print(
        f"| global features, training lists ({f['candidates']} candidates, {f['features']} features) "
        f"| {f['train_s']:.1f} s | ≤ 30 s |"
    )
    print(
        f"| boosting, {bo['rounds']} rounds | {bo['seconds']:.1f} s ({bo['us_per_round']:.0f} µs/round) | "
        f"≤ 60 s for 300,000 |"
    )
    print(
        f"| boosting best dev F (round) / test F | {bo['best_dev_f1']:.2f} ({bo['best_round']}) / "
        f"{bo['test_f1']:.2f} ({bo['test_rel_error_reduction']:.1f}% rel. error reduction) | |"
    )
    a = out["averaged"]
    print(
        f"| averaged perceptron epoch (incl. dev F) | {a['s_per_epoch_with_dev_eval']:.2f} s | ≤ 1 s |"
    )
    print(
        f"| averaged perceptron best dev F / test F | {a['best_dev_f1']:.2f} / {a['test_f1']:.2f} "
        f"({a['test_rel_error_reduction']:.1f}%) | |"
    )
    vo = out["voted"]
    print(
        f"| voted perceptron: epoch / dev decoding ({vo['updates']} vectors) | {vo['s_per_epoch']:.2f} s / "
        f"{vo['decode_dev_s']:.2f} s | |"
    )
    print(
        f"| voted perceptron dev F / test F (5 epochs) | {vo['dev_f1']:.2f} / {vo['test_f1']:.2f} "
        f"({vo['test_rel_error_reduction']:.1f}%) | |"
    )
    if "lightgbm" in out:
        lg = out["lightgbm"]
        ours_t = bo.get("seconds_to_lightgbm_best")
        print(
            f"| time to LightGBM's best dev F {lg['best_dev_f1']:.2f} | "
            f"{'%.1f s (round %d)' % (ours_t, bo['round_to_lightgbm_best']) if ours_t is not None else 'not reached'}"
            f" | LightGBM lambdarank {lg['seconds_to_best']:.1f} s (iteration {lg['best_iteration']}) |"
        )
        print(
            f"| LightGBM test F at its best dev iteration | | {lg['test_f1_at_best']:.2f} "
            f"({lg['test_rel_error_reduction']:.1f}%); {lg['iterations']} iterations in {lg['seconds_total']:.0f} s |"
        )
    print(f"| peak memory | {out['peak_mb']:.0f} MB | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
