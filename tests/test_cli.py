"""The summary command through click's runner and as a real process."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.samples import sample, write_dump
from tileprof.commands.cli import cli
from tileprof.core.errors import TileprofError

SEED_004 = Path(__file__).resolve().parent.parent / "fixtures" / "seed_004_summary.json"

SAMPLES = [
    sample(0, 0, 100, "gemm", useful=50, physical=60, phase=1, epoch=1),
    sample(1, 10, 100, "gemm", useful=40, physical=60, phase=1, epoch=1),
    sample(0, 100, 30, None, kind="exchange", phase=2, epoch=1),
    sample(2, 500, 10, "copy", phase=3, epoch=2),
]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "dump.json", SAMPLES)


def test_json_document_has_the_seed_layout(dump: Path) -> None:
    code, out, _ = run("summary", str(dump), "--format", "json")
    assert code == 0
    document = json.loads(out)
    seed = json.loads(SEED_004.read_text())
    assert list(document) == list(seed)
    assert list(document["groups"][0]) == list(seed["groups"][0])
    assert list(document["samples"][0]) == list(seed["samples"][0])
    assert document["sampleCount"] == 4
    assert document["profileSpanCycles"] == 510
    assert [g["name"] for g in document["groups"]] == ["gemm", "exchange", "copy"]
    assert isinstance(document["groups"][0]["sampleCount"], int)


def test_seed_file_summary_reproduces_its_samples() -> None:
    code, out, _ = run("summary", str(SEED_004), "--format", "json")
    assert code == 0
    assert json.loads(out)["samples"] == json.loads(SEED_004.read_text())["samples"]


def test_filters(dump: Path) -> None:
    def names(*options: str) -> list[str]:
        code, out, err = run("summary", str(dump), "--format", "json", *options)
        assert code == 0, err
        return [g["name"] for g in json.loads(out)["groups"]]

    assert names("--epoch", "2") == ["copy"]
    assert names("--at", "105") == ["gemm", "exchange"]
    assert names("--at", "110") == ["exchange"]
    assert names("--window", "120:600") == ["exchange", "copy"]
    assert names("--kernel", "gem*") == ["gemm"]
    assert names("--kernel", "copy", "--kernel", "exch*") == ["exchange", "copy"]
    assert names("--kind", "exchange") == ["exchange"]
    _, out, _ = run("summary", str(dump), "--format", "json", "--at", "105")
    document = json.loads(out)
    assert document["atOffset"] == 105
    assert document["matchedSampleCount"] == 2
    assert document["sampleCount"] == 4


def test_empty_match_is_a_valid_document(dump: Path) -> None:
    code, out, _ = run("summary", str(dump), "--format", "json", "--kernel", "no_such_*")
    assert code == 0
    document = json.loads(out)
    assert document["groups"] == [] and document["samples"] == []
    assert document["matchedSampleCount"] == 0
    code, out, _ = run("summary", str(dump), "--kind", "no_such_kind")
    assert code == 0 and "no samples matched" in out


def test_group_by(dump: Path) -> None:
    code, out, _ = run("summary", str(dump), "--format", "json", "--group-by", "epoch,tile")
    assert code == 0
    groups = json.loads(out)["groups"]
    assert {"epoch": 1, "tile": 0} in [g["dimensions"] for g in groups]
    assert all(set(g["dimensions"]) == {"epoch", "tile"} for g in groups)
    code, _, err = run("summary", str(dump), "--group-by", "colour")
    assert code == 2 and "colour" in err


def test_csv_has_one_row_per_group(dump: Path) -> None:
    code, out, _ = run("summary", str(dump), "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["name"] for r in rows] == ["gemm", "exchange", "copy"]
    assert rows[0]["phaseCycles"] == "110"
    assert rows[1]["usefulUtilization"] == ""


def test_table_shows_header_and_groups(dump: Path) -> None:
    code, out, _ = run("summary", str(dump), "--epoch", "1")
    assert code == 0
    assert "1472 tiles @ 1.5 GHz" in out
    assert "3 matched of 4" in out
    assert "--epoch 1" in out
    assert "gemm" in out and "exchange" in out


def test_output_file_is_written_and_not_overwritten_without_force(
    dump: Path, tmp_path: Path
) -> None:
    out_path = tmp_path / "summary.json"
    code, out, _ = run("summary", str(dump), "--format", "json", "-o", str(out_path))
    assert code == 0 and out == f"{out_path}\n"  # the path written, as report prints it
    first = out_path.read_text()
    assert json.loads(first)["sampleCount"] == 4
    code, _, err = run("summary", str(dump), "--format", "csv", "-o", str(out_path))
    assert code == 2 and "--force" in err
    assert out_path.read_text() == first
    code, _, _ = run("summary", str(dump), "--format", "csv", "-o", str(out_path), "--force")
    assert code == 0 and out_path.read_text().startswith("name,")


def test_failed_run_leaves_existing_output_intact(tmp_path: Path) -> None:
    out_path = tmp_path / "summary.json"
    out_path.write_text("precious")
    bad = tmp_path / "bad.json"
    bad.write_text('{"samples": [')
    code, _, _ = run("summary", str(bad), "-o", str(out_path), "--force")
    assert code == 2
    assert out_path.read_text() == "precious"
    assert list(tmp_path.glob(".summary.json.*")) == []


@pytest.mark.parametrize(
    "args",
    [
        ["summary"],
        ["summary", "x.json", "--example"],
        ["summary", "{dump}", "--window", "5"],
        ["summary", "{dump}", "--window", "9:3"],
    ],
)
def test_bad_options_exit_2(dump: Path, args: list[str]) -> None:
    code, _, err = run(*[a.format(dump=dump) for a in args])
    assert code == 2
    assert "Traceback" not in err


def test_bad_input_is_one_line_without_traceback(tmp_path: Path) -> None:
    bad = write_dump(tmp_path / "bad.json", [sample(0, 0, -1)])
    code, _, err = run("summary", str(bad))
    assert code == 2
    assert err.strip().count("\n") == 0
    assert err.startswith("tileprof: error: ") and str(bad) in err and "sample 0" in err


def _process(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    return subprocess.run(
        [sys.executable, "-m", "tileprof", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


def test_subprocess_summary_and_errors(dump: Path, tmp_path: Path) -> None:
    ok = _process("summary", str(dump), "--format", "json")
    assert ok.returncode == 0
    assert json.loads(ok.stdout)["matchedSampleCount"] == 4
    missing = _process("summary", str(tmp_path / "absent.json"))
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"tileprof: error: {tmp_path / 'absent.json'}: no such file"
    debug = _process("--debug", "summary", str(tmp_path / "absent.json"))
    assert debug.returncode == 2 and "Traceback" in debug.stderr


def test_example_reproduces_seed_004_document_byte_for_byte() -> None:
    code, out, _ = run("summary", "--example", "--epoch", "1", "--format", "json")
    assert code == 0
    assert out.rstrip("\n") == SEED_004.read_text(encoding="utf-8").rstrip("\n")


def test_example_without_filters_covers_every_epoch() -> None:
    code, out, _ = run(
        "summary", "--example", "--epoch", "all", "--format", "json", "--samples", "0"
    )
    assert code == 0
    document = json.loads(out)
    assert document["matchedSampleCount"] == document["sampleCount"] == 232_260
    assert document["profileSpanCycles"] == 16_746_138
    assert document["samples"] == []


def test_outputs_get_the_usual_file_mode(dump: Path, tmp_path: Path) -> None:
    out_path = tmp_path / "summary.json"
    umask = os.umask(0o022)
    try:
        code, _, _ = run("summary", str(dump), "--format", "json", "-o", str(out_path))
    finally:
        os.umask(umask)
    assert code == 0
    assert out_path.stat().st_mode & 0o777 == 0o644
    out_path.chmod(0o600)
    code, _, _ = run("summary", str(dump), "-o", str(out_path), "--force")
    assert code == 0 and out_path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "args",
    [
        ["summary", "{folder}"],
        ["summary", "{dump}", "-o", "{folder}"],
        ["summary", "--example", "--tile-count", "100"],
        ["summary", "--example", "--clock-hz", "inf"],
        ["summary", "{dump}", "--clock-hz", "nan"],
        ["summary", "--example", "--cache"],
        ["summary", "{dump}", "--kernel", "[b-a]*"],
    ],
)
def test_more_bad_input_is_one_line(dump: Path, tmp_path: Path, args: list[str]) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    code, _, err = run(*[a.format(dump=dump, folder=folder) for a in args])
    assert code == 2
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err


def test_kernel_glob_with_several_stars_on_the_example() -> None:
    code, out, _ = run(
        "summary", "--example", "--epoch", "1", "--format", "json", "--kernel", "gemm*init*rows*"
    )
    assert code == 0
    assert len(json.loads(out)["groups"]) == 6


def test_python_api_takes_natural_argument_shapes() -> None:
    import tileprof
    from tileprof.core.errors import OptionError

    profile = tileprof.load(SEED_004)
    assert profile.summary(kernels="attention_*").matched_sample_count == 3
    assert profile.summary(kernels="gemm_*").matched_sample_count == 0
    assert profile.summary(group_by="phase").groups.height == 2
    assert profile.summary(window="273000:274000").matched_sample_count == 3
    with pytest.raises(OptionError):
        profile.summary(window="9:3")
    with pytest.raises(OptionError):
        profile.summary(epoch="1")


def test_version_names_the_installed_version() -> None:
    from tileprof._version import __version__

    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"tileprof, version {__version__}\n"


def test_a_usage_error_of_no_command_points_at_the_programs_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A usage error raised outside any command (no context) still names where ``--help``
    explains it: the program's own."""
    import click

    from tileprof.commands.cli import _usage_error

    with pytest.raises(SystemExit) as raised:
        _usage_error(click.UsageError("no such thing"))
    assert raised.value.code == 2
    assert capsys.readouterr().err == "tileprof: error: no such thing (see tileprof --help)\n"


