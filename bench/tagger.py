#!/usr/bin/env python3
"""Benchmark: nerstudio's maximum-entropy tagger next to sklearn-crfsuite, same run, same data.

    python bench/tagger.py [--data ../shared/data/conll2003] [--skip-crfsuite] [--skip-jackknife]
                           [--skip-scn] [--repeat K]

Prints, for CoNLL-2003 (train on eng.train, dev = eng.testa, test = eng.testb): training
seconds of the whole ``nerstudio train-tagger`` command (reading, features, training) against
sklearn-crfsuite's reading, feature extraction plus 100 L-BFGS iterations; 1-best and 20-best
decoding speed; dev and test F; oracle F of the N-best lists at N = 1, 5, 20, 50; peak memory;
the boundary-only (SCN) figures; and the time of a 5-fold jackknife of eng.train.

Both trainers run exactly 100 L-BFGS iterations (ours never stops early on this data: its
tolerance tests are scipy's, ftol 1e-8 and gtol 1e-5; the number of iterations and function
evaluations is printed). Wall seconds depend on what else runs on the machine, so CPU seconds
(user + system, all threads) are printed too, and ``--repeat K`` times K more alternating
pairs (train-tagger, then crfsuite) and prints the ratio of each pair. Our compiled kernels are
loaded (compiled on a first run, then cached by numba) before anything is timed.
Needs the ``bench`` extra (``pip install -e ".[bench]"``) for the peer.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nerstudio.corpus import encode, read_corpus  # noqa: E402
from nerstudio.corpus.model import Span  # noqa: E402
from nerstudio.corpus.schemes import decode  # noqa: E402
from nerstudio.evaluation import evaluate_spans, oracle  # noqa: E402
from nerstudio.tagging.maxent import MaxEntTagger  # noqa: E402


def run_cli(args: list[str]) -> tuple[float, float, float, str]:
    """Run a nerstudio command; return (wall seconds, CPU seconds, peak RSS in MB, stderr)."""
    t0 = time.perf_counter()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-m", "nerstudio", *args], capture_output=True, text=True
    )
    secs = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"nerstudio {' '.join(args)} failed:\n{proc.stderr}")
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return secs, cpu, max(r1.ru_maxrss, r0.ru_maxrss) / 1024.0, proc.stderr


def warm_up(data: Path) -> float:
    """Load (on a first run: compile) the tagger's numba kernels, as any earlier use would have."""
    t0 = time.perf_counter()
    sents = read_corpus(data / "eng.testa").sentences[:200]
    for features in ("paper", "conll"):
        MaxEntTagger(features=features, max_iter=3).fit(sents)
    return time.perf_counter() - t0


def untyped(spans):
    return [Span(a, b, "") for a, b, _ in spans]


def train_ours(data: Path, model: Path, task: str, features: str, max_iter: int) -> dict:
    secs, cpu, peak, _ = run_cli(
        [
            "train-tagger",
            str(data / "eng.train"),
            "--out",
            str(model),
            "--task",
            task,
            "--features",
            features,
            "--max-iter",
            str(max_iter),
        ]
    )
    return {"train_s": secs, "train_cpu_s": cpu, "peak_mb": peak}


def ours(data: Path, tmp: Path, task: str, features: str, max_iter: int) -> dict:
    model = tmp / f"tagger-{task}-{features}.npz"
    res = {
        "system": f"nerstudio maxent ({features}, {task})",
        **train_ours(data, model, task, features, max_iter),
    }
    tagger = MaxEntTagger.load(model)
    res.update(iterations=tagger.n_iter_, evaluations=tagger.n_evals_, stop=tagger.stop_reason_)
    for split, name in (("dev", "eng.testa"), ("test", "eng.testb")):
        corpus = read_corpus(data / name)
        sents = corpus.sentences
        gold = [s.spans if task == "typed" else untyped(s.spans) for s in sents]
        t0 = time.perf_counter()
        nb1 = tagger.nbest(sents, n=1, beam=1)
        greedy_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        nb20 = tagger.nbest(sents, n=20)
        beam_s = time.perf_counter() - t0
        res[f"{split}_f"] = evaluate_spans(gold, nb20.top()).f1
        res[f"{split}_f_greedy"] = evaluate_spans(gold, nb1.top()).f1
        if split == "dev":
            res["tok_s_1best"] = corpus.n_tokens / greedy_s
            res["tok_s_20best"] = corpus.n_tokens / beam_s
            nb50 = tagger.nbest(sents, n=50)
            cands = [nb50.candidate_spans(i) for i in range(len(nb50))]
            for n in (1, 5, 20, 50):
                res[f"oracle_{n}"] = oracle(gold, cands, n).f1
    return res


