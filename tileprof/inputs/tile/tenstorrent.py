"""Tenstorrent per-op device reports (tt-metal's ``ops_perf_results*.csv``).

A Tenstorrent chip (Wormhole, Blackhole) is a second tile-array device: a grid of Tensix cores
that an op spreads over. Its profiler does not write per-core samples the way a tile dump does;
it writes one row per op call, with what the cores did summed up (duration spread, first-to-last
start). So the report is a run source, not a tile dump: each op becomes run-table rows of
``target_kind`` ``tile``, one target per chip, aggregated per (chip, op, math fidelity,
input/output tensors) as GPU kernels are aggregated per name.

Read (``docs/formats.md`` lists what is ignored and why): ``OP CODE``, ``OP TYPE``,
``DEVICE ID``, ``DEVICE ARCH``, ``MATH FIDELITY``, ``CORE COUNT``, ``AVAILABLE WORKER CORE
COUNT``, ``DEVICE KERNEL DURATION [ns]``, the per-core min/max/avg and ``FIRST TO LAST START``
when present, the ``PM …`` ideal-model columns, every ``INPUT_i``/``OUTPUT_i`` shape
(``W, Z, Y, X`` as ``padded[logical]``), layout, datatype and memory, and ``signpost`` rows
(named marks in host time: each opens a window that lasts to the next one).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl

from tileprof.core.errors import InputError
from tileprof.core.gpu_timeline import GpuTimeline
from tileprof.core.run_schema import ParsedRuns, runs_from_rows
from tileprof.inputs._csv_table import LINE, numbers, read_text_table
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import TENSTORRENT, TENSTORRENT_REQUIRED

KIND = TENSTORRENT
DURATION = "DEVICE KERNEL DURATION [ns]"
HOST_START = "HOST START TS"
NS_COLUMNS: dict[str, str] = {
    DURATION: "duration_us",
    "DEVICE KERNEL DURATION PER CORE MIN [ns]": "core_min_us",
    "DEVICE KERNEL DURATION PER CORE MAX [ns]": "core_max_us",
    "DEVICE KERNEL DURATION PER CORE AVG [ns]": "core_avg_us",
    "DEVICE KERNEL FIRST TO LAST START [ns]": "start_skew_us",
    "PM IDEAL [ns]": "pm_ideal_us",
    "PM COMPUTE [ns]": "pm_compute_us",
    "PM BANDWIDTH [ns]": "pm_bandwidth_us",
    "OP TO OP LATENCY [ns]": "op_to_op_us",
}
"""Nanosecond columns read, and the µs figure each becomes (per call, then averaged)."""
NUMBER_COLUMNS: dict[str, str] = {
    "DEVICE ID": "device",
    "CORE COUNT": "cores",
    "AVAILABLE WORKER CORE COUNT": "available_cores",
    "PM FPU UTIL (%)": "pm_fpu_util_percent",
    "DRAM BW UTIL (%)": "dram_bw_util_percent",
    "NOC UTIL (%)": "noc_util_percent",
    HOST_START: "host_start_ns",
    "GLOBAL CALL COUNT": "call_count",
}
INTEGER_COLUMNS = frozenset({"DEVICE ID", "CORE COUNT", "AVAILABLE WORKER CORE COUNT"})
"""Number columns that must hold integers (the ns columns must not be negative)."""
TEXT_COLUMNS: dict[str, str] = {
    "OP CODE": "op",
    "OP TYPE": "op_type",
    "DEVICE ARCH": "arch",
    "MATH FIDELITY": "math_fidelity",
}
TENSOR = re.compile(r"^(INPUT|OUTPUT)_(\d+)_([WZYX])_PAD\[LOGICAL\]$")
DTYPES: dict[str, str] = {"BFLOAT16": "bf16", "FLOAT32": "f32", "FLOAT16": "f16"}
"""Tensor datatypes that name one of the run table's dtypes. Block-float formats
(``BFLOAT8_B``, ``BFLOAT4_B``: a shared exponent per 16 values) and integers name none."""
MATMUL_OPS = re.compile(r"matmul", re.IGNORECASE)
CONV_OPS = re.compile(r"conv(?!ert)", re.IGNORECASE)
"""A convolution's OP CODE (``OptimizedConvNew``, ``Conv2d``), not ``ConvertToCHW``."""
OP_SUFFIX = re.compile(r"(?:Device)?(?:Operation|Op)$")
"""What ttnn appends to a device operation's class name (``ReduceDeviceOperation``,
``MinimalMatmulOp``): cut before the op's name is read, so that ``Reduce`` is read, not
``ReduceDevice``."""
OP_RULES: tuple[tuple[str, str], ...] = (
    # normalization first: LayerNormPreAllGather computes a norm's local statistics
    ("reduce", r"^(LayerNorm|RMSNorm|RmsNorm|GroupNorm|BatchNorm|RunningStatistics|Welford)"),
    ("reduce", r"^Moreh(LayerNorm|GroupNorm|Norm|Sum|Mean|Cumsum|ClipGradNorm|NllLoss)"),
    # a collective fused with a matmul counts the matmul's work
    ("gemm", r"^(AllGatherMatmul|MatmulReduceScatter|Moreh(Matmul|Linear|Dot|Bmm|BMM))"),
    ("gemm", r"^(Conv2d|Conv3d|ConvTranspose2d|OptimizedConv)"),
    ("exchange", r"^(AllGather|ReduceScatter|AllReduce|AllToAll|AllBroadcast|Broadcast|Barrier)"),
    ("exchange", r"^(PointToPoint|SendAsync|RecvAsync|Send|Recv)$|^PointToPoint"),
    ("copy", r"^(InterleavedToSharded|ShardedToInterleaved|Reshard|Halo|Move|Copy|Clone)"),
    ("copy", r"^(PagedUpdateCache|UpdateKVCache|UpdateCache|Embeddings?$|Gather|Scatter)"),
    ("copy", r"^(Repeat$|Expand|NonZeroIndices|IndexFill|MorehGetItem)"),
    ("fill", r"^(PagedFillCache|FillCache|Full|FullLike|Arange|MorehArange|FillRM|Rand|Uniform)"),
    ("fill", r"^Bernoulli"),
    ("layout", r"^(Concat|NLPConcatHeads|NlpConcatHeads|NLPCreateHeads|NlpCreateHeads)"),
    ("layout", r"^(CreateQKVHeads|ConcatenateHeads|Fold|MorehFold|Split|Pad|FillPad|Permute)"),
    ("layout", r"^(Roll|Deinterleave|ConvertToCHW|ConvertToHWC|Sort|MeshPartition)"),
    ("cast", r"^Typecast"),
    ("elementwise", r"^(RotaryEmbedding|Where|Ternary|UpSample|Upsample|GridSample|Lerp)"),
    ("elementwise", r"^(Addcmul|Addcdiv|Bcast|PlusOne|IsIn|Dropout|RepeatAndInterleave)"),
    ("elementwise", r"^Moreh(Adam|AdamW|Sgd|AbsPow)"),
    # ttnn keeps these under operations/reduction: scans (cumulative sums and products, the
    # integral image, the moving average), arg/top-k selection and routing by it
    ("reduce", r"^(IntImg|Accumulation|Cumsum|Cumprod|Cumulation|Ema$|PrefixScan|HCSumReduce)"),
    ("reduce", r"^(Reduce|FastReduce|ArgMax|ArgMin|Argmax|Prod|TopK|Topk|Sampling|Moe$)"),
    ("reduce", r"^(GroupedGate|Pool2D|MaxPool|AvgPool|GlobalAvgPool|EmbeddingBackward)"),
)
"""What a Tenstorrent op does, by its OP CODE (``OP_SUFFIX`` cut off), where the generic
classifier (``core.classify``, which reads kernel names) would read the name wrong or not at
all. The families follow ttnn's own filing of each op (``ttnn/cpp/ttnn/operations/``:
``reduction/`` holds the scans, arg/top-k and the integral image ``IntImg``; ``data_movement/``
the copies and layouts; ``ccl/`` the collectives; ``normalization/``, ``pool/``, ``conv/``,
``eltwise/``, ``moreh/``): moving a tensor between memories, a cache update, an embedding
lookup or a gather is a copy; heads, concatenation, padding and sorting rearrange (layout); a
typecast casts; filling a cache or generating values (arange, random) fills; norms, pooling,
scans and selections reduce; a convolution is gemm. Tried in order, first match wins; an op
matching none is classified as any kernel."""
OP_FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (family, re.compile(rx)) for family, rx in OP_RULES
)


