"""The annotation-analysis commands: ``rank-uncertain`` (which sentences to annotate first) and
``agreement`` (how two annotators' files of the same text agree)."""

from __future__ import annotations

import json

from ..errors import SettingsError


def cmd_rank_uncertain(args) -> int:
    from ..nbest import NBestList
    from ..rerank.uncertainty import uncertainty, uncertainty_order

    if args.top < 0:
        raise SettingsError("--top must be 0 (all) or more")
    if args.by == "disagreement" and not args.model:
        raise SettingsError("--by disagreement needs a reranker: give --model RERANKER")
    nb = NBestList.load(args.nbest)
    model = None
    if args.model:
        from ..rerank.model import RerankerModel

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


def cmd_agreement(args) -> int:
    from ..agreement import agreement
    from ..corpus.formats import Reader

    if args.list < 0:
        raise SettingsError("--list must be 0 (all) or more")
    a = Reader(args.a, None, None, args.encoding, args.strict)
    b = Reader(args.b, None, None, args.encoding, args.strict)
    result = agreement(a.sentences(), b.sentences(), a.path, b.path)
    if args.json:
        out = result.as_dict(args.list)
        out.update({"file_a": a.path, "file_b": b.path})
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(result.table(args.list))
    return 0
