"""The entries of the input registry: ``InputFormat`` (how a format is recognised, and which
module reads it) and ``Reader`` (what that module declares about reading).

Every input module (tile dumps: ``json_dump``, ``ndjson_dump``, ``parquet_dump``, ``csv_dump``;
run sources: ``kineto``, ``latency_bench``, ``energy_report``, ``nsys``, ``run_table``) ends with
one ``READER = Reader(...)``; ``tileprof.inputs.INPUTS`` lists one ``InputFormat`` per module,
naming the module and its recogniser (``tileprof.inputs._sniff``), and
``tileprof.inputs.detect`` walks that list (content first, then extension). A module is
imported only when its format is read. Adding a format is one module, its recogniser, and one
entry in ``INPUTS``.

``Content`` hands every recogniser the same lazily computed views of a file's bytes, so the
first line is decoded once and a JSON document's top-level keys are only decoded when a JSON
object is being classified.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, TypeVar

from tileprof.core.text import opening_byte

TILE_DUMP = "tile dump"
"""The kind of every tile-dump format (what ``tileprof.inputs.sources.detect_kind`` reports)."""
RUN_SOURCE = "run source"
"""The kind of every GPU run source (``detect_kind`` reports its name: "PyTorch trace", …)."""
SUMMARY_DOCUMENT = "summary document"
"""The kind of a ``summary --format json`` document (groups, already summarised)."""
SNIFF_BYTES = 65536
"""How much of the (decompressed) start of a file detection looks at."""

ProgressFn = Callable[[int, int], None]
"""Reports (done, total) while a file is read; ``tileprof.core.progress.progress_bar`` draws it."""
T = TypeVar("T")


class Content:
    """A file's (decompressed) bytes, or only its head, with the views recognisers read."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    @cached_property
    def opening(self) -> bytes:
        """The first byte that is not whitespace (b"" for a blank file)."""
        return opening_byte(self.data)

    @cached_property
    def head(self) -> bytes:
        """The first ``SNIFF_BYTES`` bytes, leading whitespace removed."""
        return self.data[:SNIFF_BYTES].lstrip()

    @cached_property
    def first_line(self) -> bytes:
        """The head's first line."""
        return self.head.split(b"\n", 1)[0]

    @cached_property
    def first_value(self) -> Any:
        """The head's first line decoded as JSON, or None when it is not JSON."""
        import msgspec

        try:
            return msgspec.json.decode(self.first_line)
        except (msgspec.DecodeError, RecursionError):
            return None

    @cached_property
    def first_line_is_object_without_samples(self) -> bool:
        """An NDJSON-shaped head: a one-line JSON object that is not a whole dump."""
        return isinstance(self.first_value, dict) and "samples" not in self.first_value

    @cached_property
    def keys(self) -> set[str] | None:
        """The top-level keys of a JSON object document (values skipped, not decoded), or None.

        The compiled module skips the values unchecked (a 626 MB trace in a fraction of
        msgspec's validating pass): the reader the keys choose checks them and says where a
        value breaks. Anything it does not take as one plain object is left to msgspec."""
        import msgspec

        from tileprof.core import _native

        found = _native.top_level_keys(self.data)
        if found is not None:
            return set(found)
        try:
            obj = msgspec.json.decode(self.data, type=dict[str, msgspec.Raw])
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None
        return set(obj)

    @cached_property
    def text_lines(self) -> list[str]:
        """The head as text lines (undecodable bytes replaced)."""
        return self.data[:SNIFF_BYTES].decode("utf-8", errors="replace").splitlines()


@dataclass(frozen=True)
class Reader(Generic[T]):
    """How an input module reads its format: ``parse`` (path as given, named in errors; bytes)
    and, optionally, ``parse_file``, which streams the file instead of reading it whole;
    ``stream_gzip`` says whether it can stream a gzipped file too."""

    parse: Callable[[Any, bytes], T]
    parse_file: Callable[[Path, ProgressFn | None, int], T] | None = None
    stream_gzip: bool = True


@dataclass(frozen=True)
class InputFormat(Generic[T]):
    """One input format: its name, its kind, how its content is recognised, which module
    parses it.

    ``sniff`` recognises the content (for a JSON object document, run sources use ``json_keys``
    instead: a predicate on its top-level keys; ``json_fallback`` is tried after every format's
    ``json_keys``). ``extensions`` are the fallback when no content rule settles it. ``module``
    defines ``READER``, imported on first use (``reader``, ``parse``, ``parse_file``).
    """

    name: str
    kind: str
    sniff: Callable[[Content], bool]
    module: str
    extensions: tuple[str, ...] = ()
    json_keys: Callable[[set[str]], bool] | None = None
    json_fallback: Callable[[set[str]], bool] | None = None

    @property
    def reader(self) -> Reader[T]:
        """The module's ``READER`` (importing the module the first time)."""
        found: Reader[T] = importlib.import_module(self.module).READER
        return found

    @property
    def parse(self) -> Callable[[Any, bytes], T]:
        return self.reader.parse

    @property
    def parse_file(self) -> Callable[[Path, ProgressFn | None, int], T] | None:
        return self.reader.parse_file

    @property
    def stream_gzip(self) -> bool:
        return self.reader.stream_gzip


def never(_: Content) -> bool:
    """The ``sniff`` of a format recognised only by its JSON keys."""
    return False