def op_family(op: str | None) -> str | None:
    """The family ``OP_RULES`` gives the op, or None (then ``core.classify`` decides)."""
    name = OP_SUFFIX.sub("", op.strip()) if op else ""
    return next((f for f, rx in OP_FAMILIES if name and rx.search(name)), None)


SIGNPOST = "signpost"


def parse(path: str | Path, data: bytes) -> ParsedRuns:
    """The per-op runs of one report: its chips are one target, each row's ``device`` the
    chip that ran it."""
    table = _read(path, data)
    ops, windows = _split_signposts(table)
    # host-side ops (no device, no device kernel time) ran on no chip: counted, not rows
    on_device = pl.col("device").is_not_null() | pl.col("duration_us").is_not_null()
    host = ops.filter(~on_device).height
    ops = ops.filter(on_device)
    name = Path(path).name
    ops, log_notes = with_device_log(Path(path), ops)
    archs = ops["arch"].drop_nulls().unique().to_list()
    board = board_from_log(Path(path), archs[0]) if len(archs) == 1 else None
    rows = [_row(name, r, board) for r in _aggregate(ops).iter_rows(named=True)]
    meta: dict[str, Any] = {
        "chips": sorted({r["device"] for r in rows if r["device"] is not None}),
        "op_calls": ops.height,
        "host_op_calls": host,
        "signposts": windows,
    }
    notes = [f"{name}: {host} host-side op calls (no device kernel time) left out"] if host else []
    notes += log_notes + board_notes(name, ops, board)
    return ParsedRuns(KIND, runs_from_rows(rows), notes=notes, metadata=meta)


