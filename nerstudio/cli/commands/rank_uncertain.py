"""``nerstudio rank-uncertain``: the sentences of an N-best list, most uncertain first (which to annotate first)."""

from __future__ import annotations

import argparse
import json

from ... import choices
from ...errors import SettingsError


def add_parser(sub, parents) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "rank-uncertain",
        help="the sentences of an N-best list, most uncertain first",
        description="Annotation order by uncertainty. Per sentence: mass, the probability of the "
        "tagger's top candidate (softmax of L(x) over the list); margin, the top "
        "candidate's probability minus the second's; with --model, disagreement: whether "
        "the reranker picks another candidate than the tagger's top.",
    )
    p.add_argument("nbest", metavar="NBEST")
    p.add_argument(
        "--model", metavar="RERANKER", help="a reranker model: adds the disagreement column"
    )
    p.add_argument(
        "--by",
        choices=choices.MEASURES,
        default="mass",
        help="order by (default mass; disagreement needs --model: disagreeing sentences first, "
        "then by mass)",
    )
    p.add_argument(
        "--top", type=int, default=20, metavar="K", help="sentences listed (default 20; 0: all)"
    )
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    return p


def run(args) -> int:
    from ...nbest import NBestList
    from ...rerank.uncertainty import uncertainty, uncertainty_order

    if args.top < 0:
        raise SettingsError("--top must be 0 (all) or more")
    if args.by == "disagreement" and not args.model:
        raise SettingsError("--by disagreement needs a reranker: give --model RERANKER")
    nb = NBestList.load(args.nbest)
    model = None
    if args.model:
        from ...rerank.model import RerankerModel

        model = RerankerModel.load(args.model)
    u = uncertainty(nb, model)
    order = uncertainty_order(u, args.by)
    if args.top:
        order = order[: args.top]
    rows = []
    for rank, i in enumerate(order.tolist(), 1):
        row = {
            "rank": rank,
            "index": i,
            "id": nb.ids[i],
            "mass": float(u.mass[i]),
            "margin": float(u.margin[i]),
        }
        if u.choice is not None:
            row["disagreement"] = bool(u.choice[i] != 0)
            row["reranker_choice"] = int(u.choice[i])
        row["text"] = " ".join(nb.words[i])
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    head = (
        f"{'rank':>4}  {'mass':>6}  {'margin':>6}"
        + ("  rerank" if u.choice is not None else "")
        + "  sentence"
    )
    print(head)
    for r in rows:
        mark = ""
        if u.choice is not None:
            mark = f"  {'#' + str(r['reranker_choice'] + 1) if r['disagreement'] else '=':>6}"
        text = r["text"] if len(r["text"]) <= 80 else r["text"][:77] + "..."
        print(f"{r['rank']:>4}  {r['mass']:6.3f}  {r['margin']:6.3f}{mark}  {r['id']}: {text}")
    return 0
