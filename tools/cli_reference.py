"""Write docs/cli.md: every command's ``--help``, as tileprof prints it.

    python tools/cli_reference.py           # rewrite docs/cli.md
    python tools/cli_reference.py --check   # exit 1 when docs/cli.md is not what it would write

``tests/test_cli_reference.py`` holds docs/cli.md to the commands, so an option added, renamed
or reworded shows in the reference in the same change (and a change to an option's help is
a change a test sees).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import click
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "cli.md"
WIDTH = 80
"""click wraps help at most 80 columns wide (``max_content_width``): a wider terminal prints
what the reference shows, a narrower one the same text wrapped narrower."""
HEAD = """\
# Command reference

Every command's `--help`, as `tileprof COMMAND --help` prints it in a terminal 80 columns wide
or wider (a narrower one wraps the same text narrower). What each figure the commands print
means is in [metrics.md](metrics.md) and [runs.md](runs.md); the input formats are in
[formats.md](formats.md). `python tools/cli_reference.py` writes this page from the commands.
"""


def command_paths() -> list[tuple[str, ...]]:
    """The group, then every command and subcommand, in the order ``--help`` lists them."""
    from tileprof.commands.cli import cli

    paths: list[tuple[str, ...]] = [()]

    def walk(group: click.Group, prefix: tuple[str, ...]) -> None:
        context = click.Context(group)
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            paths.append((*prefix, name))
            if isinstance(command, click.Group):
                walk(command, (*prefix, name))

    walk(cli, ())
    return paths


def help_text(path: tuple[str, ...]) -> str:
    """``tileprof PATH --help`` at ``WIDTH`` columns."""
    from tileprof.commands.cli import cli

    # click leaves 2 of a terminal's columns free (``HelpFormatter``)
    result = CliRunner().invoke(
        cli, [*path, "--help"], prog_name="tileprof", terminal_width=WIDTH - 2
    )
    if result.exit_code != 0:
        raise RuntimeError(f"tileprof {' '.join(path)} --help failed: {result.output}")
    return result.output


def reference() -> str:
    """docs/cli.md's text."""
    parts = [HEAD]
    for path in command_paths():
        title = " ".join(("tileprof", *path))
        parts.append(f"\n## `{title}`\n\n```text\n{help_text(path)}```\n")
    return "".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    text = reference()
    if args.check:
        same = DOC.is_file() and DOC.read_text(encoding="utf-8") == text
        print("docs/cli.md is up to date" if same else "docs/cli.md differs: run this script")
        return 0 if same else 1
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
