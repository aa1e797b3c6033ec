"""``tileprof.views.supersteps_table``: the supersteps command's terminal text, held whole (issue
38: the survivors of its mutation run, branch ``mutU``).

The figures are those of scenario A in tests/test_supersteps.py, worked out by hand there and
again in the comments here (4 tiles at 1.5 GHz), never taken from the code under test.
"""

from __future__ import annotations

from tests.samples import sample
from tests.test_supersteps import SCENARIO_A, profile_of
from tileprof.views import supersteps_table


def cells(line: str) -> list[str]:
    """A rich table line's cells (header or body)."""
    return [cell.strip() for cell in line.replace("┃", "│").split("│")]


def tables(text: str) -> list[list[list[str]]]:
    """Each table of the text: its header's cells, then each row's."""
    out: list[list[list[str]]] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "┃" in line:
            body = []
            for row in lines[i + 2 :]:
                if "│" not in row:
                    break
                body.append(cells(row))
            out.append([cells(line), *body])
    return out


# superstep 0 = [0, 220), busy 150 + 200 + 210 = 560 on 3 tiles: efficiency 560 / (4 × 220) =
# 63.64%, balance 560 / (4 × 210) = 66.67%, mean wait 20/3, critical tile 1 (group b); POP: LB
# (560/3) / 210 = 88.89%, CommE 210 / 220 = 95.45%, PE 84.85%. Superstep 1 = [300, 400), tile 3
# alone: 25.00% each, POP 100%. 220 cycles at 1.5 GHz = 0.1467 µs, 100 = 0.06667 µs.
SUPERSTEPS = [
    [
        "epoch",
        "#",
        "start",
        "end",
        "cycles",
        "µs",
        "sync after",
        "active",
        "efficiency",
        "balance",
        "mean wait",
        "critical",
        "group",
        "margin",
        "LB",
        "CommE",
        "PE",
    ],
    [
        "1",
        "0",
        "0",
        "220",
        "220",
        "0.1467",
        "80",
        "3",
        "63.64%",
        "66.67%",
        "6.667",
        "1",
        "b",
        "0",
        "88.89%",
        "95.45%",
        "84.85%",
    ],
    [
        "1",
        "1",
        "300",
        "400",
        "100",
        "0.06667",
        "—",
        "1",
        "25.00%",
        "25.00%",
        "0",
        "3",
        "d",
        "—",
        "100.00%",
        "100.00%",
        "100.00%",
    ],
]
# per tile: (late start, busy, gaps, sync wait) as tests/test_supersteps.py works them out
TILES = [
    ["epoch", "#", "tile", "busy", "late start", "gaps", "sync wait"],
    ["1", "0", "0", "150", "0", "50", "20"],
    ["1", "0", "1", "200", "20", "0", "0"],
    ["1", "0", "2", "210", "10", "0", "0"],
    ["1", "1", "3", "100", "0", "0", "0"],
]
# the epoch [0, 450): sync wait 20 / (4 × 450) = 1.11%; LB (560/3 + 100) / 310 = 92.47%, CommE
# 310 / 450 = 68.89%, PE 63.70%; imbalance 3 × 210 - 560 = 70; start skew 20
EPOCHS = [
    ["epoch", "supersteps", "cycles", "sync wait", "LB", "CommE", "PE", "lost", "max skew"],
    ["1", "2", "450", "1.11%", "92.47%", "68.89%", "63.70%", "70", "20"],
]
FOOTER = [
    "epoch 1: 2 supersteps; 20 tile-cycles lost to sync wait, 1.11% of 4 tiles × 450 cycles",
    "  load balance 92.47% × communication efficiency 68.89% = parallel efficiency 63.70%; "
    "70 tile-cycles lost to imbalance; start skew up to 20 cycles",
]


