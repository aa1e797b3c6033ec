"""Which kind of run source a file is, and its runs.

Detection reads content, not names: JSON objects by their top-level keys (only the keys are
decoded, the values are skipped), CSV by its header line, and anything else is offered to the
tile-dump detector. ``docs/runs.md`` lists the rules.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from tileprof.errors import InputError
from tileprof.parsers import (
    detect_dump_format,
    energy_report,
    is_tile_dump_head,
    kineto,
    latency_bench,
    nsys,
    peek,
    run_table,
    sniff_format,
)
from tileprof.parsers._common import read_bytes
from tileprof.parsers._decode import decode_json
from tileprof.runs import ParsedRuns

TILE_DUMP = "tile dump"

_JSON_LAYOUTS: tuple[tuple[Callable[[set[str]], bool], str], ...] = (
    (kineto.is_trace, kineto.KIND),
    (latency_bench.is_latency_doc, latency_bench.KIND),
    (energy_report.is_energy_doc, energy_report.KIND),
    (run_table.is_run_doc, run_table.KIND),
)
_TILE_KEYS = frozenset({"samples", "clockHz", "tileCount"})
# Keys only a Chrome/Kineto trace has: such a document without traceEvents is a broken trace,
# and is reported as one rather than as an unknown layout.
_TRACE_KEYS = frozenset({"deviceProperties", "schemaVersion", "traceName", "displayTimeUnit"})


def _top_level_keys(data: bytes) -> set[str] | None:
    """The keys of a JSON object document; None if ``data`` is not one JSON object."""
    try:
        obj = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return set(obj)


def detect_kind(path: str | Path, data: bytes) -> str:
    """The kind of run source ``data`` (read from ``path``) is; InputError if none."""
    head = data.lstrip()[:1]
    if head == b"{":
        keys = _top_level_keys(data)
        if keys is None and sniff_format(data) is None:
            # Not one JSON object and not NDJSON: report where the JSON breaks.
            decode_json(path, data, dict)
        if keys is not None:
            for test, kind in _JSON_LAYOUTS:
                if test(keys):
                    return kind
            if keys & _TILE_KEYS:
                return TILE_DUMP
            if keys & _TRACE_KEYS:
                return kineto.KIND
            shown = ", ".join(sorted(keys)[:8]) or "none"
            raise InputError(
                path,
                "$",
                f"JSON of no known layout (top-level keys: {shown}); expected a tile dump, "
                "latency benchmarks, an energy report, a PyTorch trace or a run table",
            )
    elif head == b"[":
        return run_table.KIND
    else:
        text = data[:65536].decode("utf-8", errors="replace")
        lines = text.splitlines()
        if nsys.header_line(lines[:200]) is not None:
            return nsys.KIND
        first = next((ln for ln in lines if ln.strip()), "")
        if "," in first and run_table.is_run_csv_header(first):
            return run_table.KIND
    if detect_dump_format(Path(path), data) is not None:
        return TILE_DUMP
    raise InputError(
        path,
        None,
        "not a tile dump, latency benchmarks, energy report, PyTorch trace, "
        "nsys cuda_gpu_kern_sum CSV or run table",
    )


def detect_file_kind(path: str | Path) -> tuple[str, bytes | None]:
    """The kind of the file at ``path``, and its content when reading it was needed.

    A tile dump is recognised from its first bytes, so a large dump is read once, by the
    tile loader, not also here; GPU files are small next to it and are read whole.
    """
    head, _, _ = peek(Path(path))
    if is_tile_dump_head(head):
        return TILE_DUMP, None
    data = read_bytes(Path(path))
    return detect_kind(path, data), data


def load_runs(
    path: str | Path, *, tile_loader: Callable[[Path], ParsedRuns] | None = None, **_: Any
) -> ParsedRuns:
    """The runs of one file, whatever its kind; tile dumps go to ``tile_loader``."""
    kind, data = detect_file_kind(path)
    if kind == TILE_DUMP or data is None:
        if tile_loader is None:
            raise InputError(path, None, "tile dumps need the tile core (tileprof.load)")
        return tile_loader(Path(path))
    return parse_runs(path, kind, data)


def parse_runs(path: str | Path, kind: str, data: bytes) -> ParsedRuns:
    """The runs of a GPU run file of ``kind`` (as ``detect_kind`` named it)."""
    if kind == latency_bench.KIND:
        return latency_bench.parse(path, data)
    if kind == energy_report.KIND:
        return energy_report.parse(path, data)
    if kind == kineto.KIND:
        return kineto.parse(path, data)
    if kind == nsys.KIND:
        return nsys.parse(path, data)
    if kind == run_table.KIND:
        if data.lstrip()[:1] in (b"{", b"["):
            return run_table.parse_json(path, data)
        return run_table.parse_csv(path, data)
    raise InputError(path, None, f"{kind} files hold no GPU runs")
