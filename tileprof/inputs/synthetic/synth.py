"""Column-oriented builder of synthetic sample dumps, for tests and reference data.

A dump is built from vectorised calls (``DumpBuilder.add``) that each append many samples
at once; strings and metadata lists are interned so that a dump of a few hundred thousand
samples costs a few arrays, not a few hundred thousand dicts. The result
(``SyntheticDump``) can be written in the dump formats tileprof reads (JSON document,
gzipped JSON, NDJSON) or turned straight into the typed sample frame of
``tileprof.core.schema`` without a parser, so tests can compare the two paths.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

import msgspec
import numpy as np
import numpy.typing as npt
import polars as pl

from tileprof.core.schema import (
    DEFAULT_CLOCK_HZ,
    DEFAULT_TILE_COUNT,
    METADATA_NUMBER_KEYS,
    SAMPLE_SCHEMA,
    MetadataEntries,
)

IntArray = npt.NDArray[np.int64]
IntLike = int | Sequence[int] | npt.NDArray[np.integer]
"""A scalar (broadcast to every sample of the call) or one value per sample."""
StrLike = str | None | Sequence[str | None]
"""A scalar string, ``None`` (key absent from the dump), or one value per sample."""

_MISSING = -1
_STRING_FIELDS: tuple[str, ...] = ("kind", "operation", "kernel")
_JSON = msgspec.json.Encoder()
_WRITE_CHUNK = 100_000
"""Samples turned into text and written at a time; keeps a 20M-sample write small."""


def _intern_entries(entries: Sequence[tuple[str, str]]) -> MetadataEntries:
    return tuple((str(name), str(value)) for name, value in entries)


@dataclass
class _Interner:
    """Maps distinct values to dense codes, in first-seen order."""

    values: list[object] = field(default_factory=list)
    codes: dict[object, int] = field(default_factory=dict)

    def code(self, value: object) -> int:
        found = self.codes.get(value)
        if found is None:
            found = len(self.values)
            self.codes[value] = found
            self.values.append(value)
        return found


@dataclass(frozen=True)
class SyntheticDump:
    """A built dump: one numpy array per sample field plus interned string tables.

    Nullable integer fields (``phase``, ``epoch``) carry a boolean ``*_valid`` mask. String
    fields are codes into ``strings[field]``, ``-1`` meaning the key is absent. ``metadata_id``
    indexes ``metadata``; ``-1`` means the sample has no metadata list.
    """

    clock_hz: int
    tile_count: int
    tile: IntArray
    offset: IntArray
    duration: IntArray
    phase: IntArray
    phase_valid: npt.NDArray[np.bool_]
    epoch: IntArray
    epoch_valid: npt.NDArray[np.bool_]
    codes: dict[str, npt.NDArray[np.int32]]
    strings: dict[str, list[str]]
    metadata_id: IntArray
    metadata: list[MetadataEntries]

    def __len__(self) -> int:
        return int(self.tile.shape[0])

    @property
    def span_cycles(self) -> int:
        """``max(offset + duration) - min(offset)`` over all samples (0 when empty)."""
        if len(self) == 0:
            return 0
        return int((self.offset + self.duration).max() - self.offset.min())

    def strings_of(self, name: str) -> npt.NDArray[np.object_]:
        """Per-sample values of a string field, ``None`` where absent."""
        table = np.array([*self.strings[name], None], dtype=object)
        return table[self.codes[name]]  # code -1 picks the trailing None

    def metadata_number(self, name: str) -> npt.NDArray[np.float64]:
        """Per-sample numeric value of a metadata entry, NaN where the sample lacks it."""
        per_list = np.full(len(self.metadata) + 1, np.nan)
        for i, entries in enumerate(self.metadata):
            for key, value in entries:
                if key == name:
                    per_list[i] = float(value)
                    break
        return per_list[self.metadata_id]  # id -1 picks the trailing NaN

    # ----------------------------------------------------------------- frames
    def to_frame(self) -> tuple[pl.DataFrame, list[MetadataEntries]]:
        """The typed sample frame (``tileprof.core.schema.SAMPLE_SCHEMA``) and its metadata
        table."""
        columns: dict[str, pl.Series] = {
            "tile": pl.Series("tile", self.tile, dtype=pl.Int64),
            "offset": pl.Series("offset", self.offset, dtype=pl.Int64),
            "duration": pl.Series("duration", self.duration, dtype=pl.Int64),
            "phase": pl.Series("phase", self.phase, dtype=pl.Int64).scatter(
                np.flatnonzero(~self.phase_valid), None
            ),
            "epoch": pl.Series("epoch", self.epoch, dtype=pl.Int64).scatter(
                np.flatnonzero(~self.epoch_valid), None
            ),
        }
        for name in _STRING_FIELDS:
            # The distinct values plus a trailing null, gathered by code (-1 picks the null):
            # never an object array, which polars cannot cast when it starts with None.
            table = pl.Series(name, [*self.strings[name], None], dtype=pl.String)
            codes = self.codes[name]
            columns[name] = table.gather(np.where(codes < 0, len(table) - 1, codes))
        for name in METADATA_NUMBER_KEYS:
            columns[name] = pl.Series(name, self.metadata_number(name), dtype=pl.Float64)
        ids = pl.Series("metadataId", self.metadata_id, dtype=pl.Int64)
        columns["metadataId"] = ids
        frame = pl.DataFrame(columns).with_columns(
            pl.col(list(METADATA_NUMBER_KEYS)).fill_nan(None),
            pl.when(pl.col("metadataId") >= 0).then(pl.col("metadataId")).alias("metadataId"),
        )
        schema = pl.Schema(SAMPLE_SCHEMA)
        return frame.cast(schema).select(list(SAMPLE_SCHEMA)), list(self.metadata)

    # ---------------------------------------------------------------- writers
    def _sample_lines(self, start: int = 0, stop: int | None = None) -> list[bytes]:
        """Samples ``start:stop`` each as one compact JSON object, keys in the dump's order.

        Strings and metadata lists are encoded once per distinct value, then spliced.
        """
        enc = _JSON.encode
        window = slice(start, len(self) if stop is None else stop)
        tile = self.tile[window]
        n = int(tile.shape[0])
        parts: list[list[bytes]] = [[b'{"physicalTile":' + str(v).encode() for v in tile.tolist()]]

        def ints(key: str, values: IntArray, valid: npt.NDArray[np.bool_] | None) -> None:
            head = b',"' + key.encode() + b'":'
            column = [head + str(v).encode() for v in values[window].tolist()]
            if valid is not None:
                for i in np.flatnonzero(~valid[window]).tolist():
                    column[i] = b""
            parts.append(column)

        ints("offset", self.offset, None)
        ints("duration", self.duration, None)
        ints("phase", self.phase, self.phase_valid)
        ints("epoch", self.epoch, self.epoch_valid)
        for name in _STRING_FIELDS:
            table = [b',"' + name.encode() + b'":' + enc(s) for s in self.strings[name]]
            table.append(b"")
            parts.append([table[c] for c in self.codes[name][window].tolist()])
        meta = [
            b',"metadata":' + enc([{"name": key, "value": value} for key, value in entries]) + b"}"
            for entries in self.metadata
        ]
        meta.append(b"}")
        parts.append([meta[m] for m in self.metadata_id[window].tolist()])
        return [b"".join(fields) for fields in zip(*parts, strict=True)] if n else []

    def _line_chunks(self) -> Iterator[list[bytes]]:
        """The sample lines, ``_WRITE_CHUNK`` samples at a time (bounded memory)."""
        for start in range(0, len(self), _WRITE_CHUNK):
            yield self._sample_lines(start, start + _WRITE_CHUNK)

    def _header(self) -> bytes:
        return b'{"clockHz":%d,"tileCount":%d' % (self.clock_hz, self.tile_count)

    @staticmethod
    def _open(path: Path) -> IO[bytes]:
        if path.suffix == ".gz":
            return cast(IO[bytes], gzip.open(path, "wb", compresslevel=1))
        return open(path, "wb")

    def write_json(self, path: str | Path) -> Path:
        """Write ``{"clockHz", "tileCount", "samples": [...]}``; a ``.gz`` suffix gzips."""
        path = Path(path)
        with self._open(path) as out:
            out.write(self._header() + b',"samples":[')
            for i, lines in enumerate(self._line_chunks()):
                out.write((b"," if i else b"") + b",".join(lines))
            out.write(b"]}\n")
        return path

    def write_ndjson(self, path: str | Path) -> Path:
        """Write a header line ``{"clockHz", "tileCount"}`` then one sample per line."""
        path = Path(path)
        with self._open(path) as out:
            out.write(self._header() + b"}\n")
            for lines in self._line_chunks():
                out.write(b"\n".join(lines) + b"\n")
        return path


class DumpBuilder:
    """Accumulates samples call by call; every call appends ``n`` samples at once.

    Integer arguments are scalars or length-``n`` arrays. String arguments are a scalar,
    ``None`` (the key is left out of the dump) or one value per sample. Metadata is either
    one list of ``(name, value)`` pairs shared by the call (``metadata``) or, per sample,
    an index (``metadata_index``) into a list of distinct lists (``metadata_options``).
    """

    def __init__(
        self, clock_hz: int = DEFAULT_CLOCK_HZ, tile_count: int = DEFAULT_TILE_COUNT
    ) -> None:
        self.clock_hz = clock_hz
        self.tile_count = tile_count
        self._ints: dict[str, list[IntArray]] = {
            k: [] for k in ("tile", "offset", "duration", "phase", "epoch", "metadata_id")
        }
        self._valid: dict[str, list[npt.NDArray[np.bool_]]] = {"phase": [], "epoch": []}
        self._codes: dict[str, list[npt.NDArray[np.int32]]] = {k: [] for k in _STRING_FIELDS}
        self._strings: dict[str, _Interner] = {k: _Interner() for k in _STRING_FIELDS}
        self._metadata = _Interner()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    @staticmethod
    def _length(*values: object) -> int:
        lengths = {
            len(v)  # type: ignore[arg-type]
            for v in values
            if v is not None and not isinstance(v, str | int | np.integer)
        }
        if len(lengths) > 1:
            raise ValueError(f"per-sample arguments differ in length: {sorted(lengths)}")
        return lengths.pop() if lengths else 1

    @staticmethod
    def _ints_of(value: IntLike, n: int) -> IntArray:
        array = np.asarray(value, dtype=np.int64)
        return np.broadcast_to(array, (n,)).copy() if array.ndim == 0 else array.copy()

    def _string_codes(self, name: str, value: StrLike, n: int) -> npt.NDArray[np.int32]:
        interner = self._strings[name]
        if value is None or isinstance(value, str):
            code = _MISSING if value is None else interner.code(value)
            return np.full(n, code, dtype=np.int32)
        return np.array(
            [_MISSING if v is None else interner.code(v) for v in value], dtype=np.int32
        )

    def add(
        self,
        *,
        tile: IntLike,
        offset: IntLike,
        duration: IntLike,
        phase: IntLike | None = None,
        epoch: IntLike | None = None,
        kind: StrLike = None,
        operation: StrLike = None,
        kernel: StrLike = None,
        metadata: Sequence[tuple[str, str]] | None = None,
        metadata_options: Sequence[Sequence[tuple[str, str]]] | None = None,
        metadata_index: IntLike | None = None,
    ) -> int:
        """Append samples; returns how many were added."""
        per_sample_strings = [
            s for s in (kind, operation, kernel) if s is not None and not isinstance(s, str)
        ]
        n = self._length(tile, offset, duration, phase, epoch, metadata_index, *per_sample_strings)
        ints = {"tile": tile, "offset": offset, "duration": duration}
        for key, value in ints.items():
            self._ints[key].append(self._ints_of(value, n))
        for key, maybe in (("phase", phase), ("epoch", epoch)):
            if maybe is None:
                self._ints[key].append(np.zeros(n, dtype=np.int64))
                self._valid[key].append(np.zeros(n, dtype=np.bool_))
            else:
                self._ints[key].append(self._ints_of(maybe, n))
                self._valid[key].append(np.ones(n, dtype=np.bool_))
        for key, svalue in (("kind", kind), ("operation", operation), ("kernel", kernel)):
            self._codes[key].append(self._string_codes(key, svalue, n))
        if metadata is not None and metadata_options is not None:
            raise ValueError("give either metadata or metadata_options, not both")
        if metadata_options is not None:
            if metadata_index is None:
                raise ValueError("metadata_options needs metadata_index")
            table = np.array(
                [self._metadata.code(_intern_entries(m)) for m in metadata_options],
                dtype=np.int64,
            )
            index = self._ints_of(metadata_index, n)
            ids = np.where(index >= 0, table[np.clip(index, 0, None)], _MISSING)
        elif metadata is not None:
            ids = np.full(n, self._metadata.code(_intern_entries(metadata)), dtype=np.int64)
        else:
            ids = np.full(n, _MISSING, dtype=np.int64)
        self._ints["metadata_id"].append(ids)
        self._count += n
        return n

    def build(self) -> SyntheticDump:
        """Freeze the accumulated samples into a ``SyntheticDump``."""

        def cat_int(key: str) -> IntArray:
            chunks = self._ints[key]
            return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)

        def cat_bool(key: str) -> npt.NDArray[np.bool_]:
            chunks = self._valid[key]
            return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.bool_)

        codes = {
            k: (np.concatenate(v) if v else np.zeros(0, dtype=np.int32))
            for k, v in self._codes.items()
        }
        # keep only the metadata lists some sample refers to, in first-use order
        ids = cat_int("metadata_id")
        used, first = np.unique(ids[ids >= 0], return_index=True)
        used = used[np.argsort(first, kind="stable")]
        remap = np.full(len(self._metadata.values) + 1, _MISSING, dtype=np.int64)
        remap[used] = np.arange(len(used))
        ids = remap[ids]  # -1 stays -1 through the trailing slot
        values: list[MetadataEntries] = list(self._metadata.values)  # type: ignore[arg-type]
        metadata = [values[i] for i in used.tolist()]
        return SyntheticDump(
            clock_hz=self.clock_hz,
            tile_count=self.tile_count,
            tile=cat_int("tile"),
            offset=cat_int("offset"),
            duration=cat_int("duration"),
            phase=cat_int("phase"),
            phase_valid=cat_bool("phase"),
            epoch=cat_int("epoch"),
            epoch_valid=cat_bool("epoch"),
            codes=codes,
            strings={k: [str(s) for s in v.values] for k, v in self._strings.items()},
            metadata_id=ids,
            metadata=metadata,
        )
