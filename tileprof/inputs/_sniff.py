"""How each input format is recognised from content, kept apart from its parser.

Detection (``tileprof.inputs.detect``) offers a file's head to every format's recogniser; only
the format it picks has its parser module imported (``InputFormat.reader``). Keeping the
recognisers here, with nothing heavier than the standard library, lets ``summary``, ``diff`` or
``runs`` tell a tile dump from a trace without importing numpy or any other format's decoder.
"""

from __future__ import annotations

import csv
import json
import re

from tileprof.inputs._format import Content

JSON, NDJSON, PARQUET, CSV = "json", "ndjson", "parquet", "csv"
TT_DEVICE_LOG = "tt-device-log"
"""The tile-dump format names (``--format-in``)."""
SUMMARY = "summary document"
TRACE = "PyTorch trace"
LATENCY = "latency benchmarks"
ENERGY = "energy report"
NSYS = "nsys kernel summary"
NSYS_SQLITE = "nsys SQLite export"
ROCPROF = "rocprofv3 kernel trace"
NCU = "Nsight Compute CSV"
TENSTORRENT = "Tenstorrent ops report"
RUN_TABLE = "run table"
NOC_TRACE = "tt-metal NoC event trace"
"""A format tileprof recognises only to refuse it by name (``noc_trace``)."""

PARQUET_MAGIC = b"PAR1"
SQLITE_MAGIC = b"SQLite format 3\x00"
NSYS_TABLES: tuple[bytes, ...] = (
    b"CUPTI_ACTIVITY_KIND_",
    b"NVTX_EVENTS",
    b"TARGET_INFO_",
    b"StringIds",
)
"""Table names of which one, in the schema text of an SQLite file, shows an nsys export."""
TILE_KEYS = frozenset({"samples", "clockHz", "tileCount"})
"""Top-level keys of which any one makes a JSON object document a tile dump."""
TRACE_KEYS = frozenset({"deviceProperties", "schemaVersion", "traceName", "displayTimeUnit"})
"""Keys only a Chrome/Kineto trace has: such a document without traceEvents is a broken trace,
and is reported as one rather than as an unknown layout."""
ENERGY_GEMM = "gemm_8192"
ENERGY_INFERENCE = "ciresan_mnist_int8_inference"
RUN_TABLE_REQUIRED: tuple[str, ...] = ("target", "workload", "kernel", "time_us")


def json_dump(content: Content) -> bool:
    """A JSON dump document: a JSON object, not NDJSON-shaped, that mentions "samples"."""
    return (
        content.head.startswith(b"{")
        and not content.first_line_is_object_without_samples
        and b'"samples"' in content.data
    )


def has_tile_keys(keys: set[str]) -> bool:
    return bool(keys & TILE_KEYS)


def ndjson_dump(content: Content) -> bool:
    """NDJSON: a one-line JSON object first (not a whole dump) that names a sample or the device."""
    first = content.first_value
    return (
        content.head.startswith(b"{")
        and content.first_line_is_object_without_samples
        and ("physicalTile" in first or "clockHz" in first or "tileCount" in first)
    )


def parquet_dump(content: Content) -> bool:
    """Parquet: the file starts with its magic bytes."""
    return content.data[:4] == PARQUET_MAGIC


def tt_device_log(content: Content) -> bool:
    """A tt-metal ``profile_log_device.csv``: line 1 names the architecture and the chip clock
    (``ARCH: …, CHIP_FREQ[MHz]: …``), line 2 is the column line (``PCIe slot, core_x, …``)."""
    lines = content.head.split(b"\n", 2)
    return (
        len(lines) >= 2
        and lines[0].startswith(b"ARCH:")
        and b"CHIP_FREQ[MHz]" in lines[0]
        and lines[1].lstrip().startswith(b"PCIe slot")
    )


def csv_dump(content: Content) -> bool:
    """A CSV dump: its header row (after an optional ``#`` comment line) names physicalTile."""
    head = content.head
    if head.startswith(b"{") or content.data[:4] == PARQUET_MAGIC:
        return False
    first_line = content.first_line
    if head.startswith(b"#"):
        second = head.split(b"\n", 2)[1:2]
        first_line = second[0] if second else b""
    return (
        first_line[:1] not in (b"[", b"{") and b"physicalTile" in first_line and b"," in first_line
    )


SUMMARY_KEYS = frozenset({"matchedSampleCount", "groups"})
"""The top-level keys of a ``summary --format json`` document that no tile dump has."""


def is_summary_doc(keys: set[str]) -> bool:
    """Whether a JSON object with these top-level keys is a ``summary --format json`` document."""
    return keys >= SUMMARY_KEYS


def is_summary_head(head: bytes) -> bool:
    """Whether the head of a JSON object shows a summary document (its keys, not a tile dump's)."""
    return head.lstrip()[:1] == b"{" and all(f'"{k}"'.encode() in head for k in SUMMARY_KEYS)


def is_trace(keys: set[str]) -> bool:
    """Whether a JSON object with these top-level keys is a Chrome trace."""
    return "traceEvents" in keys


def has_trace_keys(keys: set[str]) -> bool:
    return bool(keys & TRACE_KEYS)


