"""The run table: every target's runs (tile groups, GPU kernels, benchmarks) in one frame.

Each parser turns its source into rows of this table; derived figures (TFLOP/s, peak
fraction, J per MAC, speedup) are computed once, here, so every source gets the same
definitions. ``docs/runs.md`` documents every column.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import polars as pl

from tileprof.core.classify import DTYPES, OP_FAMILIES, classify
from tileprof.core.peaks import peak_tflops
from tileprof.core.roofline import BOUNDS, fidelity_and_cores, with_roofline

TARGET_KINDS: tuple[str, ...] = ("tile", "gpu")
OP_ROW_SOURCE = ": op rows"
"""How a PyTorch trace's op rows end their ``source`` ("trace.json.gz: op rows"): they are in
the run table beside the trace's kernel rows, and are not kernels."""


@dataclass(frozen=True)
class RunColumn:
    """One column of the run table."""

    name: str
    dtype: pl.DataType
    doc: str
    derived: bool = False


RUN_COLUMNS: tuple[RunColumn, ...] = (
    RunColumn(
        "target",
        pl.String(),
        "device model as the source writes it; the devices of one capture or job are one target",
    ),
    RunColumn("target_kind", pl.Enum(list(TARGET_KINDS)), "tile or gpu"),
    RunColumn(
        "device",
        pl.String(),
        "which device of the target ran the row (GPU 0, chip 3), where the source numbers them",
    ),
    RunColumn("source", pl.String(), "file, and the place in it, the row comes from"),
    RunColumn("workload", pl.String(), "what was run (benchmark workload, GEMM, model)"),
    RunColumn("implementation", pl.String(), "how it was run (trainkernel, inductor, schedule)"),
    RunColumn("kernel", pl.String(), "kernel or tile group name"),
    RunColumn("op_family", pl.Enum(list(OP_FAMILIES)), "classifier: kind of work"),
    RunColumn("dtype", pl.Enum(list(DTYPES)), "classifier: number format"),
    RunColumn("shape", pl.String(), "problem shape as the source writes it"),
    RunColumn(
        "per", pl.String(), "what one time_us covers: call, step, GEMM, epoch, active (tile)"
    ),
    RunColumn("time_us", pl.Float64(), "µs per call, step, GEMM or epoch (see per)"),
    RunColumn("calls", pl.Int64(), "calls, steps or repetitions time_us averages over"),
    RunColumn("total_us", pl.Float64(), "µs over all calls, where the source gives it"),
    RunColumn("p50_us", pl.Float64(), "median µs per call (nearest rank)"),
    RunColumn("p95_us", pl.Float64(), "95th percentile µs per call (nearest rank)"),
    RunColumn("max_us", pl.Float64(), "longest call, µs"),
    RunColumn("mac", pl.Int64(), "multiply-accumulates per time_us, where the source states it"),
    RunColumn("energy_j", pl.Float64(), "J per time_us, idle-adjusted where the source has it"),
    RunColumn("energy_raw_j", pl.Float64(), "J per time_us, raw board energy"),
    RunColumn("baseline_implementation", pl.String(), "what speedup compares against"),
    RunColumn("baseline_time_us", pl.Float64(), "the baseline's time_us"),
    RunColumn("speedup", pl.Float64(), "baseline_time_us / time_us", derived=True),
    RunColumn("tflops", pl.Float64(), "2 × mac / time_us / 1e6", derived=True),
    RunColumn("peak_tflops", pl.Float64(), "dense peak of target for dtype", derived=True),
    RunColumn(
        "peak_fraction",
        pl.Float64(),
        "tflops / peak_tflops (tile groups too; never deviceUsefulUtilization)",
        derived=True,
    ),
    RunColumn("bytes", pl.Int64(), "bytes moved per time_us, where the work is known"),
    RunColumn(
        "arithmetic_intensity", pl.Float64(), "2 × mac / bytes (FLOP per byte)", derived=True
    ),
    RunColumn(
        "roofline_us",
        pl.Float64(),
        "max(2 × mac / peak, bytes / bandwidth), µs per time_us",
        derived=True,
    ),
    RunColumn(
        "bound",
        pl.Enum(list(BOUNDS)),
        "compute or memory (the larger roofline term); latency below the spec's floor",
        derived=True,
    ),
    RunColumn(
        "roofline_fraction",
        pl.Float64(),
        "roofline_us / time_us (above 1: the spec is wrong)",
        derived=True,
    ),
    RunColumn("j_per_mac", pl.Float64(), "energy_j / mac", derived=True),
    RunColumn("launch_op", pl.String(), "CPU op that launched the kernel (PyTorch traces)"),
    RunColumn("cores", pl.Int64(), "cores (tiles) the run used, where the source states it"),
    RunColumn(
        "start_skew_us", pl.Float64(), "µs from the first core's start to the last's, per call"
    ),
    RunColumn(
        "devices",
        pl.Int64(),
        "devices of the target in one file that ran this run (same kernel, shape, dtype, ...)",
        derived=True,
    ),
    RunColumn("device_min_us", pl.Float64(), "the fastest device's time_us", derived=True),
    RunColumn("device_max_us", pl.Float64(), "the slowest device's time_us", derived=True),
    RunColumn(
        "device_spread",
        pl.Float64(),
        "(device_max_us − device_min_us) / device_min_us",
        derived=True,
    ),
    RunColumn("slowest_device", pl.String(), "the device with device_max_us", derived=True),
    RunColumn("metadata", pl.String(), "JSON object: the source's other fields for this row"),
)

