"""Roofline columns of a table of runs or ops: bytes, intensity, roofline time and the bound.

One definition for the run table and the op table (``docs/runs.md``, "Roofline"):

- ``arithmetic_intensity`` = FLOPs / bytes (per call);
- ``roofline_us`` = max(FLOPs / peak, bytes / bandwidth), per call, the spec's peak for the
  row's dtype and op family (``tileprof.core.specs``); an op with bytes but no FLOP count
  (elementwise, copy, normalization, reduction, softmax: ``FlopCounterMode`` counts none) has
  a compute term of 0 and stands on the memory roof alone;
- ``bound``: ``latency`` when both terms are below the spec's latency floor, else ``compute``
  or ``memory``, whichever term is larger; null when neither term is known;
- ``roofline_fraction`` = ``roofline_us`` / measured µs per call. Above 1 the measured time
  beat the roofline, so the spec (or the count) is wrong: it is kept, never clipped, and the
  tables say so;
- ``time_lost_us`` = (measured − roofline) × calls, what the op tables sort by.

A tile group with no FLOP count but with ``usefulCycles`` stands on the **issue-slot
roofline** instead: its compute term is usefulCycles ÷ (the spec's issue slots per tile per
cycle × tiles × clock), the time its useful instructions take with every issue slot of the
device busy. ``is_issue_slot_roofline`` tells such rows apart; texts label them so.
"""

from __future__ import annotations

import polars as pl

from tileprof.core.peaks import peak_tflops
from tileprof.core.specs import spec_for

ROOFLINE_COLUMNS: tuple[str, ...] = (
    "bytes",
    "arithmetic_intensity",
    "roofline_us",
    "bound",
    "roofline_fraction",
    "time_lost_us",
)
BOUNDS: tuple[str, ...] = ("compute", "memory", "latency")


def _spec_columns(
    targets: list[str | None],
    dtypes: list[str | None],
    families: list[str | None],
    fidelities: list[str | None],
    cores: list[float | None],
) -> pl.DataFrame:
    """Per row: the spec's peak (TFLOP/s; a Tenstorrent op's at its math fidelity on its
    cores, ``peaks.peak_tflops``), bandwidth (GB/s) and latency floor (µs)."""
    peaks, bandwidths, floors, issue = [], [], [], []
    rows = zip(targets, dtypes, families, fidelities, cores, strict=True)
    for target, dtype, family, fidelity, used in rows:
        spec = spec_for(target)
        peaks.append(peak_tflops(target, dtype, family, fidelity, used) if spec else None)
        bandwidths.append(spec.bandwidth_gbps(target) if spec else None)
        floors.append(spec.latency_floor_us() if spec else None)
        issue.append(spec.issue_slots_per_s(target) if spec else None)
    columns = {"_peak": peaks, "_bandwidth": bandwidths, "_floor": floors, "_issue": issue}
    return pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.Float64))


def fidelity_and_cores(frame: pl.DataFrame) -> tuple[list[str | None], list[float | None]]:
    """Per row: the math fidelity a Tenstorrent op ran at (``metadata.math_fidelity``) and the
    cores it ran on (``cores``); None where the frame has neither."""
    nothing: list[None] = [None] * frame.height
    fidelity: list[str | None] = list(nothing)
    if "metadata" in frame.columns and frame["metadata"].dtype == pl.String:
        fidelity = frame["metadata"].str.json_path_match("$.math_fidelity").to_list()
    cores: list[float | None] = list(nothing)
    if "cores" in frame.columns:
        cores = frame["cores"].cast(pl.Float64).to_list()
    return fidelity, cores


def with_roofline(
    frame: pl.DataFrame,
    *,
    flops: pl.Expr,
    time_us: str = "time_us",
    calls: str = "calls",
    family: str = "op_family",
    issue_cycles: pl.Expr | None = None,
) -> pl.DataFrame:
    """``frame`` with the roofline columns added (module docstring). ``frame`` has
    ``target``, ``dtype``, ``family``, ``bytes`` (per call), ``time_us`` and ``calls``;
    ``flops`` is the FLOPs per call (null where unknown); ``issue_cycles`` the useful
    cycles of a tile group (module docstring)."""
    specs = _spec_columns(
        frame["target"].cast(pl.String).to_list(),
        frame["dtype"].cast(pl.String).to_list(),
        frame[family].cast(pl.String).to_list(),
        *fidelity_and_cores(frame),
    )
    out = pl.concat([frame, specs], how="horizontal")
    byte_count = pl.col("bytes").cast(pl.Float64)
    flop_count = flops.cast(pl.Float64)
    compute = flop_count / (pl.col("_peak") * 1e6)
    memory = byte_count / (pl.col("_bandwidth") * 1e3)
    # an op whose bytes are known but whose FLOPs are not counted stands on the memory roof
    compute_or_zero = pl.when(flop_count.is_null() & byte_count.is_not_null()).then(0.0)
    compute_term = compute_or_zero.otherwise(compute)
    if issue_cycles is not None:
        issue_term = issue_cycles.cast(pl.Float64) / pl.col("_issue") * 1e6
        compute_term = (
            pl.when(flop_count.is_null() & issue_term.is_not_null())
            .then(issue_term)
            .otherwise(compute_term)
        )
    out = out.with_columns(compute_term.alias("_compute"), memory.alias("_memory"))
    roof = pl.max_horizontal("_compute", "_memory")
    roof = pl.when(pl.col("_compute").is_not_null() & pl.col("_memory").is_not_null()).then(roof)
    bound = (
        pl.when(roof.is_null())
        .then(None)
        .when(pl.col("_floor").is_not_null() & (roof < pl.col("_floor")))
        .then(pl.lit("latency"))
        .when(pl.col("_compute") >= pl.col("_memory"))
        .then(pl.lit("compute"))
        .otherwise(pl.lit("memory"))
    )
    measured = pl.col(time_us)
    out = out.with_columns(
        pl.when(byte_count > 0).then(flop_count / byte_count).alias("arithmetic_intensity"),
        roof.alias("roofline_us"),
        bound.alias("bound"),
    ).with_columns(
        pl.when(measured > 0).then(pl.col("roofline_us") / measured).alias("roofline_fraction"),
        # a tile group (no calls) is one phase of work
        ((measured - pl.col("roofline_us")) * pl.col(calls).cast(pl.Float64).fill_null(1.0)).alias(
            "time_lost_us"
        ),
    )
    return out.drop("_peak", "_bandwidth", "_floor", "_issue", "_compute", "_memory")


def is_issue_slot_roofline(row: dict[str, object]) -> bool:
    """A run row whose roofline is the issue-slot one: a tile group without a FLOP count."""
    return (
        row.get("target_kind") == "tile"
        and row.get("mac") is None
        and row.get("roofline_us") is not None
    )


def roofline_notes(frame: pl.DataFrame) -> list[str]:
    """A note when some rows ran faster than their roofline: the spec (or the count) is wrong,
    and the fraction is kept, never clipped."""
    if "roofline_fraction" not in frame.columns:
        return []
    beat = frame.filter(pl.col("roofline_fraction") > 1)
    if beat.height == 0:
        return []
    targets = ", ".join(sorted({str(t) for t in beat["target"].to_list()}))
    return [
        f"{beat.height} rows ran faster than their roofline (marked !, roofline_fraction > 1): "
        f"the spec of {targets} (--spec) or the rows' FLOP or byte count is wrong"
    ]