def _read(path: str | Path, data: bytes) -> pl.DataFrame:
    """The columns read, renamed, numbers as Float64 (µs for the ns columns), checked by
    ``read_text_table`` and ``numbers`` (a truncated file or a bad cell is named)."""
    raw = read_text_table(path, data, sorted(TENSTORRENT_REQUIRED))
    out: list[pl.Expr | pl.Series] = []
    for column, alias in {**NS_COLUMNS, **NUMBER_COLUMNS}.items():
        least = 0 if column in NS_COLUMNS else None
        values = numbers(path, raw, column, integer=column in INTEGER_COLUMNS, minimum=least)
        out.append((values / 1000.0 if column in NS_COLUMNS else values).alias(alias))
    for column, alias in TEXT_COLUMNS.items():
        cell = (
            pl.col(column).str.strip_chars() if column in raw.columns else pl.lit(None, pl.String())
        )
        out.append(pl.when(cell != "").then(cell).alias(alias))
    out.append(_tensors(raw))
    out.extend(_tensor_bytes(raw))
    out.extend(_operand_dims(raw))
    dtype = "INPUT_0_DATATYPE"
    out.append(
        (
            pl.col(dtype).str.strip_chars() if dtype in raw.columns else pl.lit(None, pl.String())
        ).alias("input_dtype")
    )
    out.append(pl.col(LINE).alias("line"))
    return raw.select(out)


OPERAND_DIMS: dict[str, str] = {
    "INPUT_0_W_PAD[LOGICAL]": "a_w",
    "INPUT_0_Z_PAD[LOGICAL]": "a_z",
    "INPUT_0_Y_PAD[LOGICAL]": "a_y",
    "INPUT_0_X_PAD[LOGICAL]": "a_x",
    "INPUT_1_W_PAD[LOGICAL]": "b_w",
    "INPUT_1_Z_PAD[LOGICAL]": "b_z",
    "INPUT_1_Y_PAD[LOGICAL]": "b_y",
    "INPUT_1_X_PAD[LOGICAL]": "b_x",
    "OUTPUT_0_W_PAD[LOGICAL]": "o_w",
    "OUTPUT_0_Z_PAD[LOGICAL]": "o_z",
    "OUTPUT_0_Y_PAD[LOGICAL]": "o_y",
    "OUTPUT_0_X_PAD[LOGICAL]": "o_x",
}
"""The logical dims a matmul's work is read from: A is W×Z×Y×X (M = Y, K = X), B is
W×Z×Y×X (K = Y, N = X); the batch is W·Z broadcast over both (``broadcast_batch``)."""


def _operand_dims(raw: pl.DataFrame) -> list[pl.Expr]:
    """The logical size of each matmul operand dim (``32[19]`` → 19; ``19`` → 19)."""
    out = []
    for column, alias in OPERAND_DIMS.items():
        if column not in raw.columns:
            out.append(pl.lit(None, pl.Int64()).alias(alias))
            continue
        cell = pl.col(column).str.strip_chars()
        logical = cell.str.extract(r"\[\s*(\d+)\s*\]", 1).fill_null(cell)
        out.append(logical.cast(pl.Int64, strict=False).alias(alias))
    return out


