"""The terminal table of ``summary``: every number in it is read back and checked against the
summary document (seed 004's layout, itself checked byte for byte against the seed)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from tests.samples import sample, write_dump
from tileprof.commands.cli import cli

# The table's columns (docs/metrics.md, "Terminal table") and the document field each shows.
COLUMNS: dict[str, str] = {
    "samples": "sampleCount",
    "tiles": "tileCount",
    "phases": "phaseCount",
    "phase cycles": "phaseCycles",
    "phase ms": "phaseMs",
    "avg tiles": "averageActiveTiles",
    "useful": "usefulUtilization",
    "lanes": "workLaneOccupancy",
    "device": "deviceUsefulUtilization",
    "p50": "p50Cycles",
    "p95": "p95Cycles",
    "max": "maximumCycles",
}


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["summary", "--example", *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def parse_table(text: str) -> list[dict[str, str]]:
    """The table's rows as {column title: cell text}, read from rich's box characters."""
    lines = text.splitlines()
    header_at = next(i for i, line in enumerate(lines) if "┃" in line)
    titles = [cell.strip() for cell in lines[header_at].split("┃")]
    rows = []
    for line in lines[header_at + 2 :]:
        if "│" not in line:
            continue
        cells = [cell.strip() for cell in line.split("│")]
        rows.append(dict(zip(titles, cells, strict=True)))
    return rows


def number(cell: str) -> float | None:
    """A cell as a number: '—' is None, '46.87%' is 0.4687, '1,347.6' is 1347.6."""
    if cell == "—":
        return None
    if cell.endswith("%"):
        return float(cell[:-1].replace(",", "")) / 100
    return float(cell.replace(",", ""))


def _check_row(cells: dict[str, str], group: dict[str, Any]) -> None:
    for title, field in COLUMNS.items():
        shown, exact = number(cells[title]), group[field]
        if exact is None:
            assert shown is None, (group["name"], title)
            continue
        assert shown is not None, (group["name"], title)
        # Each column's rounding: integers in full, % to 2 places; ms and tiles to 4 significant
        # figures, whole from 1,000 up (docs/metrics.md, "How numbers are shown").
        digits = {"useful": 4, "lanes": 4, "device": 4}
        tolerance = 0.5 * 10 ** -digits.get(title, 0) + 1e-12
        if title in ("phase ms", "avg tiles") and exact:
            tolerance = min(0.5, 0.5 * 10 ** (math.floor(math.log10(abs(exact))) - 3)) + 1e-12
        assert abs(shown - exact) <= tolerance, (group["name"], title, cells[title], exact)


def test_every_table_number_is_the_documents() -> None:
    table = parse_table(_run("--epoch", "1"))
    document = json.loads(_run("--epoch", "1", "--format", "json"))
    groups = document["groups"]
    assert [row["group"] for row in table] == [g["name"] for g in groups]
    assert len(table) == 19  # seed 004's epoch 1 has 19 groups
    for cells, group in zip(table, groups, strict=True):
        _check_row(cells, group)


def test_table_spot_values_by_hand() -> None:
    """A few cells written out, read off seed 004 (fixtures/seed_004_summary.json)."""
    rows = {row["group"]: row for row in parse_table(_run("--epoch", "1"))}
    exchange = rows["exchange"]
    # p50 and p95 differ for exchange, so a swap of the two columns shows.
    assert (exchange["p50"], exchange["p95"], exchange["max"]) == ("9,930", "25,608", "38,544")
    softmax = rows["attention_softmax_d72_p768_tail_f8_sm4"]
    # usefulUtilization 0.468723... is 46.87%, lanes 0.997222... 99.72%, device 0.429111... 42.91%
    cells = (softmax["useful"], softmax["lanes"], softmax["device"])
    assert cells == ("46.87%", "99.72%", "42.91%")
    assert rows["fill_zero_u64"]["useful"] == "0.00%"
    assert rows["copy_u64"]["useful"] == "—"


def test_table_header_lines() -> None:
    head = _run("--epoch", "1").splitlines()[:5]
    assert head == [
        "device   tile device (1472 tiles @ 1.5 GHz)",
        "span     16,746,138 cycles (11.1641 ms)",
        "matched  161,580 cycles (0.10772 ms), cycles 202,740 to 364,320",
        "samples  37,376 matched of 232,260",
        "filters  --epoch 1",
    ]


def test_group_by_columns_and_missing_values(tmp_path: Path) -> None:
    dump = write_dump(
        tmp_path / "d.json",
        [
            sample(0, 0, 100, "gemm", phase=1, useful=50, physical=100),
            sample(1, 0, 300, "gemm", phase=None, useful=30),
            sample(0, 100, 40, None, kind="exchange", phase=2),
        ],
        clockHz=1_000_000_000,
        tileCount=4,
    )
    result = CliRunner().invoke(cli, ["summary", str(dump), "--group-by", "phase"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:5] == [
        "device   tile device (4 tiles @ 1 GHz)",
        "span     300 cycles (0.0003 ms)",
        "samples  3 matched of 3",
        "filters  none",
        "group by phase",
    ]
    rows = {(r["group"], r["phase"]): r for r in parse_table(result.stdout)}
    assert set(rows) == {("gemm", "1"), ("gemm", "—"), ("exchange", "2")}
    # gemm in phase 1: one sample of 100 cycles, 50 useful of 100 estimated → 50.00%; lanes
    # 50 of 100 physical → 50.00%; device 50 / (100 cycles × 4 tiles) → 12.50%
    one = rows[("gemm", "1")]
    assert (one["useful"], one["lanes"], one["device"], one["avg tiles"]) == (
        "50.00%",
        "50.00%",
        "12.50%",
        "1",  # a whole number in full (docs/metrics.md, "How numbers are shown")
    )
    assert (one["phase ms"], one["p50"], one["p95"], one["max"]) == (
        "0.0001000",  # 100 cycles at 1 GHz, 4 significant figures
        "100",
        "100",
        "100",
    )
    # gemm without a phase: 30 useful of 300 → 10.00%, no physical work → no lanes figure
    none = rows[("gemm", "—")]
    assert (none["useful"], none["lanes"], none["phases"]) == ("10.00%", "—", "0")
    assert rows[("exchange", "2")]["useful"] == "—"


def test_empty_match_says_so() -> None:
    text = _run("--epoch", "1", "--kind", "no such kind")
    assert "no samples matched" in text.splitlines()
    assert "samples  0 matched of 232,260" in text.splitlines()
    assert "┃" not in text


def test_zero_length_group_and_empty_dump(tmp_path: Path) -> None:
    # Only zero-length samples: no phase cycles, so no average of active tiles.
    dump = write_dump(tmp_path / "d.json", [sample(0, 5, 0, "marker"), sample(1, 5, 0, "marker")])
    result = CliRunner().invoke(cli, ["summary", str(dump)])
    assert result.exit_code == 0, result.stderr
    (marker,) = parse_table(result.stdout)
    assert (marker["phase cycles"], marker["phase ms"], marker["avg tiles"]) == (
        "0",
        "0",
        "—",
    )
    assert (marker["p50"], marker["max"], marker["useful"]) == ("0", "0", "—")
    # A dump without samples has no span.
    empty = write_dump(tmp_path / "e.json", [])
    result = CliRunner().invoke(cli, ["summary", str(empty)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[1:3] == ["span     —", "samples  0 matched of 0"]
    assert "no samples matched" in result.stdout.splitlines()


def test_cell_formats() -> None:
    """Each column's format, docs/metrics.md "Terminal table" (— marks a missing value)."""
    from tileprof.views.summary_table import _decimal, _integer, _percent

    assert [_integer(v) for v in (None, 0, 1234567)] == ["—", "0", "1,234,567"]
    assert [_decimal(v) for v in (None, 1347.55, 0.04)] == ["—", "1,347.5", "0.0"]
    assert _decimal(0.0001, 6) == "0.000100"
    assert [_percent(v) for v in (None, 0.0, 0.5, 1.0)] == ["—", "0.00%", "50.00%", "100.00%"]


