"""Small hand-written dumps for the tests: samples as dicts in the dump's layout."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import msgspec
import polars as pl

from tileprof.inputs.tile import json_dump
from tileprof.model.profile import Profile, load


def sample(
    tile: int,
    offset: int,
    duration: int,
    kernel: str | None = "k",
    *,
    kind: str = "compute",
    phase: int | None = 0,
    epoch: int | None = 1,
    useful: float | None = None,
    physical: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One sample; ``useful``/``physical`` become metadata entries when given."""
    record: dict[str, Any] = {
        "physicalTile": tile,
        "offset": offset,
        "duration": duration,
        "phase": phase,
        "epoch": epoch,
        "kind": kind,
        "operation": "operation.1",
        "kernel": kernel,
    }
    metadata = []
    if useful is not None:
        metadata.append({"name": "usefulCycles", "value": str(useful)})
    if physical is not None:
        metadata.append({"name": "physicalWorkCycles", "value": str(physical)})
    if metadata:
        record["metadata"] = metadata
    record.update(extra)
    return {k: v for k, v in record.items() if v is not None}


def document(samples: list[dict[str, Any]], **header: Any) -> bytes:
    """A JSON dump document."""
    return msgspec.json.encode({**header, "samples": samples})


def frame(samples: list[dict[str, Any]]) -> pl.DataFrame:
    """The typed sample frame of these samples."""
    return json_dump.parse(Path("<test>"), document(samples)).samples


def write_dump(path: Path, samples: list[dict[str, Any]], **header: Any) -> Path:
    """Write a JSON dump and return its path."""
    path.write_bytes(document(samples, **header))
    return path


def profile(tmp_path: Path, samples: list[dict[str, Any]], **header: Any) -> Profile:
    """Load these samples as a Profile through the JSON parser."""
    return load(write_dump(tmp_path / "dump.json", samples, **header))


def fifo_of(folder: Path, data: bytes) -> Path:
    """A FIFO in ``folder`` that a thread fills with ``data`` once it is opened."""
    path = folder / "pipe"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as pipe:
            pipe.write(data)

    threading.Thread(target=write, daemon=True).start()
    return path
