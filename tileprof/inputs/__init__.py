"""Input parsers, one module per format, and the one registry and detector that pick one.

``INPUTS`` holds one ``InputFormat`` per input module (name, kind, how a file's content is
recognised, which module parses it; see ``_format``): the recognisers live in the light
``_sniff`` module and a format's parser module is imported only when a file of that format is
read, so detecting a tile dump or a summary document costs no decoder imports. Tile
dumps return the same ``ParsedDump`` (typed sample frame, interned metadata, device header); GPU
run sources return ``tileprof.core.run_schema.ParsedRuns``. ``detect`` trusts content first (a JSON
object's top-level keys, Parquet magic, NDJSON's one-object-per-line shape, a CSV header row)
and falls back to the extension; ``read_dump`` reads one tile dump.

Detection reads only the head of the file when the head settles it, so that the compiled
decoder (``native``) can stream NDJSON and map plain JSON, or stream gzipped JSON and NDJSON,
instead of reading them whole (``json_dump.parse_file``, ``ndjson_dump.parse_file``); every other
case reads the bytes and parses them in memory.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tileprof.core.errors import InputError
from tileprof.core.progress import progress_bar
from tileprof.inputs import _sniff
from tileprof.inputs._common import (
    GZIP_MAGIC,
    ParsedDump,
    check_encoding,
    open_input,
    read_bytes,
    resolve_device,
    stream_content,
    validate_samples,
)
from tileprof.inputs._format import (
    RUN_SOURCE,
    SNIFF_BYTES,
    SUMMARY_DOCUMENT,
    TILE_DUMP,
    Content,
    InputFormat,
    never,
)

if TYPE_CHECKING:
    from tileprof.core.run_schema import ParsedRuns

_HERE = "tileprof.inputs."
DUMP_INPUTS: tuple[InputFormat[ParsedDump], ...] = (
    InputFormat(
        _sniff.JSON,
        TILE_DUMP,
        _sniff.json_dump,
        _HERE + "tile.json_dump",
        extensions=(".json",),
        json_keys=_sniff.has_tile_keys,
    ),
    InputFormat(
        _sniff.NDJSON,
        TILE_DUMP,
        _sniff.ndjson_dump,
        _HERE + "tile.ndjson_dump",
        extensions=(".ndjson", ".jsonl"),
    ),
    InputFormat(
        _sniff.PARQUET,
        TILE_DUMP,
        _sniff.parquet_dump,
        _HERE + "tile.parquet_dump",
        extensions=(".parquet", ".pq"),
    ),
    InputFormat(
        _sniff.CSV, TILE_DUMP, _sniff.csv_dump, _HERE + "tile.csv_dump", extensions=(".csv",)
    ),
    InputFormat(
        _sniff.TT_DEVICE_LOG, TILE_DUMP, _sniff.tt_device_log, _HERE + "tile.tt_device_log"
    ),
)
"""The tile-dump formats, in the order ``--format-in`` lists them."""
RUN_INPUTS: tuple[InputFormat[ParsedRuns], ...] = (
    InputFormat(
        _sniff.TRACE,
        RUN_SOURCE,
        never,
        _HERE + "gpu.kineto",
        json_keys=_sniff.is_trace,
        json_fallback=_sniff.has_trace_keys,
    ),
    InputFormat(
        _sniff.LATENCY,
        RUN_SOURCE,
        never,
        _HERE + "gpu.latency_bench",
        json_keys=_sniff.is_latency_doc,
    ),
    InputFormat(
        _sniff.ENERGY,
        RUN_SOURCE,
        never,
        _HERE + "gpu.energy_report",
        json_keys=_sniff.is_energy_doc,
    ),
    InputFormat(_sniff.NSYS, RUN_SOURCE, _sniff.nsys_report, _HERE + "gpu.nsys"),
    InputFormat(
        _sniff.NSYS_SQLITE,
        RUN_SOURCE,
        _sniff.nsys_sqlite,
        _HERE + "gpu.nsys_sqlite",
        extensions=(".sqlite",),
    ),
    InputFormat(_sniff.ROCPROF, RUN_SOURCE, _sniff.rocprof_trace, _HERE + "gpu.rocprof"),
    InputFormat(_sniff.NCU, RUN_SOURCE, _sniff.ncu_report, _HERE + "gpu.ncu"),
    InputFormat(
        _sniff.TENSTORRENT, RUN_SOURCE, _sniff.tenstorrent_report, _HERE + "tile.tenstorrent"
    ),
    InputFormat(
        _sniff.RUN_TABLE,
        RUN_SOURCE,
        _sniff.run_table,
        _HERE + "gpu.run_table",
        json_keys=_sniff.is_run_doc,
    ),
)
"""The GPU run sources."""
SUMMARY_INPUT: InputFormat[dict[str, Any]] = InputFormat(
    _sniff.SUMMARY,
    SUMMARY_DOCUMENT,
    never,
    _HERE + "summary_document",
    json_keys=_sniff.is_summary_doc,
)
"""A ``summary --format json`` document: groups already summarised (``diff``, ``report
--baseline``); its keys are checked before a tile dump's, which it resembles."""
INPUTS: tuple[InputFormat[Any], ...] = (SUMMARY_INPUT, *RUN_INPUTS, *DUMP_INPUTS)
"""Every input format, in the order detection tries them: a GPU source's layout wins over a
tile dump's looser rules (a JSON object with "traceEvents" and "clockHz" is a trace). Each
names the module that parses it; that module is imported only when its format is read."""