def test_layout_filters_dimensions_and_a_long_name(tmp_path: Path) -> None:
    long_name = "k" * 230
    dump = write_dump(
        tmp_path / "d.json",
        [sample(0, 0, 100, "gemm", useful=50, physical=100), sample(1, 0, 300, long_name)],
        clockHz=1_000_000_000,
        tileCount=4,
    )
    args = ["summary", str(dump), "--epoch", "1", "--kind", "compute", "--group-by", "phase,tile"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2] == "matched  300 cycles (0.0003 ms), cycles 0 to 300"
    assert lines[4:7] == ["filters  --epoch 1 --kind compute", "group by phase, tile", ""]
    # No outer box and no padding at the edges: the header starts with its first title, the
    # rule under it with a rule character, each row with its group name.
    assert lines[7].startswith("group ")
    assert lines[7].split("┃")[1:4] == [" phase ", " tile ", " samples "]
    assert lines[8].startswith("━") and "╇" in lines[8]
    assert lines[-2].startswith("gemm ")
    # The 120-character name leaves no room for every column, even at the width of files: the
    # table says which it left out.
    assert lines[-1] == (
        "not shown: tiles, phases, avg tiles, lanes, p50, max (a wider terminal or --format csv "
        "shows them)"
    )
    # Dimensions are left-aligned, figures right-aligned under their titles.
    gemm = lines[-2].split("│")
    assert (gemm[1], gemm[3]) == (" 0     ", "       1 ")
    # A name wider than its column is shortened in the middle (issue 11): one line, both ends
    # kept, one ellipsis, never folded onto the following lines.
    assert len(lines) == 12
    name = lines[9].split("│")[0].strip()
    assert name.count("…") == 1 and set(name.replace("…", "")) == {"k"} and len(name) < 230