def test_the_entry_point_is_named_tileprof_however_it_was_started(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``main`` names the program ``tileprof`` in its usage, not ``python -m pytest`` or the
    path of whatever started it."""
    from tileprof.commands.cli import main

    with pytest.raises(SystemExit) as raised:
        main(["--help"])
    assert raised.value.code == 0
    assert capsys.readouterr().out.startswith("Usage: tileprof [OPTIONS] COMMAND [ARGS]...\n")


def test_the_help_lists_loaded_commands_with_their_whole_help() -> None:
    """Once the commands' modules are loaded, ``--help`` lists each by the command's own
    short help (before, from the table that spares loading them): every command, whole."""
    import click

    from tileprof.commands.cli import _COMMANDS

    context = click.Context(cli)
    for name in _COMMANDS:
        assert cli.get_command(context, name) is not None
    text = CliRunner().invoke(cli, ["--help"]).stdout
    for name, (_, short) in _COMMANDS.items():
        assert f"  {name}" in text and short in " ".join(text.split()), name


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (OSError(2, "No such file or directory", "d.json"), "d.json: No such file or directory"),
        (OSError(28, "No space left on device"), ""),
        (OSError(28, "No space left on device", "out.html"), "out.html: "),
        (PermissionError(), "PermissionError"),
    ],
)
def test_an_os_error_is_one_line_naming_its_file(error: OSError, line: str) -> None:
    """A full disk says that nothing partial was left (outputs are written atomically)."""
    from tileprof.commands.cli import os_error_text

    full = "no space left on device (nothing partial was left behind)"
    expected = line + full if error.errno == 28 else line
    assert os_error_text(error) == expected


@pytest.fixture
def ending(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A command ``ending`` added to the group for one test: it queues a note, then ends as
    told (``exit`` N, or raises the exception given)."""
    import click

    from tileprof.commands import _notes

    @click.command("ending")
    @click.argument("how")
    def ending_command(how: str) -> None:
        _notes.note("a note")
        if how.startswith("exit"):
            click.get_current_context().exit(int(how[4:]))
        raise ENDINGS[how]

    monkeypatch.setitem(cli.commands, "ending", ending_command)
    return ending_command


class _Abstained(TileprofError):
    exit_code = 3


ENDINGS: dict[str, BaseException] = {
    "os": PermissionError(13, "Permission denied", "/data/run.json"),
    "os-nameless": OSError(5, "Input/output error"),
    "abstained": _Abstained("abstained, no verdict: runs differ"),
}


@pytest.mark.parametrize(
    ("how", "code", "err"),
    [
        ("exit0", 0, "tileprof: a note\n"),  # a command that succeeded: its notes
        ("exit1", 1, ""),  # a verdict is the last line a command wrote: no notes after it
        ("exit3", 3, ""),
        ("os", 2, "tileprof: error: /data/run.json: Permission denied\n"),
        ("os-nameless", 2, "tileprof: error: Input/output error\n"),
        ("abstained", 3, "tileprof: error: abstained, no verdict: runs differ\n"),
    ],
)
def test_how_a_command_ends_is_its_exit_code_and_at_most_one_line(
    ending: Any, how: str, code: int, err: str
) -> None:
    result = CliRunner().invoke(cli, ["ending", how])
    assert (result.exit_code, result.stderr, result.stdout) == (code, err, "")


def test_debug_shows_the_traceback_of_a_usage_error_too() -> None:
    """``--debug`` (before or after the command) prints the traceback, then the one line."""
    for args in (["--debug", "summary", "--no-such-option"], ["summary", "--debug", "--nope"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2
        assert result.stderr.startswith("Traceback (most recent call last):\n"), args
        last = result.stderr.splitlines()[-1]
        assert last.startswith("tileprof: error: ") and args[-1] in last  # click's words
        assert last.endswith("(see tileprof summary --help)")
    plain = CliRunner().invoke(cli, ["summary", "--no-such-option"])
    assert plain.stderr.count("\n") == 1 and "Traceback" not in plain.stderr


def test_debug_after_a_double_dash_is_a_file_name() -> None:
    """``--`` ends the options: a file named ``--debug`` after it is read as a file, and its
    error is the one line, with no traceback."""
    result = CliRunner().invoke(cli, ["summary", "--", "--debug"])
    assert result.exit_code == 2
    assert (
        result.stderr.startswith("tileprof: error: --debug: ") and "Traceback" not in result.stderr
    )
    assert result.stderr.count("\n") == 1
