"""The demo ships its first screen (nerstudio/demo/model/train.first.json,
nerstudio.app.first_screen): rebuilding it from the window gives the same file, so it can never
drift from what the window computes from the shipped files, and it is used only with the very
files it was computed from."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import tool

from nerstudio.app import first_screen
from nerstudio.app.demo_copy import prepare
from nerstudio.demo import DEMO_DIR

SHIPPED = DEMO_DIR / first_screen.SHIPPED


def _builder():
    return tool("tools/demo/build_first_screen.py")


@pytest.mark.slow
def test_rebuilding_the_shipped_first_screen_gives_the_same_file(tmp_path, qapp):
    out = tmp_path / "train.first.json"
    _builder().build(out)
    assert out.read_bytes() == SHIPPED.read_bytes(), (
        "the window shows the demo otherwise than the shipped first screen says: run "
        "tools/demo/build_first_screen.py"
    )


def test_the_shipped_screen_is_the_demo_s_first_sentence_and_its_candidates():
    screen = json.loads(SHIPPED.read_text(encoding="utf-8"))["screen"]
    assert screen["sentence"] == 0 and screen["format"] == "conll2003"
    nb = screen["nbest"]
    assert len(nb["spans"]) == len(nb["logprobs"]) == len(nb["scores"]) == 20
    assert nb["selected"] == [nb["chosen"]] and screen["features"]["terms"]
    assert len(screen["status"]) == len(screen["uncertainty"]["values"]) == 337


def test_the_screen_is_used_only_with_the_files_it_came_from(tmp_path):
    folder = prepare(tmp_path / "demo")
    screen = first_screen.load(SHIPPED, folder)
    assert screen is not None and screen["sentence"] == 0
    for rel in first_screen.SOURCES.values():  # any of them changed: not used
        other = prepare(tmp_path / f"other-{rel.replace('/', '-')}")
        with open(other / rel, "ab") as f:
            f.write(b"\n")
        assert first_screen.load(SHIPPED, other) is None, rel
    (folder / "model" / "reranker.npz").unlink()  # missing
    assert first_screen.load(SHIPPED, folder) is None


def test_a_damaged_or_foreign_screen_file_is_not_used(tmp_path):
    folder = prepare(tmp_path / "demo")
    doc = json.loads(SHIPPED.read_text(encoding="utf-8"))
    cases = {
        "truncated.json": SHIPPED.read_text(encoding="utf-8")[:500],
        "version.json": json.dumps(dict(doc, version=2)),
        "format.json": json.dumps(dict(doc, format="something-else")),
        "list.json": json.dumps([doc]),
        "sources.json": json.dumps(dict(doc, sources={"corpus": doc["sources"]["corpus"]})),
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert first_screen.load(tmp_path / name, folder) is None, name
    assert first_screen.load(tmp_path / "missing.json", folder) is None
    shutil.copy(SHIPPED, tmp_path / "copy.json")
    assert first_screen.load(tmp_path / "copy.json", folder) is not None


def test_saving_writes_the_sources_of_the_folder(tmp_path):
    folder = prepare(tmp_path / "demo")
    out = tmp_path / "screen.json"
    first_screen.save(out, {"sentence": 0}, folder)
    assert first_screen.load(out, folder) == {"sentence": 0}
    saved = json.loads(out.read_text(encoding="utf-8"))["sources"]
    assert saved == first_screen.sources(folder) and all(saved.values())
