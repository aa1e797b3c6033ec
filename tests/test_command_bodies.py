"""What the bodies of the thin commands decide themselves, before their shared helpers run: which
combinations of inputs and options they refuse, and which they let through (issue 38: the
click commands' bodies, mutated by ``tools/mutation_subset.py --every``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.commands.trace import parse_tile_range
from tileprof.core.errors import OptionError

TRACE = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "h200_train_steps.json.gz"


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


@pytest.mark.parametrize(
    "given",
    [
        ["--example"],  # --example-file with the example profile
        ["--to", "json"],  # with a format to convert to
        ["DUMP"],  # with a dump to convert
    ],
)
def test_convert_example_file_takes_nothing_to_convert(given: list[str], tmp_path: Path) -> None:
    """``--example-file`` writes a bundled file's bytes: a dump, ``--example`` or ``--to``
    beside it would be ignored, so each is refused; alone it writes the file."""
    dump = tmp_path / "dump.json"
    dump.write_text("{}")
    extra = [str(dump) if g == "DUMP" else g for g in given]
    out = tmp_path / "out.json.gz"
    code, output = _run("convert", *extra, "--example-file", "trace", "-o", str(out))
    assert code == 2 and "--example-file writes a bundled file as it is" in output
    assert not out.exists()
    code, output = _run("convert", "--example-file", "trace", "-o", str(out))
    assert code == 0, output
    assert out.stat().st_size > 0


@pytest.mark.parametrize("given", [["--example"], ["--linked", "TRACE"]])
def test_runs_ops_reads_traces_only(given: list[str]) -> None:
    """``--ops`` is a table of PyTorch traces' ops: neither the example nor linked sets."""
    trace = str(TRACE)
    code, output = _run("runs", "--ops", *[trace if g == "TRACE" else g for g in given])
    assert code == 2
    assert "--ops reads PyTorch traces only: drop --example and --linked" in output


def test_runs_ops_sort_lost_puts_the_most_time_lost_first_and_the_unknown_last() -> None:
    """``--sort lost``: the default (total) order sorted again by ``time_lost_us``, most
    first, ops without a roofline (null) last, ties kept in the default's order."""
    rows = {}
    for sort in ("total", "lost"):
        code, output = _run("runs", "--ops", str(TRACE), "--sort", sort, "--format", "json")
        assert code == 0, output
        rows[sort] = json.loads(output)["ops"]
    lost = [r["time_lost_us"] for r in rows["total"]]
    assert None in lost and len({x for x in lost if x is not None}) > 1  # the test can bite
    expected = sorted(
        rows["total"],
        key=lambda r: (r["time_lost_us"] is None, -(r["time_lost_us"] or 0.0)),
    )
    assert rows["lost"] == expected
    assert rows["lost"] != rows["total"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [(None, None), ("0", (0, 1)), ("3", (3, 4)), ("0:1", (0, 1)), ("2:5", (2, 5))],
)
def test_tile_range_is_half_open_and_a_single_tile_is_one_wide(
    text: str | None, expected: tuple[int, int] | None
) -> None:
    assert parse_tile_range(text) == expected


@pytest.mark.parametrize("text", ["5:5", "3:2", "-1:3", "-1", "x", "1:x", ":", ""])
def test_tile_range_refuses_an_empty_or_negative_range_and_words(text: str) -> None:
    with pytest.raises(OptionError, match=r"expected START:END with 0 ≤ START < END, or N"):
        parse_tile_range(text)


def test_store_add_names_one_run_of_one_dump(tmp_path: Path) -> None:
    """``--run`` names one run: two dumps with it are refused before either is read (the
    files here are not dumps) and the store is not made."""
    dumps = [tmp_path / "a.json", tmp_path / "b.json"]
    for dump in dumps:
        dump.write_text("not a dump")
    store = tmp_path / "store"
    code, output = _run("store", "add", *map(str, dumps), "--store", str(store), "--run", "r")
    assert code == 2 and "--run names one run: give one DUMP with it" in output
    assert not store.exists()


