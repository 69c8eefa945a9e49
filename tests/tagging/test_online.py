"""The max-ent tagger's online optimiser (nerstudio.tagging.online): the lazily applied penalty
gives the weights of applying it at every step, the optimum it approaches is L-BFGS's, and the
number of epochs is chosen as documented."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.tiny_corpus import _training_parts, conll_like

from nerstudio.demo import DEMO_DIR
from nerstudio.errors import Cancelled
from nerstudio.tagging.maxent import MaxEntTagger
from nerstudio.tagging.online import G0, held_out, run_epochs


def _eager(X, y, mask, tokens, *, l2, eta, epochs, seed):
    """The optimiser written plainly: after every token's step, every row of W shrinks by
    exp(−c/√G) (c = η·l2/N), G the row's squared-gradient sum as it is after the step."""
    P, T = mask.shape
    W = np.zeros((P, T))
    G = np.full(P, G0)
    n = len(tokens)
    c = eta * l2 / n
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        for i in tokens[rng.permutation(n)]:
            s = X[i] @ W
            p = np.exp(s - s.max())
            r = p / p.sum()
            r[y[i]] -= 1.0
            rows = np.nonzero(X[i])[0]
            m = mask[rows]
            G[rows] += (r * r * m).sum(axis=1) / m.sum(axis=1)
            W[rows] -= eta * (r * m) / np.sqrt(G[rows])[:, None]
            W *= np.exp(-c / np.sqrt(G))[:, None]
    return W


@pytest.mark.parametrize("features", ["paper", "conll"])
def test_lazy_penalty_gives_the_weights_of_the_eager_one(features):
    """A strong penalty (every skipped step shrinks a row by a third), tokens left out (the
    held-out case), keys in the design, and with ``paper`` a mask of (predicate, tag) pairs:
    applying the shrinking only when a row is read, catching up the steps it missed, ends on the
    weights of shrinking every row at every step."""
    m = MaxEntTagger(features=features, cutoff=1, dtype=np.float64)
    design, y, mask, X = _training_parts(m, conll_like(1))
    X = X.toarray()
    assert X.max() == 1 and design.n_keys > 0
    partial = ~mask.all(axis=1) & mask.any(axis=1)  # rows with some tags' weights only
    assert (features == "paper") == bool(partial.any())
    tokens = np.arange(0, len(y), dtype=np.int64)
    tokens = tokens[tokens % 7 != 3]
    settings = {"l2": 4.0, "eta": 0.5, "epochs": 3, "seed": 5}
    lazy = run_epochs(design, y, mask, tokens, dtype=np.float64, **settings).W
    eager = _eager(X, y, mask, tokens, **settings)
    assert np.abs(eager).max() > 0.1
    np.testing.assert_allclose(lazy, eager, rtol=1e-9, atol=1e-12)


def test_it_approaches_the_lbfgs_optimum():
    """On a small problem the objective closes in on the optimum that scipy's L-BFGS-B finds as
    the epochs go on (AdaGrad's steps shrink as its squared gradients add up): within 0.1% after
    1,600 epochs, the weights near the minimiser."""
    import scipy.optimize

    m = MaxEntTagger(task="typed", features="conll", cutoff=2, l2=0.5, dtype=np.float64)
    design, y, mask, X = _training_parts(m, conll_like(2))
    XT = X.T.tocsr()
    ref = scipy.optimize.minimize(
        lambda th: m._loss_grad(X, XT, y, mask, th),
        np.zeros(int(mask.sum())),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-8},
    )
    gaps = []
    for epochs in (100, 400, 1600):
        res = run_epochs(
            design,
            y,
            mask,
            np.arange(len(y)),
            l2=m.l2,
            eta=0.1,
            epochs=epochs,
            seed=0,
            dtype=np.float64,
        )
        f, _ = m._loss_grad(X, XT, y, mask, res.W[mask])
        gaps.append(f / ref.fun - 1)
        # the objective it reports for an epoch: that of the weights it went through
        assert res.objectives[-1] == pytest.approx(f, rel=0.05)
    assert 0 <= gaps[2] < gaps[1] < gaps[0] and gaps[2] < 1e-3
    assert np.abs(res.W[mask] - ref.x).max() < 0.02 * np.abs(ref.x).max()


def _last_best(scores) -> int:
    """The epoch (from 1) of the highest score, the latest of equals."""
    return max(range(len(scores)), key=lambda k: (scores[k], k)) + 1


def test_the_best_epoch_on_dev_is_kept():
    train, dev = conll_like(6), conll_like(1)
    a = MaxEntTagger(features="conll", cutoff=1, optimizer="adagrad", epochs=6).fit(train, dev)
    assert a.stop_reason_ == "best on dev" and a.n_evals_ == 6 and len(a.epoch_scores_) == 6
    assert a.n_iter_ == _last_best(a.epoch_scores_)
    # the same first epochs, stopped at the best one: the same weights
    assert _last_best([1.0, 2.0, 2.0, 0.5]) == 3
    b = MaxEntTagger(features="conll", cutoff=1, optimizer="adagrad", epochs=a.n_iter_).fit(
        train, dev
    )
    assert b.n_iter_ == a.n_iter_ and np.array_equal(a.W_, b.W_)


