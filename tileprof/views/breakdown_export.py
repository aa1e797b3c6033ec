"""``breakdown`` as a terminal table, a JSON document or CSV rows (definitions: docs/metrics.md,
"Time breakdown"). Numbers in the table follow the one policy (``core.numbers``)."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from typing import Any

import polars as pl

from tileprof.analyses.collectives import Job
from tileprof.analyses.gpu_breakdown import IDLE_COLUMNS, TIME_COLUMNS, Breakdown
from tileprof.core.numbers import MISSING, number, percent
from tileprof.views.fit import Fit

TABLE_WIDTH = 240
KEYS: tuple[str, ...] = ("trace", "rank", "device", "device_name", "step")
TIME_DROP_FIRST: tuple[str, ...] = (
    "kernel_wait µs", "total_memcpy µs", "total_comm µs", "exposed_memcpy µs",
    "exposed_comm µs", "other µs", "computation µs", "host_wait µs", "busy µs", "total µs",
    "idle µs", "idle",
)  # fmt: skip
"""The time table's columns a narrow terminal loses, first to last: the idle share and its
host-wait part stay longest."""
STEP_MARKS: dict[str, str] = {"cpu_step": " (cpu)", "launch_attribution": " (launches)"}
"""The mark of a step whose window is not its GPU-side annotation: the events its CPU-side
step launched, as it has no GPU-side annotation (cpu) or as the annotation covers fewer of
them (launches)."""


def render_json(result: Breakdown, job: Job) -> str:
    """``{"breakdown": [...], "launches": [...], "streams": [...], "collectives": [...],
    "ranks": [...], "options": {...}}``."""
    from tileprof.views.strict_json import dumps

    document = result.to_document() | job.to_document()
    return dumps(document, indent=2, ensure_ascii=False) + "\n"


def render_csv(result: Breakdown) -> str:
    """One row per (trace, device, step): the time columns, idle causes and launch figures."""
    joined = result.rows.join(result.launches, on=list(KEYS), how="left", nulls_equal=True)
    return joined.write_csv(float_precision=None)


def _cell(value: Any) -> str:
    return MISSING if value is None else number(value)


def _key_cells(row: dict[str, Any], traces: int) -> list[str]:
    cells = [row["trace"]] if traces > 1 else []
    device = f"{'' if row['device'] is None else row['device']} {row['device_name'] or ''}"
    if row["device"] is None and row["device_name"] is None:
        device = "all"
    step = "whole" if row["step"] is None else f"#{row['step']}"
    step += STEP_MARKS.get(row.get("window_from") or "", "")
    return [*cells, device.strip(), step]


def _table(
    title: str,
    header: Sequence[str],
    rows: list[list[str]],
    width: int | None = None,
    names: int = 2,
    drop_first: Sequence[str] | None = None,
) -> str:
    """A plain table; its first ``names`` columns hold names. On a terminal narrower than the
    file width it is fitted (``views/fit.py``): names lose their middle, then figures go in
    ``drop_first`` order (default: the rightmost first). Laid out without rich
    (``SpacedTable``) unless rich would print it otherwise (``rich_table``)."""
    from tileprof.core.text import display_name
    from tileprof.views.fit import SpacedTable, fit_layout

    def build(shown: Sequence[str], limit: int) -> SpacedTable:
        keep = [i for i, name in enumerate(header) if name in shown]

        def name(text: str) -> str:
            return display_name(text, limit) if text else "—"

        cells = [[name(row[i]) if i < names else row[i] for i in keep] for row in rows]
        return SpacedTable(title, [header[i] for i in keep], cells, [i >= names for i in keep])

    fit = table_fit(header, names, drop_first)
    target = TABLE_WIDTH if width is None else width
    table, _, overflow = fit_layout(build, SpacedTable.width, fit, target)
    if overflow is None and table.printable():
        return "".join(line + "\n" for line in table.lines())
    return rich_table(title, header, rows, target, names, fit)


def table_fit(header: Sequence[str], names: int, drop_first: Sequence[str] | None) -> Fit:
    """How a breakdown table narrows: figures go in ``drop_first`` order (default: the
    rightmost first)."""
    order = tuple(reversed(header[names:])) if drop_first is None else tuple(drop_first)
    return Fit(tuple(header), order, TABLE_WIDTH, 120)


def rich_table(
    title: str, header: Sequence[str], rows: list[list[str]], width: int, names: int, fit: Fit
) -> str:
    """``_table`` printed by rich: a table still wider than ``width`` once fitted, or one
    whose cells rich reads otherwise than as plain text."""
    from rich.table import Table

    from tileprof.core.text import cell
    from tileprof.views.fit import fit_to_width, plain_console, strip_padding

    def build(shown: Sequence[str], limit: int) -> Table:
        table = Table(title=title, title_justify="left", box=None, pad_edge=False)
        keep = [i for i, name in enumerate(header) if name in shown]
        for i in keep:
            table.add_column(header[i], justify="left" if i < names else "right", no_wrap=True)
        for row in rows:
            table.add_row(*(cell(row[i], limit) if i < names else row[i] for i in keep))
        return table

    buffer = io.StringIO()
    console = plain_console(buffer, width)
    console.print(fit_to_width(build, fit, console, width))
    return strip_padding(buffer.getvalue())


def render_table(result: Breakdown, job: Job, width: int | None = None) -> str:
    """The time table, the launch table, and with ranks the collectives and overlap tables."""
    traces = result.rows.get_column("trace").n_unique()
    keys = (["trace"] if traces > 1 else []) + ["device", "step"]
    causes = [c.removeprefix("idle_").removesuffix("_us") + " µs" for c in IDLE_COLUMNS]
    time_header = [*keys, *(c.removesuffix("_us") + " µs" for c in TIME_COLUMNS), "idle", *causes]
    time_rows = []
    for r in result.rows.iter_rows(named=True):
        share = r["idle_us"] / r["total_us"] if r["total_us"] else None
        time_rows.append([*_key_cells(r, traces), *(_cell(r[c]) for c in TIME_COLUMNS),
                          percent(share), *(_cell(r[c]) for c in IDLE_COLUMNS)])  # fmt: skip
    names = len(keys)
    parts = [_table("Time breakdown (µs)", time_header, time_rows, width, names, TIME_DROP_FIRST)]
    launch = [c for c in result.launches.columns if c not in KEYS]
    launch_rows = [
        [*_key_cells(r, traces), *(_cell(r[c]) for c in launch)]
        for r in result.launches.iter_rows(named=True)
    ]
    parts.append(_table("Kernel launches (µs)", [*keys, *launch], launch_rows, width, names))
    stream_header = [*keys, "stream", "events", "busy µs", "idle µs", *causes]
    stream_rows = [
        [*_key_cells(r, traces), _cell(r["stream"]), _cell(r["events"]), _cell(r["busy_us"]),
         _cell(r["idle_us"]), *(_cell(r[c]) for c in IDLE_COLUMNS)]
        for r in result.streams.iter_rows(named=True)
    ]  # fmt: skip
    parts.append(_table("Idle per stream (µs)", stream_header, stream_rows, width, names))
    parts.extend(_job_tables(job, width))
    kernel_wait = number(result.kernel_wait_us)
    parts.append(f"kernel wait: idle gaps under {kernel_wait} µs (--kernel-wait-us)\n")
    note = unlaunched_note(result)
    if note is not None:
        parts[-1] += f"note: {note}\n"
    return "\n".join(parts)


def unlaunched_note(result: Breakdown) -> str | None:
    """``436 of 1,465 kernels in … have no launch call in the trace …``: where a window's
    kernels outnumber those launched (``kernels`` > ``launched``), its idle causes rest on
    launches the trace lacks (an unlaunched kernel never ends a host wait: docs/metrics.md,
    "Idle by cause"). Names the window with the most such kernels (per device; the
    all-devices rows repeat them) and how many other windows have some; None when none has."""
    launches = result.launches
    if launches.height == 0 or "launched" not in launches.columns:
        return None
    per_device = launches.filter(pl.col("device").is_not_null())
    rows = per_device if per_device.height else launches
    missing = (pl.col("kernels") - pl.col("launched")).alias("_missing")
    short = rows.with_columns(missing).filter(pl.col("_missing") > 0)
    if short.height == 0:
        return None
    worst = short.sort("_missing", descending=True, maintain_order=True).row(0, named=True)
    where = _window_words(worst, launches.get_column("trace").n_unique())
    others = short.height - 1
    more = ""
    if others:
        more = f" ({number(others)} other window{'s have' if others != 1 else ' has'} some too)"
    return (
        f"{number(worst['_missing'])} of {number(worst['kernels'])} kernels in {where} have no "
        f"launch call in the trace{more}; a gap such a kernel ends is never counted as host "
        "wait, so there host_wait µs is a floor and kernel_wait µs and other µs may hold "
        "host waits (tileprof check: kernel-without-launch)"
    )


def _window_words(row: dict[str, Any], traces: int) -> str:
    """A window in words: ``step 6 on GPU 0 (NVIDIA H100 80GB HBM3)``, ``the whole trace on
    all devices``; ``of TRACE`` after it when the breakdown holds several traces."""
    step = "the whole trace" if row["step"] is None else f"step {row['step']}"
    device = "all devices" if row["device"] is None else f"GPU {row['device']}"
    if row["device_name"]:
        device += f" ({row['device_name']})"
    return f"{step} on {device}" + (f" of {row['trace']}" if traces > 1 else "")


def _job_tables(job: Job, width: int | None) -> list[str]:
    if job.ranks.height == 0:
        return []
    return [
        _frame_table("Collectives across ranks", job.collectives, width),
        _frame_table("Ranks: compute and communication overlap", job.ranks, width),
    ]


def _frame_table(title: str, frame: pl.DataFrame, width: int | None) -> str:
    rows = [[v if isinstance(v, str) else _cell(v) for v in row] for row in frame.iter_rows()]
    return _table(title, frame.columns, rows, width, names=1)


def _signed_inf(value: Any) -> Any:
    """JSON has no infinity: an infinite change is written "+inf"/"-inf", as `diff` does."""
    if isinstance(value, float) and math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return value


def render_diff_json(comparison: pl.DataFrame) -> str:
    """``{"breakdown_diff": [...], "kernels_differ": [...], "unpaired": [...]}``: one entry per
    window and figure, then the paired windows whose sides hold different numbers of kernels,
    then the windows on one side only."""
    from tileprof.analyses.breakdown_diff import kernel_counts_differ, unpaired_windows

    rows = [{k: _signed_inf(v) for k, v in r.items()} for r in comparison.iter_rows(named=True)]
    differ = kernel_counts_differ(comparison).to_dicts()
    unpaired = unpaired_windows(comparison).to_dicts()
    document = {"breakdown_diff": rows, "kernels_differ": differ, "unpaired": unpaired}
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_diff_csv(comparison: pl.DataFrame) -> str:
    """One row per paired window and figure."""
    return comparison.write_csv(float_precision=None)


def kernel_count_lines(comparison: pl.DataFrame) -> list[str]:
    """The lines before the comparison when some paired window holds different numbers of
    kernels on the two sides: its time figures then change with the count, and their change
    per kernel is the one to read."""
    from tileprof.analyses.breakdown_diff import kernel_counts_differ

    differ = kernel_counts_differ(comparison)
    if differ.height == 0:
        return []
    from tileprof.analyses.breakdown_diff import unpaired_windows

    windows = _window_count(comparison) - unpaired_windows(comparison).height
    first = differ.row(0, named=True)
    before, after = first["kernels_before"], first["kernels_after"]
    change = (
        ""
        if not before or after is None
        else f", {percent((after - before) / before, signed=True)}"
    )
    return [
        f"kernels differ in {differ.height} of {windows} paired windows (the first: "
        f"{first['device_before'] or MISSING} {_window(first)}: {_cell(before)} → "
        f"{_cell(after)}{change}): a change in time the kernel count explains is no speed-up "
        'or slowdown; read "per kernel" (figure / kernels), not "change"',
        "",
    ]


def pairing_lines(comparison: pl.DataFrame) -> list[str]:
    """The lines before the comparison when some window has no partner on the other side:
    its figures are shown and not compared. When no window pairs, the first line says that
    nothing is compared and, where the two sides are different ranks, that this is why."""
    from tileprof.analyses.breakdown_diff import unpaired_windows

    unpaired = unpaired_windows(comparison)
    if unpaired.height == 0:
        return []
    windows = _window_count(comparison)
    if unpaired.height < windows:
        first = unpaired.row(0, named=True)
        devices = _devices(first)
        return [
            f"{unpaired.height} of {windows} windows are on one side only (the first: "
            f"{devices} {_window(first)}): their figures are shown, not compared",
            "",
        ]
    ranks = [_ranks(comparison, side) for side in ("device_before", "device_after")]
    why = (
        f"before is {ranks[0]} and after {ranks[1]}, and windows pair only within one rank "
        "(to hold two ranks of one job side by side: `tileprof breakdown BEFORE AFTER`; to "
        "compare two runs: one rank of each)"
        if ranks[0] != ranks[1]
        else "no window of before has the rank, device position and window position of "
        + "one of after"
    )
    return [f"nothing is compared: {why}", ""]


def device_lines(comparison: pl.DataFrame) -> list[str]:
    """The line before the comparison when paired windows ran on two GPU models: every change
    is then the device's as much as the code's (``diff``'s setup note). A device named only by
    its number (``GPU 1``: the trace names no model) is not compared."""
    both = pl.col("device_before").is_not_null() & pl.col("device_after").is_not_null()
    keys = ["rank", "trace_at", "gpu", "window", "device_before", "device_after"]
    paired = comparison.filter(both).select(keys).unique(maintain_order=True)

    def model(column: str) -> pl.Expr:
        name = pl.col(column).str.splitn(" ", 2).struct.field("field_1")
        return pl.when(name.str.contains(r"^GPU \d+$")).then(None).otherwise(name)

    named = paired.with_columns(
        model("device_before").alias("_b"), model("device_after").alias("_a")
    )
    differ = named.filter(pl.col("_b").is_not_null() & pl.col("_a").is_not_null())
    differ = differ.filter(pl.col("_b") != pl.col("_a"))
    if differ.height == 0:
        return []
    first = differ.row(0, named=True)
    return [
        f"not the same device: {differ.height} of {paired.height} paired windows ran on two GPU "
        f"models (the first: {first['_b']} → {first['_a']}); every change below is the "
        "device's as much as the code's",
        "",
    ]


def _window_count(comparison: pl.DataFrame) -> int:
    return comparison.select("rank", "trace_at", "gpu", "window").unique().height


def _ranks(comparison: pl.DataFrame, side: str) -> str:
    """The ranks of one side's windows, as a line names them."""
    ranks = comparison.filter(pl.col(side).is_not_null()).get_column("rank").unique().sort()
    stated = [str(r) for r in ranks.drop_nulls().to_list()]
    if not stated:
        return "no rank (no distributedInfo)"
    unstated = " and no rank" if ranks.null_count() else ""
    return ("rank " if len(stated) == 1 else "ranks ") + ", ".join(stated) + unstated


def _devices(row: dict[str, Any], traces: bool = False) -> str:
    """A window's devices, before → after; with ``traces`` (a side holds several), each with
    its trace."""
    sides = []
    for side in ("before", "after"):
        device, trace = row[f"device_{side}"], row[f"trace_{side}"]
        shown = MISSING if device is None else f"{trace} {device}" if traces else device
        sides.append(shown)
    return " → ".join(sides)


def _window(row: dict[str, Any]) -> str:
    if row["window"] == 0:
        return "whole"
    return " → ".join(
        MISSING if s is None else f"#{s}" for s in (row["step_before"], row["step_after"])
    )


def render_diff_table(comparison: pl.DataFrame, width: int | None = None) -> str:
    """Per paired window: each figure before, after, its difference and relative change, and
    its relative change per kernel where the window's kernel counts differ."""
    header = ["device (before → after)", "window", "figure", "before", "after", "Δ", "change"]
    lines = kernel_count_lines(comparison)
    if lines:
        header.append("per kernel")
    lines = pairing_lines(comparison) + device_lines(comparison) + lines
    rows = []
    several = any(
        comparison.get_column(c).drop_nulls().n_unique() > 1
        for c in ("trace_before", "trace_after")
    )
    for r in comparison.iter_rows(named=True):
        devices = _devices(r, several)
        steps = [
            MISSING if device is None else "whole" if r["window"] == 0 else f"#{step}"
            for device, step in ((r["device_before"], r["step_before"]),
                                 (r["device_after"], r["step_after"]))
        ]  # fmt: skip
        figures = [_cell(r[c]) for c in ("before", "after", "delta")]
        change = percent(r["change"], signed=True)
        row = [devices, " → ".join(steps), r["figure"], *figures, change]
        if lines:
            differs = r["kernels_before"] != r["kernels_after"]
            shown = r["per_kernel_change"] if differs else None
            row.append(percent(shown, signed=True) if shown is not None else MISSING)
        rows.append(row)
    return "\n".join(lines) + _table("Breakdown comparison", header, rows, width, names=3)
