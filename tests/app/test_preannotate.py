"""Pre-annotation (nerstudio.app.preannotate) and ``nerstudio preannotate`` on the bundled demo.

The predictions are checked against :meth:`nerstudio.api.Pipeline.predict` sentence by sentence
(the tagger + reranker of the demo model, and a boundary-only perceptron tagger trained here);
the two policies are told apart on a corpus where half the sentences keep their gold; cancelling
stops between batches; the command writes the predicted spans and reports user errors in one line.
"""

from __future__ import annotations

import json

import pytest

import nerstudio
from nerstudio.app import preannotate as pa
from nerstudio.cli import main
from nerstudio.corpus.model import Corpus, Document, Sentence, Span
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR
from nerstudio.errors import Cancelled


@pytest.fixture(scope="module")
def model():
    return pa.load_model(DEMO_MODEL_DIR)


@pytest.fixture(scope="module")
def pipe():
    return nerstudio.load(DEMO_MODEL_DIR)


def _cleared(path=DEMO_DIR / "dev.conll", keep=lambda k: False):
    """The corpus with the gold of every sentence cleared except those ``keep(k)`` names."""
    c = nerstudio.read(path)
    for k, s in enumerate(c.sentences):
        if not keep(k):
            s.spans = []
    return c


def _pipeline_spans(pipe, words) -> list[Span]:
    return sorted(Span(e.token_start, e.token_end, e.label) for e in pipe.predict(list(words)))


def test_predictions_are_the_pipelines(model, pipe):
    corpus = _cleared()
    res = pa.preannotate(corpus, model, batch=16)  # several batches of mixed lengths
    assert model.reranker is not None and res.predicted == len(corpus)
    expected = {k: _pipeline_spans(pipe, s.words) for k, s in enumerate(corpus.sentences)}
    assert res.edits == {k: v for k, v in expected.items() if v}
    assert res.entities > 50 and res.changed == sum(1 for v in expected.values() if v)
    # the reranker matters on this corpus: its picks are not all the tagger's first candidates
    tagger_only = pa.preannotate(corpus, pa.Model(model.tagger), batch=16)
    assert tagger_only.edits != res.edits


def test_untyped_perceptron_tagger_matches_the_pipeline_and_gets_a_type():
    from nerstudio.tagging.perceptron import PerceptronTagger

    train = nerstudio.read(DEMO_DIR / "train.conll")
    # no POS/chunk columns: the pipeline sees tokens only
    plain = Corpus(
        [Document([Sentence(s.words, s.spans) for s in d.sentences]) for d in train.documents],
        format="columns",
    )
    tagger = PerceptronTagger(
        task="scn", variant="averaged", epochs=3, cutoff=1, tol=-1.0, keep_best=False, seed=1
    ).fit(plain)
    corpus = _cleared()
    res = pa.preannotate(corpus, pa.Model(tagger), batch=25)
    pipe = nerstudio.api.Pipeline(tagger)
    expected = {}
    for k, s in enumerate(corpus.sentences):
        spans = [
            Span(a, b, pa.PLACEHOLDER)
            for a, b, label in _pipeline_spans(pipe, s.words)
            if label == ""
        ]
        assert len(spans) == len(pipe.predict(list(s.words)))  # boundary-only: no label at all
        if spans:
            expected[k] = spans
    assert res.edits == expected and res.entities > 20


def test_fill_empty_keeps_gold_and_replace_predicts_all(model, pipe):
    corpus = _cleared(keep=lambda k: k % 2 == 0)
    with_gold = [k for k, s in enumerate(corpus.sentences) if s.spans]
    assert with_gold
    fill = pa.preannotate(corpus, model)
    assert not set(fill.edits) & set(with_gold)
    assert fill.kept == len(with_gold) and fill.predicted == len(corpus) - len(with_gold)
    empty = {k for k, s in enumerate(corpus.sentences) if not s.spans}
    assert set(fill.edits) <= empty and any(k % 2 == 1 for k in fill.edits)
    before = [list(s.spans) for s in corpus.sentences]
    replace = pa.preannotate(corpus, model, replace=True)
    assert [list(s.spans) for s in corpus.sentences] == before  # only apply() changes the corpus
    assert replace.predicted == len(corpus) and replace.kept == 0
    predicted = {k: _pipeline_spans(pipe, s.words) for k, s in enumerate(corpus.sentences)}
    changed = {k for k, s in enumerate(corpus.sentences) if predicted[k] != s.spans}
    assert set(replace.edits) == changed  # a sentence whose gold is the prediction is no edit
    assert any(k % 2 == 0 for k in changed) and len(changed) < len(corpus)
    pa.apply(corpus, replace)
    assert [s.spans for s in corpus.sentences] == [predicted[k] for k in range(len(corpus))]
    assert fill.summary().startswith(
        f"pre-annotated {fill.changed} of {fill.predicted} sentence(s)"
    )


