"""Writing a profile back out: every dump format, and the columnar cache layout.

Used by ``tileprof convert``, by ``Profile.save`` and by tests that check every format gives
the same summary. Files are written atomically; a ``.gz`` suffix gzips the output.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import polars as pl

from tileprof.errors import OptionError
from tileprof.outputs import write_bytes
from tileprof.parsers.parquet_dump import cache_bytes

if TYPE_CHECKING:
    from tileprof.model import Profile

WRITE_FORMATS: tuple[str, ...] = ("json", "ndjson", "csv", "parquet")
_ENCODER = msgspec.json.Encoder()


def _device_header(profile: Profile) -> dict[str, int | float]:
    return {"clockHz": profile.clock_hz, "tileCount": profile.tile_count}


def _raw_columns(profile: Profile) -> pl.DataFrame:
    """The sample frame with dump key names and metadata as JSON text (null when absent)."""
    texts = [_ENCODER.encode(profile.metadata_of(i)).decode() for i in range(len(profile.metadata))]
    metadata = pl.Series("metadata", texts, dtype=pl.String)
    ids = profile.samples.get_column("metadataId")
    return profile.samples.select(
        physicalTile="tile",
        offset="offset",
        duration="duration",
        phase="phase",
        epoch="epoch",
        kind=pl.col("kind").cast(pl.String),
        operation=pl.col("operation").cast(pl.String),
        kernel=pl.col("kernel").cast(pl.String),
    ).with_columns(metadata=metadata.gather(ids) if len(texts) else pl.lit(None, pl.String))


def dump_bytes(profile: Profile, format: str) -> bytes:
    """The profile encoded as a dump of ``format``."""
    if format in ("json", "ndjson"):
        records = profile.records()
        for record in records:
            if record["metadata"] is None:
                del record["metadata"]
        if format == "json":
            return _ENCODER.encode({**_device_header(profile), "samples": records}) + b"\n"
        lines = [_ENCODER.encode(_device_header(profile))]
        lines.extend(_ENCODER.encode(record) for record in records)
        return b"\n".join(lines) + b"\n"
    if format == "csv":
        header = b"# " + _ENCODER.encode(_device_header(profile)) + b"\n"
        return header + _raw_columns(profile).write_csv().encode()
    if format == "parquet":
        buffer = io.BytesIO()
        kv = {key: str(value) for key, value in _device_header(profile).items()}
        _raw_columns(profile).write_parquet(buffer, metadata=kv)
        return buffer.getvalue()
    raise OptionError(f"cannot write format {format!r} (one of {', '.join(WRITE_FORMATS)})")


def write_dump(profile: Profile, path: Path, format: str) -> None:
    """Write a dump; gzip when the name ends in ``.gz``."""
    data = dump_bytes(profile, format)
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=6, mtime=0)
    write_bytes(path, data)


def write_cache(profile: Profile, path: Path) -> None:
    """Write the typed frame and the metadata table as Parquet (the cache layout)."""
    data = cache_bytes(profile.samples, profile.metadata, profile.clock_hz, profile.tile_count)
    write_bytes(path, data)
