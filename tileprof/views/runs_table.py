"""``runs`` in the terminal: the run table, the linked sets and the sources' notes (rich)."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import polars as pl
from rich.table import Table
from rich.text import Text

from tileprof.analyses.links import device_spread_text, format_us
from tileprof.analyses.run_analysis import source_file
from tileprof.core.numbers import number, percent, speedup
from tileprof.core.text import DISPLAY_NAME_LIMIT, cell, escape_control
from tileprof.views.fit import (
    Fit,
    Name,
    fit_table,
    plain_console,
    print_fitted,
    resolve_names,
    strip_padding,
)

TABLE_WIDTH = 250
NAME_WIDTH = 60
OP_TABLE_WIDTH = 280
"""The fixed width of files and pipes for the op table (``runs --ops``), whose every column
is wider than the run table's."""


RunCell = Callable[[dict[str, Any], int], "Text | str | Name"]
RUN_COLUMNS: tuple[tuple[str, str, RunCell], ...] = (
    ("target", "left", lambda r, _: Name(r["target"])),
    ("file", "left", lambda r, _: Name(source_file(r["source"]), NAME_WIDTH)),
    ("device", "left", lambda r, _: cell(r.get("device"))),
    ("workload", "left", lambda r, _: Name(r["workload"])),
    (
        "implementation / kernel",
        "left",
        lambda r, _: Name(r["implementation"] or r["kernel"], NAME_WIDTH),
    ),
    ("family", "left", lambda r, _: cell(r["op_family"])),
    ("dtype", "left", lambda r, _: cell(r["dtype"])),
    ("time", "right", lambda r, _: format_us(r["time_us"])),
    ("device spread", "right", lambda r, _: device_spread_text(r, compact=True) or "—"),
    ("per", "left", lambda r, _: r["per"] or "—"),
    ("calls", "right", lambda r, _: number(r["calls"])),
    ("TFLOP/s", "right", lambda r, _: number(r["tflops"])),
    ("peak", "right", lambda r, _: percent(r["peak_fraction"])),
    ("roofline", "right", lambda r, _: _roofline(r)),
    ("J", "right", lambda r, _: number(r["energy_j"])),
    ("speedup", "right", lambda r, _: speedup(r["speedup"])),
)
"""The run table's columns (docs/runs.md): title, alignment, and the cell of a row given the
name limit (the kernel's name never more than ``NAME_WIDTH``)."""
RUN_DROP_FIRST: tuple[str, ...] = (
    "per",
    "calls",
    "J",
    "roofline",
    "family",
    "dtype",
    "peak",
    "TFLOP/s",
)
"""Columns left out, in this order, on a terminal narrower than the table: target, workload,
kernel, time and speedup (what a run is, and how it compares) stay."""
RUN_KEEP: tuple[str, ...] = ("workload",)
"""Never dropped: the column that tells runs of one target apart."""
DEVICE_TITLES: tuple[str, ...] = ("device", "device spread")
"""The columns of a run table where some target ran a run on several devices (a row per
device): shown only there, and dropped after the other low-priority ones."""
FILE_TITLE = "file"
"""The column of a run table where some target has rows of several files (two traces of one
GPU model, a dump beside a run table): shown only there, so that each row says which file it
sums; dropped last."""
WHOLE_RUN_FIT = Fit(
    titles=tuple(title for title, _, _ in RUN_COLUMNS),
    drop_first=(*RUN_DROP_FIRST, "device spread", "device", FILE_TITLE),
    full_width=TABLE_WIDTH,
    full_limit=DISPLAY_NAME_LIMIT,
    keep=RUN_KEEP,
)
DEVICE_RUN_FIT = replace(
    WHOLE_RUN_FIT,
    titles=tuple(t for t in WHOLE_RUN_FIT.titles if t != FILE_TITLE),
    drop_first=(*RUN_DROP_FIRST, "device spread", "device"),
)
RUN_FIT = replace(
    DEVICE_RUN_FIT,
    titles=tuple(t for t in DEVICE_RUN_FIT.titles if t not in DEVICE_TITLES),
    drop_first=RUN_DROP_FIRST,
)


def run_fit(runs: pl.DataFrame) -> Fit:
    """The run table's columns for ``runs``: ``RUN_FIT``, with the device columns where some
    run ran on several devices of its target (``DEVICE_RUN_FIT``) and the file column where
    some target has rows of several files."""
    devices = "devices" in runs.columns and (runs.get_column("devices").fill_null(0) > 1).any()
    fit = DEVICE_RUN_FIT if devices else RUN_FIT
    if not _files_share_a_target(runs):
        return fit
    titles = [*fit.titles[:1], FILE_TITLE, *fit.titles[1:]]
    return replace(fit, titles=tuple(titles), drop_first=(*fit.drop_first, FILE_TITLE))