RUN_SCHEMA: dict[str, pl.DataType] = {c.name: c.dtype for c in RUN_COLUMNS}
# peak_fraction is derived for GPU rows but given for tile groups, so parsers may set it.
INPUT_COLUMNS: tuple[str, ...] = tuple(
    c.name for c in RUN_COLUMNS if not c.derived or c.name == "peak_fraction"
)


def call_statistics(duration: pl.Expr) -> list[pl.Expr]:
    """The per-call time columns of a kernel row, as a group aggregation of each call's
    ``duration`` (µs): ``count``, ``total_us``, ``mean_us``, nearest-rank ``p50_us`` and
    ``p95_us`` (rank ⌈n·p⌉), ``max_us``. Every GPU source that aggregates events per kernel
    (Kineto traces, nsys exports, rocprofv3 traces) computes them here, so they agree."""

    def rank(p: float) -> pl.Expr:
        index = (pl.len().cast(pl.Float64) * p).ceil().cast(pl.Int64) - 1
        return duration.sort().gather(index).first()

    return [
        pl.len().alias("count"),
        duration.sum().alias("total_us"),
        duration.mean().alias("mean_us"),
        rank(0.5).alias("p50_us"),
        rank(0.95).alias("p95_us"),
        duration.max().alias("max_us"),
    ]


def known_sum(column: str) -> pl.Expr:
    """The sum of a run column, null when any row's value is unknown: the sum of the known
    ones would read as the whole (a side's total µs or calls) and be smaller than it."""
    values = pl.col(column)
    return pl.when(values.null_count() == 0).then(values.sum())


def empty_runs() -> pl.DataFrame:
    """A run table with no rows."""
    return pl.DataFrame(schema=RUN_SCHEMA)


@dataclass
class ParsedRuns:
    """What one input file gives: its rows, its kind, and what a reader should be told."""

    kind: str
    frame: pl.DataFrame
    notes: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