WIDTHS: dict[str, float] = {
    "FLOAT32": 4.0,
    "BFLOAT16": 2.0,
    "FLOAT16": 2.0,
    "BFLOAT8_B": 1.0,
    "BFLOAT4_B": 0.5,
    "UINT32": 4.0,
    "INT32": 4.0,
    "UINT16": 2.0,
    "UINT8": 1.0,
}
"""Bytes per value of each tensor datatype. The block-float formats (a shared exponent per 16
values) count their mantissa bytes only, as tt-perf-report counts them; a datatype not listed
gives no byte count (null, never a guess)."""


def _slots(raw: pl.DataFrame) -> dict[tuple[str, int], dict[str, str]]:
    """(INPUT/OUTPUT, i) → {dim letter: column} of every tensor slot the report has."""
    slots: dict[tuple[str, int], dict[str, str]] = {}
    for column in raw.columns:
        m = TENSOR.match(column)
        if m:
            slots.setdefault((m[1], int(m[2])), {})[m[3]] = column
    return slots


INDEXED_READS: dict[str, tuple[str, int]] = {"Embeddings": ("INPUT", 1)}
"""Ops that read one tensor only at the rows they write (OP CODE prefix → that tensor's slot):
an embedding lookup reads one row of its weight table per output row, so that tensor counts
the output's values at its own width, not the whole table (which would put the op's roofline
far above its measured time)."""


def _logical_values(dims: dict[str, str]) -> pl.Expr:
    """A tensor's logical W·Z·Y·X values (``32[19]`` → 19; a missing dim is 1)."""
    values = pl.lit(1, pl.Int64)
    for d in "WZYX":
        if d in dims:
            cell = pl.col(dims[d]).str.strip_chars()
            logical = cell.str.extract(r"\[\s*(\d+)\s*\]", 1).fill_null(cell)
            values = values * logical.cast(pl.Int64, strict=False).fill_null(1)
    return values


def _tensor_bytes(raw: pl.DataFrame) -> list[pl.Expr]:
    """Per op call, the bytes of its tensors in DRAM and in L1: each tensor's logical
    W·Z·Y·X values at its datatype's width (``WIDTHS``), rounded up to a whole byte, placed by
    its ``MEMORY`` (``…DRAM…`` or ``…L1…``); null when a tensor there has an unknown width. A
    tensor an op reads only at the rows it writes (``INDEXED_READS``) counts the output's
    values."""
    slots = _slots(raw)
    op = pl.col("OP CODE").str.strip_chars() if "OP CODE" in raw.columns else pl.lit("")
    totals: dict[str, list[pl.Expr]] = {"DRAM": [], "L1": []}
    for (kind, i), dims in sorted(slots.items()):
        prefix = f"{kind}_{i}"
        memory, dtype = f"{prefix}_MEMORY", f"{prefix}_DATATYPE"
        if memory not in raw.columns or dtype not in raw.columns:
            continue
        values = _logical_values(dims)
        for name, slot in INDEXED_READS.items():
            if slot == (kind, i) and ("OUTPUT", 0) in slots:
                indexed = op.str.starts_with(name).fill_null(False)
                values = pl.when(indexed).then(_logical_values(slots[("OUTPUT", 0)]))
                values = values.otherwise(_logical_values(dims))
        width = (
            pl.col(dtype)
            .str.strip_chars()
            .replace_strict(WIDTHS, default=None, return_dtype=pl.Float64)
        )
        size = (values.cast(pl.Float64) * width.cast(pl.Float64)).ceil().cast(pl.Int64)
        present = pl.col(dims.get("X", dims.get("Y", ""))).str.strip_chars().fill_null("") != ""
        for place in totals:
            here = present & pl.col(memory).str.contains(place, literal=True).fill_null(False)
            totals[place].append(pl.when(here).then(size).otherwise(0))
    return [
        (pl.sum_horizontal(parts) if parts else pl.lit(None, pl.Int64)).alias(name)
        for name, parts in (("dram_bytes", totals["DRAM"]), ("l1_bytes", totals["L1"]))
    ]


