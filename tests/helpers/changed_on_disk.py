"""A small CoNLL-2003 corpus and what ``sed -i`` does to a file, for the tests of a corpus file
changed on disk by another program (test_file_ownership, test_gui_file_ownership and others)."""

from __future__ import annotations

import os

CONLL = """-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC
call NN I-NP O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER

BRUSSELS NNP B-NP B-LOC
1996-08-22 CD I-NP O

The DT B-NP O
European NNP I-NP B-ORG
Commission NNP I-NP I-ORG
said VBD B-VP O
"""


def sed_i(path, old: str, new: str) -> None:
    """What ``sed -i`` does: a new file with the change, renamed over the old one."""
    text = path.read_text(encoding="utf-8")
    assert old in text
    tmp = path.with_name(path.name + ".sed")
    tmp.write_text(text.replace(old, new, 1), encoding="utf-8")
    os.replace(tmp, path)