def crf_features(sent, i):
    w = sent.words[i]
    pos = sent.extra[0] if sent.extra else None
    chk = sent.extra[1] if len(sent.extra) > 1 else None
    f = {
        "bias": 1.0,
        "w": w,
        "lw": w.lower(),
        "s3": w[-3:],
        "s2": w[-2:],
        "p3": w[:3],
        "title": w.istitle(),
        "upper": w.isupper(),
        "digit": w.isdigit(),
        "shape": "".join(
            "A" if c.isupper() else "a" if c.islower() else "0" if c.isdigit() else c for c in w
        ),
    }
    if pos:
        f["pos"] = pos[i]
        f["pos2"] = pos[i][:2]
    if chk:
        f["chk"] = chk[i]
    for k in (-2, -1, 1, 2):
        j = i + k
        if 0 <= j < len(sent.words):
            f[f"{k}:lw"] = sent.words[j].lower()
            f[f"{k}:title"] = sent.words[j].istitle()
            if pos:
                f[f"{k}:pos"] = pos[j]
        else:
            f[f"{k}:edge"] = True
    return f


def have_crfsuite() -> bool:
    try:
        import sklearn_crfsuite  # noqa: F401
    except ImportError:
        print(
            "sklearn-crfsuite not installed (pip install -e '.[bench]'): peer skipped",
            file=sys.stderr,
        )
        return False
    return True


def train_crfsuite(data: Path, max_iter: int):
    """Reading, feature extraction and training, timed; returns (figures, model)."""
    import sklearn_crfsuite

    t0, c0 = time.perf_counter(), time.process_time()
    train = read_corpus(data / "eng.train")
    X = [[crf_features(s, i) for i in range(len(s))] for s in train.sentences]
    y = [encode(s.spans, len(s), "iob2") for s in train.sentences]
    feat_s = time.perf_counter() - t0
    crf = sklearn_crfsuite.CRF(
        algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=max_iter, all_possible_transitions=True
    )
    crf.fit(X, y)
    return {
        "train_s": time.perf_counter() - t0,
        "train_cpu_s": time.process_time() - c0,
        "feature_s": feat_s,
    }, crf


