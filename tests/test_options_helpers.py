"""``commands/_options``' own checks, called as the commands call them: the output checks,
the report mark, and a device clock that is not a finite number."""

from __future__ import annotations

from pathlib import Path

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
