"""Writing a profile back out in every dump format (the cache layout's one writer is
``tileprof.model.cache.write_cache``).

Used by ``tileprof convert`` and by tests that check every format gives
the same summary. Files are written atomically; a ``.gz`` suffix gzips the output.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import msgspec
import polars as pl

from tileprof.core.errors import OptionError
from tileprof.core.outputs import atomic_writer

if TYPE_CHECKING:
    from tileprof.model.profile import Profile

WRITE_FORMATS: tuple[str, ...] = ("json", "ndjson", "csv", "parquet")
_ENCODER = msgspec.json.Encoder()


def _device_header(profile: Profile) -> dict[str, int | float]:
    return {"clockHz": profile.clock_hz, "tileCount": profile.tile_count}


def _raw_columns(profile: Profile, samples: pl.DataFrame) -> pl.DataFrame:
    """``samples`` with dump key names and metadata as JSON text (null when absent)."""
    texts = [_ENCODER.encode(profile.metadata_of(i)).decode() for i in range(len(profile.metadata))]
    metadata = pl.Series("metadata", texts, dtype=pl.String)
    ids = samples.get_column("metadataId")
    return samples.select(
        physicalTile="tile",
        offset="offset",
        duration="duration",
        phase="phase",
        epoch="epoch",
        kind=pl.col("kind").cast(pl.String),
        operation=pl.col("operation").cast(pl.String),
        kernel=pl.col("kernel").cast(pl.String),
    ).with_columns(metadata=metadata.gather(ids) if len(texts) else pl.lit(None, pl.String))


WRITE_BATCH_ROWS = 65536
"""Samples encoded per step: the writer holds one batch of records, never the whole dump."""


def dump_bytes(profile: Profile, format: str) -> bytes:
    """The profile encoded as a dump of ``format``."""
    buffer = io.BytesIO()
    write_dump_to(buffer, profile, format)
    return buffer.getvalue()


def _record_batches(profile: Profile) -> Iterator[list[dict[str, Any]]]:
    """The samples as dump records, ``WRITE_BATCH_ROWS`` at a time (absent metadata left out)."""
    for start in range(0, profile.samples.height, WRITE_BATCH_ROWS):
        records = profile.records(profile.samples.slice(start, WRITE_BATCH_ROWS))
        for record in records:
            if record["metadata"] is None:
                del record["metadata"]
        yield records


def write_dump_to(handle: IO[bytes], profile: Profile, format: str) -> None:
    """Encode the profile as a dump of ``format`` into ``handle``, batch by batch, so that
    converting a large dump needs memory for the profile and one batch, not for the output."""
    if format not in WRITE_FORMATS:
        raise OptionError(f"cannot write format {format!r} (one of {', '.join(WRITE_FORMATS)})")
    header = _ENCODER.encode(_device_header(profile))
    if format == "json":
        handle.write(header[:-1] + b',"samples":[')
        for index, records in enumerate(_record_batches(profile)):
            handle.write((b"," if index else b"") + _ENCODER.encode(records)[1:-1])
        handle.write(b"]}\n")
    elif format == "ndjson":
        handle.write(header + b"\n")
        for records in _record_batches(profile):
            handle.write(b"".join(_ENCODER.encode(record) + b"\n" for record in records))
    elif format == "csv":
        handle.write(b"# " + header + b"\n")
        for start in range(0, max(profile.samples.height, 1), WRITE_BATCH_ROWS):
            part = profile.samples.slice(start, WRITE_BATCH_ROWS)
            text = _raw_columns(profile, part).write_csv(include_header=start == 0)
            handle.write(text.encode())
    else:
        kv = {key: str(value) for key, value in _device_header(profile).items()}
        _raw_columns(profile, profile.samples).write_parquet(handle, metadata=kv)


def write_dump(profile: Profile, path: Path, format: str) -> None:
    """Write a dump; gzip when the name ends in ``.gz`` (no name or time in the gzip header,
    so the bytes depend on the profile only)."""
    with atomic_writer(path, binary=True) as handle:
        if path.suffix == ".gz":
            with gzip.GzipFile(
                filename="", mode="wb", fileobj=handle, compresslevel=6, mtime=0
            ) as zipped:
                write_dump_to(cast(IO[bytes], zipped), profile, format)
        else:
            write_dump_to(handle, profile, format)
