"""Two helpers every command shares, over click commands made here:
``commands/_notes.py`` (notes held until the command succeeds, control characters escaped) and
``commands/_command_line.py`` (the command line rebuilt from the parsed parameters)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from tileprof.commands._command_line import command_line
from tileprof.commands._notes import flush, note, say, say_notes


def _noting(fail: bool) -> click.Group:
    @click.group()
    def tool() -> None:
        pass

    @tool.command()
    def run() -> None:
        note("first")
        say_notes(["second", "third"])
        click.echo("output")
        if fail:
            raise click.ClickException("it broke")
        flush(click.get_current_context())

    return tool


def test_notes_wait_for_the_command_and_go_to_stderr_in_order() -> None:
    result = CliRunner().invoke(_noting(fail=False), ["run"])
    assert result.exit_code == 0
    assert result.stdout == "output\n"
    assert result.stderr == "tileprof: first\ntileprof: second\ntileprof: third\n"


def test_a_failing_command_prints_no_notes() -> None:
    result = CliRunner().invoke(_noting(fail=True), ["run"])
    assert result.exit_code == 1
    assert "tileprof: first" not in result.stderr
    assert result.stderr == "Error: it broke\n"


def test_a_note_outside_a_command_is_said_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    note("now")
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "tileprof: now\n")


def test_flushing_twice_prints_once() -> None:
    @click.command()
    def once() -> None:
        note("only once")
        context = click.get_current_context()
        flush(context)
        flush(context)

    result = CliRunner().invoke(once)
    assert (result.exit_code, result.stderr) == (0, "tileprof: only once\n")


def test_a_command_without_notes_flushes_nothing() -> None:
    @click.command()
    def quiet() -> None:
        flush(click.get_current_context())

    result = CliRunner().invoke(quiet)
    assert (result.exit_code, result.stderr) == (0, "")


def test_say_escapes_control_characters_line_by_line(capsys: pytest.CaptureFixture[str]) -> None:
    say("kernel\x1b]0;title\x07\nnext\x1b[2J")
    say("on stderr", err=True)
    captured = capsys.readouterr()
    assert captured.out == "kernel\\x1b]0;title\\x07\nnext\\x1b[2J\n"
    assert captured.err == "on stderr\n"


def _recording() -> tuple[click.Group, list[str]]:
    seen: list[str] = []

    @click.group()
    def tileprof() -> None:
        pass

    @tileprof.command()
    @click.argument("dumps", nargs=-1)
    @click.argument("extra", required=False)
    @click.option("--epoch", type=int, default=None)
    @click.option("--top", type=int, default=10)
    @click.option("--kernel", "-k", multiple=True)
    @click.option("--quiet", "-q", is_flag=True)
    @click.option("-o", "--output", default="-")
    @click.option("--force", is_flag=True)
    @click.option("--secret", hidden=True, default=None)
    @click.option("--late", default=None)
    def report(**_: object) -> None:
        seen.append(command_line(click.get_current_context()))
        seen.append(command_line(click.get_current_context(), leave_out=()))

    return tileprof, seen


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        (["report"], "tileprof report"),
        (["report", "a.json", "b c.json"], "tileprof report a.json 'b c.json'"),
        (["report", "--top", "10", "a.json"], "tileprof report a.json"),
        (["report", "--top", "5", "--epoch", "0"], "tileprof report --epoch 0 --top 5"),
        (["report", "-k", "gemm*", "-k", "copy"], "tileprof report --kernel 'gemm*' --kernel copy"),
        (["report", "-q", "--secret", "s"], "tileprof report --quiet"),
        (["report", "-o", "out.html", "--force"], "tileprof report"),
        (["report", "-o", "o.html", "--late", "x"], "tileprof report --late x"),
    ],
)
def test_the_command_line_is_the_arguments_then_the_options_given(
    arguments: list[str], line: str
) -> None:
    group, seen = _recording()
    result = CliRunner().invoke(group, arguments)
    assert result.exit_code == 0, result.output
    assert seen[0] == line


def test_the_output_is_recorded_when_asked() -> None:
    group, seen = _recording()
    CliRunner().invoke(group, ["report", "-o", "out.html", "--force"])
    assert seen[1] == "tileprof report --output out.html --force"