def runs_from_rows(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Build a typed run table from row mappings; classify and derive what they leave out.

    ``op_family``/``dtype`` left unset are classified from kernel, implementation and
    workload names (in that order); ``metadata`` may be a mapping and is stored as JSON.
    """
    columns: dict[str, list[Any]] = {name: [] for name in INPUT_COLUMNS}
    for row in rows:
        unknown = set(row) - set(INPUT_COLUMNS) - {"classify_hint"}
        if unknown:
            raise ValueError(f"not run columns: {sorted(unknown)}")
        family, dt = classify(
            row.get("classify_hint"),
            row.get("kernel"),
            row.get("implementation"),
            row.get("workload"),
        )
        for name in INPUT_COLUMNS:
            value = row.get(name)
            if name == "op_family" and value is None:
                value = family
            elif name == "dtype" and value is None:
                value = dt
            elif name == "metadata" and isinstance(value, Mapping):
                value = json.dumps(value, sort_keys=False, default=str) if value else None
            columns[name].append(value)
    frame = pl.DataFrame(columns, schema={n: RUN_SCHEMA[n] for n in INPUT_COLUMNS})
    return with_derived(frame)


def with_derived(frame: pl.DataFrame) -> pl.DataFrame:
    """Add (or recompute) the derived columns and put columns in the documented order.

    ``peak_fraction`` is ``tflops / peak_tflops`` wherever both are known, else the one a
    run-table file carries.
    """
    peaks = [
        peak_tflops(t, d, f, fidelity, cores)
        for t, d, f, fidelity, cores in zip(
            frame["target"].to_list(),
            frame["dtype"].cast(pl.String).to_list(),
            frame["op_family"].cast(pl.String).to_list(),
            *fidelity_and_cores(frame),
            strict=True,
        )
    ]
    has_pf = "peak_fraction" in frame.columns
    out = frame.with_columns(pl.Series("peak_tflops", peaks, dtype=pl.Float64)).with_columns(
        (pl.col("baseline_time_us") / pl.col("time_us")).alias("speedup"),
        (2.0 * pl.col("mac").cast(pl.Float64) / pl.col("time_us") / 1e6).alias("tflops"),
        (pl.col("energy_j") / pl.col("mac").cast(pl.Float64)).alias("j_per_mac"),
    )
    computed = pl.col("tflops") / pl.col("peak_tflops")
    pf = pl.coalesce(computed, pl.col("peak_fraction")) if has_pf else computed
    out = out.with_columns(pf.alias("peak_fraction"))
    if "bytes" not in out.columns:
        out = out.with_columns(pl.lit(None, dtype=pl.Int64).alias("bytes"))
    out = out.with_columns(pl.coalesce(pl.col("bytes"), gemm_shape_bytes()).alias("bytes"))
    useful = pl.when(pl.col("target_kind") == "tile").then(
        pl.col("metadata").str.json_path_match("$.usefulCycles").cast(pl.Float64, strict=False)
    )
    out = with_roofline(out, flops=2 * pl.col("mac"), issue_cycles=useful).drop("time_lost_us")
    out = with_device_spread(out)
    return out.select([pl.col(c.name).cast(c.dtype) for c in RUN_COLUMNS])


SAME_RUN: tuple[str, ...] = (
    "target",
    "target_kind",
    "workload",
    "implementation",
    "kernel",
    "op_family",
    "dtype",
    "shape",
    "per",
    "launch_op",
)
"""What makes rows of several devices one run (with the file of their ``source``)."""
SAME_RUN_STATED: tuple[str, ...] = ("tensors", "math_fidelity", "op_type")
"""``metadata`` fields that also tell runs apart where a source states them (a Tenstorrent
op's tensors, math fidelity and op type)."""


def with_device_spread(frame: pl.DataFrame) -> pl.DataFrame:
    """The per-device spread of each run: over the rows with a ``device`` that share the file
    of their ``source`` (the part before ``": "``), every ``SAME_RUN`` column and the
    ``SAME_RUN_STATED`` metadata fields, how many
    devices ran it, the fastest and slowest ``time_us``, the spread (slowest − fastest) /
    fastest, and the slowest device (the first in row order on a tie). Null on rows without
    a device (docs/runs.md, "Devices of one target")."""
    stated = [f"_{k}" for k in SAME_RUN_STATED]
    keys = [*SAME_RUN, "_file", *stated]
    framed = frame.with_columns(
        pl.col("source").str.split(": ").list.first().alias("_file"),
        *[pl.col("metadata").str.json_path_match(f"$.{k}").alias(f"_{k}") for k in SAME_RUN_STATED],
    )
    has = pl.col("device").is_not_null()
    time = pl.when(has).then(pl.col("time_us"))
    slowest = pl.col("device").filter(time == time.max()).first()
    spread = framed.with_columns(
        devices=pl.when(has).then(pl.col("device").drop_nulls().n_unique().over(keys)),
        # null on a row without a device, as the columns above, though its run has devices
        device_min_us=pl.when(has).then(time.min().over(keys)),
        device_max_us=pl.when(has).then(time.max().over(keys)),
        slowest_device=pl.when(has).then(slowest.over(keys)),
    )
    low, high = pl.col("device_min_us"), pl.col("device_max_us")
    ratio = pl.when(low > 0).then((high - low) / low)
    return spread.with_columns(device_spread=ratio).drop("_file", *stated)


GEMM_WIDTH: dict[str, int] = {"f32": 4, "tf32": 4, "f16": 2, "bf16": 2, "f8": 1, "int8": 1}
"""Bytes per element of a GEMM run's dtype, for ``gemm_shape_bytes``."""


def gemm_shape_bytes() -> pl.Expr:
    """Bytes of a GEMM run whose ``shape`` is ``MxNxK`` and whose source states no bytes: A
    (M×K) and B (K×N) read and C (M×N) written once, all at the dtype's width (TraceLens' rule:
    the output at the inputs' dtype); null for other rows, or a dtype of no whole-byte width."""
    dims = pl.col("shape").str.extract_groups(r"^(\d+)x(\d+)x(\d+)$")
    m, n, k = (dims.struct.field(str(i)).cast(pl.Int64, strict=False) for i in (1, 2, 3))
    width = pl.col("dtype").cast(pl.String).replace_strict(GEMM_WIDTH, default=None)
    elements = m * k + k * n + m * n
    return pl.when(pl.col("op_family") == "gemm").then(elements * width.cast(pl.Int64))


def concat_runs(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """All rows of ``frames`` in one run table, in order."""
    if not frames:
        return empty_runs()
    return pl.concat([f.select(list(RUN_SCHEMA)) for f in frames], how="vertical")


class GroupSummary(Protocol):
    """What tile-group conversion needs from ``tileprof``'s ``Summary``."""

    @property
    def clock_hz(self) -> int | float: ...
    @property
    def tile_count(self) -> int: ...
    @property
    def groups(self) -> pl.DataFrame: ...


def tile_target_name(clock_hz: float, tile_count: int, device: str | None = None) -> str:
    """The tile device's target name, e.g. ``tile device (1472 tiles @ 1.5 GHz)``: the
    device's own name where the input gives one (``Tenstorrent wormhole_b0 (1 tile @ 1 GHz)``
    for a tt-metal device log of one core). The figures are not grouped by thousands: runs of
    stored profiles match on this name."""
    tiles = f"{tile_count} tile" + ("" if tile_count == 1 else "s")
    return f"{device or 'tile device'} ({tiles} @ {_hz_text(clock_hz)})"


def _hz_text(clock_hz: float) -> str:
    for unit, scale in (("GHz", 1e9), ("MHz", 1e6), ("kHz", 1e3)):
        if clock_hz >= scale:
            return f"{clock_hz / scale:g} {unit}"
    return f"{clock_hz:g} Hz"


def tile_runs(
    summary: GroupSummary,
    *,
    source: str,
    target: str | None = None,
    workload: str | None = None,
    work: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One run row per tile group of ``summary``.

    ``time_us = phaseCycles / clockHz × 1e6`` (the group's phase time, not the summed work)
    and no ``peak_fraction`` of its own (deviceUsefulUtilization, a tile-only measure, stays in
    ``metadata``; a GEMM group's FLOP count gives it one); the group's own statistics go to
    ``metadata``, with the work the group's samples state
    (``tileprof.analyses.tile_work.group_work``:
    kernelSpec, outputElements) where ``work`` gives it.
    """
    name = target or tile_target_name(summary.clock_hz, summary.tile_count)
    stated: dict[str, dict[str, Any]] = {}
    counted: dict[str, tuple[int | None, int | None]] = {}
    for w in work.iter_rows(named=True) if work is not None else ():
        stated[w["name"]] = {
            k: w[k]
            for k in ("kernelSpec", "kernelSpecs", "outputElements", "workUnknown")
            if w.get(k) is not None
        }
        counted[w["name"]] = (w.get("mac"), w.get("bytes"))
    rows = []
    for g in summary.groups.iter_rows(named=True):
        phase_cycles = g.get("phaseCycles")
        dims = g.get("dimensions")
        rows.append(
            {
                "target": name,
                "target_kind": "tile",
                "source": source,
                "workload": workload,
                "kernel": g["name"],
                "per": "active",
                "time_us": _cycles_us(phase_cycles, summary.clock_hz),
                "calls": None,
                "max_us": _cycles_us(g.get("maximumCycles"), summary.clock_hz),
                "p50_us": _cycles_us(g.get("p50Cycles"), summary.clock_hz),
                "p95_us": _cycles_us(g.get("p95Cycles"), summary.clock_hz),
                "mac": counted.get(g["name"], (None, None))[0],
                "bytes": counted.get(g["name"], (None, None))[1],
                "metadata": {
                    k: g.get(k)
                    for k in (
                        "sampleCount",
                        "tileCount",
                        "phaseCount",
                        "phaseCycles",
                        "workCycles",
                        "usefulCycles",
                        "usefulUtilization",
                        "workLaneOccupancy",
                        "deviceUsefulUtilization",
                    )
                    if k in g
                }
                | stated.get(g["name"], {})
                | ({"dimensions": dims} if dims else {}),
            }
        )
    return runs_from_rows(rows)


def _cycles_us(cycles: float | None, clock_hz: float) -> float | None:
    """``cycles / clockHz`` in µs, as ``cycles × 10⁶ / clockHz``: the numerator is exact for
    integer cycle counts, so the one rounding is the division's (``cycles / clockHz × 1e6``
    rounds twice: 94608 cycles at 1.5 GHz gave 63.071999999999996 µs, not 63.072)."""
    return None if cycles is None else cycles * 1_000_000 / clock_hz
