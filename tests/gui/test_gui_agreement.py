"""File ▸ Compare annotations… (issue 16): the agreement panel shows the figures the CLI gives,
checked by hand on the tiny example of tests/test_agreement.py; a click on a differing sentence
shows both annotations of it and moves the browser when A is the open corpus; files of different
texts give the agreement module's one-line error.

The example (IOB2 tags of A / B):

    John/B-PER/B-PER Smith/I-PER/I-PER lives/O/O in/O/O Paris/B-LOC/B-ORG
    Acme/B-ORG/B-ORG hired/O/O Mary/B-PER/O

A has 4 entities, B 3, 2 match: P = 2/3, R = 2/4, F = 4/7. Kappa: p_o = 6/8, p_e = 17/64,
κ = 31/47 = 0.660; per type PER 23/31 = 0.742, LOC 0 (only A marks Paris), ORG 12/20 = 0.600.
Both sentences differ: (Paris LOC / ORG) and (Mary PER / none).
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nerstudio.cli import main

A = "John B-PER\nSmith I-PER\nlives O\nin O\nParis B-LOC\n\nAcme B-ORG\nhired O\nMary B-PER\n"
B = "John B-PER\nSmith I-PER\nlives O\nin O\nParis B-ORG\n\nAcme B-ORG\nhired O\nMary O\n"
# B as JSONL (another format nerstudio reads): the same text and entities
B_JSONL = (
    '{"text": "John Smith lives in Paris", "spans": [{"start": 0, "end": 10, "label": "PER"}, '
    '{"start": 20, "end": 25, "label": "ORG"}]}\n'
    '{"text": "Acme hired Mary", "spans": [{"start": 0, "end": 4, "label": "ORG"}]}\n'
)


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (
        ("a.txt", A),
        ("b.txt", B),
        ("b.jsonl", B_JSONL),
        ("short.txt", A.split("\n\n")[0] + "\n"),
        ("other.txt", A.replace("Paris", "Linz")),
    ):
        paths[name] = tmp_path / name
        paths[name].write_text(text, encoding="utf-8")
    return paths


def table(view) -> dict[str, list[str]]:
    t = view.table
    return {
        t.item(r, 0).text(): [t.item(r, c).text() for c in range(1, t.columnCount())]
        for r in range(t.rowCount())
    }


def compare(window, qtbot, a, b) -> None:
    assert window.agreement.compare(str(a), str(b))
    assert window.jobs.views.wait(30000)
    qtbot.waitUntil(lambda: not window.views.agreement_view.busy, timeout=10000)


def test_panel_shows_the_hand_computed_figures(window, qtbot, files, capsys):
    view = window.views.agreement_view
    window.agreement.ask_files = lambda: (str(files["a.txt"]), str(files["b.jsonl"]))
    action = next(a for a in window.menuBar().actions() if a.text() == "&File").menu()
    compare_action = next(
        a for a in action.actions() if a.text().replace("&", "").startswith("Compare annotations")
    )
    compare_action.trigger()  # the menu entry: asks for the files, then compares in a worker
    assert window.jobs.views.wait(30000)
    qtbot.waitUntil(lambda: view.result is not None, timeout=10000)
    assert window.views.workspaces.holds(view) or view.isVisibleTo(window)
    rows = table(view)
    # P, R, F, kappa, in A, in B — by hand (module docstring)
    assert rows["overall"] == ["66.67", "50.00", "57.14", "0.660", "4", "3"]
    assert rows["PER"] == ["100.00", "50.00", "66.67", "0.742", "2", "1"]
    assert rows["LOC"] == ["0.00", "0.00", "0.00", "0.000", "1", "0"]
    assert rows["ORG"] == ["50.00", "100.00", "66.67", "0.600", "1", "2"]
    head = view.header.text()
    assert (
        "F <b>57.14</b>" in head
        and "κ <b>0.660</b>" in head
        and "<b>2</b> sentences differ" in head
    )
    # the same figures as the command line on the same files
    assert main(["agreement", str(files["a.txt"]), str(files["b.jsonl"]), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert f"{cli['f1']:.2f}" == rows["overall"][2] and f"{cli['kappa']:.3f}" == rows["overall"][3]
    for t, m in cli["per_type"].items():
        assert rows[t][:4] == [
            f"{m['precision']:.2f}",
            f"{m['recall']:.2f}",
            f"{m['f1']:.2f}",
            "n/a" if m["kappa"] is None else f"{m['kappa']:.3f}",
        ]
    assert (
        [d.index for d in view.model.rows] == [d["sentence"] for d in cli["differences"]] == [1, 2]
    )


def test_a_click_shows_both_annotations_and_moves_the_browser(window, qtbot, files):
    assert window.load_corpus(str(files["a.txt"]))
    assert window.runner.wait(30000)
    view = window.views.agreement_view
    compare(window, qtbot, files["a.txt"], files["b.txt"])
    assert "(open corpus)" in view.header.text()
    window.select_sentence(0)
    view.activate(1)  # the second difference: sentence 2, "Acme hired Mary"
    assert view.shown_sentence() == 2
    detail = view.detail.text()
    a_row, b_row = detail.split("<b>A</b>")[1].split("<b>B</b>")
    assert "Mary&nbsp;<sub>PER</sub>" in a_row and "Acme&nbsp;<sub>ORG</sub>" in a_row
    assert "Mary" in b_row and "<sub>PER</sub>" not in b_row and "Acme&nbsp;<sub>ORG</sub>" in b_row
    assert window.current_sentence_index() == 1  # the browser followed (A is the open corpus)
    view.activate(0)
    assert (
        "Paris&nbsp;<sub>LOC</sub>" in view.detail.text()
        and "Paris&nbsp;<sub>ORG</sub>" in view.detail.text()
    )
    assert window.current_sentence_index() == 0
    # an edit of the open corpus makes the result out of date
    assert window.document.set_spans(1, []) is not None
    assert "compare again" in view.header.text()


def test_other_files_do_not_move_the_browser(window, qtbot, files):
    view = window.views.agreement_view
    window.select_sentence(5)
    # the open corpus is the demo: A is not it
    compare(window, qtbot, files["a.txt"], files["b.txt"])
    view.activate(1)
    assert view.shown_sentence() == 2 and window.current_sentence_index() == 5


@pytest.mark.parametrize(
    "other, message", [("short.txt", "has more sentences than"), ("other.txt", "Linz")]
)
def test_mismatched_files_give_one_line(window, qtbot, files, other, message):
    view = window.views.agreement_view
    compare(window, qtbot, files["a.txt"], files[other])
    text = view.header.text()
    assert view.result is None and message in text and "Traceback" not in text and "\n" not in text
    assert message in window.views.status.currentMessage()
    # after an error, a good pair compares again
    compare(window, qtbot, files["a.txt"], files["b.txt"])
    assert view.result is not None and table(view)["overall"][2] == "57.14"


def test_cancel_leaves_no_result(window, qtbot, tmp_path):
    big_a, big_b = tmp_path / "big_a.txt", tmp_path / "big_b.txt"
    big_a.write_text(A * 20000, encoding="utf-8")  # reading takes a while: cancelled while it runs
    big_b.write_text(B * 20000, encoding="utf-8")
    view = window.views.agreement_view
    assert window.agreement.compare(str(big_a), str(big_b))
    assert view.busy and not view.cancel_button.isHidden()
    view.cancel_button.click()
    assert window.jobs.views.wait(30000)
    qtbot.wait(50)
    assert not view.busy and view.result is None and "cancelled" in view.header.text()
