"""``tileprof.commands._groups.SuggestingGroup``: an unknown command names the closest known
ones even when their modules are not loaded yet, and everything else resolves as click does."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from tileprof.commands._groups import SuggestingGroup


class LazyGroup(SuggestingGroup):
    """Lists commands it has not loaded: ``get_command`` loads on demand, as tileprof's does."""

    loaded: list[str]
    asked_by: list[str | None]

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.asked_by.append(ctx.info_name)  # as a group that reads ctx.obj would
        return ["summary", "supersteps", "report"]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        self.asked_by.append(ctx.info_name)
        if name not in self.list_commands(ctx):
            return None
        self.loaded.append(name)

        @click.command(name)
        @click.argument("rest", nargs=-1)
        def command(rest: tuple[str, ...]) -> None:
            click.echo(f"ran {name} {' '.join(rest)}".rstrip())

        return command


@pytest.fixture
def group() -> LazyGroup:
    made = LazyGroup("tool")
    made.loaded = []
    made.asked_by = []
    return made


def test_an_unknown_command_names_the_closest_unloaded_ones(group: LazyGroup) -> None:
    result = CliRunner().invoke(group, ["sumary"])
    assert result.exit_code == 2
    assert "No such command 'sumary'" in result.output
    assert "Did you mean 'summary'?" in result.output
    assert "Try 'tool --help' for help." in result.output  # the error knows its command line
    assert set(group.asked_by) == {"tool"}  # every lookup was given the context


def test_a_guess_is_among_every_command_not_only_the_loaded_ones(group: LazyGroup) -> None:
    result = CliRunner().invoke(group, ["superstep"])
    assert result.exit_code == 2
    assert "Did you mean 'supersteps'?" in result.output
    assert group.loaded == []  # nothing was loaded to make the guess


def test_a_known_command_runs_with_its_arguments(group: LazyGroup) -> None:
    result = CliRunner().invoke(group, ["report", "a", "b"])
    assert (result.exit_code, result.output) == (0, "ran report a b\n")
    assert group.loaded[-1] == "report"
    assert set(group.asked_by) == {"tool"}


def test_an_option_after_the_end_of_options_is_an_unknown_option(group: LazyGroup) -> None:
    """``tool -- --foo``: a name that looks like an option is left to click, which calls it
    an option, not a command to guess at."""
    result = CliRunner().invoke(group, ["--", "--foo"])
    assert result.exit_code == 2
    assert "No such option '--foo'" in result.output
    assert "No such command" not in result.output


def test_options_and_no_command_are_left_to_click(group: LazyGroup) -> None:
    helped = CliRunner().invoke(group, ["--help"])
    assert helped.exit_code == 0 and "Commands:" in helped.output
    bare = CliRunner().invoke(group, [])
    assert bare.exit_code == 2  # click's usage, listing the commands
    assert "No such command" not in bare.output and "supersteps" in bare.output


def test_nothing_close_is_no_guess(group: LazyGroup) -> None:
    result = CliRunner().invoke(group, ["xyzzy"])
    assert result.exit_code == 2
    assert "No such command 'xyzzy'" in result.output
    assert "Did you mean" not in result.output
