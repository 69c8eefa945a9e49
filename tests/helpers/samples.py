"""Other tools' files kept as test samples (see fixtures/real/SOURCES.md): real ones from the
tools' own repositories, and files written in their shapes where a licence does not allow a
copy."""

from __future__ import annotations

from helpers import ROOT

FIXTURES = ROOT / "tests" / "corpus" / "fixtures"
REAL = FIXTURES / "real"
SHAPES = FIXTURES / "shapes"

#: the samples test_real_files covers, one test each (test_real_samples checks that every sample
#: is covered by one test or the other)
OTHER_TOOLS = [
    "real/allennlp-conll2003.txt",
    "shapes/label-studio-0x-completions.json",
    "shapes/hf-words-ner.json",
    "shapes/doccano-data-key.jsonl",
    "shapes/norne-name.conllu",
    "real/flair-train.conllup",
    "real/flair-5-columns.conllu",
    "shapes/germeval2014.tsv",
    "shapes/ontonotes.gold_conll",
    "shapes/label-studio-export.tsv",
]
