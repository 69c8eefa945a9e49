"""One round of boosting for ranking (Collins 2002), step by step, on the bundled demo.

For instructors: the demo's jackknifed training list and its development list (both in
nerstudio/demo/model/) are turned into global features, and boosting runs one round at a time
(nerstudio.experiments.stepthrough, the same rounds as the batch learner). Each round prints the
feature it chose, in words, its weight update, the loss before and after, and one training
sentence whose ranking the round moved. Run it as

    python examples/boosting_one_round.py [ROUNDS]

(default 1 round; the development F after each round is printed too).
"""

from __future__ import annotations

import sys

from nerstudio.demo import DEMO_MODEL_DIR
from nerstudio.experiments.stepthrough import BoostingStepper
from nerstudio.nbest import NBestList
from nerstudio.rerank.features import GlobalFeatures
from nerstudio.rerank.glossary import describe


def show_candidate(nb: NBestList, i: int, j: int) -> str:
    words = nb.words[i]
    ents = [f"[{' '.join(words[s.start : s.end])}]{s.label}" for s in nb.spans(i, j)]
    return ", ".join(ents) or "(no entity)"


def main(rounds: int = 1) -> None:
    train = NBestList.load(DEMO_MODEL_DIR / "train.nbest.npz")
    dev = NBestList.load(DEMO_MODEL_DIR / "dev.nbest.npz")
    features = GlobalFeatures(min_sentences=5)  # what train-reranker keeps by default
    train_data = features.fit_transform(train)
    dev_data = features.transform(dev)
    stepper = BoostingStepper(train_data, dev_data, epsilon=0.0025, names=features.names_)
    print(
        f"{len(train)} training sentences, {features.n_features} global features; "
        f"dev F before boosting {stepper.history[0][1]:.2f}"
    )
    for _ in range(rounds):
        step = stepper.step()
        if step is None:
            print("no feature improves the loss: boosting has converged")
            break
        info = step.info
        print(f"\nround {info.round}: feature {step.feature_name!r}")
        print(f"  in words: {describe(step.feature_name)}")
        print(
            f"  W+ = {info.w_plus:.3f}, W- = {info.w_minus:.3f}  ->  weight update "
            f"delta = 1/2 log((W+ + eps Z)/(W- + eps Z)) = {info.delta:+.4f}"
        )
        print(
            f"  exponential loss {info.loss_before:.3f} -> {info.loss_after:.3f} "
            f"({len(info.pairs)} (oracle, other) pairs touched)"
        )
        if len(step.sentences):
            i = int(step.sentences[0])
            off = int(train_data.offsets[i])
            o, c = int(step.oracle_rows[0]) - off, int(step.other_rows[0]) - off
            print(f"  e.g. sentence {train.ids[i]}: {' '.join(train.words[i])}")
            print(f"    oracle    (candidate {o + 1}): {show_candidate(train, i, o)}")
            print(f"    competitor (candidate {c + 1}): {show_candidate(train, i, c)}")
            print(f"    margin {info.margins_before[0]:+.3f} -> {info.margins_after[0]:+.3f}")
        if step.dev_f1 is not None:
            print(f"  dev F after this round: {step.dev_f1:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
