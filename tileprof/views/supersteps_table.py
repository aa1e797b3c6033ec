"""``supersteps`` in the terminal: one row per superstep, per-tile rows, the sync-wait footer."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import polars as pl
from rich.table import Table

from tileprof.analyses.findings import is_tenstorrent
from tileprof.analyses.supersteps import Supersteps
from tileprof.core.numbers import number
from tileprof.core.text import DISPLAY_NAME_LIMIT
from tileprof.views.fit import (
    Fit,
    Name,
    fit_table,
    plain_console,
    print_fitted,
    resolve_names,
    strip_padding,
)
from tileprof.views.summary_table import _integer, _percent

if TYPE_CHECKING:
    from rich.text import Text


def header_lines(result: Supersteps, device: str) -> list[str]:
    """Device, the segmentation option and the choices of rows."""
    chosen = []
    if result.epoch is not None:
        chosen.append(f"--epoch {result.epoch}")
    if result.window is not None:
        chosen.append(f"--window {result.window[0]}:{result.window[1]}")
    chosen.extend(f"--kernel {glob}" for glob in result.kernels)
    if result.top is not None:
        chosen.append(f"--top {result.top} (longest first)")
    return [
        f"device        {device}",
        f"min sync gap  {result.min_sync_gap:,} cycles",
        f"shown         {' '.join(chosen) or 'every superstep, in time order'}",
    ]


def footer_lines(result: Supersteps, op_calls: bool = False) -> list[str]:
    """Per epoch: tile-cycles lost to sync wait and their share of tileCount × the epoch;
    with ``op_calls`` (a tt-metal device log, whose supersteps are op calls), the time
    between them, which is the host's (docs/metrics.md, "tt-metal device logs")."""
    gaps = {}
    if op_calls:
        between = result.supersteps.group_by("epoch").agg(pl.col("syncAfter").sum())
        gaps = dict(zip(between.get_column("epoch"), between.get_column("syncAfter"), strict=True))
    lines = []
    for row in result.epochs.iter_rows(named=True):
        lines.append(
            f"epoch {'—' if row['epoch'] is None else row['epoch']}: "
            f"{row['supersteps']:,} supersteps; {row['syncWaitCycles']:,} tile-cycles lost to "
            f"sync wait, {_percent(row['syncWaitShare'])} of {_tiles(result.tile_count)} × "
            f"{row['cycles']:,} cycles"
        )
        if row["supersteps"]:
            lines.append(f"  {pop_line(row)}")
        if op_calls and row["supersteps"] and row["cycles"]:
            gap = int(gaps.get(row["epoch"]) or 0)
            lines.append(
                f"  between op calls (gap after): {gap:,} cycles, "
                f"{_percent(gap / row['cycles'])} of the epoch with no kernel on any core: "
                "host time (dispatch or other host work), not communication, though "
                "communication efficiency counts it"
            )
    return lines


def _tiles(count: int) -> str:
    return f"{count:,} tile" + ("" if count == 1 else "s")


OP_CALL_TITLES = {"sync after": "gap after"}
"""The superstep table's titles for a tt-metal device log, whose supersteps are op calls: the
time after one is the host's, not a sync (docs/metrics.md, "tt-metal device logs")."""


def pop_line(row: dict[str, Any]) -> str:
    """An epoch's POP figures in words (docs/metrics.md, "Imbalance (POP)")."""
    return (
        f"load balance {_percent(row['loadBalanceEfficiency'])} × communication efficiency "
        f"{_percent(row['communicationEfficiency'])} = parallel efficiency "
        f"{_percent(row['parallelEfficiency'])}; {_integer(row['imbalanceCycles'])} "
        f"tile-cycles lost to imbalance; start skew up to {_integer(row['maxStartSkewCycles'])} "
        "cycles"
    )


TABLE_WIDTH = 220
"""The fixed width of files and pipes: the superstep table with POP's three columns is wider
than the summary's 200 (as the run table is)."""


SuperstepCell = Callable[[Supersteps, dict[str, Any], int], "Text | str | Name"]
SUPERSTEP_COLUMNS: tuple[tuple[str, SuperstepCell], ...] = (
    ("epoch", lambda _, r, __: "—" if r["epoch"] is None else str(r["epoch"])),
    ("#", lambda _, r, __: str(r["index"])),
    ("start", lambda _, r, __: _integer(r["start"])),
    ("end", lambda _, r, __: _integer(r["end"])),
    ("cycles", lambda _, r, __: _integer(r["cycles"])),
    ("µs", lambda s, r, __: number(s.cycles_to_us(r["cycles"]))),
    ("sync after", lambda _, r, __: _integer(r["syncAfter"])),
    ("active", lambda _, r, __: _integer(r["activeTiles"])),
    ("efficiency", lambda _, r, __: _percent(r["efficiency"])),
    ("balance", lambda _, r, __: _percent(r["tileBalance"])),
    ("mean wait", lambda _, r, __: number(r["meanSyncWait"])),
    ("critical", lambda _, r, __: str(r["criticalTile"])),
    ("group", lambda _, r, __: Name(r["criticalGroup"])),
    ("margin", lambda _, r, __: _integer(r["stragglerMargin"])),
    ("LB", lambda _, r, __: _percent(r["loadBalanceEfficiency"])),
    ("CommE", lambda _, r, __: _percent(r["communicationEfficiency"])),
    ("PE", lambda _, r, __: _percent(r["parallelEfficiency"])),
)
"""The superstep table's columns (docs/metrics.md, "Supersteps"): title, and the cell of a row
given the result and the name limit."""
SUPERSTEP_DROP_FIRST: tuple[str, ...] = (
    "end",
    "start",
    "margin",
    "mean wait",
    "sync after",
    "CommE",
    "PE",
    "active",
    "balance",
    "cycles",
    "LB",
)
"""Columns left out, in this order, on a terminal narrower than the table: which superstep
(epoch, #), how long (µs), how well used (efficiency) and who held it up (critical tile and its
group) stay; POP's load balance goes last of the rest, as the one imbalance figure compared
across systems."""
SUPERSTEP_FIT = Fit(
    titles=tuple(title for title, _ in SUPERSTEP_COLUMNS),
    drop_first=SUPERSTEP_DROP_FIRST,
    full_width=TABLE_WIDTH,
    full_limit=DISPLAY_NAME_LIMIT,
)


