"""The typed events of a PyTorch profiler (Kineto) trace, as the input layer hands them up.

``tileprof.inputs.gpu.kineto`` decodes a trace into the Kineto event frame (``read_events``,
``KINETO_SCHEMA``); the op table (``tileprof.analyses.ops``), the trace timeline
(``tileprof.model.trace``) and the critical path read its columns, so none imports the decoder
and none walks the events one by one. ``Args`` and ``Event`` are msgspec structs: typing them
makes msgspec check every event in one pass and name the bad one (the documents the compiled
decoder declines), and ``Args`` holds the free-form ``args`` of the few events an analysis
reads them of (``KinetoEvents.args_of``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
import polars as pl

from tileprof.core.gpu_events import COMM_NAME

Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
"""Integers the run table stores as Int64: a larger one is named as out of range."""


class Args(msgspec.Struct):
    """The ``args`` keys tileprof reads; others are skipped unread. Typing them here makes
    msgspec check every event in one pass and name the bad one (``$.traceEvents[i].args.…``)."""

    device: Int64 | None = None
    stream: Any = None  # a runtime call may write it as text ("0x0"); GPU events are checked
    correlation: Int64 | None = None
    external_id: Int64 | None = msgspec.field(default=None, name="External id")
    grid: list[Int64] | None = None
    block: list[Int64] | None = None
    input_type: list[str] | None = msgspec.field(default=None, name="Input type")
    # Read as any JSON: malformed dims or arguments give an op null work, never an error.
    input_dims: Any = msgspec.field(default=None, name="Input Dims")
    concrete_inputs: Any = msgspec.field(default=None, name="Concrete Inputs")
    flops: Any = None
    # NCCL's parameters (kernel args or ``record_param_comms``); their types vary between
    # PyTorch versions (a group name may be a number), so they are read as any JSON and kept
    # only when they have the expected type.
    collective: Any = msgspec.field(default=None, name="Collective name")
    in_nelems: Any = msgspec.field(default=None, name="In msg nelems")
    out_nelems: Any = msgspec.field(default=None, name="Out msg nelems")
    group_size: Any = msgspec.field(default=None, name="Group size")
    dtype: Any = None
    pg_name: Any = msgspec.field(default=None, name="Process Group Name")
    pg_id: Any = None
    seq: Any = msgspec.field(default=None, name="Seq")


class Event(msgspec.Struct):
    ph: str | None = None
    cat: str | None = None
    name: str | None = None
    ts: float | None = None
    dur: float | None = None
    tid: Any = None
    pid: Any = None
    args: Args | None = None


Step = tuple[int | None, int, float, float, str]
"""A ``ProfilerStep#N`` annotation: (device, N, ts, ts + dur, ``gpu_annotation`` for the
GPU-side one on the device its ``pid`` names, else ``cpu_step`` with no device)."""


KINETO_SCHEMA: dict[str, pl.DataType] = {
    "index": pl.Int64(),
    "cat": pl.Categorical(),
    "name": pl.Categorical(),
    "ts": pl.Float64(),
    "dur": pl.Float64(),
    "pid": pl.Int64(),
    "device": pl.Int64(),
    "stream": pl.Int64(),
    "correlation": pl.Int64(),
    "external_id": pl.Int64(),
    "grid": pl.Categorical(),
    "block": pl.Categorical(),
    "input_type": pl.Categorical(),
    "thread": pl.Categorical(),
    "flops": pl.Categorical(),
    "input_dims": pl.Categorical(),
    "concrete_inputs": pl.Categorical(),
    "input_type_raw": pl.Categorical(),
}
"""The Kineto event frame: one row per complete event (``ph: "X"``) of the categories
tileprof reads (GPU events, ``cpu_op``, runtime calls, step annotations), in file order.
``index`` is the place in ``traceEvents``; ``pid`` is null unless an integer; ``device``,
``stream``, ``correlation``, ``external_id`` are the ``args``; ``grid``/``block`` are written
``AxBxC`` (null when absent or empty), ``input_type`` as ``json.dumps`` writes the list (null
when absent or empty); ``thread`` is ``f"{pid}/{tid}"`` (Python's text of the values); ``flops``,
``input_dims``, ``concrete_inputs`` and ``input_type_raw`` are the JSON text of those ``args``
(null when absent or null; the decoder keeps the document's text, msgspec's reading writes
its own: decode them, each distinct text once, before comparing).

The text columns are Categorical: the compiled decoder's dictionaries, taken as they are
(a trace repeats a few hundred names over millions of rows; as strings, the text of the
626 MB trace took 200 MB more). An analysis compares them with literals, groups and
deduplicates them as they are, and casts to ``pl.String`` only the rows it keeps, before
filling, sorting or joining them as text (``as_text``): what a Categorical sorts by, and whether
two of them join, differs between polars versions."""


def as_text(column: str) -> pl.Expr:
    """A text column of the Kineto event frame as ``pl.String``: what an analysis sorts,
    fills, joins or hands on as text (``KINETO_SCHEMA``)."""
    return pl.col(column).cast(pl.String)


def texts_matching(values: pl.Series, pattern: str) -> pl.Series:
    """The distinct texts of ``values`` (a text column of the Kineto event frame, Categorical)
    that match the regular expression ``pattern``: each distinct text is matched once, no
    row's text made. Null matches nothing."""
    distinct = values.unique().drop_nulls().cast(pl.String)
    return distinct.filter(distinct.str.contains(pattern))


def text_order(values: pl.Series) -> pl.Expr:
    """A sort key for the text column named as ``values`` (one of the Kineto event frame's, or
    a frame taken from it): each row's place among ``values``' distinct texts in code-point
    order, the order ``as_text`` would sort them in, without making text of every row. Null
    stays null. ``values`` must hold every text of the rows sorted (the whole column does)."""
    distinct = values.unique().drop_nulls()
    texts = distinct.cast(pl.String).to_list()
    codes = distinct.to_physical().to_list()
    order = sorted(range(len(texts)), key=texts.__getitem__)
    place = {codes[i]: n for n, i in enumerate(order)}
    return pl.col(values.name).to_physical().replace_strict(place, return_dtype=pl.UInt32)


GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
"""The categories of a trace's GPU events (kernels, copies, fills)."""
LAUNCH_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver"})
"""The categories of the runtime calls that launch them."""
PLACEABLE_US = 9.2e15
"""The largest |time| in µs that integer ns hold (2⁶³ ns is 9.22e15 µs)."""


def placeable(us: pl.Expr) -> pl.Expr:
    """Whether a time in µs has a place on the integer-ns clock (finite, |us| < 9.2e15)."""
    return us.is_finite() & (us.abs() < PLACEABLE_US)


def runtime_calls(frame: pl.DataFrame) -> pl.LazyFrame:
    """The runtime calls (``cuda_runtime``/``cuda_driver``) of the Kineto event frame that have
    a place on the ns clock (a ``ts``, and a finite start and end within ±292 years; the
    others are left out), in file order, a missing ``name`` as ``""`` and ``dur`` as 0. Lazy:
    the caller's selection decides which columns of these rows are copied."""
    dur = pl.col("dur").fill_null(0.0)
    return (
        frame.lazy()
        .filter(
            pl.col("cat").is_in(LAUNCH_CATEGORIES),
            pl.col("ts").is_not_null(),
            placeable(pl.col("ts")) & placeable(pl.col("ts") + dur),
        )
        .with_columns(as_text("name").fill_null(""), dur)
    )


def launch_external_ids(frame: pl.DataFrame, known: pl.DataFrame) -> pl.DataFrame:
    """``correlation`` and ``launch_ext``: the External id of the runtime call that launched
    each correlation (its last call in the file), where that id is
    one of ``known``'s ``ext`` (the launching op is in the trace). ``frame`` is a Kineto event
    frame (``KINETO_SCHEMA``)."""
    return (
        frame.lazy()
        .filter(
            pl.col("cat").is_in(LAUNCH_CATEGORIES),
            pl.col("correlation").is_not_null(),
            pl.col("external_id").is_not_null(),
        )
        .select("correlation", pl.col("external_id").alias("launch_ext"))
        .filter(pl.col("correlation").is_last_distinct())
        .join(known.lazy().select("ext"), left_on="launch_ext", right_on="ext", how="semi")
        .collect()
    )


class KinetoEvents:
    """The events of a trace that tileprof reads, checked, in file order: the one Kineto event
    model every command reads (runs, ops, breakdown, findings, report, trace, critical).

    ``frame`` holds them as columns (``KINETO_SCHEMA``), which every analysis reads (the GPU
    event frame, the host frame, the step windows, the op rows); ``args_of`` decodes the
    free-form ``args`` of the communication events (``comm_events``: their NCCL parameters)
    by their index, and only theirs, so that the trace's bytes need not be kept."""

    def __init__(
        self,
        name: str,
        devices: dict[int, str],
        frame: pl.DataFrame,
        args_of: Callable[[Sequence[int]], list[Args]],
        rank: tuple[int, int, str | None] | None = None,
        base_time_ns: int | None = None,
    ) -> None:
        self.name = name
        self.devices = devices
        self.rank = rank  # distributedInfo: rank, world size, backend
        self.base_time_ns = base_time_ns  # baseTimeNanoseconds (inputs.gpu.kineto_clock)
        self.frame = frame
        self._args_of = args_of

    def args_of(self, indices: Sequence[int]) -> list[Args]:
        """The ``args`` of the communication events at ``indices`` (places in
        ``traceEvents``), in order; KeyError for an index of another event."""
        return self._args_of(indices)


COMM_CATEGORIES = ("kernel", "cpu_op")
"""The categories of the communication events (``comm_kernels``, ``comm_ops``)."""


def comm_kernels() -> pl.Expr:
    """The communication kernels (a ``kernel`` named like NCCL's or RCCL's)."""
    return (pl.col("cat") == "kernel") & as_text("name").str.contains(COMM_NAME.pattern)


def comm_ops() -> pl.Expr:
    """The ``record_param_comms`` ops with an External id, whose NCCL parameters stand for
    the kernels they launched."""
    return (
        (pl.col("cat") == "cpu_op")
        & (pl.col("name") == "record_param_comms")
        & pl.col("external_id").is_not_null()
    )


def timeline_rows() -> pl.Expr:
    """The rows of the Kineto event frame that a GPU timeline reads
    (``inputs/gpu/kineto_timeline.py``): every row but the CPU ops, of which only
    ``record_param_comms`` (``comm_ops``). A read for a timeline keeps only these rows, of
    ``TIMELINE_COLUMNS``: the compiled decoder files no other row (the crate's
    ``kineto::Rows::Timeline``), so the CPU ops, about half the rows of a trace, cost neither
    memory nor a cast."""
    return (pl.col("cat") != "cpu_op") | (pl.col("name") == "record_param_comms")


TIMELINE_COLUMNS = (
    "index", "cat", "name", "ts", "dur", "pid", "device", "stream", "correlation", "external_id",
)  # fmt: skip
"""The columns of the Kineto event frame that a GPU timeline reads: a read for a timeline
(``timeline_rows``) keeps only these; the op arguments' texts, ``thread``, ``grid`` and
``block`` are left out."""


def comm_events() -> pl.Expr:
    """The Kineto event frame's rows whose NCCL parameters the collectives read
    (``KinetoEvents.args_of``, ``inputs/gpu/kineto_frame.py``'s ``_comm_frame``): the
    communication kernels and ops."""
    return (comm_kernels() | comm_ops()).fill_null(False)


@dataclass(frozen=True)
class GpuEvents:
    """Every GPU event of one trace in the GPU event frame (``core.gpu_events``), by start (file
    order among equal starts), then the Kineto columns: ``index`` (place in ``traceEvents``),
    ``cat``, ``grid``, ``block``, ``op`` (the launching CPU op) and ``op_types``."""

    events: pl.DataFrame
    devices: dict[int, str]
    cpu_ops: int
