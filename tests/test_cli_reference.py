"""docs/cli.md is every command's ``--help`` as the commands print it today: an option added,
renamed or reworded changes the reference in the same change (``python
tools/cli_reference.py`` rewrites it)."""

from __future__ import annotations

import re

from tests.tool_scripts import load_tool

reference = load_tool("cli_reference")


def test_the_reference_is_what_the_commands_print() -> None:
    written = reference.DOC.read_text(encoding="utf-8")
    assert written == reference.reference(), "run `python tools/cli_reference.py`"


def test_every_command_and_subcommand_has_a_section() -> None:
    from tileprof.commands.cli import cli

    paths = reference.command_paths()
    assert paths[0] == () and set(cli.list_commands(None)) <= {p[0] for p in paths[1:]}  # type: ignore[arg-type]
    assert ("store", "vacuum") in paths
    text = reference.DOC.read_text(encoding="utf-8")
    for path in paths:
        assert f"\n## `{' '.join(('tileprof', *path))}`\n" in text


def test_each_section_is_the_help_a_terminal_shows() -> None:
    """80 columns as a terminal gives them: click keeps 2 free, so no line is wider than 78."""
    text = reference.help_text(("check",))
    assert text.startswith("Usage: tileprof check [OPTIONS] [PATHS]...\n")
    assert max(len(line) for line in text.splitlines()) <= 78


def test_no_option_shows_a_bound_of_none() -> None:
    """A range is described by its bounds ("[x>=1]"); an option checked later has none to show
    (click writes a range without bounds as "[x<=None]")."""
    text = reference.DOC.read_text(encoding="utf-8")
    assert re.search(r"\[[^\]\n]*\bNone\b[^\]\n]*\]", text) is None
    assert "[x>=1]" in text
