"""griffe extension for the API reference: the docstrings' reStructuredText bits read as markdown.

nerstudio's docstrings name code with Sphinx roles (``:func:`load```, ``:class:`Corpus```) and
introduce examples with ``::``; mkdocstrings renders markdown, where those would show as
``:func:load`` and a stray colon. This rewrites them while the docs are built (the sources stay
as they are): a role becomes inline code, ``text::`` becomes ``text:``. Listed under
``extensions`` of the python handler in mkdocs.yml.
"""

from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|obj|exc|const):`~?([^`]+)`")
_LITERAL = re.compile(r"(\S)::[ \t]*$", re.M)


def markdownify(text: str) -> str:
    """``text`` with Sphinx roles as inline code and ``::`` block markers as one colon."""
    return _LITERAL.sub(r"\1:", _ROLE.sub(r"`\1`", text))


class SphinxRolesAsCode(griffe.Extension):
    """Rewrite every docstring of the documented objects (see the module's docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdownify(obj.docstring.value)
