"""mkdocs hook (``hooks:`` in mkdocs.yml): the CLI reference page is written from the parser.

``docs/reference/cli.md`` holds a short introduction and the marker line below; at every build
the marker is replaced with :func:`cli_reference.cli_markdown` of
:func:`nerstudio.cli.parser.build_parser`, so the page cannot drift from ``nerstudio --help``.
A page without the marker is a build error, so the reference cannot silently vanish.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_reference import cli_markdown

MARKER = "<!-- cli-reference: generated from nerstudio.cli.parser.build_parser() at build time -->"
PAGE = "reference/cli.md"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise RuntimeError(f"docs/{PAGE} has lost its marker line: {MARKER}")
    from nerstudio.cli.parser import build_parser

    return markdown.replace(MARKER, cli_markdown(build_parser()))
