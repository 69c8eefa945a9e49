"""A staged job's progress in words (the document model's Pipeline, which the window's worker
owns): the stage among the others and the time left. No Qt."""

from __future__ import annotations

import pytest

from nerstudio.app.progress import Pipeline, format_duration


def test_pipeline_progress_names_the_stage_and_estimates_the_time_left():
    now = [0.0]
    p = Pipeline(clock=lambda: now[0])
    p.plan(["tagger", "jackknife", "reranker"])
    p.stage("tagger")
    assert (
        p.describe("iteration 0/100", 0, 100)
        == "stage 1 of 3: tagger — iteration 0/100 · estimating…"
    )
    now[0] = 10.0  # a quarter of the first stage in 10 s: 30 s left here, 2 stages of 40 s to come
    assert p.eta(25, 100) == pytest.approx(30 + 2 * 40)
    assert p.describe("", 25, 100).endswith("about 1 min 50 s left")
    assert p.fraction(25, 100) == pytest.approx(0.25 / 3)
    now[0] = 40.0
    p.stage("jackknife")  # the first took 40 s
    now[0] = 50.0  # half of the second in 10 s: 10 s left, the last at the mean of 40 and 20
    assert p.eta(50, 100) == pytest.approx(10 + 30)
    assert p.describe("fold 3/5", 50, 100).startswith(
        "stage 2 of 3: jackknife — fold 3/5 · about 40 s"
    )


def test_durations_read_in_seconds_minutes_and_hours():
    assert [format_duration(s) for s in (0.2, 59, 187, 720, 3900)] == [
        "1 s",
        "59 s",
        "3 min 07 s",
        "12 min",
        "1 h 05 min",
    ]


def test_an_unplanned_stage_is_inserted_and_skipped_stages_count_as_done_in_no_time():
    now = [0.0]
    p = Pipeline(clock=lambda: now[0])
    p.plan(["a", "b", "c"])
    p.stage("a")
    now[0] = 5.0
    p.stage("c")  # "b" skipped
    assert p.durations == [5.0, 0.0] and p.k == 2
    p.stage("extra")
    assert p.stages == ["a", "b", "c", "extra"] and p.k == 3


def test_a_reporter_describes_each_report_and_asks_whether_to_stop():
    """The Progress of a caller without a window: one line per report, with the stage's place."""
    from nerstudio.app.progress import Reporter
    from nerstudio.errors import Cancelled

    lines: list = []
    stop = [False]
    r = Reporter(lambda line, d, n: lines.append((line, d, n)), lambda: stop[0], clock=lambda: 0.0)
    r.plan(["read", "train"])
    r.stage("read", "3 files", 1, 3)
    r.progress("epoch 2", 2, 3)
    assert [x[0].split(" · ")[0] for x in lines] == [
        "stage 1 of 2: read — 3 files",
        "stage 1 of 2: read — epoch 2",
    ]
    r.check()
    stop[0] = True
    with pytest.raises(Cancelled):
        r.check()
