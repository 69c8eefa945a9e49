"""The command-line reference of the documentation site, written from the parser itself.

Why: a hand-copied list of options drifts from ``nerstudio/cli/parser.py`` the day an option is
added. The site's build (``tools/docs/mkdocs_hooks.py``) calls :func:`cli_markdown` on
``build_parser()`` every time, so ``docs/reference/cli.md`` always shows what ``nerstudio
COMMAND --help`` shows. ``python tools/docs/cli_reference.py`` prints the same markdown.
"""

from __future__ import annotations

import argparse

USAGE_WIDTH = 100


def _cell(text: str) -> str:
    """Text made safe for one markdown table cell."""
    text = " ".join(str(text).split())
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("*", "\\*")


def _subcommands(
    parser: argparse.ArgumentParser,
) -> tuple[list[tuple[str, str, argparse.ArgumentParser]], list[argparse.Action]]:
    """(name, one-line help, parser) of every subcommand, and the top level's other actions."""
    commands: list[tuple[str, str, argparse.ArgumentParser]] = []
    others: list[argparse.Action] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) in seen:  # an alias
                    continue
                seen.add(id(sub))
                commands.append((name, helps.get(name, ""), sub))
        else:
            others.append(action)
    return commands, others


def _invocation(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    if not action.option_strings:
        return formatter._metavar_formatter(action, action.dest.upper())(1)[0]
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = formatter._format_args(action, action.dest.upper())
    return ", ".join(f"{o} {metavar}" for o in action.option_strings)


def _help(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    text = formatter._expand_help(action) if action.help else ""
    default = action.default
    if (
        default not in (None, False, argparse.SUPPRESS)
        and action.nargs != 0
        and "default" not in text
        and "%(default)" not in (action.help or "")
    ):
        text += f" (default: {default})" if text else f"default: {default}"
    if (
        action.choices is not None
        and not isinstance(action, argparse._SubParsersAction)
        and "{" not in _invocation(action, formatter)
        and "choices" not in text
    ):
        text += " (one of: " + ", ".join(map(str, action.choices)) + ")"
    return text


def _table(actions: list[argparse.Action], formatter: argparse.HelpFormatter) -> list[str]:
    rows = [a for a in actions if a.help is not argparse.SUPPRESS]
    if not rows:
        return []
    out = ["| argument | meaning |", "|---|---|"]
    for a in rows:
        out.append(
            f"| `{_cell(_invocation(a, formatter)).replace('`', '')}` | {_cell(_help(a, formatter))} |"
        )
    return out


def _groups(parser: argparse.ArgumentParser) -> list[tuple[str, list[argparse.Action]]]:
    """The parser's argument groups with their actions, as ``--help`` lists them."""
    groups = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if not isinstance(a, argparse._HelpAction)]
        if actions:
            groups.append((group.title or "options", actions))
    return groups


def _usage(parser: argparse.ArgumentParser) -> str:
    """The usage lines at a fixed width, so that the page does not depend on the terminal."""
    formatter = argparse.HelpFormatter(parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def cli_markdown(parser: argparse.ArgumentParser) -> str:
    """Markdown for every command of ``parser``: usage, description and a table of its arguments."""
    formatter = parser._get_formatter()
    commands, others = _subcommands(parser)
    lines = ["## `" + parser.prog + "`", "", "```", _usage(parser), "```", ""]
    if parser.description:
        lines += [parser.description, ""]
    lines += _table([a for a in others if not isinstance(a, argparse._HelpAction)], formatter) + [
        ""
    ]
    lines += ["| command | what it does |", "|---|---|"]
    for name, text, _ in commands:
        lines.append(f"| [`{name}`](#{name}) | {_cell(text)} |")
    lines.append("")
    for name, text, sub in commands:
        sub_formatter = sub._get_formatter()
        lines += [
            f"## {name}",
            "",
            text[:1].upper() + text[1:] + "." if text else "",
            "",
            "```",
            _usage(sub),
            "```",
            "",
        ]
        if sub.description and sub.description != text:
            lines += [" ".join(sub.description.split()), ""]
        for title, actions in _groups(sub):
            lines += (
                [f"**{title[:1].upper() + title[1:]}**", ""] + _table(actions, sub_formatter) + [""]
            )
        if sub.epilog:
            lines += [" ".join(sub.epilog.split()), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    from nerstudio.cli.parser import build_parser

    print(cli_markdown(build_parser()))
