"""The mypy ratchet (tools/mypy_ratchet.py) compares per-module error counts with its baseline.

mypy itself is too slow for the suite (.ci/run lint runs it); these tests feed the comparison
synthetic mypy output, and check that the developer guide's figure is the baseline's total.
"""

from __future__ import annotations

import json

from helpers import ROOT, tool

ratchet = tool("tools/mypy_ratchet.py")

OUTPUT = """\
nerstudio/gui/main_window.py:60: error: Cannot assign to a method  [method-assign]
nerstudio/gui/main_window.py:61: note: By default the bodies of untyped functions are not checked
nerstudio/gui/main_window.py:70: error: Cannot infer type of lambda  [misc]
nerstudio/corpus/__init__.py:3: error: Name "x" is not defined  [name-defined]
nerstudio/rerank/kernel.py:12:5: error: Incompatible types in assignment  [assignment]
Found 4 errors in 3 files (checked 190 source files)
"""


def test_errors_are_counted_per_module_and_notes_are_not():
    errors = ratchet.parse(OUTPUT)
    assert {m: len(e) for m, e in errors.items()} == {
        "nerstudio.gui.main_window": 2,
        "nerstudio.corpus": 1,  # a package's __init__ is the package
        "nerstudio.rerank.kernel": 1,  # --show-column-numbers output too
    }


def test_a_module_with_more_errors_than_its_baseline_fails_and_is_named(capsys, tmp_path):
    baseline = {"nerstudio.gui.main_window": 1, "nerstudio.corpus": 1, "nerstudio.rerank.kernel": 3}
    cmp = ratchet.compare(baseline, {"nerstudio.gui.main_window": 2, "nerstudio.corpus": 1})
    assert not cmp.ok
    assert cmp.worse == [("nerstudio.gui.main_window", 1, 2)]
    assert cmp.better == [("nerstudio.rerank.kernel", 3, 0)]
    assert (cmp.total, cmp.baseline_total) == (3, 5)
    text = "\n".join(ratchet.report(cmp, ratchet.parse(OUTPUT)))
    assert "nerstudio.gui.main_window: 2 mypy errors, the baseline allows 1" in text
    assert "Cannot infer type of lambda" in text  # the module's errors are printed
    assert "FAILED" in text


def test_a_module_absent_from_the_baseline_may_have_no_errors():
    cmp = ratchet.compare({"a": 2}, {"b": 1})
    assert cmp.worse == [("b", 0, 1)] and cmp.better == [("a", 2, 0)]
    assert ratchet.compare({}, {}).ok


def test_update_only_lowers_and_drops_modules_at_zero():
    assert ratchet.lowered({"a": 3, "b": 2, "c": 1}, {"a": 1, "b": 5}) == {"a": 1, "b": 2}


def test_main_fails_on_a_new_error_and_update_lowers_baseline_and_guide(tmp_path, monkeypatch):
    base, guide = tmp_path / "baseline.json", tmp_path / "developer.md"
    ratchet.save_baseline({"nerstudio.gui.main_window": 2, "nerstudio.corpus": 2}, base)
    guide.write_text("Today: mypy ratchet: **4** errors.\n", encoding="utf-8")
    monkeypatch.setattr(ratchet, "BASELINE", base)
    monkeypatch.setattr(ratchet, "GUIDE", guide)
    out = tmp_path / "out.txt"
    out.write_text(OUTPUT, encoding="utf-8")  # rerank.kernel: 1 error, baseline 0
    assert ratchet.main(["--from-file", str(out), "--update"]) == 1
    assert json.loads(base.read_text())["total"] == 4  # a failing run changes nothing
    out.write_text("\n".join(OUTPUT.splitlines()[:4]), encoding="utf-8")
    assert ratchet.main(["--from-file", str(out), "--update"]) == 0
    assert json.loads(base.read_text())["modules"] == {
        "nerstudio.corpus": 1,
        "nerstudio.gui.main_window": 2,
    }
    assert guide.read_text() == "Today: mypy ratchet: **3** errors.\n"


def test_the_developer_guide_gives_the_baselines_total():
    data = json.loads((ROOT / "tools" / "mypy_baseline.json").read_text(encoding="utf-8"))
    total = sum(data["modules"].values())
    assert data["total"] == total
    figure = ratchet.guide_figure((ROOT / "docs" / "developer.md").read_text(encoding="utf-8"))
    assert figure == total, "run python tools/mypy_ratchet.py --update"
    assert total < 548  # issue 27: below the count it reported


def test_py_typed_ships_in_the_wheel_and_the_sdist():
    """PEP 561: nerstudio/py.typed tells other projects' checkers to read nerstudio's annotations;
    setuptools puts package data in both the wheel and the sdist."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["nerstudio"]
    assert (ROOT / "nerstudio" / "py.typed").is_file()


def test_every_marker_used_is_declared():
    """--strict-markers is on: a marker missing from pyproject.toml fails the whole run."""
    import re
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pytest_cfg = config["tool"]["pytest"]["ini_options"]
    assert "--strict-markers" in pytest_cfg["addopts"].split()
    declared = {m.split(":")[0] for m in pytest_cfg["markers"]}
    builtin = {"parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings"}
    used = {
        m
        for p in (ROOT / "tests").rglob("*.py")
        for m in re.findall(r"pytest\.mark\.(\w+)", p.read_text(encoding="utf-8"))
    }
    assert used - builtin <= declared


def test_strict_modules_have_no_errors_in_the_baseline():
    """corpus and app are strict (pyproject.toml): none of their modules, less those listed as
    not strict yet, may have a baseline count."""
    import fnmatch
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    overrides = config["tool"]["mypy"]["overrides"]
    strict = [o for o in overrides if o.get("disallow_untyped_defs") is True]
    assert strict, "no strict override"
    patterns = [m for o in strict for m in o["module"]]
    assert {"nerstudio.corpus.*", "nerstudio.app.*"} <= set(patterns)
    lax = {m for o in overrides if o.get("disallow_untyped_defs") is False for m in o["module"]}
    baseline = ratchet.load_baseline()
    counted = [
        m
        for m in baseline
        if m not in lax and any(fnmatch.fnmatchcase(m, p) or m == p for p in patterns)
    ]
    assert counted == [], "a strict module has mypy errors"