def _tensors(raw: pl.DataFrame) -> pl.Expr:
    """Each row's tensors as one struct-free text: ``INPUT_0 1x1x19x1280 TILE BFLOAT16 DRAM;
    …``, logical dims (W×Z×Y×X), so equal tensors group together."""
    slots: dict[tuple[str, int], dict[str, str]] = {}
    for column in raw.columns:
        m = TENSOR.match(column)
        if m:
            slots.setdefault((m[1], int(m[2])), {})[m[3]] = column
    parts = []
    for (kind, i), dims in sorted(slots.items()):
        prefix = f"{kind}_{i}"
        cols = [dims[d] for d in "WZYX" if d in dims]
        logical = [
            pl.col(c).str.extract(r"\[\s*(\d+)\s*\]", 1).fill_null(pl.col(c).str.strip_chars())
            for c in cols
        ]
        extra = [
            pl.col(f"{prefix}_{k}").fill_null("") if f"{prefix}_{k}" in raw.columns else pl.lit("")
            for k in ("LAYOUT", "DATATYPE", "MEMORY")
        ]
        shape = pl.concat_str(logical, separator="x")
        parts.append(
            pl.when(shape.is_not_null() & (shape != "")).then(
                pl.concat_str([pl.lit(prefix), shape, *extra], separator=" ")
            )
        )
    if not parts:
        return pl.lit(None, pl.String()).alias("tensors")
    return pl.concat_str(parts, separator="; ", ignore_nulls=True).alias("tensors")


def _split_signposts(table: pl.DataFrame) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """The op rows, and each signpost's window: from its host time to the next signpost's
    (the last one to the end), with the op calls and device time inside it (each op placed by
    its host start: an as-of join, not a scan per window)."""
    is_mark = pl.col("op_type") == SIGNPOST
    marks = (
        table.filter(is_mark & pl.col("host_start_ns").is_not_null())
        .sort("host_start_ns", maintain_order=True)
        .select(
            pl.int_range(pl.len()).alias("window"),
            pl.col("op").alias("name"),
            pl.col("host_start_ns").alias("start_ns"),
        )
        .with_columns(end_ns=pl.col("start_ns").shift(-1))
    )
    ops = table.filter(~is_mark | pl.col("op_type").is_null())
    if marks.height == 0:
        return ops, []
    placed = (
        ops.filter(pl.col("host_start_ns").is_not_null())
        .sort("host_start_ns")
        .join_asof(marks, left_on="host_start_ns", right_on="start_ns", strategy="backward")
        .filter(pl.col("window").is_not_null())
        .group_by("window")
        .agg(pl.len().alias("op_calls"), pl.col("duration_us").sum().alias("device_us"))
    )
    windows = (
        marks.join(placed, on="window", how="left")
        .with_columns(pl.col("op_calls").fill_null(0), pl.col("device_us").fill_null(0.0))
        .sort("window")
        .drop("window")
    )
    return ops, windows.to_dicts()


DEVICE_LOGS = ("profile_log_device.csv", "profile_log_device.csv.gz")
"""The per-core device log tt-metal writes beside an ops report (same folder)."""


