"""``nerstudio explain-model``: rank a reranker's features by the decisions they move on an N-best list."""

from __future__ import annotations

import argparse
import json

from ... import choices
from ...errors import SettingsError


def add_parser(sub, parents) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "explain-model",
        help="rank a reranker's features by the decisions they move on an N-best list",
        description="Which templates and features move the reranker's decisions on NBEST: in every "
        "sentence where its pick differs from the tagger's top candidate (or, with "
        "--against runner-up, from its own second choice), the features that separate "
        "the two, counted and summed by their contribution to the score difference.",
    )
    p.add_argument("model", metavar="MODEL")
    p.add_argument("nbest", metavar="NBEST")
    p.add_argument("--top", type=int, default=30, help="rows per table (default 30)")
    p.add_argument(
        "--against",
        choices=choices.AGAINST,
        default="baseline",
    )
    p.add_argument(
        "--sort",
        choices=choices.SORTS,
        default="count",
        help="rank by decisions moved (default) or by the contribution toward them",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the rankings as JSON (every sentence index, 0-based)",
    )
    return p


def run(args) -> int:
    from ...nbest import NBestList
    from ...rerank.importance import format_table, model_importance
    from ...rerank.model import RerankerModel

    if args.top < 1:
        raise SettingsError("--top must be at least 1")
    model = RerankerModel.load(args.model)
    nb = NBestList.load(args.nbest)
    result = model_importance(model, model.data(nb), against=args.against, sort=args.sort)
    if args.json:
        print(json.dumps(result.to_dict(args.top), indent=2))
    else:
        print(format_table(result, args.top, nb.ids))
    return 0