def test_longest_samples_breaks_ties_by_tile_then_offset() -> None:
    """Only the samples as long as the k-th longest are ranked on three keys; the result is
    the first k of a plain Python sort (duration descending, tile, offset ascending)."""
    import random

    import polars as pl

    from tileprof.analyses.summary import longest_samples

    rng = random.Random(7)
    rows = [(rng.randrange(4), rng.randrange(5), rng.randrange(50)) for _ in range(300)]
    frame = pl.DataFrame(rows, schema=["duration", "tile", "offset"], orient="row")
    expected = sorted(rows, key=lambda r: (-r[0], r[1], r[2]))
    for count in (0, 1, 7, 60, 299, 300, 400):
        got = longest_samples(frame, count).rows()
        assert got == expected[:count]


def test_matched_line_for_a_single_group(tmp_path: Path) -> None:
    """A filter that leaves one group still gets its matched span (first start to last end)."""
    dump = write_dump(
        tmp_path / "d.json",
        [sample(0, 10, 100, "gemm"), sample(1, 50, 20, "gemm"), sample(0, 500, 40, "x", epoch=2)],
        clockHz=1_000_000_000,
        tileCount=4,
    )
    result = CliRunner().invoke(cli, ["summary", str(dump), "--epoch", "1"])
    assert result.exit_code == 0, result.stderr
    # gemm runs from cycle 10 to 110 (10 + 100): 100 cycles, 0.0001 ms at 1 GHz
    assert result.stdout.splitlines()[2] == "matched  100 cycles (0.0001 ms), cycles 10 to 110"


def test_render_returns_the_text_without_escapes(monkeypatch: Any) -> None:
    """``render`` returns the whole text (it prints nothing itself) and never styles it, even
    where the environment asks rich for colour (FORCE_COLOR): the text goes to files too."""
    from tileprof.model.examples import example_profile
    from tileprof.views.summary_table import render

    monkeypatch.setenv("FORCE_COLOR", "1")
    profile = example_profile()
    text = render(profile.summary(epoch=1), profile.target)
    assert text.splitlines()[0] == "device   tile device (1472 tiles @ 1.5 GHz)"
    assert "\x1b" not in text
    rows = parse_table(text)
    assert rows[0]["group"] == "exchange" and len(rows) == 19