def test_sentences_edited_meanwhile_are_left_alone(model):
    corpus = _cleared()
    ks = pa.targets(corpus.sentences)
    spans = pa.predict(model, [corpus.sentences[k] for k in ks])
    k0 = next(k for k, sp in zip(ks, spans) if sp)
    corpus.sentences[k0].spans = [Span(0, 1, "MISC")]  # the annotator's edit while the model ran
    res = pa.edits_for(corpus.sentences, ks, spans, skip=[k0])
    assert (
        k0 not in res.edits and res.skipped == 1 and res.changed == sum(1 for sp in spans if sp) - 1
    )


def test_cancel_stops_between_batches(model):
    corpus = _cleared()
    seen = []
    with pytest.raises(Cancelled):
        pa.preannotate(
            corpus,
            model,
            batch=10,
            progress=lambda d, n: seen.append((d, n)),
            should_cancel=lambda: len(seen) >= 3,
        )
    assert seen == [(0, len(corpus)), (10, len(corpus)), (20, len(corpus))]


class _Recorder:
    """A job's context (nerstudio.app.progress.Progress) that records what it hears."""

    def __init__(self):
        self.plans, self.stages, self.reports = [], [], []

    def should_cancel(self) -> bool:
        return False

    def check(self) -> None:
        pass

    def plan(self, stages):
        self.plans.append(list(stages))

    def stage(self, name, message="", done=0, total=0):
        self.stages.append(name)

    def progress(self, message="", done=0, total=0):
        self.reports.append((message, done, total))


def test_the_windows_job_reads_the_folder_then_predicts(model):
    corpus = _cleared()
    ks = pa.targets(corpus.sentences)[:30]
    ctx = _Recorder()
    got = pa.predict_folder(ctx, str(DEMO_MODEL_DIR), ks, corpus.sentences)
    assert ctx.plans == [[pa.STAGE_LOAD_MODEL, pa.STAGE_PREDICT]] and ctx.stages == ctx.plans[0]
    assert ctx.reports[-1] == (f"{len(ks)}/{len(ks)} sentences", len(ks), len(ks))
    assert got.sentences == ks and got.folder == str(DEMO_MODEL_DIR)
    assert got.model == model.describe()
    assert got.spans == pa.predict_corpus(model, corpus.sentences, [0] * len(corpus), ks)


def test_the_windows_job_says_in_one_line_why_a_folder_cannot_be_used(tmp_path):
    from nerstudio.errors import NerstudioError

    with pytest.raises(NerstudioError) as err:
        pa.predict_folder(_Recorder(), str(tmp_path / "absent"), [0], _cleared().sentences)
    assert "\n" not in str(err.value) and "absent" in str(err.value)


# -- the command -------------------------------------------------------------------------------


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_cli_writes_the_predicted_spans(tmp_path, capsys, pipe):
    corpus = _cleared()
    corpus.sentences[0].spans = [
        Span(0, 1, "MISC")
    ]  # an annotator's entity: kept without --replace
    src = tmp_path / "todo.jsonl"
    nerstudio.write(corpus, src)
    out = tmp_path / "pre.conll"
    code, _, err = _run(capsys, "preannotate", src, "--model", DEMO_MODEL_DIR, "--out", out)
    assert code == 0, err
    assert "preannotate" in err and f"wrote {out} (conll2003): pre-annotated" in err
    written = nerstudio.read(out)
    assert written.format == "conll2003" and [s.words for s in written.sentences] == [
        s.words for s in corpus.sentences
    ]
    assert written.sentences[0].spans == [Span(0, 1, "MISC")]
    expected = [_pipeline_spans(pipe, s.words) for s in corpus.sentences[1:]]
    assert [s.spans for s in written.sentences[1:]] == expected and any(expected)
    # --replace predicts the first sentence too; the input's own format without an extension that names one
    out2 = tmp_path / "pre2.out"
    code, _, err = _run(
        capsys, "preannotate", src, "--model", DEMO_MODEL_DIR, "--replace", "--out", out2
    )
    assert code == 0, err
    again = nerstudio.read(out2)
    assert again.format == "jsonl"
    assert again.sentences[0].spans == _pipeline_spans(pipe, corpus.sentences[0].words)
    assert next(json.loads(line)["tokens"] for line in out2.read_text().splitlines()) == list(
        corpus.sentences[0].words
    )