def _files_share_a_target(runs: pl.DataFrame) -> bool:
    """Whether some target's rows come from two or more files (the file of ``source``)."""
    if runs.height == 0:
        return False
    files = runs.select(
        pl.col("target").fill_null(""),
        pl.col("source").map_elements(source_file, return_dtype=pl.String, skip_nulls=False),
    )
    per_target = files.group_by("target").agg(pl.col("source").n_unique())
    return bool((per_target.get_column("source") > 1).any())


def _roofline(row: dict[str, Any]) -> str:
    """``18.96% compute``: % of roofline and the bound (docs/runs.md, "Roofline"); a tile group
    without FLOPs stands on the issue-slot roofline (``issue-slot``); above 100% a ``!``
    marks a spec the measurement beat."""
    fraction = row.get("roofline_fraction")
    if fraction is None:
        return "—"
    bound = row.get("bound") or "?"
    if row.get("target_kind") == "tile" and row.get("mac") is None:
        bound = f"issue-slot {bound}"
    return f"{percent(fraction)} {bound}" + (" !" if fraction > 1 else "")


def _column_table(
    frame: pl.DataFrame,
    columns: Sequence[tuple[str, str, RunCell]],
    shown: Sequence[str],
    name_limit: int,
) -> Table:
    """One line per row of ``frame``: the ``shown`` ones of ``columns``, names cut to
    ``name_limit`` (what ``fit_to_width`` rebuilds at each width)."""
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    kept = [c for c in columns if c[0] in shown]
    for title, justify, _ in kept:
        table.add_column(title, justify=justify)  # type: ignore[arg-type]
    rows = [[make(r, name_limit) for _, _, make in kept] for r in frame.iter_rows(named=True)]
    for row in resolve_names(rows, name_limit):
        table.add_row(*row)  # type: ignore[arg-type]
    return table


def runs_table(
    runs: pl.DataFrame,
    shown: Sequence[str] = RUN_FIT.titles,
    name_limit: int = DISPLAY_NAME_LIMIT,
) -> Table:
    """One line per run: identity, time, rate and energy (columns as in docs/runs.md), the
    ``shown`` columns only, names cut to ``name_limit``."""
    return _column_table(runs, RUN_COLUMNS, shown, name_limit)


