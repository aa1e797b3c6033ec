"""Issue 15: ways of turning one batch of decoded ``SampleRecord``s into typed columns.

    python benchmarks/columns.py                # 100k samples, 5 rounds, medians

Decodes one batch of a ``dumpgen.py`` dump (cached under the temp folder) once, then times each
way of building the eight raw columns, in alternation, with the garbage collector paused as the
readers pause it. ``batches.record_columns`` is the one tileprof keeps.
"""

from __future__ import annotations

import argparse
import gc
import operator
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dumpgen  # noqa: E402

from tileprof.core.schema import SAMPLE_SCHEMA  # noqa: E402
from tileprof.inputs.batches import record_columns  # noqa: E402
from tileprof.inputs.records import SampleRecord  # noqa: E402
from tileprof.inputs.tile.json_dump import _BATCH_DECODER  # noqa: E402

FIELDS = ("physicalTile", "offset", "duration", "phase", "epoch", "kind", "operation", "kernel")
COLUMNS = ("tile", "offset", "duration", "phase", "epoch", "kind", "operation", "kernel")
TEXT = {"kind", "operation", "kernel"}
Records = Sequence[SampleRecord]


def _series(values: Sequence[Sequence[object]], categorical: bool) -> list[pl.Series]:
    def dtype(name: str) -> pl.DataType:
        if name in TEXT:
            return pl.Categorical() if categorical else pl.String()
        return pl.Int64()

    return [
        pl.Series(n, v, dtype=dtype(n), strict=False) for n, v in zip(COLUMNS, values, strict=False)
    ]


def comprehensions_categorical(records: Records) -> object:
    """Before issue 15: a comprehension per field, ``Categorical`` built per batch."""
    return _series([[getattr(r, f) for r in records] for f in FIELDS], categorical=True)


def tuples_attrgetter(records: Records) -> object:
    """One tuple per record (``attrgetter`` of all fields), transposed by ``zip``."""
    return _series(
        list(zip(*map(operator.attrgetter(*FIELDS), records), strict=False)), categorical=False
    )


def tuples_astuple(records: Records) -> object:
    """One tuple per record (``msgspec.structs.astuple``), transposed by ``zip``."""
    return _series(
        list(zip(*map(msgspec.structs.astuple, records), strict=False)), categorical=False
    )


def numpy_fromiter(records: Records) -> object:
    """Preallocated int64 arrays filled by ``np.fromiter`` (non-null fields), lists otherwise."""
    out = []
    for name, field in zip(COLUMNS, FIELDS, strict=False):
        values = map(operator.attrgetter(field), records)
        if name in ("tile", "offset", "duration"):
            out.append(pl.Series(name, np.fromiter(values, np.int64, len(records))))
        else:
            out.append(pl.Series(name, list(values), dtype=SAMPLE_SCHEMA[name], strict=False))
    return out


def kept(records: Records) -> object:
    """What tileprof does: comprehensions, ``String`` per batch, cast (here: per batch; in
    ``SampleBatches.finish`` once per whole column)."""
    return {n: s.cast(SAMPLE_SCHEMA[n]) for n, s in record_columns(records).items()}


WAYS: tuple[Callable[[Records], object], ...] = (
    comprehensions_categorical,
    tuples_attrgetter,
    tuples_astuple,
    numpy_fromiter,
    kept,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "tileprof-bench"
    )
    args = parser.parse_args()
    json_path, _ = dumpgen.ensure_dumps(args.samples, args.folder)
    raws = msgspec.json.decode(json_path.read_bytes(), type=dict[str, msgspec.Raw])["samples"]
    gc.disable()
    records = _BATCH_DECODER.decode(bytes(raws))
    times: dict[str, list[float]] = {way.__name__: [] for way in WAYS}
    for _ in range(args.rounds):
        for way in WAYS:
            began = time.perf_counter()
            way(records)
            times[way.__name__].append(time.perf_counter() - began)
    per_million = 1_000_000 / len(records)
    print(f"| way ({len(records):,} samples, {args.rounds} rounds) | median s | s per 1M |")
    print("| --- | ---: | ---: |")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"| {name} | {median:.3f} | {median * per_million:.2f} |")


if __name__ == "__main__":
    main()
