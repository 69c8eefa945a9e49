"""``nerstudio evaluate``: score a prediction (a corpus or an N-best file) against gold: conlleval's exact spans."""

from __future__ import annotations

import argparse
import json
import sys

from ...errors import FormatError
from ..options import format_option, scheme_option


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
    p = sub.add_parser(
        "evaluate",
        parents=[common],
        help="score a prediction against gold (conlleval spans)",
        description="Exact-span precision, recall and F1, overall and per type.",
    )
    p.add_argument("gold", metavar="GOLD")
    p.add_argument(
        "pred",
        metavar="PRED",
        help="a corpus file, or an N-best file (.npz): then its 1-best "
        "and oracle F at N = 1, 5, 10, 20 are reported",
    )
    p.add_argument("--json", action="store_true", help="print a JSON object instead of a table")
    p.add_argument(
        "--mode",
        choices=("conlleval", "strict"),
        default="conlleval",
        help="conlleval: invalid transitions are repaired (= seqeval default); strict: they form "
        "no entity (= seqeval strict mode for IOB2/BIOES)",
    )
    format_option(p, "--gold-format", help="format of GOLD, detected if omitted")
    format_option(p, "--pred-format", help="format of PRED, detected if omitted")
    scheme_option(p, "--gold-scheme", help="tag scheme of GOLD, detected if omitted")
    scheme_option(p, "--pred-scheme", help="tag scheme of PRED, detected if omitted")
    return p


def run(args) -> int:
    from ...corpus.detect import is_npz
    from ...corpus.formats import Reader
    from ...evaluation import evaluate_sentences

    inv = "drop" if args.mode == "strict" else "repair"
    if is_npz(args.pred):  # by content: an N-best file need not be called .npz
        return _evaluate_nbest(args, inv)
    gold = Reader(args.gold, args.gold_format, args.gold_scheme, args.encoding, args.strict, inv)
    pred = Reader(args.pred, args.pred_format, args.pred_scheme, args.encoding, args.strict, inv)
    ev = evaluate_sentences(gold.sentences(), pred.sentences(), gold.path, pred.path)
    for reader in (gold, pred):
        for line in reader.notes:
            print(f"note: {reader.path}: {line}", file=sys.stderr)
    if args.json:
        out = ev.as_dict()
        out.update({"gold_file": gold.path, "pred_file": pred.path, "mode": args.mode})
        print(json.dumps(out, indent=2))
    else:
        print(ev.table())
    return 0


def _evaluate_nbest(args, inv: str) -> int:
    from ...corpus.formats import Reader
    from ...corpus.model import Span
    from ...evaluation import evaluate_spans, oracle
    from ...nbest import NBestList

    nb = NBestList.load(args.pred)
    gold_sents = list(
        Reader(
            args.gold, args.gold_format, args.gold_scheme, args.encoding, args.strict, inv
        ).sentences()
    )
    if len(gold_sents) != len(nb):
        raise FormatError(
            args.pred, None, f"{len(nb)} sentences but {args.gold} has {len(gold_sents)}"
        )
    for k, (g, w) in enumerate(zip(gold_sents, nb.words)):
        if tuple(g.words) != tuple(w):
            i = next((i for i, (a, b) in enumerate(zip(g.words, w)) if a != b), None)
            if i is None:
                raise FormatError(
                    args.gold,
                    g.line or None,
                    f"sentence {k + 1} has {len(g.words)} tokens but {len(w)} in {args.pred}",
                )
            line = (g.line if g.raw is not None else g.line + i) if g.line else None
            raise FormatError(
                args.gold,
                line,
                f"token {g.words[i]!r} differs from {w[i]!r} in sentence {k + 1} "
                f"of {args.pred} (token {i + 1}): the files are not aligned",
            )
    gold = [g.spans if nb.typed else [Span(a, b, "") for a, b, _ in g.spans] for g in gold_sents]
    ev = evaluate_spans(gold, nb.top(), [len(w) for w in nb.words])
    cands = [nb.candidate_spans(i) for i in range(len(nb))]
    ns = sorted({1, 5, 10, 20, max((nb.n_candidates(i) for i in range(len(nb))), default=1)})
    orc = {str(n): oracle(gold, cands, n) for n in ns}
    if args.json:
        out = ev.as_dict()
        out.update(
            {
                "gold_file": args.gold,
                "pred_file": args.pred,
                "mode": args.mode,
                "oracle": {
                    n: {
                        "precision": o.precision,
                        "recall": o.recall,
                        "f1": o.f1,
                        "gold_in_list": o.gold_in_list,
                    }
                    for n, o in orc.items()
                },
            }
        )
        print(json.dumps(out, indent=2))
    else:
        print(
            f"N-best file {args.pred}: {len(nb)} sentences, task {'typed' if nb.typed else 'SCN'}"
        )
        print("1-best:")
        print(ev.table())
        print("oracle F (best candidate per sentence among the first N):")
        for n, o in orc.items():
            print(
                f"  N={n:>3}: F {o.f1:6.2f}  P {o.precision:6.2f}  R {o.recall:6.2f}  "
                f"gold among candidates in {o.gold_in_list}/{len(nb)} sentences"
            )
    return 0