EpochCell = Callable[[dict[str, Any]], str]
EPOCH_COLUMNS: tuple[tuple[str, EpochCell], ...] = (
    ("epoch", lambda r: "—" if r["epoch"] is None else str(r["epoch"])),
    ("supersteps", lambda r: _integer(r["supersteps"])),
    ("cycles", lambda r: _integer(r["cycles"])),
    ("sync wait", lambda r: _percent(r["syncWaitShare"])),
    ("LB", lambda r: _percent(r["loadBalanceEfficiency"])),
    ("CommE", lambda r: _percent(r["communicationEfficiency"])),
    ("PE", lambda r: _percent(r["parallelEfficiency"])),
    ("lost", lambda r: _integer(r["imbalanceCycles"])),
    ("max skew", lambda r: _integer(r["maxStartSkewCycles"])),
)
"""The per-epoch table of ``--per-epoch`` (docs/metrics.md, "Per epoch", "Imbalance (POP)")."""
EPOCH_DROP_FIRST: tuple[str, ...] = ("max skew", "lost", "sync wait", "cycles", "supersteps")
"""Columns left out, in this order, on a narrow terminal: the epoch and POP's three
efficiencies stay."""
EPOCH_FIT = Fit(
    titles=tuple(title for title, _ in EPOCH_COLUMNS),
    drop_first=EPOCH_DROP_FIRST,
    full_width=TABLE_WIDTH,
    full_limit=DISPLAY_NAME_LIMIT,
)


def _epoch_table(result: Supersteps, shown: Sequence[str], _limit: int) -> Table:
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    columns = [c for c in EPOCH_COLUMNS if c[0] in shown]
    for title, _ in columns:
        table.add_column(title, justify="right")
    for row in result.epochs.iter_rows(named=True):
        table.add_row(*(make(row) for _, make in columns))
    return table


def _superstep_table(
    result: Supersteps,
    shown: Sequence[str] = SUPERSTEP_FIT.titles,
    name_limit: int = DISPLAY_NAME_LIMIT,
    *,
    titles: dict[str, str] | None = None,
) -> Table:
    """The table of ``shown`` columns; ``titles`` renames some as the reader sees them."""
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    columns = [c for c in SUPERSTEP_COLUMNS if c[0] in shown]
    for title, _ in columns:
        table.add_column(
            (titles or {}).get(title, title), justify="left" if title == "group" else "right"
        )
    rows = [
        [make(result, r, name_limit) for _, make in columns]
        for r in result.supersteps.iter_rows(named=True)
    ]
    for row in resolve_names(rows, name_limit):
        table.add_row(*row)  # type: ignore[arg-type]
    return table


def _tile_table(result: Supersteps) -> Table:
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    names = ("epoch", "#", "tile", "busy", "late start", "gaps", "sync wait")
    keys = ("epoch", "index", "tile", "busy", "lateStart", "gaps", "syncWait")
    for name in names:
        table.add_column(name, justify="right")
    for row in result.tiles.iter_rows(named=True):
        table.add_row(*("—" if row[k] is None else f"{row[k]:,}" for k in keys))
    return table


def render(
    result: Supersteps,
    device: str,
    tiles: bool = False,
    width: int = TABLE_WIDTH,
    epochs: bool = False,
) -> str:
    """Header, the superstep table (every column defined in docs/metrics.md), the per-tile
    table with ``tiles``, the per-epoch table with ``epochs``, then the sync-wait footer."""
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    op_calls = is_tenstorrent(device)
    for line in header_lines(result, device):
        console.print(line, markup=False)
    console.print()
    if result.supersteps.height:
        titles = OP_CALL_TITLES if op_calls else {}
        build = partial(_superstep_table, result, titles=titles)
        fitted = fit_table(build, SUPERSTEP_FIT, console, width)
        dropped = tuple(titles.get(title, title) for title in fitted.dropped)
        print_fitted(console, dataclasses.replace(fitted, dropped=dropped), SUPERSTEP_FIT)
    else:
        console.print("no supersteps (no compute samples of positive length chosen)", markup=False)
    if tiles and result.tiles.height:
        console.print()
        console.print(_tile_table(result))
    if epochs and result.epochs.height:
        console.print()
        build_epochs = partial(_epoch_table, result)
        print_fitted(console, fit_table(build_epochs, EPOCH_FIT, console, width), EPOCH_FIT)
    console.print()
    for line in footer_lines(result, op_calls=op_calls):
        console.print(line, markup=False)
    return strip_padding(buffer.getvalue())
