"""How each input format is recognised from content, kept apart from its parser.

Detection (``tileprof.inputs.detect``) offers a file's head to every format's recogniser; only
the format it picks has its parser module imported (``InputFormat.reader``). Keeping the
recognisers here, with nothing heavier than the standard library, lets ``summary``, ``diff`` or
``runs`` tell a tile dump from a trace without importing numpy or any other format's decoder.
"""

from __future__ import annotations

import csv

from tileprof.inputs._format import Content

JSON, NDJSON, PARQUET, CSV = "json", "ndjson", "parquet", "csv"
"""The tile-dump format names (``--format-in``)."""
TRACE = "PyTorch trace"
LATENCY = "latency benchmarks"
ENERGY = "energy report"
NSYS = "nsys kernel summary"
RUN_TABLE = "run table"

PARQUET_MAGIC = b"PAR1"
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


def run_table(content: Content) -> bool:
    """A JSON array, or CSV whose first non-blank line is a run table's header."""
    if content.opening == b"[":
        return True
    if content.opening == b"{":
        return False
    first = next((ln for ln in content.text_lines if ln.strip()), "")
    return "," in first and is_run_csv_header(first)
