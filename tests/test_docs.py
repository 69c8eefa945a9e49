"""The README and the documentation pages: short, runnable by CI, and with no broken links.

Why: the README was 125 KB before its content moved to the documentation site (issue 27);
nothing but a test keeps it short. `.ci/run pinned` runs the README's test command, found by
a regular expression, so a README without that line would turn CI red for a reason no unit test
shows. And GitHub renders README.md and docs/*.md itself, where a moved page leaves a dead link
that `mkdocs build --strict` (which checks the pages it builds) does not see in the README.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from helpers import ROOT, tool

README = ROOT / "README.md"
MAX_README_BYTES = 15 * 1024


def _ci_pattern() -> str:
    """The regular expression .ci/run greps README.md with, read from .ci/run itself."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    found = re.search(r"grep -m1 -E '([^']+)' README\.md", script)
    assert found, ".ci/run no longer reads the test command from README.md as this test expects"
    return found.group(1)


def test_readme_is_at_most_15_kb():
    size = README.stat().st_size
    assert size <= MAX_README_BYTES, (
        f"README.md is {size} bytes; move detail into docs/ (limit {MAX_README_BYTES})"
    )


def test_readme_holds_the_test_command_that_ci_runs():
    pattern = _ci_pattern()
    lines = README.read_text(encoding="utf-8").splitlines()
    # grep -E on the README's lines, as .ci/run does (the pattern is also valid Python re)
    matches = [line for line in lines if re.search(pattern, line)]
    assert matches, f"no README line matches .ci/run's pattern {pattern!r}"
    assert matches[0] == 'pip install -c constraints.txt -e ".[test]" && python -m pytest -n auto'


def test_readme_keeps_the_run_the_app_command():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert "pip install -e . && python main.py" in lines


_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")


def _relative_links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every relative markdown link and image of a file, outside code."""
    text = path.read_text(encoding="utf-8")
    # blank out code blocks and spans, keeping line numbers
    text = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = _CODE.sub(lambda m: " " * len(m.group(0)), text)
    links = []
    for number, line in enumerate(text.splitlines(), 1):
        for m in _LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                continue  # https:, mailto:, an anchor on the same page
            links.append((number, target))
    return links


def _markdown_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


def test_the_link_finder_sees_links_and_skips_code(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        'a [x](a.md) ![i](img/b.png "t") [web](https://x.org) [s](#here)\n'
        "`[no](c.md)`\n```\n[no](d.md)\n```\n[y](../e.md#frag)\n",
        encoding="utf-8",
    )
    assert _relative_links(page) == [(1, "a.md"), (1, "img/b.png"), (6, "../e.md#frag")]


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_an_existing_file(path):
    broken = []
    for line, target in _relative_links(path):
        file_part = unquote(target.split("#", 1)[0])
        if not (path.parent / file_part).exists():
            broken.append(f"{path.relative_to(ROOT)}:{line}: {target}")
    assert not broken, "links to missing files:\n" + "\n".join(broken)


def test_every_docs_page_is_in_the_site_or_said_to_be_left_out():
    """A page in docs/ but not in mkdocs.yml's nav is unreachable on the site (mkdocs only
    reports it, as INFO); the nav's commented lines name pages other branches add."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    listed = set(re.findall(r"^\s*-\s*[^:#]+:\s*(\S+\.md)\s*$", nav, re.M))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert pages - listed == set(), f"pages missing from mkdocs.yml's nav: {sorted(pages - listed)}"
    assert listed - pages == set(), f"nav entries without a page: {sorted(listed - pages)}"


def test_the_cli_reference_lists_every_command_and_option():
    """The page the site's hook writes from build_parser() names every command and option."""
    import argparse

    from nerstudio.cli.parser import build_parser

    module = tool("tools/docs/cli_reference.py")
    parser = build_parser()
    page = module.cli_markdown(parser)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert len(sub.choices) >= 15
    for name, command in sub.choices.items():
        section = page.split(f"\n## {name}\n", 1)
        assert len(section) == 2, f"no section for `nerstudio {name}`"
        body = section[1].split("\n## ", 1)[0]
        for action in command._actions:
            if action.help == argparse.SUPPRESS:
                continue  # hidden from --help (e.g. --debug repeated after the command)
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in body or f", {option}" in body, (
                        f"{name}: {option} missing"
                    )
