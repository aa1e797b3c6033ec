"""``commands/_options``' own checks, called as the commands call them: the output checks,
the report mark, a device clock that is not a finite number, and what a command receives
from each option decorator (through a one-command click app)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.hostile import invoke
from tileprof.commands._options import (
    GENERATOR_MARK,
    Output,
    check_output,
    is_tileprof_report,
)
from tileprof.core.errors import OptionError, OutputError


def test_dash_is_stdout_even_beside_a_file_named_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("-").write_text("kept", encoding="utf-8")
    check_output(Path("-"), force=False)  # no "already exists": "-" is stdout
    check_output(None, force=False)
    Path("taken").write_text("x", encoding="utf-8")
    with pytest.raises(OutputError, match="already exists"):
        check_output(Path("taken"), force=False)
    check_output(Path("taken"), force=True)
    with pytest.raises(OutputError, match="is a folder, not a file"):
        check_output(tmp_path, force=True)


def test_a_page_needs_a_file_or_dash() -> None:
    with pytest.raises(OptionError) as info:
        Output(None, False, "html").check()
    assert str(info.value) == "--format html writes a page: give -o FILE (or -o - for stdout)"
    Output(Path("-"), False, "html").check()
    Output(None, False, "table").check()


def test_a_report_is_known_by_its_mark_and_nothing_else_is(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(b"<!doctype html>\n" + GENERATOR_MARK)
    other = tmp_path / "other.html"
    other.write_text("<!doctype html>")
    assert is_tileprof_report(page)
    assert not is_tileprof_report(other)
    assert not is_tileprof_report(tmp_path)  # a folder cannot be read as a file
    assert not is_tileprof_report(tmp_path / "absent.html")


@pytest.mark.parametrize("value", ["inf", "nan"])
def test_a_clock_that_is_not_finite_is_named_by_its_option(value: str) -> None:
    code, _, err, _ = invoke("summary", "--example", "--clock-hz", value)
    assert code == 2
    assert f"--clock-hz: {value} is not a finite number" in err


def _received(decorator: Any, args: list[str]) -> dict[str, Any]:
    """What a command decorated with ``decorator`` receives from ``args``."""
    import click
    from click.testing import CliRunner

    got: dict[str, Any] = {}

    @click.command()
    @decorator
    def command(**values: Any) -> None:
        got.update(values)

    result = CliRunner().invoke(command, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return got


def test_what_if_and_edits_reach_the_command_as_one_list_of_edits(tmp_path: Path) -> None:
    """The file's edits first, then each ``--what-if`` in order, as ``edits``."""
    from tileprof.analyses.critical import load_edits, parse_edit
    from tileprof.commands._options import what_if_options

    edits = tmp_path / "edits.toml"
    edits.write_text('[[edit]]\nkind = "scale"\nmatch = "gemm*"\nfactor = 0.5\n')
    args = ["--what-if", "no-exchange", "--edits", str(edits), "--what-if", "no-launch"]
    expected = [*load_edits(edits), parse_edit("no-exchange"), parse_edit("no-launch")]
    assert _received(what_if_options(), args) == {"edits": expected}
    assert _received(what_if_options(), []) == {"edits": []}


def test_rules_and_checks_reach_the_command_loaded(tmp_path: Path) -> None:
    from tileprof.analyses.findings import RULES, load_overrides
    from tileprof.analyses.integrity import load_checks
    from tileprof.commands._options import checks_option, rules_option

    assert _received(rules_option(), []) == {"rules": RULES}
    rules = tmp_path / "rules.toml"
    rules.write_text("[launch-bound]\nshort_share = 0.5\n")
    assert _received(rules_option(), ["--rules", str(rules)]) == {"rules": load_overrides(rules)}
    checks = tmp_path / "checks.toml"
    checks.write_text("[overlapping-samples]\nallowed = 3\n")
    received = _received(checks_option(), ["--checks", str(checks)])["checks"]
    assert received == load_checks(checks) and received["overlapping-samples"].allowed == 3


def test_the_spec_files_load_before_any_other_option() -> None:
    """``--spec`` is eager, so a peak another option's callback reads is already the user's."""
    import click

    from tileprof.commands._options import spec_option

    @click.command()
    @spec_option()
    def command() -> None: ...

    (spec,) = [p for p in command.params if p.name == "spec"]
    assert spec.is_eager and not spec.expose_value


def test_run_fail_on_top_and_workers_reach_the_command_as_given() -> None:
    from tileprof.commands._options import (
        fail_on_option,
        file_engine_options,
        run_option,
        top_option,
    )

    assert _received(run_option(multiple=False, help="h"), ["--run", "r1"]) == {"run": "r1"}
    assert _received(run_option(multiple=True, help="h"), ["--run", "a", "--run", "b"]) == {
        "runs": ("a", "b")
    }
    fail_on = _received(fail_on_option("h"), ["--fail-on", "x > 1", "--fail-on", "y > 2"])
    assert fail_on == {"fail_on": ("x > 1", "y > 2")}
    assert _received(top_option("h", default=5), []) == {"top": 5}
    assert _received(top_option("h"), ["--top", "0"]) == {"top": 0}  # checked where used
    engine = _received(file_engine_options(), ["--workers", "3"])["engine"]
    assert (engine.name, engine.scheduler, engine.workers) == ("threads", None, 3)


def test_a_top_with_a_minimum_refuses_less() -> None:
    import click
    from click.testing import CliRunner

    from tileprof.commands._options import top_option

    @click.command()
    @top_option("h", minimum=1)
    def command(top: int) -> None: ...

    result = CliRunner().invoke(command, ["--top", "0"])
    assert result.exit_code == 2 and "0 is not in the range x>=1" in result.output


def test_output_and_reading_reach_the_command_built(tmp_path: Path) -> None:
    """``-o``, ``--force`` and ``--format`` as one ``Output``; a command without ``-q`` reads
    quietly (no progress bar it could not turn off)."""
    from tileprof.commands._options import output_options, read_options

    out = _received(output_options(("table", "json")), ["-o", str(tmp_path / "o"), "--force"])
    assert out["out"] == Output(tmp_path / "o", True, "table")
    read = _received(read_options(quiet=False), ["--tile-count", "8"])["read"]
    assert (read.quiet, read.tile_count) == (True, 8)


def test_the_example_reads_at_the_device_asked_and_epoch_1() -> None:
    """``--example`` with ``--tile-count 2944``: the reference profile at 2,944 tiles, and its
    own filters (epoch 1, as its reference summary was); without ``--example`` neither."""
    from tileprof.analyses.filters import Filters
    from tileprof.commands._options import example_inputs
    from tileprof.model.reading import DumpReading

    read = DumpReading(format_in=None, clock_hz=None, tile_count=2944, cache=False, quiet=True)
    profile, filters = example_inputs(True, Filters(kernels=("gemm*",)), read)
    assert profile.tile_count == 2944
    assert filters == Filters(kernels=("gemm*",), epoch=1)
    assert example_inputs(False, Filters(), read) == (None, None)
