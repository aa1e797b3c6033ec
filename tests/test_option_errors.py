"""One error format for the command line (issue 26): every bad option value, missing value and
unknown option of every command is one line ``tileprof: error: … (see tileprof CMD --help)``
and exit code 2; an epoch the input lacks is the same in every command; old option spellings
still work and say so once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile import assert_one_line_error, invoke
from tests.samples import sample, write_dump

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TRACE = FIXTURES / "traces" / "kineto_small.json"

COMMANDS: dict[str, list[str]] = {
    "summary": ["summary", "{dump}"],
    "supersteps": ["supersteps", "{dump}"],
    "runs": ["runs", "{dump}"],
    "report": ["report", "{dump}", "-o", "{out}.html"],
    "diff": ["diff", "{dump}", "{dump}"],
    "trace": ["trace", "{dump}", "-o", "{out}.json"],
    "convert": ["convert", "{dump}", "-o", "{out}.parquet"],
    "store add": ["store", "add", "{dump}", "--store", "{out}-store"],
    "store list": ["store", "list", "--store", "{out}-store"],
    "store rm": ["store", "rm", "--store", "{out}-store", "--run", "x"],
    "history": ["history", "--store", "{out}-store"],
}
"""Each command with the arguments it needs; bad options are appended."""
HAS = {
    "epoch": {"summary", "supersteps", "runs", "report", "diff", "trace"},
    "format": {"summary", "supersteps", "runs", "diff", "store list", "history"},
    "read": {"summary", "supersteps", "runs", "report", "diff", "trace", "convert", "store add"},
}
BAD_VALUES: list[tuple[str, list[str], str]] = [
    ("epoch", ["--epoch", "x"], "Invalid value for '--epoch'"),
    ("epoch", ["--epoch"], "requires an argument"),
    ("format", ["--format", "xml"], "Invalid value for '--format'"),
    ("read", ["--clock-hz", "0"], "Invalid value for '--clock-hz'"),
    ("read", ["--jobs", "0"], "Invalid value for '--jobs'"),
    ("read", ["--tile-count", "-3"], "Invalid value for '--tile-count'"),
    ("", ["--no-such-option"], "No such option"),
]
CASES = [
    pytest.param(name, bad, words, id=f"{name}:{' '.join(bad)}")
    for name in COMMANDS
    for group, bad, words in BAD_VALUES
    if not group or name in HAS[group]
]


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("options")
    return write_dump(folder / "d.json", [sample(0, 0, 10, "gemm", epoch=1), sample(1, 5, 10)])


def _args(name: str, dump: Path, out: Path) -> list[str]:
    return [a.format(dump=dump, out=out) for a in COMMANDS[name]]


@pytest.mark.parametrize(("name", "bad", "words"), CASES)
def test_every_bad_option_is_one_error_line(
    name: str, bad: list[str], words: str, dump: Path, tmp_path: Path
) -> None:
    code, _, err, exception = invoke(*_args(name, dump, tmp_path / "out"), *bad)
    assert exception is None, exception
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("tileprof: error: "), err
    assert words in lines[0], err
    assert lines[0].endswith(f"(see tileprof {name} --help)"), err
    assert code == 2


REQUIRED: list[tuple[str, str, str]] = [
    ("convert", "-o", "Missing option '-o' / '--output'"),
    ("trace", "-o", "Missing option '-o' / '--output'"),
    ("store add", "--store", "Missing option '--store'"),
    ("store list", "--store", "Missing option '--store'"),
    ("store rm", "--store", "Missing option '--store'"),
    ("store rm", "--run", "Missing option '--run'"),
    ("history", "--store", "Missing option '--store'"),
]
"""Each command's required options: (command, the option left out, the words)."""