def test_a_dev_set_without_entities_keeps_every_epoch_and_an_empty_one_is_none():
    """F cannot tell the epochs apart on sentences with no entity: the latest of equals is kept,
    all the epochs; no development sentence at all is no development data."""
    from nerstudio.corpus.model import Sentence

    train = conll_like(6)  # 48 sentences: too few to hold a tenth out
    blank = [Sentence(s.words, [], extra=s.extra) for s in conll_like(1)]
    m = MaxEntTagger(features="conll", cutoff=1, optimizer="adagrad", epochs=3).fit(train, blank)
    assert (m.stop_reason_, m.n_iter_) == ("best on dev", 3)
    assert len(set(m.epoch_scores_)) == 1
    e = MaxEntTagger(features="conll", cutoff=1, optimizer="adagrad", epochs=3).fit(train, [])
    assert (e.stop_reason_, e.n_iter_) == ("epochs", 3)


def test_without_dev_a_tenth_is_held_out_to_choose_the_epochs():
    sents = conll_like(25)  # 200 sentences: 20 held out
    assert held_out(len(sents), 0) is not None and len(held_out(len(sents), 0)) == 20
    assert held_out(199, 0) is None
    m = MaxEntTagger(features="conll", cutoff=1, optimizer="adagrad", epochs=4).fit(sents)
    assert m.stop_reason_ == "best on held-out" and len(m.epoch_scores_) == 4
    assert m.n_iter_ == _last_best(m.epoch_scores_)
    assert m.n_evals_ == 4 + m.n_iter_
    few = MaxEntTagger(features="conll", cutoff=1, optimizer="adagrad", epochs=3).fit(sents[:150])
    assert (few.stop_reason_, few.n_iter_, few.epoch_scores_) == ("epochs", 3, [])


def test_the_held_out_sentences_depend_on_the_seed_only():
    assert np.array_equal(held_out(1000, 3), held_out(1000, 3))
    assert not np.array_equal(held_out(1000, 3), held_out(1000, 4))


def test_online_training_can_be_cancelled():
    asked = []

    def cancel() -> bool:
        asked.append(1)
        return len(asked) > 1

    m = MaxEntTagger(features="conll", cutoff=1, optimizer="adagrad", epochs=50)
    with pytest.raises(Cancelled):
        m.fit(conll_like(3), should_cancel=cancel)
    assert asked


def test_an_online_model_file_keeps_its_settings(tmp_path):
    m = MaxEntTagger(features="conll", cutoff=1, optimizer="adagrad", epochs=2, eta=0.1, seed=3)
    m.fit(conll_like(2))
    m.save(tmp_path / "m.npz")
    back = MaxEntTagger.load(tmp_path / "m.npz")
    assert (back.optimizer, back.epochs, back.eta, back.seed) == ("adagrad", 2, 0.1, 3)
    assert (back.n_iter_, back.stop_reason_) == (2, "epochs")
    np.testing.assert_array_equal(back.W_, m.W_.astype(np.float32))


# ------------------------------------------------------------------------------------------------
# the --optimizer option: the registry's names and default, through the command line and the file


def _option(parser, command: str, flag: str):
    import argparse

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return next(a for a in sub.choices[command]._actions if flag in a.option_strings)


def test_every_command_that_trains_the_tagger_offers_the_registrys_optimizers():
    from nerstudio.cli.parser import build_parser
    from nerstudio.learners import TAGGERS

    row = TAGGERS["maxent"]
    names, default = row.choices["optimizer"].values, row.defaults["optimizer"]
    assert {"adagrad", "lbfgs"} <= set(names)
    parser = build_parser()
    for command, flag in (
        ("train-tagger", "--optimizer"),
        ("jackknife", "--optimizer"),
        ("experiment", "--tagger-optimizer"),
    ):
        action = _option(parser, command, flag)
        assert tuple(action.choices) == names, command
        assert (
            f"(default {default})" in action.help and row.choices["optimizer"].help in action.help
        )
        assert action.default == (None if command == "experiment" else default)
    from nerstudio.experiments.collins import ExperimentConfig
    from nerstudio.runs.spec import RunSettings

    assert ExperimentConfig().tagger_optimizer == default == RunSettings().tagger_optimizer
    assert MaxEntTagger().optimizer == default


@pytest.mark.parametrize("optimizer", ["adagrad", "lbfgs"])
def test_the_optimizer_goes_from_the_command_line_into_the_model_file(optimizer, tmp_path):
    from nerstudio.cli import main
    from nerstudio.persist import read_header

    out = tmp_path / "m.npz"
    steps = ["--epochs", "2"] if optimizer == "adagrad" else ["--max-iter", "3"]
    argv = ["train-tagger", f"{DEMO_DIR}/train.conll", "--optimizer", optimizer, *steps]
    assert main([*argv, "--out", str(out)]) == 0
    header = read_header(out)
    assert header["optimizer"] == optimizer
    back = MaxEntTagger.load(out)
    assert back.optimizer == optimizer
    if optimizer == "adagrad":
        assert back.epochs == 2 and back.stop_reason_ == "best on held-out"
        assert 1 <= back.n_iter_ <= 2
    else:
        assert back.max_iter == 3 and back.n_iter_ <= 3


def test_a_wrong_optimizer_or_epochs_without_adagrad_is_refused(tmp_path, capsys):
    from nerstudio.cli import main

    base = ["train-tagger", f"{DEMO_DIR}/train.conll", "--out", str(tmp_path / "m.npz")]
    with pytest.raises(SystemExit) as exc:
        main([*base, "--optimizer", "sgd"])
    assert exc.value.code == 1 and "adagrad" in capsys.readouterr().err
    assert main([*base, "--optimizer", "lbfgs", "--epochs", "2"]) == 1
    assert "--epochs" in capsys.readouterr().err
    assert not (tmp_path / "m.npz").exists()