def linked_table(linked: pl.DataFrame) -> Table:
    """One line per (set, target): the set's label, how it was linked, the target's figures."""
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    for title in ("set", "linked by", "runs", "target's representative run"):
        table.add_column(title, justify="right" if title == "runs" else "left")
    table.columns[-1].overflow = "fold"  # prose: a name longer than the column folds, whole
    previous = None
    for r in linked.iter_rows(named=True):
        first = r["set_id"] != previous
        previous = r["set_id"]
        table.add_row(
            cell(r["set"]) if first else "",
            cell(r["link_by"]) if first else "",
            str(r["runs"]),
            Text(escape_control(r["text"] or "")),
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
    console = plain_console(buffer, width)
    if not linked_only:
        console.print(f"runs ({runs.height})", markup=False)
        if runs.height:
            fit = run_fit(runs)
            fitted = fit_table(partial(runs_table, runs), fit, console, width)
            print_fitted(console, fitted, fit)
        console.print()
    console.print(
        f"linked sets ({linked['set_id'].n_unique() if linked.height else 0})", markup=False
    )
    if linked.height:
        console.print(linked_table(linked))
    else:
        console.print(
            "no runs of two or more targets share a workload, a shape or an (op_family, dtype)",
            markup=False,
        )
    for note in notes:
        console.print(f"note: {escape_control(note)}", markup=False)
    return strip_padding(buffer.getvalue())


OP_NAME_WIDTH = 44
"""The op and input-dims cells are never longer than this."""
OP_COLUMNS: tuple[tuple[str, str, RunCell], ...] = (
    ("target", "left", lambda r, _: Name(r["target"])),
    ("file", "left", lambda r, _: Name(source_file(r["source"]), OP_NAME_WIDTH)),
    ("op", "left", lambda r, _: Name(r["op"], OP_NAME_WIDTH)),
    ("input dims", "left", lambda r, _: Name(r["input_dims"], OP_NAME_WIDTH)),
    ("dtype", "left", lambda r, _: r["dtype"] or "—"),
    ("calls", "right", lambda r, _: _calls(r["calls"], r["calls_without_gpu"])),
    ("kernels", "right", lambda r, _: number(r["kernels"])),
    ("GFLOP/call", "right", lambda r, _: number(None if r["flops"] is None else r["flops"] / 1e9)),
    ("causal", "left", lambda r, _: _causal(r["causal"])),
    ("time/call", "right", lambda r, _: "—" if r["time_us"] is None else format_us(r["time_us"])),
    ("total", "right", lambda r, _: format_us(r["total_us"])),
    ("apart", "right", lambda r, _: _apart(r["aux_kernels"], r["aux_us"])),
    ("TFLOP/s", "right", lambda r, _: number(r["tflops"])),
    ("peak", "right", lambda r, _: percent(r["peak_fraction"])),
    (
        "MB (10⁶ B)/call",
        "right",
        lambda r, _: number(None if r["bytes"] is None else r["bytes"] / 1e6),
    ),
    ("roofline", "right", lambda r, _: _roofline(r)),
    ("lost", "right", lambda r, _: format_us(r["time_lost_us"]) if r["time_lost_us"] else "—"),
    ("work from", "left", lambda r, _: _work_from(r)),
)
"""The op table's columns (docs/runs.md, "Op rows"), as ``RUN_COLUMNS``."""
OP_DROP_FIRST: tuple[str, ...] = (
    "work from",
    "kernels",
    "lost",
    "MB (10⁶ B)/call",
    "apart",
    "GFLOP/call",
    "peak",
    "time/call",
    "calls",
    "causal",
)
"""Columns left out, in this order, on a narrow terminal: target, op, input dims, dtype, total
and TFLOP/s (which op, on what, how long, how fast) stay; ``causal`` goes last (a note says
which rows count causal FLOPs in any case)."""
OP_KEEP: tuple[str, ...] = ("dtype",)
"""Never dropped: rows of one op and shape differ by dtype."""
OP_FIT = Fit(
    titles=tuple(title for title, _, _ in OP_COLUMNS if title != FILE_TITLE),
    drop_first=OP_DROP_FIRST,
    full_width=OP_TABLE_WIDTH,
    full_limit=DISPLAY_NAME_LIMIT,
    keep=OP_KEEP,
)


def _op_fit(ops: pl.DataFrame) -> Fit:
    """``OP_FIT`` less the marker columns no row fills (``causal`` without an attention row,
    ``apart`` when no FLOP op launched kernels beside its work), with the file column where
    some target has rows of several traces (dropped last)."""
    empty = set()
    if ops["causal"].null_count() == ops.height:
        empty.add("causal")
    if not (ops["aux_kernels"].fill_null(0) > 0).any():
        empty.add("apart")
    fit = OP_FIT
    if empty:
        fit = replace(
            OP_FIT,
            titles=tuple(t for t in OP_FIT.titles if t not in empty),
            drop_first=tuple(t for t in OP_FIT.drop_first if t not in empty),
        )
    if not _files_share_a_target(ops):
        return fit
    titles = (*fit.titles[:1], FILE_TITLE, *fit.titles[1:])
    return replace(fit, titles=titles, drop_first=(*fit.drop_first, FILE_TITLE))


def _causal(causal: bool | None) -> str:
    """An attention row's mask, which its FLOPs depend on (docs/metrics.md, "Causal
    attention"): ``yes (½)`` counts the unmasked pairs only; blank on rows without one."""
    return "" if causal is None else ("yes (½)" if causal else "no")


def _apart(kernels: int | None, us: float | None) -> str:
    """The kernel time of a FLOP op counted apart from its work (``aux_us``), with how many
    kernels: ``31.42 µs (6)``; ``—`` when none."""
    return f"{format_us(us)} ({number(kernels)})" if kernels else "—"


def _work_from(row: dict[str, Any]) -> str:
    return row["flops_source"] or ("unknown: " + row["problem"] if row["problem"] else "—")


def ops_table(
    ops: pl.DataFrame, shown: Sequence[str] = OP_FIT.titles, name_limit: int = DISPLAY_NAME_LIMIT
) -> Table:
    """One line per op row (columns as in docs/runs.md, "Op rows"), the ``shown`` columns
    only, names cut to ``name_limit``."""
    return _column_table(ops, OP_COLUMNS, shown, name_limit)


def _calls(calls: int, without_gpu: int | None) -> str:
    """``2`` or, where some launched no GPU work in a GPU trace, ``2 (1 no GPU)``."""
    return number(calls) + (f" ({number(without_gpu)} no GPU)" if without_gpu else "")


def render_ops(ops: pl.DataFrame, notes: Sequence[str] = (), *, width: int = OP_TABLE_WIDTH) -> str:
    """The op rows of one or more traces, fitted to ``width``, then the notes."""
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    console.print(f"ops ({ops.height})", markup=False)
    if ops.height:
        fit = _op_fit(ops)
        print_fitted(console, fit_table(partial(ops_table, ops), fit, console, width), fit)
    for note in notes:
        console.print(f"note: {escape_control(note)}", markup=False)
    return strip_padding(buffer.getvalue())
