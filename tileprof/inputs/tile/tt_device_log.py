"""tt-metal device profiler logs (``profile_log_device.csv``) read as tile dumps.

A Tenstorrent chip is a grid of Tensix cores; tt-metal's device profiler writes one row per
zone marker per core and RISC. Line 1 names the architecture and the chip clock
(``ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000[, Max Compute Cores: 64]``), line 2 is the column
line: 13 columns in older logs, 15 in current ones (``trace id`` and ``trace id counter`` after
``run host ID``). ``docs/formats.md`` maps every column.

Each matched ZONE_START/ZONE_END pair of an op's ``*-KERNEL`` zone is one sample: the tile is
the (chip, core_x, core_y) core (numbered densely, in that order), offset and duration are in
cycles, ``kind`` is the RISC, ``kernel`` the op (its ``OP CODE`` from the ops report beside the
log, joined on run host ID = ``GLOBAL CALL COUNT`` and chip = ``DEVICE ID``; else ``op ID``),
``phase`` the op call's index, ``epoch`` the chip (each chip counts its own cycles since its
own reset, so supersteps are found per chip). ``-FW`` zones, other zones, ``TS_DATA`` and
``TS_EVENT`` rows and every unmatched marker are kept out of the samples and counted in the
dump's notes; a ``markers were dropped`` line (tt-metal's "profiler DRAM buffers were full"
warning) is counted, never read as a row.

A ``TS_DATA`` row is a value a RISC recorded (``data``) at a time: a kernel's own
``DeviceTimestampedData``, or a hardware performance counter (``timer_id`` 9090, its counter
type, value and reference count in ``meta data``). tt-metal's profiler attaches each one to the
zone open on the same core and RISC when it was written (``processDeviceMarkerData`` in
``tt_metal/impl/profiler/profiler.cpp``); so does this reader: a ``TS_DATA`` row inside a
kernel zone of its core, RISC and op call becomes one entry of that sample's metadata
(``ATTACHED``), in time order; the others are counted in the notes.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from tileprof.core.errors import InputError
from tileprof.inputs._common import DeviceHeader, ParsedDump, read_bytes
from tileprof.inputs._csv_table import ANY_CELL, field_limit, numbers, read_text_table
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import TT_DEVICE_LOG
from tileprof.inputs.table_columns import typed_from_table
from tileprof.inputs.tile.csv_dump import locate_csv_fault

FORMAT = TT_DEVICE_LOG
ARCH_LINE = re.compile(
    r"^\s*ARCH:\s*(?P<arch>[^,]*?)\s*,\s*CHIP_FREQ\[MHz\]:\s*(?P<mhz>[0-9.]+)"
    r"(?:\s*,\s*Max Compute Cores:\s*(?P<cores>\d+))?"
)
"""Line 1: the architecture, the chip clock in MHz, and (current logs) the compute cores."""
DROPPED = "markers were dropped"
"""What tt-metal's buffer-full warning says: a line holding it is counted, not read."""
INTEGER_COLUMNS: dict[str, str] = {
    "PCIe slot": "chip",
    "core_x": "x",
    "core_y": "y",
    "time[cycles since reset]": "time",
    "run host ID": "op_id",
}
TEXT_COLUMNS: dict[str, str] = {
    "RISC processor type": "risc",
    "zone name": "zone",
    "type": "type",
}
OPTIONAL_COLUMNS: dict[str, tuple[str, type[pl.DataType]]] = {
    "timer_id": ("timer", pl.Int64),
    "data": ("data", pl.UInt64),
}
"""Columns read where the log has them: a data row's timer id and its 64-bit value."""
META = "meta data"
PERF_COUNTER_ID = 9090
"""tt-metal's ``PERF_COUNTER_PROFILER_ID`` (``tt_metal/tools/profiler/perf_counters.hpp``): the
timer id of a performance-counter row, whose ``meta data`` holds ``counter type``, ``value``
and ``ref cnt``."""
TRACE_COUNTER = "trace id counter"
"""Current logs only: which replay of a captured trace an op's markers belong to."""
BOARD_BY_CORES: dict[tuple[str, int], str] = {
    ("wormhole_b0", 72): "n150",
    ("wormhole_b0", 64): "n300",
    ("blackhole", 140): "p150",
}
"""A chip's architecture and Tensix core count → its board, where only one bundled board's
chips have that many. tt-metal writes the chip's logical core grid as line 1's ``Max Compute
Cores`` (``logical_grid_size().x × y``, ``tt_metal/impl/profiler/profiler.cpp``); Tenstorrent's
specification pages give the n150 72 Tensix cores and the n300 64 per ASIC
(docs.tenstorrent.com/aibs/wormhole/specifications.html), the p150 140 and the p100a 120
(docs.tenstorrent.com/aibs/blackhole/specifications.html). A Blackhole chip of 120 cores names
no board: a p150 can run with fewer (the 8×p150 report in ``fixtures/real`` has 110 worker
cores per chip). Older logs have no core count: no board."""
OPS_REPORT_GLOB = "ops_perf_results*.csv*"
"""The ops report tt-metal writes beside a device log (same folder)."""


