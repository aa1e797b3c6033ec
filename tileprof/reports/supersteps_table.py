"""``supersteps`` in the terminal: one row per superstep, per-tile rows, the sync-wait footer."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table

from tileprof.reports.summary_table import TABLE_WIDTH, _decimal, _integer, _percent
from tileprof.supersteps import Supersteps


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


def footer_lines(result: Supersteps) -> list[str]:
    """Per epoch: tile-cycles lost to sync wait and their share of tileCount × the epoch."""
    lines = []
    for row in result.epochs.iter_rows(named=True):
        lines.append(
            f"epoch {'—' if row['epoch'] is None else row['epoch']}: "
            f"{row['supersteps']:,} supersteps; {row['syncWaitCycles']:,} tile-cycles lost to "
            f"sync wait, {_percent(row['syncWaitShare'])} of {result.tile_count:,} tiles × "
            f"{row['cycles']:,} cycles"
        )
    return lines


def _superstep_table(result: Supersteps) -> Table:
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    columns: list[tuple[str, Any]] = [
        ("epoch", lambda r: "—" if r["epoch"] is None else str(r["epoch"])),
        ("#", lambda r: str(r["index"])),
        ("start", lambda r: _integer(r["start"])),
        ("end", lambda r: _integer(r["end"])),
        ("cycles", lambda r: _integer(r["cycles"])),
        ("µs", lambda r: _decimal(result.cycles_to_us(r["cycles"]), 3)),
        ("sync after", lambda r: _integer(r["syncAfter"])),
        ("active", lambda r: _integer(r["activeTiles"])),
        ("efficiency", lambda r: _percent(r["efficiency"])),
        ("balance", lambda r: _percent(r["tileBalance"])),
        ("mean wait", lambda r: _decimal(r["meanSyncWait"])),
        ("critical", lambda r: str(r["criticalTile"])),
        ("group", lambda r: r["criticalGroup"] or "—"),
        ("margin", lambda r: _integer(r["stragglerMargin"])),
    ]
    for title, _ in columns:
        table.add_column(title, justify="left" if title == "group" else "right")
    table.columns[-2].overflow = "fold"
    for row in result.supersteps.iter_rows(named=True):
        table.add_row(*(cell(row) for _, cell in columns))
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


def render(result: Supersteps, device: str, tiles: bool = False, width: int = TABLE_WIDTH) -> str:
    """Header, the superstep table (every column defined in docs/metrics.md), the per-tile
    table with ``tiles``, then the sync-wait footer."""
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=width, force_terminal=False, no_color=True, highlight=False
    )
    for line in header_lines(result, device):
        console.print(line, markup=False)
    console.print()
    if result.supersteps.height:
        console.print(_superstep_table(result))
    else:
        console.print("no supersteps (no compute samples of positive length chosen)", markup=False)
    if tiles and result.tiles.height:
        console.print()
        console.print(_tile_table(result))
    console.print()
    for line in footer_lines(result):
        console.print(line, markup=False)
    return buffer.getvalue()
