"""What the bodies of the thin commands decide themselves, before their shared helpers run: which
combinations of inputs and options they refuse, and which they let through (issue 38: the
click commands' bodies, mutated by ``tools/mutation_subset.py --every``)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("command", ["findings", "check"])
def test_a_command_of_paths_needs_paths_or_the_example(command: str) -> None:
    code, output = _run(command)
    assert code == 2
    assert "give PATHS... (" in output and ") or --example" in output


def test_findings_of_the_example_alone_need_no_paths() -> None:
    result = CliRunner().invoke(cli, ["findings", "--example", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)


def test_supersteps_csv_takes_one_kind_of_row_the_other_formats_both() -> None:
    both = ["supersteps", "--example", "--per-tile", "--per-epoch"]
    code, output = _run(*both, "--format", "csv")
    assert code == 2
    assert "--format csv prints one kind of row: give --per-tile or --per-epoch" in output
    for output_format in ("json", "table"):
        code, output = _run(*both, "--format", output_format)
        assert code == 0, output
    code, output = _run("supersteps", "--example", "--per-epoch", "--format", "csv")
    assert code == 0, output
