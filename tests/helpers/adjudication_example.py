"""The tiny adjudication example worked out by hand (see test_adjudication's docstring): three
sentences, annotators A and B, and C who sides with the majority; shared with the window's test
(test_gui_adjudication)."""

from __future__ import annotations

TEXT = [["John", "lives", "in", "New", "York"], ["Acme", "hired", "Mary"], ["Paris", "Hilton"]]
A = [[(0, 1, "PER"), (3, 5, "LOC")], [(0, 1, "ORG")], [(0, 2, "PER")]]
B = [[(0, 1, "PER"), (3, 5, "ORG")], [(0, 1, "ORG"), (2, 3, "PER")], [(0, 1, "LOC")]]
C = [[(0, 1, "PER"), (3, 5, "LOC")], [(0, 1, "ORG"), (2, 3, "PER")], [(0, 2, "PER")]]


def write_conll(path, spans_per_sentence, text=TEXT):
    """Write ``text`` with ``(start, end, label)`` spans per sentence as IOB2 to ``path``."""
    lines = []
    for words, spans in zip(text, spans_per_sentence):
        tags = ["O"] * len(words)
        for s, e, lab in spans:
            tags[s] = f"B-{lab}"
            for i in range(s + 1, e):
                tags[i] = f"I-{lab}"
        lines += [f"{w} {t}" for w, t in zip(words, tags)] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return str(path)