def is_latency_doc(keys: set[str]) -> bool:
    """Whether a JSON object with these top-level keys is a latency benchmark document."""
    return "held_out" in keys


def is_energy_doc(keys: set[str]) -> bool:
    """Whether a JSON object with these top-level keys is an energy report."""
    return "hardware" in keys and bool(keys & {ENERGY_GEMM, ENERGY_INFERENCE})


def nsys_header_line(lines: list[str]) -> int | None:
    """Index of the line that starts an nsys report (begins with ``Time (%)``, or ``Time(%)``
    in older layouts), if any."""
    for i, line in enumerate(lines):
        if line.lstrip("\ufeff").startswith(("Time (%),", "Time(%),")):
            return i
    return None


def nsys_report(content: Content) -> bool:
    """A ``cuda_gpu_kern_sum`` CSV: a line among the first 200 starts the report header."""
    return (
        content.opening not in (b"{", b"[")
        and nsys_header_line(content.text_lines[:200]) is not None
    )


def is_run_doc(keys: set[str]) -> bool:
    """Whether a JSON object with these top-level keys is a run table."""
    return "runs" in keys


def is_run_csv_header(line: str) -> bool:
    """Whether a CSV header line is a run table's."""
    cols = {c.strip() for c in next(csv.reader([line]), [])}
    return set(RUN_TABLE_REQUIRED) <= cols


NOC_KEYS = frozenset({"proc", "sx", "sy", "timestamp"})
"""Keys every event of a tt-metal NoC trace has (tt-npe's ``noc_trace_format.md``: the RISC,
the core's physical x and y, the cycle)."""
_FIRST_FLAT_OBJECT = re.compile(rb"\[\s*(\{[^{}\[\]]*\})")


def noc_trace(content: Content) -> bool:
    """A tt-metal NoC event trace: a JSON array whose first element is a flat object with the
    keys of ``NOC_KEYS``. A run table in JSON is an array too, of rows with ``target``, so
    only these keys tell the two apart."""
    if content.opening != b"[":
        return False
    found = _FIRST_FLAT_OBJECT.match(content.head)
    if found is None:
        return False
    try:
        first = json.loads(found.group(1))
    except ValueError:
        return False
    return isinstance(first, dict) and first.keys() >= NOC_KEYS


def run_table(content: Content) -> bool:
    """A JSON array, or CSV whose first non-blank line is a run table's header."""
    if content.opening == b"[":
        return True
    if content.opening == b"{":
        return False
    first = next((ln for ln in content.text_lines if ln.strip()), "")
    return "," in first and is_run_csv_header(first)


def nsys_sqlite(content: Content) -> bool:
    """An nsys SQLite export: SQLite's magic, and an nsys table named in the database.

    Table names live in the schema pages, which may lie past the head; detection hands
    recognisers the whole file when it has it, so the search reaches them.
    """
    data = content.data
    return data[:16] == SQLITE_MAGIC and any(t in data for t in NSYS_TABLES)


def csv_header(content: Content) -> list[str]:
    """The first line of a CSV as stripped column names ([] for a JSON or binary head)."""
    if content.opening in (b"{", b"[") or content.data[:16] == SQLITE_MAGIC:
        return []
    first = next((ln for ln in content.text_lines if ln.strip()), "")
    return [c.strip().lstrip("\ufeff") for c in next(csv.reader([first]), [])]


ROCPROF_REQUIRED = frozenset(
    {"Kind", "Agent_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp"}
)
"""Columns both rocprofv3 kernel-trace layouts have."""


def rocprof_trace(content: Content) -> bool:
    """A rocprofv3 kernel trace CSV: its header names the dispatch columns, in any case (the
    reader matches column names without regard to case, so detection does too)."""
    header = {column.lower() for column in csv_header(content)}
    return header >= {column.lower() for column in ROCPROF_REQUIRED}


NCU_REQUIRED = frozenset({"ID", "Kernel Name", "Section Name", "Metric Name", "Metric Value"})
"""Columns of ``ncu --csv``'s long format (one row per launch and metric)."""


def ncu_header_line(lines: list[str]) -> int | None:
    """Index of the ``"ID","Process ID",…`` header line of ``ncu --csv`` output, if any: the
    program's own output and ``==PROF==`` lines may come first."""
    for i, line in enumerate(lines):
        if line.startswith('"ID",') or line.startswith("ID,"):
            cols = {c.strip() for c in next(csv.reader([line]), [])}
            if cols >= NCU_REQUIRED:
                return i
    return None


def ncu_report(content: Content) -> bool:
    """``ncu --csv`` output: a line among the first 200 is its long-format header."""
    return (
        content.opening not in (b"{", b"[")
        and content.data[:16] != SQLITE_MAGIC
        and ncu_header_line(content.text_lines[:200]) is not None
    )


TENSTORRENT_REQUIRED = frozenset({"OP CODE", "OP TYPE", "DEVICE ID", "CORE COUNT"})
"""Columns of every tt-metal ``ops_perf_results`` report."""


def tenstorrent_report(content: Content) -> bool:
    """A Tenstorrent ``ops_perf_results`` CSV: its header names the op and device columns."""
    return set(csv_header(content)) >= TENSTORRENT_REQUIRED