@pytest.mark.parametrize(
    ("name", "left_out", "words"), REQUIRED, ids=[f"{n}:{o}" for n, o, _ in REQUIRED]
)
def test_a_missing_required_option_is_one_error_line(
    name: str, left_out: str, words: str, dump: Path, tmp_path: Path
) -> None:
    """An option with ``default=None`` counts as given in click 8.3 and later: a required
    option must have none, or its absence reaches the command as None (a traceback)."""
    args = _args(name, dump, tmp_path / "out")
    at = args.index(left_out)
    del args[at : at + 2]
    message = assert_one_line_error(*args, contains=words)
    assert message.endswith(f"(see tileprof {name} --help)")
    assert not list(tmp_path.iterdir())  # nothing written


def test_an_unknown_command_is_one_error_line() -> None:
    code, _, err, _ = invoke("summry", "x.json")
    assert code == 2
    assert err == (
        "tileprof: error: No such command 'summry'. Did you mean 'summary'? (see tileprof --help)\n"
    )


def test_debug_is_accepted_after_the_subcommand(tmp_path: Path) -> None:
    code, _, err, _ = invoke("summary", tmp_path / "absent.json", "--debug")
    assert code == 2
    assert "Traceback" in err and err.rstrip().endswith("absent.json: no such file")


@pytest.mark.parametrize("name", sorted(HAS["epoch"]), ids=lambda n: n)
def test_a_missing_epoch_names_the_epochs_there(name: str, dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err, exception = invoke(*_args(name, dump, out), "--epoch", "99")
    assert exception is None, exception
    assert code == 2, err
    assert err == "tileprof: error: --epoch 99: no samples in that epoch (epochs: 1)\n"
    assert not list(tmp_path.iterdir())  # nothing written, not even an empty file


def test_epoch_all_keeps_every_epoch_of_the_example() -> None:
    code, out, err, _ = invoke("summary", "--example", "--format", "json", "--samples", "0")
    assert code == 0 and '"matchedSampleCount": 232260' not in out
    assert "--example: epoch 1 of the reference profile" in err  # one meaning everywhere
    code, out, err, _ = invoke("summary", "--example", "--epoch", "all", "--format", "json")
    assert code == 0 and '"matchedSampleCount": 232260' in out and err == ""


@pytest.mark.parametrize(
    ("args", "note"),
    [
        (["summary", "{dump}", "--tiles", "4"], "--tiles is deprecated; use --tile-count"),
        (["supersteps", "{dump}", "--tiles"], "--tiles is deprecated; use --per-tile"),
    ],
)
def test_old_spellings_still_work_with_one_note(
    args: list[str], note: str, dump: Path, tmp_path: Path
) -> None:
    code, new_out, _, _ = invoke(*[a.format(dump=dump) for a in args])
    assert code == 0
    old = {
        "--tiles": "--tile-count" if args[0] == "summary" else "--per-tile",
    }
    renamed = [old.get(a, a) for a in args]
    code, old_out, err, _ = invoke(*[a.format(dump=dump) for a in args])
    assert err == f"tileprof: note: {note}\n"
    code, out, err, _ = invoke(*[a.format(dump=dump) for a in renamed])
    assert code == 0 and err == "" and out == old_out == new_out


def test_the_api_names_the_sample_count_as_the_cli_does() -> None:
    """``Profile.summary(samples=)`` is ``--samples``; ``top=`` still works, with a warning."""
    from tileprof.model.examples import example_profile

    profile = example_profile()
    new = profile.summary(epoch=1, samples=3)
    with pytest.warns(DeprecationWarning, match="use samples="):
        old = profile.summary(epoch=1, top=3)
    assert len(new.samples) == 3 and old.to_document() == new.to_document()


def test_a_failing_command_prints_only_its_error(tmp_path: Path) -> None:
    """Notes (an old spelling, what --example chose) wait for success: an error stays one line."""
    code, _, err, _ = invoke("summary", tmp_path / "absent.json", "--tiles", "4")
    assert code == 2 and err == f"tileprof: error: {tmp_path / 'absent.json'}: no such file\n"
    code, _, err, _ = invoke(
        "trace", "--example", tmp_path / "absent.json", "-o", tmp_path / "t.json"
    )
    assert code == 2 and err.count("\n") == 1 and err.startswith("tileprof: error: ")