@dataclass(frozen=True)
class Header:
    """Line 1 of the log."""

    arch: str
    clock_hz: float
    max_cores: int | None


def parse_header(path: str | Path, line: str) -> Header:
    """The architecture and clock of line 1; InputError when line 1 is no ARCH line."""
    m = ARCH_LINE.match(line)
    if m is None:
        raise InputError(
            path, "line 1", "expected 'ARCH: <arch>, CHIP_FREQ[MHz]: <MHz>' (a tt-metal device log)"
        )
    mhz = float(m["mhz"])
    if not mhz > 0:
        raise InputError(path, "line 1", f"CHIP_FREQ[MHz] must be positive, not {m['mhz']}")
    return Header(m["arch"], mhz * 1e6, int(m["cores"]) if m["cores"] else None)


def board_of(arch: str | None, cores: int | None) -> str | None:
    """The board a chip of ``arch`` with ``cores`` Tensix cores is on (``BOARD_BY_CORES``), or
    None where the count names none."""
    return BOARD_BY_CORES.get(((arch or "").strip().lower(), cores or 0))


def device_name(header: Header) -> str:
    """``Tenstorrent <arch>``, with the board where line 1's core count names it
    (``Tenstorrent wormhole_b0 n300``)."""
    board = board_of(header.arch, header.max_cores)
    return f"Tenstorrent {header.arch}" + (f" {board}" if board else "")


def parse(path: str | Path, data: bytes) -> ParsedDump:
    """The kernel-zone samples of one device log (see the module's docstring)."""
    text = _text(path, data)
    first, _, rest = text.partition("\n")
    header = parse_header(path, first)
    rows, dropped = _rows(path, rest)
    names = _op_names(Path(path))
    zones, unmatched = pair_zones(rows.filter(pl.col("zone").str.ends_with("-KERNEL")))
    attached, loose = attach_data(rows, zones)
    samples, cores = _samples(zones, names, attached)
    notes = _notes(Path(path).name, rows, zones, unmatched, dropped, loose)
    table = samples.select(
        pl.col("tile").alias("physicalTile"),
        pl.col("start").alias("offset"),
        (pl.col("end") - pl.col("start")).alias("duration"),
        "phase",
        pl.col("chip").alias("epoch"),
        pl.col("risc").alias("kind"),
        "kernel",
        "metadata",
    )
    lines = samples["line"].to_list()

    def place(index: int) -> str:
        return f"line {lines[index]}" if 0 <= index < len(lines) else f"sample {index}"

    device = DeviceHeader(header.clock_hz, max(cores, 1), device_name(header), notes)
    return typed_from_table(table, Path(path), device, place, "column")


def _text(path: str | Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"byte {exc.start}", "not UTF-8 text") from None


