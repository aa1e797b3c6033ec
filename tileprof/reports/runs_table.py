"""``runs`` in the terminal: the run table, the linked sets and the sources' notes (rich)."""

from __future__ import annotations

import io
from collections.abc import Sequence

import polars as pl
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tileprof.links import format_us
from tileprof.text import cell, escape_control

TABLE_WIDTH = 220
NAME_WIDTH = 60


def _short(text: str | None, width: int = NAME_WIDTH) -> Text:
    return cell(text, width)


def _num(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def _console(buffer: io.StringIO, width: int) -> Console:
    return Console(file=buffer, width=width, force_terminal=False, no_color=True, highlight=False)


def runs_table(runs: pl.DataFrame) -> Table:
    """One line per run: identity, time, rate and energy (columns as in docs/runs.md)."""
    table = Table(show_edge=False, header_style="bold", pad_edge=False, title_justify="left")
    for title, justify in (
        ("target", "left"),
        ("workload", "left"),
        ("implementation / kernel", "left"),
        ("family", "left"),
        ("dtype", "left"),
        ("time", "right"),
        ("per", "left"),
        ("calls", "right"),
        ("TFLOP/s", "right"),
        ("peak", "right"),
        ("J", "right"),
        ("speedup", "right"),
    ):
        table.add_column(title, justify=justify)  # type: ignore[arg-type]
    for r in runs.iter_rows(named=True):
        name = r["implementation"] or r["kernel"]
        table.add_row(
            cell(r["target"]),
            cell(r["workload"]),
            _short(name),
            cell(r["op_family"]),
            cell(r["dtype"]),
            format_us(r["time_us"]),
            r["per"] or "—",
            "—" if r["calls"] is None else f"{r['calls']:,}",
            _num(r["tflops"], ".4g"),
            _num(None if r["peak_fraction"] is None else r["peak_fraction"] * 100, ".1f")
            + ("%" if r["peak_fraction"] is not None else ""),
            _num(r["energy_j"], ".4g"),
            _num(r["speedup"], ".3f"),
        )
    return table


def linked_table(linked: pl.DataFrame) -> Table:
    """One line per (set, target): the set's label, how it was linked, the target's figures."""
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    for title in ("set", "linked by", "runs", "target's representative run"):
        table.add_column(title, justify="right" if title == "runs" else "left")
    previous = None
    for r in linked.iter_rows(named=True):
        first = r["set_id"] != previous
        previous = r["set_id"]
        table.add_row(
            cell(r["set"]) if first else "",
            cell(r["link_by"]) if first else "",
            str(r["runs"]),
            Text(escape_control(r["text"])),
        )
    return table


def render(
    runs: pl.DataFrame,
    linked: pl.DataFrame,
    notes: Sequence[str] = (),
    *,
    linked_only: bool = False,
    width: int = TABLE_WIDTH,
) -> str:
    """The run table (unless ``linked_only``), then the linked sets, then the notes."""
    buffer = io.StringIO()
    console = _console(buffer, width)
    if not linked_only:
        console.print(f"runs ({runs.height})", markup=False)
        if runs.height:
            console.print(runs_table(runs))
        console.print()
    console.print(
        f"linked sets ({linked['set_id'].n_unique() if linked.height else 0})", markup=False
    )
    if linked.height:
        console.print(linked_table(linked))
    else:
        console.print(
            "no runs of two or more targets share an (op_family, dtype) or workload", markup=False
        )
    for note in notes:
        console.print(f"note: {escape_control(note)}", markup=False)
    # rich pads every row to the table's width; a linked-set line ends at its text
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())
