"""``diff`` reads well (issue 26): the figures first, one column for the group and its status,
the filters shown, the matched span in the header, and ``--top N`` limiting the rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.samples import sample, write_dump
from tileprof.commands.cli import cli

BEFORE = [
    sample(0, 0, 100, "gemm", useful=50),
    sample(0, 100, 40, "softmax"),
    sample(0, 140, 10, "gone"),
    sample(0, 150, 30, "same"),
    sample(0, 5000, 10, "late", epoch=2),
]
AFTER = [
    sample(0, 0, 80, "gemm", useful=50),
    sample(0, 80, 60, "softmax"),
    sample(0, 140, 60, "new"),
    sample(0, 150, 30, "same"),
    sample(0, 9000, 10, "late", epoch=2),
]


@pytest.fixture()
def dumps(tmp_path: Path) -> tuple[str, str]:
    before = write_dump(tmp_path / "before.json", BEFORE)
    return str(before), str(write_dump(tmp_path / "after.json", AFTER))


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_the_text_starts_with_the_figures_and_shows_the_filters(dumps: tuple[str, str]) -> None:
    lines = run("diff", *dumps, "--epoch", "1").splitlines()
    assert lines[0].startswith("phaseCycles     net ")
    assert lines[1] == "matched span    180 → 200 cycles  (+20, +11.11%)"  # epoch 1 only
    assert lines[5] == "filters         --epoch 1"
    assert lines[6].startswith("before          ") and lines[7].startswith("after           ")
    assert not any("9,010" in line or "5,010" in line for line in lines[:8])  # not the profile's


def test_one_column_holds_the_status_and_the_group(dumps: tuple[str, str]) -> None:
    lines = run("diff", *dumps, "--epoch", "1").splitlines()
    header = lines[9]
    assert "status" not in header and header.endswith("group")
    rows = {line.split()[-1]: line.split()[-2] for line in lines[11:]}
    assert rows == {"gemm": "~", "softmax": "~", "new": "+", "gone": "-", "same": "="}


def test_top_limits_the_rows_of_every_format(dumps: tuple[str, str]) -> None:
    text = run("diff", *dumps, "--epoch", "1", "--top", "2").splitlines()
    # |Δ|: new 60, gemm 20, softmax 20 (ties by name), gone 10, same 0; gross 110
    assert text[0].endswith("the top 2 groups explain 72.73% of the gross")  # (60 + 20) / 110
    assert [line.split()[-1] for line in text[11:13]] == ["new", "gemm"]
    assert text[13] == "the 2 largest changes of 5 groups (--top)"
    assert len(text) == 14
    document = json.loads(run("diff", *dumps, "--epoch", "1", "--top", "2", "--format", "json"))
    assert [g["group"] for g in document["groups"]] == ["new", "gemm"]
    assert document["header"]["topGroups"] == 2
    csv = run("diff", *dumps, "--epoch", "1", "--top", "2", "--format", "csv").splitlines()
    assert len(csv) == 3
    everything = run("diff", *dumps, "--epoch", "1").splitlines()
    assert len(everything) == 16 and everything[0].endswith(
        "the top 5 groups explain 100.00% of the gross"
    )


def test_top_still_checks_every_row_against_fail_on(dumps: tuple[str, str]) -> None:
    args = ["diff", *dumps, "--epoch", "1", "--top", "1"]
    result = CliRunner().invoke(
        cli, [*args, "--fail-on", "phaseCycles of same may not rise by more than 0%"]
    )
    assert result.exit_code == 0  # "same" did not change; the check saw it although not shown
    result = CliRunner().invoke(
        cli, [*args, "--fail-on", "phaseCycles of new may not rise by more than 0%"]
    )
    assert result.exit_code == 0  # added: no baseline, as without --top


def test_the_html_starts_with_the_figures(dumps: tuple[str, str], tmp_path: Path) -> None:
    out = tmp_path / "d.html"
    run("diff", *dumps, "--epoch", "1", "--top", "3", "--format", "html", "-o", str(out))
    page = out.read_text(encoding="utf-8")
    assert page.index('class="figures"') < page.index("<dt>Generated</dt>")  # numbers first
    section = page[page.index('<section id="diff"') :]
    assert section.index('class="figures"') < section.index('class="inputs"')
    assert "Matched span (cycles)" in section and "Profile span" not in section
    assert "180 → 200" in section
    assert ">--epoch 1<" in section  # the filters
    head = section[section.index("<thead>", section.index('id="diff-table"')) :]
    head = head[: head.index("</thead>")]
    assert ">status<" not in head and ">before name<" not in head and ">group<" in head
    assert section.count("<tr class=") == 3  # --top 3: new, gemm, softmax
    assert ">~ gemm<" in section and ">+ new<" in section
    assert "The 3 largest changes of 5 groups (--top 3)" in section