def _rows(path: str | Path, rest: str) -> tuple[pl.DataFrame, list[int]]:
    """Every marker row (from line 2 on) typed, with its line number; and the lines that hold
    the buffer-full warning (left out of the table)."""
    lines = rest.split("\n")
    dropped = [i + 2 for i, ln in enumerate(lines) if DROPPED in ln]
    # blank lines and warning lines are left out; each kept line keeps its number in the file
    kept = [(i + 2, ln) for i, ln in enumerate(lines) if ln.strip() and DROPPED not in ln]
    numbers_of = [number for number, _ in kept]
    body = "\n".join(ln for _, ln in kept)
    if not body.strip():
        raise InputError(path, "line 2", "no column line: expected 'PCIe slot, core_x, …'")
    # the lines from the column line on with the left-out ones emptied, for naming a fault at
    # its line in the file (the CSV reader skips an empty line)
    numbered = "\n".join(
        ln if ln.strip() and DROPPED not in ln else "" for ln in lines[numbers_of[0] - 2 :]
    )
    rows = _table(path, body, numbered.encode(), numbers_of[0])
    out: list[pl.Series | pl.Expr] = []
    for column, alias in INTEGER_COLUMNS.items():
        out.append(_integers(path, rows, column, numbers_of).alias(alias))
    for column, alias in TEXT_COLUMNS.items():
        out.append(rows[column].str.strip_chars().fill_null("").alias(alias))
    for column, (alias, dtype) in OPTIONAL_COLUMNS.items():
        present = column in rows.columns
        values = (
            _integers(path, rows, column, numbers_of, dtype)
            if present
            else pl.Series([None] * rows.height, dtype=dtype)
        )
        out.append(values.alias(alias))
    out.append(
        (rows[META] if META in rows.columns else pl.Series([None] * rows.height, dtype=pl.String))
        .str.strip_chars()
        .alias("meta")
    )
    counter = (
        _integers(path, rows, TRACE_COUNTER, numbers_of)
        if TRACE_COUNTER in rows.columns
        else pl.Series([None] * rows.height, dtype=pl.Int64)
    )
    out.append(counter.alias("replay"))
    # the line each data row came from (the column line is the first kept line; a log has no
    # quoted line breaks, so one CSV record is one line)
    out.append(pl.Series("line", numbers_of[1 : rows.height + 1], dtype=pl.Int64))
    return rows.select(out), dropped


def _table(path: str | Path, body: str, numbered: bytes, first_line: int) -> pl.DataFrame:
    """The CSV from the column line on, every cell as text; the required columns checked.
    ``numbered`` is the file's text from the column line (line ``first_line``) on, with the
    lines left out of ``body`` empty: a fault is named at its line in the file."""
    required = [*INTEGER_COLUMNS, *TEXT_COLUMNS]
    data = body.encode()
    try:
        raw = pl.read_csv(io.BytesIO(data), infer_schema=False, raise_if_empty=False)
        lines = body.rstrip("\n").rsplit("\n", 1)
        with field_limit(ANY_CELL):  # a long cell is a cell, not a fault
            last = next(csv.reader(lines[-1:]), []) if len(lines) > 1 else None
    except (pl.exceptions.PolarsError, csv.Error):
        located = locate_csv_fault(numbered, first_line)
        place, what = located if located is not None else ("CSV", "not CSV")
        raise InputError(path, place, f"malformed CSV: {what}") from None
    if last is not None and len(last) < len(raw.columns):
        located = locate_csv_fault(numbered, first_line)
        place = located[0] if located is not None else "last line"
        raise InputError(
            path, place, f"{len(last)} fields, expected {len(raw.columns)} (truncated file?)"
        )
    stripped = raw.rename({c: c.strip() for c in raw.columns})
    missing = [c for c in required if c not in stripped.columns]
    if missing:
        raise InputError(path, "line 2", f"column {missing[0]!r} is missing")
    return stripped


