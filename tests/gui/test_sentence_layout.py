"""The sentence view's row layout equals the token-by-token rule on random sentences, and lays
out a 300,000-token sentence with a box for every token."""

from __future__ import annotations

import numpy as np
import pytest

from nerstudio.gui.views import sentence_view as sv


def _rows_by_hand(widths, width):
    """The rule, one token at a time: a token starts a new row when it would cross the right
    margin, unless it is the first of its row."""
    x, row, out = sv._MARGIN, 0, []
    for tw in widths:
        if x + tw > sv._MARGIN + width and x > sv._MARGIN:
            x, row = sv._MARGIN, row + 1
        out.append((row, x))
        x += tw + sv._GAP
    return out


@pytest.mark.parametrize("seed", range(5))
def test_layout_equals_the_token_by_token_rule(qtbot, seed):
    view = sv.SentenceView()
    qtbot.addWidget(view)
    view.resize(700, 300)
    rng = np.random.default_rng(seed)
    words = [
        "".join(rng.choice(list("abcdefghijKLMN.,"), size=int(k)))
        for k in rng.integers(1, 30, size=400)
    ]
    words[7] = "x" * 400  # wider than a row: a row of its own
    view.set_sentence(words)
    width = max(200, view.width() - 2 * sv._MARGIN)
    want = _rows_by_hand(list(view._widths), width)
    rows = sorted({r for r, _ in want})
    tops = {r: view._row_top[k] for k, r in enumerate(rows)}
    assert len(view._row_start) == len(rows)
    for i, (r, x) in enumerate(want):
        box = view.token_rect(i)
        assert box.left() == pytest.approx(x) and box.top() == pytest.approx(tops[r])


def test_a_huge_sentence_is_laid_out(qtbot):
    view = sv.SentenceView()
    qtbot.addWidget(view)
    view.resize(900, 300)
    words = [f"w{i % 977}" for i in range(300_000)]
    view.set_sentence(words)
    assert len(view._boxes) == 300_000
    last = view.token_rect(299_999)
    assert last.top() == view._row_top[-1]


def test_the_token_under_a_point_is_the_one_drawn_there(qtbot):
    """A click finds the token whose box holds the point (edges included), none between two
    tokens, between two rows or beyond the last token."""
    view = sv.SentenceView()
    qtbot.addWidget(view)
    view.resize(500, 300)
    words = [("word" * (1 + i % 4))[: 3 + i % 9] for i in range(120)]
    words[5] = ""  # an empty token is drawn as ␣
    view.set_sentence(words)
    boxes = view._boxes
    assert len(view._row_start) > 3
    for i in range(len(words)):
        r = view.token_rect(i)
        assert boxes.index_at(r.center().x(), r.center().y()) == i
        assert boxes.index_at(r.left(), r.top()) == i
        assert boxes.index_at(r.right(), r.bottom()) == i
        if i + 1 < len(words) and view.token_rect(i + 1).top() == r.top():  # the gap after it
            assert boxes.index_at(r.right() + sv._GAP / 2, r.center().y()) == -1
    first, last = view.token_rect(0), view.token_rect(len(words) - 1)
    assert boxes.index_at(first.left() - 1, first.center().y()) == -1
    assert boxes.index_at(first.center().x(), first.bottom() + 2) == -1  # under the words
    assert boxes.index_at(last.right() + 40, last.center().y()) == -1