def test_summary_reads_a_dump_without_a_store_and_task_samples_start_at_one() -> None:
    """The store's options are optional (a dump or the example needs none); ``--task-samples``
    takes any count from 1, and its help states its default and its bound."""
    from tileprof.model.store import DEFAULT_TASK_SAMPLES

    assert _run("summary", "--example")[0] == 0
    assert _run("summary", "--example", "--task-samples", "1")[0] == 0
    code, output = _run("summary", "--example", "--task-samples", "0")
    assert code == 2 and "0 is not in the range x>=1" in output
    code, output = _run("summary", "--help")
    assert code == 0
    help_text = " ".join(output.split())
    assert f"[default: {DEFAULT_TASK_SAMPLES}; x>=1]" in help_text


def test_history_reads_source_date_epoch_for_a_page_only_and_before_the_store(
    tmp_path: Path,
) -> None:
    """A malformed SOURCE_DATE_EPOCH fails an HTML page before the store is opened; a text
    table has no generation time, so the same variable is not read and the store's own
    error is the one given."""
    missing = str(tmp_path / "no-store")
    env = {"SOURCE_DATE_EPOCH": "x"}
    page = ["history", "--store", missing, "--format", "html", "-o", str(tmp_path / "h.html")]
    result = CliRunner().invoke(cli, page, env=env)
    assert result.exit_code == 2 and "SOURCE_DATE_EPOCH='x'" in result.output
    result = CliRunner().invoke(cli, ["history", "--store", missing], env=env)
    assert result.exit_code == 2 and "no such store" in result.output
    assert "SOURCE_DATE_EPOCH" not in result.output


def test_report_of_a_trace_holds_its_critical_path_folded_and_the_example_none(
    tmp_path: Path,
) -> None:
    """A trace's report carries the critical path of each step, folded to its title (one
    section of a long page); a report of tile dumps alone has no such section."""
    page = tmp_path / "trace.html"
    assert _run("report", str(TRACE), "-o", str(page))[0] == 0
    html = page.read_text()
    assert 'id="gpu-critical"' in html
    scopes = re.findall(r'<details class="charted" id="gpu-critical-[^"]*"[^>]*>', html)
    assert scopes and not any(" open" in scope for scope in scopes)
    page = tmp_path / "example.html"
    assert _run("report", "--example", "-o", str(page))[0] == 0
    assert 'id="gpu-critical' not in page.read_text()


def test_report_baseline_compares_one_tile_dump(tmp_path: Path) -> None:
    """``--baseline`` diffs the report's one tile dump against it; with two it is refused."""
    dump = tmp_path / "example.json.gz"
    assert _run("convert", "--example", "-o", str(dump))[0] == 0
    page = tmp_path / "page.html"
    code, output = _run("report", str(dump), "--baseline", str(dump), "-o", str(page))
    assert code == 0, output
    assert 'id="baseline"' in page.read_text()
    two = ["report", str(dump), str(dump), "--baseline", str(dump), "-o", str(page), "--force"]
    code, output = _run(*two)
    assert code == 2 and "--baseline compares with one tile dump; the report has 2" in output


def test_critical_of_several_files_reads_traces_only(tmp_path: Path) -> None:
    """``critical`` reads one tile dump, or any number of traces: of two files, the first that
    is no trace is named (a tile dump among them is no trace either)."""
    dump = tmp_path / "example.json.gz"
    assert _run("convert", "--example", "-o", str(dump))[0] == 0
    code, output = _run("critical", str(TRACE), str(dump))
    assert code == 2 and output.startswith(f"tileprof: error: {dump}")
    assert "not a PyTorch profiler trace or nsys export" in output
    assert _run("critical", str(dump))[0] == 0


def test_critical_of_a_trace_as_json_is_indented_as_every_document() -> None:
    """Two spaces a level, as every JSON document tileprof writes, and one final newline."""
    code, output = _run("critical", str(TRACE), "--format", "json")
    assert code == 0
    document = json.loads(output)
    assert output == json.dumps(document, indent=2) + "\n"