def _integers(
    path: str | Path,
    rows: pl.DataFrame,
    column: str,
    line_numbers: list[int],
    dtype: type[pl.DataType] = pl.Int64,
) -> pl.Series:
    """An integer column (empty cells null); a cell that is not an integer is named."""
    cells = rows[column].str.strip_chars()
    values = cells.cast(dtype, strict=False)
    bad = (cells.is_not_null() & (cells != "") & values.is_null()).arg_true()
    if bad.len():
        i = int(bad[0])
        place = f"line {line_numbers[i + 1]}, column {column!r}"
        raise InputError(path, place, f"not an integer: {cells[i]!r}")
    return values


ZONE_KEYS = ("chip", "x", "y", "risc", "op_id", "replay", "zone")
"""What one zone's two markers share: the core, the RISC, the op call and the zone's name."""


def pair_zones(markers: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(one row per matched ZONE_START/ZONE_END pair with ``start``, ``end`` and the start's
    line; every marker left unmatched).

    Within one zone key, in time order (file order on ties), a ZONE_START whose next marker
    is a ZONE_END pairs with it; every other ZONE_START or ZONE_END is unmatched (a marker the
    device dropped leaves its partner alone)."""
    marks = markers.filter(pl.col("type").is_in(["ZONE_START", "ZONE_END"]))
    ordered = marks.sort([*ZONE_KEYS, "time", "line"], nulls_last=True, maintain_order=True)
    same = pl.all_horizontal(
        [pl.col(k).eq_missing(pl.col(k).shift(-1)) for k in ZONE_KEYS]
    ).fill_null(False)
    opens = (
        (pl.col("type") == "ZONE_START") & (pl.col("type").shift(-1) == "ZONE_END") & same
    ).fill_null(False)
    flagged = ordered.with_columns(
        _opens=opens,
        end=pl.col("time").shift(-1),
    ).with_columns(_closes=pl.col("_opens").shift(1).fill_null(False))
    zones = flagged.filter("_opens").select(
        *ZONE_KEYS, pl.col("time").alias("start"), "end", "line"
    )
    unmatched = flagged.filter(~pl.col("_opens") & ~pl.col("_closes")).drop(
        "_opens", "_closes", "end"
    )
    return zones, unmatched.sort("line")


DATA_KEYS = ("chip", "x", "y", "risc", "op_id", "replay")
"""What a data row shares with the kernel zone it was written in: the core, the RISC and the
op call (the zone's name aside: one RISC runs one kernel per op call)."""


def _entry(name: pl.Expr, value: pl.Expr) -> pl.Expr:
    """One metadata entry as JSON text (``{"name": …, "value": …}``, both strings; a value the
    row does not hold, an empty ``data`` cell or a counter without ``value``, is ``""``)."""
    text = value.cast(pl.String).fill_null("")
    return pl.struct(name.alias("name"), text.alias("value")).struct.json_encode()


def data_entries() -> pl.Expr:
    """Each ``TS_DATA`` row's metadata entries as JSON text joined by ``,``: a performance
    counter (``timer_id`` ``PERF_COUNTER_ID`` with a ``counter type`` in its meta data) gives
    ``counter <type>`` = its value and ``counter <type> ref cnt`` = its reference count; any
    other row ``data <zone name>`` (``data timer <timer_id>`` where the zone name is empty) =
    its ``data``."""
    meta = pl.col("meta").str.replace_all(";", ",", literal=True)
    kind = meta.str.extract(r'"counter type"\s*:\s*"([^"]*)"', 1)
    value = meta.str.extract(r'"value"\s*:\s*(\d+)', 1)
    ref = meta.str.extract(r'"ref cnt"\s*:\s*(\d+)', 1)
    is_counter = (pl.col("timer") == PERF_COUNTER_ID).fill_null(False) & kind.is_not_null()
    unnamed = pl.format("timer {}", pl.col("timer").fill_null(-1))
    label = pl.when(pl.col("zone") != "").then(pl.col("zone")).otherwise(unnamed)
    counter = pl.concat_str(
        _entry(pl.format("counter {}", kind), value),
        pl.when(ref.is_not_null()).then(
            pl.lit(",") + _entry(pl.format("counter {} ref cnt", kind), ref)
        ),
        ignore_nulls=True,
    )
    plain = _entry(pl.format("data {}", label), pl.col("data"))
    return pl.when(is_counter).then(counter).otherwise(plain)


def attach_data(rows: pl.DataFrame, zones: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """(per kernel zone that holds data rows, its start ``line`` and ``attached``: the JSON
    entries (``data_entries``) of every ``TS_DATA`` row written inside it, in time order; the
    number of ``TS_DATA`` rows inside no kernel zone).

    A row is inside a zone when it shares the zone's core, RISC and op call (``DATA_KEYS``)
    and start ≤ its time ≤ end: the zone open on that RISC when the value was written, found
    by an as-of join on time (a RISC's kernel zones of one op call do not overlap)."""
    data = rows.filter(pl.col("type") == "TS_DATA")
    empty = pl.DataFrame(schema={"line": pl.Int64, "attached": pl.String})
    if data.height == 0:
        return empty, 0
    keyed = [pl.col(k).fill_null(-1) if k in ("op_id", "replay") else pl.col(k) for k in DATA_KEYS]
    left = data.with_columns(keyed, _entries=data_entries()).sort("time", "line")
    right = zones.select(*DATA_KEYS, "start", "end", pl.col("line").alias("zone_line"))
    right = right.with_columns(keyed).sort("start")
    placed = left.join_asof(
        right,
        left_on="time",
        right_on="start",
        by=list(DATA_KEYS),
        strategy="backward",
        check_sortedness=False,  # both sides are sorted on time; the groups keep that order
    ).filter(pl.col("zone_line").is_not_null() & (pl.col("time") <= pl.col("end")))
    attached = (
        placed.group_by("zone_line")
        .agg(pl.col("_entries").sort_by("time", "line").str.join(","))
        .select(pl.col("zone_line").alias("line"), pl.col("_entries").alias("attached"))
    )
    return (attached if attached.height else empty), data.height - placed.height


def _samples(
    zones: pl.DataFrame, names: dict[tuple[int, int], str], attached: pl.DataFrame
) -> tuple[pl.DataFrame, int]:
    """The zones as samples: tile, phase, kernel and metadata (with the data rows written
    inside each zone: ``attach_data``) added; and the core count."""
    cores = zones.select("chip", "x", "y").unique().sort("chip", "x", "y")
    cores = cores.with_columns(tile=pl.int_range(pl.len(), dtype=pl.Int64))
    calls = zones.select("replay", "op_id").unique().sort("replay", "op_id", nulls_last=False)
    calls = calls.with_columns(phase=pl.int_range(pl.len(), dtype=pl.Int64))
    named = pl.DataFrame(
        {
            "chip": [k[0] for k in names],
            "op_id": [k[1] for k in names],
            "op": list(names.values()),
        },
        schema={"chip": pl.Int64, "op_id": pl.Int64, "op": pl.String},
    )
    out = (
        zones.join(cores, on=["chip", "x", "y"], how="left")
        .join(calls, on=["replay", "op_id"], how="left", nulls_equal=True)
        .join(named, on=["chip", "op_id"], how="left")
        .join(attached, on="line", how="left")
        .with_columns(
            kernel=pl.coalesce("op", pl.format("op {}", pl.col("op_id"))),
            metadata=pl.concat_str(
                pl.lit('[{"name":"chip","value":'),
                pl.col("chip"),
                pl.lit('},{"name":"core","value":"'),
                pl.col("x"),
                pl.lit(","),
                pl.col("y"),
                pl.lit('"},{"name":"op id","value":'),
                pl.col("op_id").fill_null(-1),
                pl.lit("}"),
                pl.when(pl.col("attached").is_not_null())
                .then(pl.lit(",") + pl.col("attached"))
                .otherwise(pl.lit("")),
                pl.lit("]"),
            ),
        )
        .sort("line")
    )
    return out, cores.height


def _op_names(path: Path) -> dict[tuple[int, int], str]:
    """(chip, GLOBAL CALL COUNT) → OP CODE from the one ops report in the log's folder; {}
    when there is none or several (which one would be a guess)."""
    try:
        found = sorted(path.parent.glob(OPS_REPORT_GLOB))
    except OSError:
        return {}
    if len(found) != 1:
        return {}
    report = found[0]
    raw = read_text_table(report, read_bytes(report), ["OP CODE", "GLOBAL CALL COUNT", "DEVICE ID"])
    ids = numbers(report, raw, "GLOBAL CALL COUNT")
    chips = numbers(report, raw, "DEVICE ID")
    ops = raw["OP CODE"].str.strip_chars()
    return {
        (int(c), int(i)): str(op)
        for c, i, op in zip(chips, ids, ops, strict=True)
        if c is not None and i is not None and op
    }


def op_kernel_cycles(zones: pl.DataFrame) -> pl.DataFrame:
    """Per chip and op call: tt-metal's device kernel duration, in cycles: the first
    ``*-KERNEL`` start to the last end over every core and RISC of the op on that chip."""
    return (
        zones.group_by("chip", "replay", "op_id")
        .agg(pl.col("start").min(), pl.col("end").max())
        .with_columns(cycles=pl.col("end") - pl.col("start"))
        .sort("chip", "replay", "op_id", nulls_last=False)
    )


def _notes(
    name: str,
    rows: pl.DataFrame,
    zones: pl.DataFrame,
    unmatched: pl.DataFrame,
    dropped: list[int],
    loose: int,
) -> tuple[str, ...]:
    """What the log holds beside its samples, one sentence each."""
    notes = []
    if unmatched.height:
        starts = unmatched.filter(pl.col("type") == "ZONE_START").height
        first = int(unmatched["line"][0])
        notes.append(
            f"{name}: {unmatched.height} unmatched kernel zone markers left out "
            f"({starts} ZONE_START without its ZONE_END, {unmatched.height - starts} ZONE_END "
            f"without its ZONE_START; first at line {first})"
        )
    if dropped:
        notes.append(
            f"{name}: the device's profiler buffer was full ({len(dropped)} 'markers were "
            f"dropped' lines, first at line {dropped[0]}): ops may be missing markers"
        )
    fw = rows.filter(pl.col("zone").str.ends_with("-FW") & (pl.col("type") == "ZONE_START"))
    is_zone = pl.col("type").is_in(["ZONE_START", "ZONE_END"])
    other_zones = rows.filter(
        is_zone & ~pl.col("zone").str.ends_with("-FW") & ~pl.col("zone").str.ends_with("-KERNEL")
    )
    ts_data = rows.filter(pl.col("type") == "TS_DATA").height
    data = rows.filter(~is_zone).height - ts_data
    notes.append(
        f"{name}: {zones.height} kernel zones read; {ts_data - loose} TS_DATA rows attached to "
        f"the kernel zone open on their core and RISC (sample metadata); kept apart: "
        f"{fw.height} firmware (-FW) zones, {other_zones.height} other zone markers, {loose} "
        f"TS_DATA rows in no kernel zone, {data} other data rows (TS_EVENT, ZONE_TOTAL, …)"
    )
    return tuple(notes)


def read_zones(path: str | Path, data: bytes) -> tuple[Header, pl.DataFrame, pl.DataFrame]:
    """(line 1, every matched kernel zone, every unmatched kernel marker) of a device log:
    what ``parse`` builds its samples from, for figures over op calls (``op_kernel_cycles``)."""
    text = _text(path, data)
    first, _, rest = text.partition("\n")
    header = parse_header(path, first)
    rows, _ = _rows(path, rest)
    zones, unmatched = pair_zones(rows.filter(pl.col("zone").str.ends_with("-KERNEL")))
    return header, zones, unmatched


READER: Reader[ParsedDump] = Reader(parse)