def test_brackets_in_filters_and_names_are_not_markup(tmp_path: Path) -> None:
    """A glob or a group name with ``[...]`` is printed as written, never read as rich markup."""
    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 10, "gemm[bold]"), sample(0, 10, 5, "b")])
    result = CliRunner().invoke(cli, ["summary", str(dump), "--kernel", "[bg]emm*"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[4] == "filters  --kernel [bg]emm*"
    result = CliRunner().invoke(cli, ["summary", str(dump), "--kind", "nothing"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-3:] == [
        "no samples matched",
        "epochs present: 1",
        "groups present: b, gemm[bold]",
    ]


def test_narrow_widths_shorten_names_and_never_cut_numbers() -> None:
    """At 60 columns names lose their middle and stay on one line, and the sort key (phase
    cycles) stays; at 30, where even the fewest columns do not fit, names go down to 8
    characters and the table is printed whole, wider than the terminal, rather than cutting a
    number (``0.06…``, issue 26)."""
    from tileprof.model.examples import example_profile
    from tileprof.views.summary_table import render

    profile = example_profile()
    summary = profile.summary(epoch=1)
    narrow = render(summary, profile.target, 60)
    rows = parse_table(narrow)
    assert len(rows) == 19  # one line per group: nothing folded
    assert "phase cycles" in rows[0]
    assert rows[1]["group"] == "attention_so…tail_f8_sm4"  # 24 = max(24, 60 // 3)
    assert max(len(line) for line in narrow.splitlines()) <= 60
    tiny = parse_table(render(summary, profile.target, 30))
    assert len(tiny) == 19
    assert tiny[0] == {"group": "exchange", "phase cycles": "94,608", "phase ms": "0.06307",
                       "useful": "—"}  # fmt: skip
    assert all("…" not in v for row in tiny for k, v in row.items() if k != "group")


# --- the group table's look, held to rich's own rendering ------------------------------------

_CELL_TEXT = st.text(alphabet=st.sampled_from("ab Z09,.%—…_-~界語é"), min_size=0, max_size=12)


@given(
    st.integers(1, 5).flatmap(
        lambda columns: st.tuples(
            st.lists(_CELL_TEXT.filter(str.strip), min_size=columns, max_size=columns),
            st.lists(st.booleans(), min_size=columns, max_size=columns),
            st.lists(
                st.lists(_CELL_TEXT, min_size=columns, max_size=columns), min_size=0, max_size=6
            ),
        )
    )
)
def test_heavy_head_table_prints_as_rich_prints_it(
    table: tuple[list[str], list[bool], list[list[str]]],
) -> None:
    """Wide characters, empty cells, left and right columns (titles are never blank): the
    same bytes as rich's
    ``Table(show_edge=False, pad_edge=False)`` printed by a plain console at its width."""
    import io

    from rich.table import Table
    from rich.text import Text

    from tileprof.views.fit import HeavyHeadTable, plain_console, strip_padding

    titles, right, rows = table
    plain = HeavyHeadTable(titles, rows, right)
    reference = Table(show_edge=False, header_style="bold", pad_edge=False)
    for title, is_right in zip(titles, right, strict=True):
        reference.add_column(Text(title), justify="right" if is_right else "left")
    for row in rows:
        reference.add_row(*(Text(c) for c in row))
    buffer = io.StringIO()
    plain_console(buffer, plain.width()).print(reference)
    assert "".join(line + "\n" for line in plain.lines()) == strip_padding(buffer.getvalue())


def test_header_lines_print_as_rich_prints_them() -> None:
    """Lines that fit and hold no ``:`` are written as they are; the others (too wide, or an
    emoji code to rich) go through rich's console, which wraps or replaces: either way the same
    text as printing every line through rich."""
    import io

    from tileprof.views.fit import plain_console, strip_padding
    from tileprof.views.summary_table import _printed

    def through_rich(lines: list[str], width: int) -> str:
        buffer = io.StringIO()
        console = plain_console(buffer, width)
        for line in lines:
            console.print(line, markup=False)
        return strip_padding(buffer.getvalue())

    for lines in (
        ["device   tile device", "", "samples  3 matched of 3"],
        ["filters  --window 0:100 :smile:", "span     17 cycles"],
        ["a line far wider than the terminal it is printed on, so it wraps", "x"],
        ["device   tile device  ", "   indented, trailing spaces go   "],
        ["exactly forty characters wide, no colon.", "x"],
    ):
        assert _printed(lines, 40) == through_rich(lines, 40), lines


def test_only_a_table_that_lost_columns_ends_in_the_line_that_names_them() -> None:
    """At the full width every column is shown and the table's last line is its last group;
    narrowed, the columns it lost are named last, with how to see them."""
    from tileprof.model.examples import example_profile
    from tileprof.views.summary_table import TABLE_WIDTH, render

    profile = example_profile()
    summary = profile.summary(epoch=1)
    full = render(summary, profile.target, TABLE_WIDTH).splitlines()
    assert "not shown" not in "\n".join(full)
    assert full[-1].split()[0] == parse_table("\n".join(full))[-1]["group"]
    narrow = render(summary, profile.target, 60)
    last_row = narrow.index("static_copy_u32")
    assert narrow[narrow.index("\n", last_row) + 1 :] == (
        "not shown: samples, tiles, phases, avg tiles, lanes, device,\n"
        "p50, p95, max (a wider terminal or --format csv shows them)\n"
    )
