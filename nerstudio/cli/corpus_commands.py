"""The corpus commands: ``convert``, ``evaluate`` and ``stats`` (streamed: any file size)."""

from __future__ import annotations

import json
import sys
from collections import Counter

from ..errors import FormatError


def cmd_convert(args) -> int:
    from ..corpus.convert import convert_file
    from ..corpus.formats import Losses

    losses = Losses()
    reader = convert_file(
        args.input,
        args.output,
        from_format=args.format,
        to_format=args.to_format,
        scheme=args.scheme,
        from_scheme=args.in_scheme,
        encoding=args.encoding,
        strict=args.strict,
        losses=losses,
    )
    to = losses.target or reader.format
    msg = f"wrote {args.output} ({to}, {args.scheme or reader.scheme}) from {args.input} ({reader.format}, {reader.scheme})"
    print(msg, file=sys.stderr)
    _report_repairs(reader)
    for line in losses.messages():
        print(f"note: {args.output}: {line}", file=sys.stderr)
    from ..app.review_convert import carry

    kept = carry(args.input, args.output, reader.format, to)  # review states, notes, flags
    if kept:
        print(f"note: {kept}", file=sys.stderr)
    return 0


def _report_repairs(reader) -> None:
    for line in reader.notes:  # what another tool's format held that nerstudio did not read
        print(f"note: {reader.path}: {line}", file=sys.stderr)
    if reader.repairs:
        print(
            f"note: {reader.path}: {reader.repairs} invalid tag transition(s) read the conlleval way "
            f"(use --strict to reject them)",
            file=sys.stderr,
        )
    if reader.mixed_newlines:
        print(
            f"note: {reader.path}: mixed line endings; output uses {reader.newline!r}",
            file=sys.stderr,
        )


def cmd_evaluate(args) -> int:
    from ..corpus.detect import is_npz
    from ..corpus.formats import Reader
    from ..evaluation import evaluate_sentences

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
    from ..corpus.formats import Reader
    from ..corpus.model import Span
    from ..evaluation import evaluate_spans, oracle
    from ..nbest import NBestList

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


def corpus_stats(reader) -> dict:
    docs = sents = toks = 0
    longest = 0
    in_doc = False
    ents: Counter = Counter()
    for kind, obj in reader.events():
        if kind == "docstart":
            in_doc = False
        elif kind == "sentence":
            if not in_doc:
                docs += 1
                in_doc = True
            sents += 1
            toks += len(obj.words)
            longest = max(longest, len(obj.words))
            ents.update(sp.label for sp in obj.spans)
    out = {
        "file": reader.path,
        "format": reader.format,
        "scheme": reader.scheme,
        "encoding": reader.encoding,
        "documents": docs,
        "sentences": sents,
        "tokens": toks,
        "entities": sum(ents.values()),
        "entities_by_type": dict(sorted(ents.items())),
        "longest_sentence": longest,
        "repairs": reader.repairs,
    }
    if reader.notes:  # what another tool's format held that was not read (see corpus.foreign)
        out["notes"] = list(reader.notes)
    return out


def cmd_stats(args) -> int:
    from ..corpus.formats import Reader

    reader = Reader(args.file, args.format, args.in_scheme, args.encoding, args.strict)
    st = corpus_stats(reader)
    for line in reader.notes:
        print(f"note: {reader.path}: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    print(f"{st['file']}: {st['format']}, {st['scheme'].upper()}, {st['encoding']}")
    for key in ("documents", "sentences", "tokens", "entities"):
        print(f"  {key:<12}{st[key]:>10,d}")
    for lab, n in st["entities_by_type"].items():
        print(f"    {lab or '(untyped)':<10}{n:>10,d}")
    print(f"  longest sentence: {st['longest_sentence']} tokens")
    if st["repairs"]:
        print(f"  invalid transitions repaired: {st['repairs']}")
    return 0