DUMP_FORMATS: tuple[str, ...] = tuple(f.name for f in DUMP_INPUTS)
"""The tile-dump format names (``--format-in``), in order."""
EXTENSIONS: dict[str, str] = {ext: f.name for f in INPUTS for ext in f.extensions}
_BY_NAME: dict[str, InputFormat[Any]] = {f.name: f for f in INPUTS}


def input_format(name: str) -> InputFormat[Any]:
    """The registered format called ``name`` ("json", …, "PyTorch trace", …)."""
    return _BY_NAME[name]


def format_from_extension(path: Path) -> str | None:
    """The format the file name suggests, looking through a ``.gz`` suffix."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return EXTENSIONS.get(suffixes[-1]) if suffixes else None


def _sniffed(content: Content, formats: tuple[InputFormat[Any], ...]) -> InputFormat[Any] | None:
    return next((f for f in formats if f.sniff(content)), None)


def sniff_format(data: bytes) -> str | None:
    """The dump format the content shows, or None when it is no tile dump."""
    found = _sniffed(Content(data), DUMP_INPUTS)
    return None if found is None else found.name


def is_tile_dump_head(head: bytes) -> bool:
    """Whether a file's first bytes alone show a tile dump, so its kind needs no full read.

    A JSON document only counts when sample fields show in the head too: other JSON documents
    (a trace, a run table) may mention "samples" somewhere near their start.
    """
    found = sniff_format(head) if head.strip() else None
    return found is not None and (found != "json" or b'"physicalTile"' in head)


def detect_dump_format(path: Path, data: bytes | None = None) -> str | None:
    """The tile-dump format of ``path`` (content first, then extension), or None."""
    content = read_bytes(path) if data is None else data
    return sniff_format(content) or format_from_extension(path)


def _by_json_keys(path: str | Path, keys: set[str], reads: str | None = None) -> InputFormat[Any]:
    """The format a JSON object document's top-level keys show; InputError if none (naming
    ``reads``, what the command reads, when given)."""
    for rule in ("json_keys", "json_fallback"):
        for fmt in INPUTS:
            test = getattr(fmt, rule)
            if test is not None and test(keys):
                return fmt
    shown = ", ".join(sorted(keys)[:8]) or "none"
    raise InputError(
        path,
        "$",
        f"JSON of no known layout (top-level keys: {shown}); expected "
        + (
            reads
            or "a tile dump, latency benchmarks, an energy report, a PyTorch trace or a run table"
        ),
    )


KNOWN_KINDS = (
    "a tile dump, latency benchmarks, energy report, PyTorch trace, nsys cuda_gpu_kern_sum CSV, "
    "nsys SQLite export, rocprofv3 kernel trace CSV, Nsight Compute CSV, Tenstorrent "
    "ops_perf_results CSV or run table"
)
"""The kinds of file tileprof reads, as an unrecognised file's error lists them."""


