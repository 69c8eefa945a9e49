"""The pyright ratchet (tools/pyright_ratchet.py) counts pyright's errors per module and compares
them with its baseline by the mypy ratchet's rules.

pyright itself is too slow for the suite (.ci/run lint runs it); these tests feed the tool
synthetic `pyright --outputjson` output, and check that the developer guide's figure is the
baseline's total.
"""

from __future__ import annotations

import json

from helpers import ROOT, tool

ratchet = tool("tools/pyright_ratchet.py")


def diag(path: str, line: int, message: str, rule: str, severity: str = "error") -> dict:
    return {
        "file": str(ROOT / path),
        "severity": severity,
        "message": message,
        "range": {
            "start": {"line": line - 1, "character": 0},
            "end": {"line": line, "character": 0},
        },
        "rule": rule,
    }


def output(*diags: dict) -> str:
    return json.dumps({"generalDiagnostics": list(diags), "summary": {}})


OUTPUT = output(
    diag(
        "nerstudio/gui/main_window.py",
        60,
        'Cannot access attribute "x"\n  more',
        "reportAttributeAccessIssue",
    ),
    diag(
        "nerstudio/gui/main_window.py",
        70,
        '"y" is not a known attribute of "None"',
        "reportOptionalMemberAccess",
    ),
    diag("nerstudio/corpus/__init__.py", 3, "Argument of type ...", "reportArgumentType"),
    diag(
        "nerstudio/cli/errors_command.py",
        9,
        "Expression value is unused",
        "reportUnusedExpression",
        "warning",
    ),
    # an optional extra that is not installed: not counted, whether or not it is installed here
    diag(
        "nerstudio/corpus/foreign/spacy_docbin.py",
        90,
        'Import "spacy.tokens" could not be resolved',
        "reportMissingImports",
    ),
    # any other unresolved import is an error like the rest
    diag(
        "nerstudio/rerank/kernel.py",
        5,
        'Import "numbba" could not be resolved',
        "reportMissingImports",
    ),
)


def test_errors_are_counted_per_module_and_warnings_and_optional_extras_are_not():
    errors = ratchet.parse(OUTPUT)
    assert {m: len(e) for m, e in errors.items()} == {
        "nerstudio.gui.main_window": 2,
        "nerstudio.corpus": 1,  # a package's __init__ is the package
        "nerstudio.rerank.kernel": 1,
    }
    # one line each, with the file relative to the checkout and the rule
    assert errors["nerstudio.gui.main_window"][0] == (
        'nerstudio/gui/main_window.py:60: error: Cannot access attribute "x"  '
        "[reportAttributeAccessIssue]"
    )


def test_main_fails_on_a_new_error_and_update_lowers_baseline_and_guide(
    tmp_path, monkeypatch, capsys
):
    base, guide = tmp_path / "baseline.json", tmp_path / "developer.md"
    ratchet.shared.save_baseline(
        {"nerstudio.gui.main_window": 2, "nerstudio.corpus": 2}, base, "pyright"
    )
    guide.write_text(
        "mypy ratchet: **9** errors; pyright ratchet: **4** errors.\n", encoding="utf-8"
    )
    monkeypatch.setattr(ratchet, "BASELINE", base)
    monkeypatch.setattr(ratchet, "GUIDE", guide)
    out = tmp_path / "out.json"
    out.write_text(OUTPUT, encoding="utf-8")  # rerank.kernel: 1 error, baseline 0
    assert ratchet.main(["--from-file", str(out), "--update"]) == 1
    assert (
        "nerstudio.rerank.kernel: 1 pyright errors, the baseline allows 0"
        in capsys.readouterr().out
    )
    assert json.loads(base.read_text())["total"] == 4  # a failing run changes nothing
    out.write_text(output(*json.loads(OUTPUT)["generalDiagnostics"][:3]), encoding="utf-8")
    assert ratchet.main(["--from-file", str(out), "--update"]) == 0
    assert json.loads(base.read_text())["modules"] == {
        "nerstudio.corpus": 1,
        "nerstudio.gui.main_window": 2,
    }
    # the pyright figure is lowered, the mypy one left alone
    assert guide.read_text() == "mypy ratchet: **9** errors; pyright ratchet: **3** errors.\n"


def test_the_developer_guide_states_the_baseline_total():
    data = json.loads(ratchet.BASELINE.read_text(encoding="utf-8"))
    assert data["total"] == sum(data["modules"].values())
    figure = ratchet.shared.guide_figure(ratchet.GUIDE.read_text(encoding="utf-8"), ratchet.FIGURE)
    assert figure == data["total"]


def test_pyright_is_configured_in_basic_mode_over_the_package():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pyright"]
    assert config["typeCheckingMode"] == "basic"
    assert config["include"] == ["nerstudio"]