def crfsuite(data: Path, max_iter: int) -> dict | None:
    if not have_crfsuite():
        return None
    fig, crf = train_crfsuite(data, max_iter)
    res = {
        "system": f"sklearn-crfsuite ({max_iter} L-BFGS it.)",
        **fig,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }
    for split, name in (("dev", "eng.testa"), ("test", "eng.testb")):
        corpus = read_corpus(data / name)
        t0 = time.perf_counter()
        Xd = [[crf_features(s, i) for i in range(len(s))] for s in corpus.sentences]
        pred = crf.predict(Xd)
        secs = time.perf_counter() - t0
        spans = [decode(p, "iob2")[0] for p in pred]
        res[f"{split}_f"] = evaluate_spans([s.spans for s in corpus.sentences], spans).f1
        if split == "dev":
            res["tok_s_1best"] = corpus.n_tokens / secs
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "conll2003")
    ap.add_argument("--max-iter", type=int, default=100, help="our L-BFGS iterations")
    ap.add_argument("--skip-crfsuite", action="store_true")
    ap.add_argument("--skip-jackknife", action="store_true")
    ap.add_argument("--skip-scn", action="store_true")
    ap.add_argument(
        "--repeat",
        type=int,
        default=0,
        help="time K more (train-tagger, crfsuite) pairs, alternating, and print each ratio",
    )
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = ap.parse_args()
    if not (args.data / "eng.train").exists():
        sys.exit(f"CoNLL-2003 not found at {args.data} (pass --data); nothing measured")
    rows = []
    extra = {"warm_up_s": warm_up(args.data)}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        print("training nerstudio (typed, conll features)...", file=sys.stderr)
        rows.append(ours(args.data, tmp, "typed", "conll", args.max_iter))
        print("training nerstudio (typed, paper features)...", file=sys.stderr)
        rows.append(ours(args.data, tmp, "typed", "paper", args.max_iter))
        if not args.skip_scn:
            print("training nerstudio (scn, conll features)...", file=sys.stderr)
            rows.append(ours(args.data, tmp, "scn", "conll", args.max_iter))
        if not args.skip_crfsuite:
            print("training sklearn-crfsuite...", file=sys.stderr)
            r = crfsuite(args.data, 100)
            if r:
                rows.append(r)
        pairs = []
        if args.repeat and not args.skip_crfsuite and have_crfsuite():
            for k in range(args.repeat):
                print(f"timing pair {k + 1}/{args.repeat}...", file=sys.stderr)
                a = train_ours(args.data, tmp / "again.npz", "typed", "conll", args.max_iter)
                b, _ = train_crfsuite(args.data, 100)
                pairs.append(
                    {
                        "ours_s": a["train_s"],
                        "ours_cpu_s": a["train_cpu_s"],
                        "crfsuite_s": b["train_s"],
                        "crfsuite_cpu_s": b["train_cpu_s"],
                    }
                )
            extra["pairs"] = pairs
        if not args.skip_jackknife:
            print("5-fold jackknife of eng.train...", file=sys.stderr)
            secs, _, peak, _ = run_cli(
                [
                    "jackknife",
                    str(args.data / "eng.train"),
                    "--folds",
                    "5",
                    "--features",
                    "conll",
                    "--max-iter",
                    str(args.max_iter),
                    "--out",
                    str(tmp / "jk.npz"),
                ]
            )
            extra["jackknife_s"] = secs
            extra["jackknife_peak_mb"] = peak

    def fmt(v, spec):
        return format(v, spec) if isinstance(v, (int, float)) else "n/a"

    cols = [
        ("train_s", "train s", ".1f"),
        ("train_cpu_s", "train CPU s", ".1f"),
        ("tok_s_1best", "1-best tok/s", ",.0f"),
        ("tok_s_20best", "20-best tok/s", ",.0f"),
        ("dev_f", "dev F", ".2f"),
        ("test_f", "test F", ".2f"),
        ("oracle_1", "orc@1", ".2f"),
        ("oracle_5", "orc@5", ".2f"),
        ("oracle_20", "orc@20", ".2f"),
        ("oracle_50", "orc@50", ".2f"),
        ("peak_mb", "peak MB", ",.0f"),
    ]
    print()
    print(f"CoNLL-2003 English, {os.cpu_count()} cores")
    print(f"{'system':<40}" + "".join(f"{h:>14}" for _, h, _ in cols))
    for r in rows:
        print(f"{r['system']:<40}" + "".join(f"{fmt(r.get(k), s):>14}" for k, _, s in cols))
    print(
        f"\n(our compiled kernels loaded before timing in {extra['warm_up_s']:.1f}s; train-tagger (conll, typed) "
        f"ran {rows[0].get('iterations')} L-BFGS iterations, {rows[0].get('evaluations') or 'n/a'} function "
        f"evaluations, stopped by {rows[0].get('stop')})"
    )
    crf = next((r for r in rows if r["system"].startswith("sklearn")), None)
    if crf:
        print(
            f"train-tagger (conll) / crfsuite reading+features+training: {rows[0]['train_s'] / crf['train_s']:.2f}x "
            f"wall, {rows[0]['train_cpu_s'] / crf['train_cpu_s']:.2f}x CPU "
            f"(crfsuite reading + feature extraction {crf['feature_s']:.1f}s of {crf['train_s']:.1f}s)"
        )
    for k, p in enumerate(extra.get("pairs", []), 1):
        print(
            f"pair {k}: train-tagger {p['ours_s']:.1f}s ({p['ours_cpu_s']:.1f}s CPU), crfsuite {p['crfsuite_s']:.1f}s "
            f"({p['crfsuite_cpu_s']:.1f}s CPU): {p['ours_s'] / p['crfsuite_s']:.2f}x wall, "
            f"{p['ours_cpu_s'] / p['crfsuite_cpu_s']:.2f}x CPU"
        )
    if "jackknife_s" in extra:
        print(
            f"5-fold jackknife of eng.train (conll features): {extra['jackknife_s']:.1f}s, "
            f"peak {extra['jackknife_peak_mb']:,.0f} MB per process"
        )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, **extra}, indent=2))


if __name__ == "__main__":
    main()