def detect(path: str | Path, data: bytes, reads: str = KNOWN_KINDS) -> InputFormat[Any]:
    """The input format of ``data`` (read from ``path``): content first, then extension.

    A JSON object document is classified by its top-level keys alone (only the keys are
    decoded); broken JSON that is not NDJSON either is reported where it breaks. Anything else
    goes to each format's ``sniff`` in ``INPUTS`` order, then to the extension. For a tile dump
    this names the kind; ``read_dump`` picks the dump format itself (``--format-in`` may
    override it). InputError when nothing matches, naming ``reads``: the kinds the command
    reads (by default every kind tileprof reads).
    """
    content = Content(data)
    refuse_unread(path, content)
    if content.opening == b"{":
        keys = content.keys
        if keys is not None:
            return _by_json_keys(path, keys, None if reads == KNOWN_KINDS else reads)
        if _sniffed(content, DUMP_INPUTS) is None:
            from tileprof.inputs._decode import decode_json

            decode_json(path, data, dict)  # not one JSON object, not NDJSON: where it breaks
    found = _sniffed(content, INPUTS)
    if found is None:
        by_name = format_from_extension(Path(path))
        found = None if by_name is None else _BY_NAME[by_name]
    if found is None:
        raise InputError(path, None, f"not {reads}")
    if found.name == _sniff.CSV and not _sniff.csv_dump(content):
        shown = ", ".join(_sniff.csv_header(content)[:6]) or "none"
        raise InputError(
            path,
            "line 1",
            f"CSV of no known layout (columns: {shown}); expected {reads}",
        )
    return found


NOC_TRACE_REFUSAL = (
    f"a {_sniff.NOC_TRACE} (its events name proc, sx, sy and timestamp), which tileprof does "
    "not read: tt-npe reads NoC traces; tileprof reads the same run's device log "
    "(profile_log_device.csv) and ops report (ops_perf_results CSV)"
)


def refuse_unread(path: str | Path, content: Content) -> None:
    """A format tileprof recognises but does not read is refused by name, by every command,
    rather than read as the format it resembles (a NoC trace is a JSON array, as a run table
    is, and its first row would be refused for a field a run table lacks)."""
    if _sniff.noc_trace(content):
        raise InputError(path, "$[0]", NOC_TRACE_REFUSAL)


T = TypeVar("T")


def decode_typed_json(path: Path, data: bytes, type_: type[T]) -> T:
    """``data``, the JSON document read from ``path``, decoded as ``type_`` (a msgspec type):
    a wrong value is an InputError naming its JSON path, broken JSON its line and column."""
    from tileprof.inputs._decode import decode_json

    return decode_json(path, data, type_)


def peek(path: Path) -> tuple[bytes, bool, int]:
    """(decompressed head, whether gzipped, size on disk); unreadable files are InputErrors."""
    with open_input(path) as handle:
        try:
            head = handle.read(SNIFF_BYTES)
        except OSError as exc:
            raise InputError(path, None, f"cannot read: {exc.strerror}") from None
        stream = stream_content(path)
        size = len(stream) if stream is not None else os.fstat(handle.fileno()).st_size
    if head[:2] != GZIP_MAGIC:
        return check_encoding(path, head), False, size
    try:
        with open_input(path) as raw, gzip.open(raw, "rb") as unzipped:
            return check_encoding(path, unzipped.read(SNIFF_BYTES)), True, size
    except (EOFError, OSError, zlib.error):
        return b"", True, size  # read_bytes words the error


_RUN_SOURCE_WORDS = {
    _sniff.TRACE: "a PyTorch profiler trace",
    _sniff.LATENCY: "a latency benchmark file",
    _sniff.ENERGY: "an energy report",
    _sniff.NSYS: "an nsys kernel summary CSV",
    _sniff.NSYS_SQLITE: "an nsys SQLite export",
    _sniff.ROCPROF: "a rocprofv3 kernel trace",
    _sniff.NCU: "Nsight Compute CSV output",
    _sniff.TENSTORRENT: "a Tenstorrent ops report",
    _sniff.RUN_TABLE: "a run table",
}


