"""Run by tests/test_determinism.py in a child process with a given number of threads; prints
as JSON a SHA-256 of every array and file that a re-run must reproduce. What it runs:

- ``tagger``: the max-ent tagger (the typed experiment's features) trained on the bundled demo
  corpus with L-BFGS, and its N-best lists of the demo's dev set; and trained online, its
  epochs chosen on the dev set and on held-out training sentences;
- an output folder: the whole typed experiment on the demo corpus (reduced settings: tagger,
  jackknifed lists, features, boosting, voted and averaged perceptron, kernel perceptron), then
  the kernel perceptron again with its compiled kernel on that many numba threads (the
  experiment runs it on one);
- ``kernel``: the kernel perceptron alone on random lists of 20 candidates, enough of them for
  hundreds of stored mistakes.

The thread counts are set before numpy and numba load (they read them once): numba's
(``NUMBA_NUM_THREADS``), BLAS's (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``), and the cores
the process may use (its CPU affinity), which set the tagger's L-BFGS threads, the jackknife's
worker processes and how many rerankers train side by side.

    python tests/determinism_probe.py THREADS tagger,kernel|OUT_DIR
"""

from __future__ import annotations

import os
import sys

THREADS = int(sys.argv[1])
for _var in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ[_var] = str(THREADS)
if hasattr(os, "sched_setaffinity"):
    _cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, _cores[:THREADS])

import hashlib  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from experiment import output_digests  # noqa: E402  (bench/experiment.py: what --twice compares)

from nerstudio.corpus.formats import read_corpus  # noqa: E402
from nerstudio.experiments.collins import ExperimentConfig  # noqa: E402
from nerstudio.nbest import NBestList, tags_to_spans  # noqa: E402
from nerstudio.rerank.features import GlobalFeatures  # noqa: E402
from nerstudio.rerank.kernel import KernelPerceptron  # noqa: E402
from nerstudio.runs.experiment import run_experiment  # noqa: E402
from nerstudio.tagging.maxent import MaxEntTagger  # noqa: E402

DEMO = ROOT / "nerstudio" / "demo"


def digest(a) -> str:
    a = np.ascontiguousarray(a)
    return hashlib.sha256(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes()).hexdigest()


def random_lists(rng: np.random.Generator, n_sent: int) -> NBestList:
    """Sentences of 4–12 random words with 20 random SCN candidates each, one of them gold."""
    words = ["Paris", "the", "Bank", "of", "said", "Smith", "EU", "1996", ",", "Mr."]
    tagset = ["N", "S-LOC", "C-LOC", "S-PER", "C-PER"]
    sents, cands, lps, gold = [], [], [], []
    for _ in range(n_sent):
        n = int(rng.integers(4, 13))
        c = rng.choice([0, 1, 3], size=(20, n)).astype(np.int16)
        c[:, 1:] += ((c[:, 1:] == 0) & (c[:, :-1] > 0) & (rng.random((20, n - 1)) < 0.5)) * (
            c[:, :-1] + (c[:, :-1] % 2 == 1)
        ).astype(np.int16)
        c = np.unique(c, axis=0)
        sents.append(tuple(rng.choice(words, size=n).tolist()))
        cands.append(c)
        lps.append(np.sort(rng.normal(size=len(c)))[::-1].copy())
        pick = c[int(rng.integers(len(c)))]
        gold.append(tags_to_spans(pick.tolist(), tagset))
    return NBestList(tagset, sents, cands, lps, gold)


def kernel_only() -> dict[str, str]:
    rng = np.random.default_rng(7)
    gf = GlobalFeatures(min_sentences=1)
    train = gf.fit_transform(random_lists(rng, 400))
    dev = gf.transform(random_lists(rng, 100))
    res = {}
    for mode in ("vote", "average"):
        kp = KernelPerceptron(epochs=2, beta=0.1, threads=THREADS, global_features=True, mode=mode)
        kp.fit(train)
        res[f"{mode}:mistakes"] = str(kp.n_mistakes_)
        res[f"{mode}:dev scores"] = digest(kp.decision_function(dev))
        res[f"{mode}:weight on L"] = repr(kp.weight_on_L())
    return res


def tagger_only() -> dict[str, str]:
    train, dev = (read_corpus(DEMO / f"{name}.conll").sentences for name in ("train", "dev"))
    m = MaxEntTagger(
        features="conll+rich+gaz+clusters",
        cutoff=2,
        optimizer="lbfgs",
        max_iter=60,
        threads=THREADS,
        alphabet="bilou",
    ).fit(train)
    nb = m.nbest(dev, n=10)
    res = {
        "weights": digest(m.W_),
        "iterations": str(m.n_iter_),
        "candidates": digest(np.concatenate([c.ravel() for c in nb.candidates])),
        "logprobs": digest(np.concatenate(nb.logprobs)),
    }
    # the online optimiser, its epochs chosen on the dev set and on held-out training sentences
    for how, select in (("on dev", dev), ("held out", None)):
        online = MaxEntTagger(
            features="conll+rich+gaz+clusters",
            cutoff=2,
            optimizer="adagrad",
            epochs=3,
            alphabet="bilou",
        ).fit(train, select)
        res[f"online {how} weights"] = digest(online.W_)
        res[f"online {how} epochs"] = f"{online.n_iter_} {online.epoch_scores_}"
    return res


def main() -> int:
    parts = {"tagger": tagger_only, "kernel": kernel_only}
    if set(sys.argv[2].split(",")) <= parts.keys():
        res = {}
        for name in sys.argv[2].split(","):
            res.update({f"{name} {k}": v for k, v in parts[name]().items()})
        print(json.dumps(res, sort_keys=True))
        return 0
    out = Path(sys.argv[2])
    cfg = ExperimentConfig(
        tagger_features="conll+rich+gaz+clusters",
        tagger_max_iter=30,
        folds=2,
        n=10,
        workers=THREADS,
        boost_rounds=2000,
        boost_eval_every=500,
        epochs=3,
        kernel_sentences=200,
        systems=("boost", "voted", "averaged", "kernel"),  # the kernel runs only when named
    )
    report = run_experiment(
        DEMO / "train.conll", DEMO / "dev.conll", DEMO / "test.conll", out, config=cfg
    )
    res = output_digests(out)
    res["figures"] = json.dumps(
        {s["name"]: (s["dev"]["f1"], s["test"]["f1"]) for s in report["systems"]}
    )
    # the kernel perceptron on numba's threads (the experiment runs it on one), several epochs so
    # that its products over the stored mistakes are large enough for BLAS to split them
    gf = GlobalFeatures()
    train = gf.fit_transform(NBestList.load(out / "train-nbest.npz"))
    dev = gf.transform(NBestList.load(out / "dev-nbest.npz"))
    for mode in ("vote", "average"):
        kp = KernelPerceptron(
            epochs=4, beta=0.1, threads=THREADS, word_features=True, global_features=True, mode=mode
        ).fit(train, dev)
        res[f"kernel-{mode}:mistakes"] = str(kp.n_mistakes_)
        res[f"kernel-{mode}:train scores"] = digest(kp.decision_function(train))
        res[f"kernel-{mode}:dev scores"] = digest(kp.decision_function(dev))
        res[f"kernel-{mode}:weight on L"] = repr(kp.weight_on_L())
    print(json.dumps(res, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