def test_every_table_whole() -> None:
    result = profile_of(SCENARIO_A).supersteps()
    text = supersteps_table.render(result, "tile device", tiles=True, epochs=True)
    lines = text.splitlines()
    assert lines[:4] == [
        "device        tile device",
        "min sync gap  0 cycles",
        "shown         every superstep, in time order",
        "",
    ]
    assert tables(text) == [SUPERSTEPS, TILES, EPOCHS]
    assert lines[-3:] == ["", *FOOTER]
    # numbers right-aligned, the group left-aligned; no edge, no padding at the ends
    assert lines[4].startswith("epoch ┃ # ┃ start ┃")
    assert lines[6].startswith("    1 │ 0 │     0 │ 220 │")
    assert "│ b     │" in lines[6]
    assert lines[6].endswith("│  88.89% │  95.45% │  84.85%")
    at = lines.index("epoch ┃ # ┃ tile ┃ busy ┃ late start ┃ gaps ┃ sync wait")
    assert lines[at + 2] == "    1 │ 0 │    0 │  150 │          0 │   50 │        20"
    assert (
        lines[at + 7]
        == "epoch ┃ supersteps ┃ cycles ┃ sync wait ┃     LB ┃  CommE ┃     PE ┃ lost ┃ max skew"
    )
    assert (
        lines[at + 9]
        == "    1 │          2 │    450 │     1.11% │ 92.47% │ 68.89% │ 63.70% │   70 │       20"
    )
    # the tables only when asked for
    plain = supersteps_table.render(result, "tile device")
    assert tables(plain) == [SUPERSTEPS]
    assert plain.splitlines()[-3:] == ["", *FOOTER]


def test_a_narrow_terminal_keeps_the_chosen_columns() -> None:
    result = profile_of(SCENARIO_A).supersteps()
    text = supersteps_table.render(result, "tile device", width=80, epochs=True)
    keep = ["epoch", "#", "cycles", "µs", "efficiency", "balance", "critical", "group", "LB"]
    index = [SUPERSTEPS[0].index(title) for title in keep]
    assert tables(text) == [
        [[row[i] for i in index] for row in SUPERSTEPS],
        [row[:-1] for row in EPOCHS],
    ]
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("not shown: start"))
    assert lines[at : at + 2] == [
        "not shown: start, end, sync after, active, mean wait, margin, CommE, PE (a wider",
        "terminal or --format csv shows them)",
    ]
    assert lines[at + 6] == "not shown: max skew (a wider terminal or --format csv shows them)"
    assert all(len(line) <= 80 for line in lines)


def test_the_header_names_each_choice() -> None:
    result = profile_of(SCENARIO_A).supersteps(
        epoch=1, window=(0, 500), kernels=("a", "b"), top=1, min_sync_gap=1500
    )
    assert supersteps_table.header_lines(result, "dev") == [
        "device        dev",
        "min sync gap  1,500 cycles",
        "shown         --epoch 1 --window 0:500 --kernel a --kernel b --top 1 (longest first)",
    ]


def test_nothing_chosen_and_an_epoch_without_supersteps() -> None:
    """--kernel zzz chooses no sample: no superstep table and no tile table, but the epoch
    table and the footer. An epoch of only exchange has no superstep: its footer has no POP
    line."""
    result = profile_of(SCENARIO_A).supersteps(kernels=("zzz",))
    text = supersteps_table.render(result, "dev", tiles=True, epochs=True)
    lines = text.splitlines()
    assert lines[3:6] == ["", "no supersteps (no compute samples of positive length chosen)", ""]
    assert tables(text) == [EPOCHS]
    only_exchange = [sample(0, 0, 50, None, kind="exchange", epoch=None)]
    empty = profile_of(only_exchange).supersteps()
    assert supersteps_table.render(empty, "dev", tiles=True, epochs=True).splitlines()[3:] == [
        "",
        "no supersteps (no compute samples of positive length chosen)",
        "",
        "epoch ┃ supersteps ┃ cycles ┃ sync wait ┃ LB ┃ CommE ┃ PE ┃ lost ┃ max skew",
        "━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━╇━━━━╇━━━━━━━╇━━━━╇━━━━━━╇━━━━━━━━━",
        "    — │          0 │     50 │     0.00% │  — │     — │  — │    0 │        —",
        "",
        "epoch —: 0 supersteps; 0 tile-cycles lost to sync wait, 0.00% of 4 tiles × 50 cycles",
    ]