def _refuse_run_source(path: Path, data: bytes) -> None:
    """A GPU run source handed to a tile-dump command is named as what it is, with the command
    that reads it, instead of failing on a missing ``samples`` or ``physicalTile``."""
    refuse_unread(path, Content(data))
    try:
        found = detect(path, data)
    except InputError:
        return  # not recognised at all: the tile-dump reader words the error
    if found.kind not in (TILE_DUMP, SUMMARY_DOCUMENT):  # its samples are a small dump
        what = _RUN_SOURCE_WORDS.get(found.name, f"a {found.name}")
        raise InputError(
            path, None, f"this is {what}, not a tile dump; use `tileprof runs` (or `report`)"
        )


def read_dump(
    path: str | Path,
    *,
    format: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
    quiet: bool = True,
    content: bytes | None = None,
) -> tuple[ParsedDump, int | float, int, str]:
    """Parse and validate one dump: (parsed dump, clockHz, tileCount, format name).

    ``quiet=False`` draws a progress bar on stderr for large inputs (see
    ``tileprof.core.progress``). ``content``: the file's bytes, already read whole (by
    ``sources.read_input``), so that the file is not opened again.
    """
    source = Path(path)
    if format is not None and format not in DUMP_FORMATS:
        raise InputError(
            source, None, f"unknown format {format!r} (one of {', '.join(DUMP_FORMATS)})"
        )
    data: bytes | None = content
    if content is not None:
        head, compressed, size = content[:SNIFF_BYTES], False, len(content)
    else:
        head, compressed, size = peek(source)
        # a pipe was read whole by peek: parse it from memory (it cannot be mapped or re-opened)
        data = read_bytes(source) if stream_content(source) is not None else None
    chosen = format or (sniff_format(head) if head.strip() else None)
    if chosen is None:
        data = read_bytes(source) if data is None else data
        _refuse_run_source(source, data)
        chosen = detect_dump_format(source, data)
    if chosen is None:
        raise InputError(
            source,
            "start of file",
            "unknown format: not a JSON, NDJSON, Parquet or CSV tile dump (use --format-in)",
        )
    if format is None and chosen == "json" and not is_tile_dump_head(head):
        data = read_bytes(source) if data is None else data
        _refuse_run_source(source, data)
    fmt = _BY_NAME[chosen]
    with progress_bar(f"reading {source.name}", size, quiet=quiet) as report:
        if data is None and fmt.parse_file is not None and (fmt.stream_gzip or not compressed):
            parsed = fmt.parse_file(source, report, size)
        else:
            parsed = fmt.parse(source, read_bytes(source) if data is None else data)
    clock, tiles = resolve_device(source, parsed.header, clock_hz, tile_count)
    validate_samples(parsed.samples, source, tiles, parsed.place)
    return parsed, clock, tiles, chosen


def check_device(
    source: Path,
    samples: Any,
    header_clock_hz: float | None,
    header_tile_count: int | None,
    clock_hz: float | None,
    tile_count: int | None,
) -> tuple[int | float, int]:
    """(clockHz, tileCount) of samples already in memory (the reference profile) with the
    command line's overrides, checked as a dump read with them would be: a positive device,
    every tile in range."""
    from tileprof.inputs._common import DeviceHeader

    clock, tiles = resolve_device(
        source, DeviceHeader(header_clock_hz, header_tile_count), clock_hz, tile_count
    )
    validate_samples(samples, source, tiles, _sample_place)
    return clock, tiles


def _sample_place(index: int) -> str:
    return f"sample {index}"


def decoding_jobs(jobs: int | None) -> Callable[[], None]:
    """Set how many threads decode JSON and NDJSON dumps (None: the usable cores); returns the
    call that restores the previous setting."""
    from tileprof.inputs import threads

    previous = threads.setting()
    threads.configure(jobs)
    return lambda: threads.configure(previous)