def with_device_log(path: Path, ops: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """The op calls with ``log_us``: tt-metal's device kernel duration of each call computed
    from the device log in the report's folder (first ``*-KERNEL`` start to last end over
    every core and RISC of the call on its chip, in µs at the log's clock), joined on
    ``DEVICE ID`` = ``PCIe slot`` and ``GLOBAL CALL COUNT`` = ``run host ID``; null when there
    is no log, and for calls of a captured trace (replayed under one run host ID)."""
    from tileprof.inputs._common import read_bytes
    from tileprof.inputs.tile.tt_device_log import op_kernel_cycles, read_zones

    found = [path.parent / n for n in DEVICE_LOGS if (path.parent / n).is_file()]
    if not found:
        return ops.with_columns(log_us=pl.lit(None, pl.Float64)), []
    log = found[0]
    header, zones, _ = read_zones(log, read_bytes(log))
    spans = (
        op_kernel_cycles(zones)
        .filter(pl.col("replay").is_null())
        .select(
            pl.col("chip").cast(ops.schema["device"]).alias("device"),
            pl.col("op_id").cast(ops.schema["call_count"]).alias("call_count"),
            (pl.col("cycles") / header.clock_hz * 1e6).alias("log_us"),
        )
    )
    out = ops.join(spans, on=["device", "call_count"], how="left")
    matched = out.filter(pl.col("log_us").is_not_null())
    same = matched.filter((pl.col("log_us") - pl.col("duration_us")).abs() < 5e-4).height
    note = (
        f"{path.name}: {log.name} beside it gives the device kernel duration of "
        f"{matched.height} of {ops.height} op calls (metadata device_log_kernel_us); "
        f"{same} equal the report's DEVICE KERNEL DURATION [ns] to the nanosecond"
    )
    return out, [note]


def _aggregate(ops: pl.DataFrame) -> pl.DataFrame:
    """Per (chip, op, math fidelity, tensors): calls, total/mean/p50/p95/max device kernel
    µs, cores used (the most any call used), and the mean of every other per-call figure."""
    dur = pl.col("duration_us")

    def rank(p: float) -> pl.Expr:
        idx = (dur.count().cast(pl.Float64) * p).ceil().cast(pl.Int64) - 1
        return dur.drop_nulls().sort().get(idx.clip(0), null_on_oob=True)

    means = [
        pl.col(c).mean()
        for c in (
            "core_min_us",
            "core_max_us",
            "core_avg_us",
            "start_skew_us",
            "pm_ideal_us",
            "pm_compute_us",
            "pm_bandwidth_us",
            "pm_fpu_util_percent",
            "log_us",
            "op_to_op_us",
            "dram_bw_util_percent",
            "noc_util_percent",
        )
    ]
    keys = ["device", "arch", "op", "op_type", "math_fidelity", "tensors"]
    firsts = [
        pl.col(c).first()
        for c in ("input_dtype", *OPERAND_DIMS.values(), "dram_bytes", "l1_bytes", "line")
    ]
    return (
        ops.group_by(keys, maintain_order=True)
        .agg(
            pl.len().alias("calls"),
            pl.when(dur.count() > 0).then(dur.sum()).alias("total_us"),
            dur.mean().alias("time_us"),
            rank(0.5).alias("p50_us"),
            rank(0.95).alias("p95_us"),
            dur.max().alias("max_us"),
            pl.col("cores").max().alias("cores"),
            pl.col("cores").min().alias("cores_min"),
            pl.col("available_cores").max().alias("available_cores"),
            *means,
            *firsts,
        )
        .sort(["total_us", "op"], descending=[True, False], nulls_last=True)
    )


def chip_target(arch: str | None, board: str | None = None) -> str:
    """The target of a report's chips: ``Tenstorrent wormhole_b0``, with the board where the
    device log beside the report names it (``Tenstorrent wormhole_b0 n300``: ``board_from_log``),
    arch left out when the report does not name it (older reports have no ``DEVICE ARCH``). The
    chips of one report are one target; each row's ``device`` says which chip (``chip 3``)."""
    if not arch:
        return "Tenstorrent"
    return f"Tenstorrent {arch}" + (f" {board}" if board else "")


def board_from_log(path: Path, arch: str | None) -> str | None:
    """The board of the report's chips as the device log beside it names it: line 1's ``ARCH``
    (which must be the report's) and ``Max Compute Cores`` (``tt_device_log.board_of``); None
    without a log, a core count, or a count that names one board."""
    from tileprof.inputs.tile.tt_device_log import board_of, parse_header

    for name in DEVICE_LOGS:
        log = path.parent / name
        if not log.is_file():
            continue
        try:
            first = _first_line(log)
            header = parse_header(log, first)
        except (OSError, InputError, UnicodeDecodeError):
            return None
        if arch and header.arch.strip().lower() == arch.strip().lower():
            return board_of(header.arch, header.max_cores)
        return None
    return None


def _first_line(path: Path) -> str:
    """Line 1 of a plain or gzip text file."""
    import gzip

    with path.open("rb") as raw:
        head = raw.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as handle:
        return handle.readline(4096).decode("utf-8-sig")


ASSUMED = (
    "{name}: the report names its chips' architecture ({arch}), not their board, so their peaks "
    "are the {spec}'s ({path}), an assumption (tt-perf-report's too){why}; a "
    "profile_log_device.csv with its 'Max Compute Cores' beside the report, or --spec, names "
    "the board"
)
"""The note of a report whose board is assumed (``board_notes``)."""


def board_notes(name: str, ops: pl.DataFrame, board: str | None) -> list[str]:
    """Where the report does not name its chips' board: one note per architecture naming the
    spec whose peaks its figures use (the bundled one ``core.specs.spec_for`` matches), never a
    silent pick. Linked Blackhole chips (several chips and a collective op) are no p100a: it
    has no card-to-card ports and cannot join a mesh (Tenstorrent, Blackhole multi-card
    topologies, docs.tenstorrent.com/aibs/blackhole/multi-card-topologies.html)."""
    from tileprof.core.classify import op_family as classify_op
    from tileprof.core.specs import spec_for

    if board is not None:
        return []
    notes = []
    for arch in sorted({a for a in ops["arch"].drop_nulls().to_list()}):
        spec = spec_for(chip_target(arch))
        if spec is None or not spec.path.startswith("tileprof/data/specs/"):
            continue  # no peak at all, or the user's own spec (--spec): nothing assumed
        mine = ops.filter(pl.col("arch") == arch)
        chips = mine["device"].drop_nulls().n_unique()
        linked = chips > 1 and any(
            (op_family(op) or classify_op(op)) == "exchange" for op in mine["op"].drop_nulls()
        )
        why = (
            f"; its {chips} chips exchange data, so they are no p100a (no card-to-card ports)"
            if linked and arch.lower() == "blackhole"
            else ""
        )
        notes.append(ASSUMED.format(name=name, arch=arch, spec=spec.name, path=spec.path, why=why))
    return notes


def broadcast_batch(a: tuple[int, ...], b: tuple[int, ...]) -> int | None:
    """The batch of a matmul whose operands' batch dims are ``a`` and ``b`` (W, Z): each dim
    broadcast as numpy and ttnn broadcast (equal, or 1 on one side: the other side's), then
    multiplied. None when a dim differs and neither side is 1 (no matmul has such operands).

    A 1×1×3200×512 by 1×32×512×128 matmul is 32 matmuls of 3200×512 by 512×128: B's batch
    counts as much as A's (tt-perf-report takes the larger W and Z of the two)."""
    batch = 1
    for x, y in zip(a, b, strict=True):
        if x != y and 1 not in (x, y):
            return None
        batch *= max(x, y)
    return batch


def matmul_work(r: dict[str, Any]) -> tuple[str | None, int | None]:
    """(shape, multiply-accumulates per call) of a matmul row: A is batch×M×K, B is K×N, so
    ``MAC = batch·M·N·K`` (FLOPs = 2·MAC, as TraceLens and the GPU op rows count a GEMM), the
    batch broadcast over both operands (``broadcast_batch``; B's W and Z taken as 1 where the
    report has none); the shape is ``MxNxK`` (``BxMxNxK`` when batched). None when K of A
    and B differ or the batch dims do not broadcast."""
    dims = [r[k] for k in ("a_w", "a_z", "a_y", "a_x", "b_y", "b_x")]
    if any(d is None for d in dims):
        return None, None
    w, z, m, k, k_b, n = (int(d) for d in dims)
    b_w, b_z = (int(r.get(key) or 1) for key in ("b_w", "b_z"))
    batch = broadcast_batch((w, z), (b_w, b_z))
    if k != k_b or batch is None:
        return None, None
    shape = f"{m}x{n}x{k}" if batch == 1 else f"{batch}x{m}x{n}x{k}"
    return shape, batch * m * n * k


def conv_work(r: dict[str, Any]) -> tuple[str | None, int | None]:
    """(shape, multiply-accumulates per call) of a convolution: tt-metal runs it as a matmul of
    the output pixels (M = the output's W·Z·Y: N·H_out·W_out) by the weight matrix (1×1×K×N,
    K = C_in·kh·kw its rows, N = C_out its columns), so ``MAC = M·N·K``; shape ``MxNxK``.
    None when the weight is not that 1×1×K×N matrix or its N is not the output's."""
    dims = [r[k] for k in ("o_w", "o_z", "o_y", "o_x", "b_w", "b_z", "b_y", "b_x")]
    if any(d is None for d in dims):
        return None, None
    o_w, o_z, o_y, o_x, b_w, b_z, k, n = (int(d) for d in dims)
    if (b_w, b_z) != (1, 1) or n != o_x:
        return None, None
    m = o_w * o_z * o_y
    return f"{m}x{n}x{k}", m * n * k


def _row(name: str, r: dict[str, Any], board: str | None = None) -> dict[str, Any]:
    """One run-table row of an aggregated op (``board``: its chips' board, where known)."""
    is_matmul = bool(r["op"] and MATMUL_OPS.search(r["op"]))
    is_conv = bool(r["op"] and CONV_OPS.search(r["op"]))
    shape, mac = matmul_work(r) if is_matmul else conv_work(r) if is_conv else (None, None)
    meta = {
        "op_type": r["op_type"],
        "math_fidelity": r["math_fidelity"],
        "tensors": r["tensors"],
        "available_cores": _int(r["available_cores"]),
        "cores_min": _int(r["cores_min"]),
        "dram_bytes": r["dram_bytes"],
        "l1_bytes": r["l1_bytes"],
    }
    for key in ("core_min_us", "core_max_us", "core_avg_us", "pm_ideal_us", "pm_compute_us"):
        meta[key] = r[key]
    meta |= {
        "pm_bandwidth_us": r["pm_bandwidth_us"],
        "pm_fpu_util_percent": r["pm_fpu_util_percent"],
        "device_log_kernel_us": r["log_us"],
        "op_to_op_us": r["op_to_op_us"],
        "dram_bw_util_percent": r["dram_bw_util_percent"],
        "noc_util_percent": r["noc_util_percent"],
    }
    if r["pm_ideal_us"] and r["time_us"]:
        meta["pm_ideal_fraction"] = r["pm_ideal_us"] / r["time_us"]
    return {
        "target": chip_target(r["arch"], board),
        "target_kind": "tile",
        "device": None if r["device"] is None else f"chip {int(r['device'])}",
        "source": f"{name}: line {r['line']}",
        "kernel": r["op"],
        "classify_hint": r["op"],
        "op_family": op_family(r["op"]),
        "dtype": DTYPES.get((r["input_dtype"] or "").upper()),
        "shape": shape,
        "per": "call",
        "time_us": r["time_us"],
        "calls": r["calls"],
        "total_us": r["total_us"],
        "p50_us": r["p50_us"],
        "p95_us": r["p95_us"],
        "max_us": r["max_us"],
        "mac": mac,
        "bytes": r["dram_bytes"],
        "cores": _int(r["cores"]),
        "start_skew_us": r["start_skew_us"],
        "metadata": {k: v for k, v in meta.items() if v is not None},
    }


def _int(value: float | None) -> int | None:
    return None if value is None else int(value)


def read_timeline(path: str | Path, data: bytes) -> GpuTimeline:
    """The report as a device timeline for ``breakdown``: per chip, its op calls in
    ``GLOBAL CALL COUNT`` order, each one's device kernel time preceded by its ``OP TO OP
    LATENCY`` (the gap since the chip's previous op ended): start = the previous end + the
    gap, end = start + ``DEVICE KERNEL DURATION``, from 0 µs at the chip's first op. So the
    chip is busy for Σ kernel durations and idle for Σ op-to-op gaps; collective ops
    (all-gather, reduce-scatter, …) are its communication."""
    from tileprof.core.classify import classify
    from tileprof.core.gpu_timeline import EVENT_SCHEMA, empty_steps

    table = _read(path, data)
    ops, _ = _split_signposts(table)
    ops = ops.filter(pl.col("device").is_not_null() & pl.col("duration_us").is_not_null())
    ordered = ops.sort("device", "call_count", "line", nulls_last=True)
    gap_ns = (pl.col("op_to_op_us").fill_null(0.0) * 1000).round().cast(pl.Int64)
    duration_ns = (pl.col("duration_us") * 1000).round().cast(pl.Int64)
    timed = (
        ordered.with_columns(_gap=gap_ns, _duration=duration_ns)
        .with_columns(end_ns=(pl.col("_gap") + pl.col("_duration")).cum_sum().over("device"))
        .with_columns(start_ns=pl.col("end_ns") - pl.col("_duration"))
    )
    families = [op_family(op) or classify(op)[0] for op in timed["op"].to_list()]
    kinds = ["comm" if f == "exchange" else "kernel" for f in families]
    events = timed.select(
        pl.col("device").cast(pl.Int64),
        pl.lit(0, pl.Int64).alias("stream"),
        pl.Series("kind", kinds),
        "start_ns",
        "end_ns",
        pl.col("op").alias("name"),
        pl.col("call_count").cast(pl.Int64).alias("correlation"),
    )
    events = pl.DataFrame(events.to_dict(), schema_overrides={"kind": EVENT_SCHEMA["kind"]})
    missing = [pl.lit(None, t).alias(c) for c, t in EVENT_SCHEMA.items() if c not in events.columns]
    events = events.with_columns(missing).select(list(EVENT_SCHEMA))
    archs = ops["arch"].drop_nulls().unique().to_list()
    board = board_from_log(Path(path), archs[0]) if len(archs) == 1 else None
    names = {
        int(d): f"{chip_target(a, board)} (chip {int(d)})"
        for d, a in ops.select("device", "arch").unique(maintain_order=True).iter_rows()
    }
    return GpuTimeline(Path(path).name, events, empty_steps(), names)


READER: Reader[ParsedRuns] = Reader(parse)


def op_table(path: str | Path, data: bytes) -> pl.DataFrame:
    """Every row of a report, signposts included, with the columns read (``line`` is the
    row's line in the file): what the capture checks count (``tileprof check``)."""
    return _read(path, data)
