"""``nerstudio errors``: the error analysis of one or more systems' output against gold.

F by entity type, by entity length, by sentence length and (with ``--train``) over entities
seen / unseen in training, and the entities by kind of error (type, boundary, missed,
spurious: :mod:`nerstudio.experiments.error_analysis`), the systems side by side.
"""

from __future__ import annotations

import argparse
import json
import os


def add_parser(sub, parents) -> argparse.ArgumentParser:
    common = parents.common
    p = sub.add_parser(
        "errors",
        parents=[common],
        help="error analysis of systems' output against gold",
        description="F by entity type, entity length, sentence length and (with --train) entities "
        "seen / unseen in training, and the entities by kind of error (type, boundary, "
        "boundary+type, missed, spurious), the systems side by side.",
    )
    p.add_argument("gold", metavar="GOLD")
    p.add_argument(
        "system", metavar="SYSTEM", nargs="+", help="a system's output: the same sentences, tagged"
    )
    p.add_argument(
        "--train", metavar="TRAIN", help="the training corpus: adds F over seen / unseen entities"
    )
    p.add_argument("--json", action="store_true", help="print a JSON object instead of tables")
    return p


def run(args) -> int:
    from ...corpus.formats import Reader
    from ...errors import FormatError
    from ...evaluation import check_aligned
    from ...experiments.breakdown import breakdown, training_strings
    from ...experiments.error_analysis import analysis_lines

    gold_reader = Reader(args.gold, None, None, args.encoding, args.strict)
    gold = list(gold_reader.sentences())
    seen = (
        training_strings(Reader(args.train, None, None, args.encoding, args.strict).sentences())
        if args.train
        else set()
    )
    systems: dict[str, dict] = {}
    for path in args.system:
        sents = list(Reader(path, None, None, args.encoding, args.strict).sentences())
        if len(sents) != len(gold):
            raise FormatError(path, None, f"{len(sents)} sentences but {args.gold} has {len(gold)}")
        for k, (g, s) in enumerate(zip(gold, sents), 1):
            check_aligned(g, s, k, gold_reader.path, path)
        b = breakdown(
            [g.words for g in gold], [g.spans for g in gold], [s.spans for s in sents], seen
        )
        if not args.train:
            b.pop("seen"), b.pop("unseen")
        name = os.path.basename(path)
        while name in systems:
            name += "'"
        systems[name] = b
    if args.json:
        print(
            json.dumps(
                {"gold_file": gold_reader.path, "train_file": args.train, "systems": systems},
                indent=2,
            )
        )
    else:
        print("\n".join(analysis_lines(systems)).rstrip())
    return 0