@pytest.mark.parametrize(
    "case",
    ["missing folder", "folder without tagger", "unknown system", "bad input", "missing input"],
)
def test_cli_user_errors_are_one_line(tmp_path, capsys, case):
    src = tmp_path / "in.conll"
    src.write_text("Maria B-PER\nvisited O\n")
    model = DEMO_MODEL_DIR
    if case == "missing folder":
        model = tmp_path / "no-such-model"
    elif case == "folder without tagger":
        model = tmp_path / "empty"
        model.mkdir()
    elif case == "bad input":
        src.write_bytes(b"\xff\xfe not text \x00\x01\n")
    elif case == "missing input":
        src = tmp_path / "absent.conll"
    extra = ["--system", "voted"] if case == "unknown system" else []
    out = tmp_path / "out.conll"
    code, _, err = _run(capsys, "preannotate", src, "--model", model, *extra, "--out", out)
    lines = [line for line in err.splitlines() if line.startswith("nerstudio:")]
    assert code == 1 and len(lines) == 1 and lines[0].startswith("nerstudio: error: "), err
    assert "Traceback" not in err and not out.exists()
    named = {
        "missing folder": "no-such-model",
        "folder without tagger": "no tagger model",
        "unknown system": "reranker-voted.npz",
        "bad input": "in.conll",
        "missing input": "absent.conll",
    }
    assert named[case] in lines[0]


@pytest.fixture(scope="module")
def context_model(model):
    """The demo tagger with an averaged-perceptron reranker that has document and corpus context
    features (as ``nerstudio experiment``'s default), trained on the demo's training list."""
    from nerstudio.nbest import NBestList
    from nerstudio.rerank.model import train_reranker

    train_corpus = nerstudio.read(DEMO_DIR / "train.conll")
    nb = NBestList.load(DEMO_MODEL_DIR / "train.nbest.npz")
    nb.meta["documents"] = [
        d for d, doc in enumerate(train_corpus.documents) for _ in doc.sentences
    ]
    rr = train_reranker(nb, None, "averaged", {"epochs": 3}, {"context": True})
    return pa.Model(model.tagger, rr, "context")


@pytest.mark.slow
def test_a_context_reranker_sees_the_whole_document(context_model, pipe):
    """With document context the reranker's choice for a sentence depends on the tagger's best
    candidates elsewhere in its document: pre-annotation decodes every sentence and chooses over
    the whole list, exactly as the reranker does on the corpus's N-best list with its documents;
    the API (one sentence, a document of its own) and the command work with such a model too."""
    from nerstudio.runtime.predictor import choices, needs_documents, tagger_nbest

    m = context_model
    assert needs_documents(m.reranker) and not needs_documents(pipe.reranker)
    corpus = _cleared(keep=lambda k: k % 2 == 0)  # half the sentences keep their gold
    documents = [d for d, doc in enumerate(corpus.documents) for _ in doc.sentences]
    assert len(set(documents)) > 1
    res = pa.preannotate(corpus, m, batch=7)
    ks = pa.targets(corpus.sentences)
    nb = tagger_nbest(m.tagger, corpus.sentences, 20)  # every sentence: the first stage's context
    chosen = choices(m.reranker, nb, documents)
    expected = {k: sorted(nb.candidate_spans(k)[chosen[k]]) for k in ks}
    assert res.edits == {k: v for k, v in expected.items() if v}
    # the context changes choices: each sentence taken alone (no context) is chosen otherwise
    alone = pa.predict(m, [corpus.sentences[k] for k in ks])
    assert alone != [expected[k] for k in ks]
    from nerstudio.rerank.context import DocumentContext

    ctx = DocumentContext(nb, documents)
    assert any(ctx.strings(i, nb.words[i][sp.start : sp.end]) for i in ks for sp in nb.spans(i, 0))
    # the API: a sentence alone is a document of its own
    api = nerstudio.api.Pipeline(m.tagger, m.reranker)
    assert isinstance(api.predict("Germany beat France in Paris ."), list)