def test_large_figures_have_thousands_separators() -> None:
    """Tile 0 busy 1,000 then 2,000 cycles after a gap of 1,000 (two supersteps); 4 tiles."""
    samples = [sample(0, 0, 1000, "a", epoch=None), sample(0, 2000, 2000, "a", epoch=None)]
    result = profile_of(samples).supersteps(min_sync_gap=1000)
    text = supersteps_table.render(result, "dev", tiles=True, epochs=True)
    superstep, tile, epoch = tables(text)
    assert [row[:5] for row in superstep[1:]] == [
        ["—", "0", "0", "1,000", "1,000"],
        ["—", "1", "2,000", "4,000", "2,000"],
    ]
    assert tile[1:] == [
        ["—", "0", "0", "1,000", "0", "0", "0"],
        ["—", "1", "0", "2,000", "0", "0", "0"],
    ]
    assert epoch[1][:3] == ["—", "2", "4,000"]
    assert text.splitlines()[-2].startswith("epoch —: 2 supersteps; 0 tile-cycles lost to sync")
    assert text.splitlines()[-2].endswith("of 4 tiles × 4,000 cycles")


def test_a_device_or_glob_with_brackets_is_plain_text() -> None:
    """A device's name and a kernel glob are printed as they are, never read as rich markup
    (``[12]`` is a glob's class and would vanish as a tag)."""
    result = profile_of(SCENARIO_A).supersteps(kernels=("[ab]",))
    text = supersteps_table.render(result, "n300 [bold]wormhole[/bold]")
    assert text.splitlines()[:3] == [
        "device        n300 [bold]wormhole[/bold]",
        "min sync gap  0 cycles",
        "shown         --kernel [ab]",
    ]


def test_a_device_logs_footer_says_the_time_between_op_calls_is_the_hosts() -> None:
    """tt-metal's log of four ops on one core: 480,782,043 + 9,597,348 + 118,137 cycles
    between them of the chip's 490,528,703 (99.99%); a tile device's footer has no such line."""
    from pathlib import Path

    from click.testing import CliRunner

    from tileprof.commands.cli import cli

    log = Path(__file__).resolve().parent.parent / "fixtures" / "real" / "tt-device-log"
    out = CliRunner().invoke(cli, ["supersteps", str(log / "profile_log_device.csv")]).stdout
    assert (
        "\n  between op calls (gap after): 490,497,528 cycles, 99.99% of the epoch with no "
        "kernel on any core: host time (dispatch or other host work), not communication, "
        "though communication efficiency counts it\n"
    ) in out
    assert "0.00% of 1 tile × 490,528,703 cycles\n" in out
    example = CliRunner().invoke(cli, ["supersteps", "--example"]).stdout
    assert "between op calls" not in example and "1,472 tiles ×" in example


def test_a_device_logs_table_titles_the_time_after_an_op_call_a_gap() -> None:
    """Its supersteps are op calls: the time after one is the host's, titled "gap after" in
    the table and in the columns a narrow terminal leaves out; a tile device's is a sync."""
    result = profile_of(SCENARIO_A).supersteps()
    log = supersteps_table.render(result, "Tenstorrent wormhole_b0 (4 tiles @ 1 GHz)")
    tile = supersteps_table.render(result, "tile device (4 tiles @ 1 GHz)")
    assert "gap after" in log.splitlines()[4] and "sync after" not in log
    assert "sync after" in tile.splitlines()[4] and "gap after" not in tile
    narrow = supersteps_table.render(result, "Tenstorrent wormhole_b0", width=100)
    assert "not shown: start, end, gap after," in narrow and "sync after" not in narrow
