#!/usr/bin/env python3
"""Build the demo reranker's scores of the demo's N-best list, which the window shows at once
when it opens the demo (no feature computation at start-up: nerstudio.app.saved_scores).

    python tools/demo/build_scored.py            # writes nerstudio/demo/model/train.scored.npz
    python tools/demo/build_scored.py --out FILE # elsewhere (the test compares the two)

It attaches ``model/train.nbest.npz`` to ``train.conll`` as the window does, computes every
candidate's global features and scores with ``model/reranker.npz``, and saves them with the
SHA-256 of those three files. Deterministic: same files and code, same arrays. Run it again
whenever ``build_model.py`` has rebuilt the models (it does so itself).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # run from a checkout without installing

from nerstudio.app.attachments import index_nbest, score_nbest  # noqa: E402
from nerstudio.app.saved_scores import save_scored  # noqa: E402
from nerstudio.corpus.formats import read_corpus  # noqa: E402
from nerstudio.nbest import NBestList  # noqa: E402
from nerstudio.rerank.model import RerankerModel  # noqa: E402

DEMO = HERE.parents[1] / "nerstudio" / "demo"
SCORED = "train.scored.npz"  # beside the models, in model/


def build(demo: Path, out: Path) -> None:
    """Score ``demo``'s N-best list with its reranker, as the window attaches it; write ``out``."""
    sources = {
        "corpus": demo / "train.conll",
        "nbest": demo / "model" / "train.nbest.npz",
        "model": demo / "model" / "reranker.npz",
    }
    corpus = read_corpus(str(sources["corpus"]))
    nbest = NBestList.load(str(sources["nbest"]))
    model = RerankerModel.load(str(sources["model"]))
    index_nbest(corpus, nbest)  # the corpus's gold, as the window attaches the list
    save_scored(out, score_nbest(model, nbest), sources)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEMO / "model" / SCORED)
    args = ap.parse_args()
    build(DEMO, args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
