"""What work a tile group states: its kernelSpec and the output elements its samples wrote.

The tile device's samples carry their kernel's description in metadata (``kernelSpec``, e.g.
``Gemm { a: f16, rows: large, k: 80, cols: 112, interleaved: true }``, and ``outputElements``).
A group's work is the kernelSpec its samples share (or how many distinct ones they have) and
Σ outputElements over the samples that state it; a group whose samples state neither has no
work here, and the run table says "work unknown" rather than guess one.

FLOPs come from a stated shape where a documented rule exists. The one rule so far is GEMM:
``Gemm { a: <dtype>, k: K, cols: N, ... }`` with ``outputElements`` = M × N per sample gives
M = outputElements / N, so Σ MAC = K × Σ outputElements (FLOPs = 2 × MAC, torch's
definition), and bytes = width(a) × (K × ΣM + samples × K × N + Σ outputElements): each
sample reads its A (M × K) and B (K × N) and writes C (M × N) once, all at ``a``'s dtype (the
spec states one dtype; the output's is taken to be the same). Any other kernelSpec, or a GEMM
whose counts do not fit (outputElements not a multiple of cols), is "work unknown" with the
reason in ``workUnknown``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from tileprof.analyses.filters import group_name
from tileprof.core.schema import MetadataEntries

WORK_SCHEMA: dict[str, pl.DataType] = {
    "name": pl.String(),
    "kernelSpec": pl.String(),
    "kernelSpecs": pl.Int64(),
    "outputElements": pl.Int64(),
    "mac": pl.Int64(),
    "bytes": pl.Int64(),
    "workUnknown": pl.String(),
}
_SPEC = re.compile(r"^\s*(\w+)\s*\{(.*)\}\s*$")
_WIDTH = {
    **{"f32": 4, "f16": 2, "bf16": 2, "f8": 1, "int8": 1},
    **{"u64": 8, "u32": 4, "u16": 2, "u8": 1, "i64": 8, "i32": 4, "i16": 2, "i8": 1},
}


def spec_fields(spec: str) -> tuple[str, dict[str, str]] | None:
    """``Gemm { a: f16, k: 80 }`` as ("Gemm", {"a": "f16", "k": "80"}); None if not that form."""
    m = _SPEC.match(spec)
    if m is None:
        return None
    fields = {}
    for part in m.group(2).split(","):
        key, sep, value = part.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return m.group(1), fields


def stated_work(
    spec: str | None, output_elements: int | None, samples: int, input_elements: int | None = None
) -> tuple[int | None, int | None, str | None]:
    """(MAC, bytes, why the FLOPs are unknown) of a group from its kernelSpec (module
    docstring)."""
    if spec is None:
        return None, None, "no kernelSpec shared by the group's samples"
    parsed = spec_fields(spec)
    if parsed is None:
        return None, None, f"kernelSpec {spec!r} is not of the form Kind {{ key: value }}"
    kind, fields = parsed
    if kind != "Gemm":
        moved = stated_bytes(kind, fields, output_elements, input_elements)
        return None, moved, f"no FLOP rule for {kind} kernels"
    k, n, dtype = fields.get("k", ""), fields.get("cols", ""), fields.get("a")
    if not (k.isdigit() and n.isdigit()) or int(n) == 0:
        return None, None, "Gemm kernelSpec without k and cols"
    if output_elements is None:
        return None, None, "no outputElements stated"
    kk, nn = int(k), int(n)
    if output_elements % nn:
        return None, None, f"outputElements {output_elements} is not a multiple of cols {nn}"
    mac = kk * output_elements
    width = _WIDTH.get(dtype or "")
    if width is None:
        return mac, None, None
    rows = output_elements // nn
    return mac, width * (kk * rows + samples * kk * nn + output_elements), None


def stated_bytes(
    kind: str, fields: dict[str, str], output_elements: int | None, input_elements: int | None
) -> int | None:
    """Bytes of a non-GEMM group from its element counts and the dtype its kernelSpec states:
    a copy (``Copy``, ``CopyStrided``, ``StaticCopy``) reads and writes ``element``s (the input
    count is ``input0Elements`` where stated, else the output count: a copy reads what it
    writes); ``Fill`` only writes; ``Cast`` reads ``from`` and writes ``to``; ``ReduceSum``
    reads ``input0Elements`` and writes ``outputElements`` of ``element``. Anything else, or a
    count or dtype not stated, is None."""
    if not output_elements:  # 0 or unstated: no count to go by
        return None
    if kind in ("Copy", "CopyStrided", "StaticCopy", "Fill", "ReduceSum"):
        w_in = w_out = _WIDTH.get(fields.get("element", ""))
    elif kind == "Cast":
        w_in, w_out = _WIDTH.get(fields.get("from", "")), _WIDTH.get(fields.get("to", ""))
    else:
        return None
    if w_in is None or w_out is None:
        return None
    if kind == "Fill":
        return output_elements * w_out
    read = input_elements
    if read is None and kind != "ReduceSum":
        read = output_elements
    return None if read is None else read * w_in + output_elements * w_out


def _metadata_work(metadata: Sequence[MetadataEntries]) -> pl.DataFrame:
    """One row per interned metadata list (not per sample): its kernelSpec and outputElements."""
    ids, specs, outputs, inputs = [], [], [], []
    for i, entries in enumerate(metadata):
        values = dict(entries)
        out = values.get("outputElements", "").strip()
        into = values.get("input0Elements", "").strip()
        ids.append(i)
        specs.append(values.get("kernelSpec") or None)
        outputs.append(int(out) if out.isdigit() else None)
        inputs.append(int(into) if into.isdigit() else None)
    return pl.DataFrame(
        {"metadataId": ids, "kernelSpec": specs, "outputElements": outputs, "_in": inputs},
        schema={
            "metadataId": pl.UInt32,
            "kernelSpec": pl.String,
            "outputElements": pl.Int64,
            "_in": pl.Int64,
        },
    )


def group_work(samples: pl.DataFrame, metadata: Sequence[MetadataEntries]) -> pl.DataFrame:
    """Per group (``name``, as the summary names groups): the shared kernelSpec (null when the
    samples state none or several), how many distinct ones, and Σ outputElements (null when no
    sample states it)."""
    if samples.height == 0:
        return pl.DataFrame(schema=WORK_SCHEMA)
    joined = samples.select(
        group_name().cast(pl.String).alias("name"), pl.col("metadataId").cast(pl.UInt32)
    ).join(_metadata_work(metadata), on="metadataId", how="left")
    specs = pl.col("kernelSpec").drop_nulls().unique()
    groups = joined.group_by("name").agg(
        specs.len().cast(pl.Int64).alias("kernelSpecs"),
        pl.when(specs.len() == 1).then(specs.first()).alias("kernelSpec"),
        pl.when(pl.col("outputElements").is_not_null().any())
        .then(pl.col("outputElements").sum())
        .alias("outputElements"),
        pl.col("outputElements").is_not_null().sum().alias("_stating"),
        # Σ input0Elements only where every sample stating outputs states it too
        pl.when(pl.col("_in").is_not_null().sum() == pl.col("outputElements").is_not_null().sum())
        .then(pl.col("_in").sum())
        .alias("_in"),
    )
    # one call per group (not per sample): the rule reads the group's shared kernelSpec
    work = [
        stated_work(spec, out, int(n), into)
        for spec, out, n, into in groups.select(
            "kernelSpec", "outputElements", "_stating", "_in"
        ).iter_rows()
    ]
    return groups.with_columns(
        pl.Series("mac", [w[0] for w in work], dtype=pl.Int64),
        pl.Series("bytes", [w[1] for w in work], dtype=pl.Int64),
        pl.Series("workUnknown", [w[2] for w in work], dtype=pl.String),
    ).select([pl.col(c).cast(t) for c, t in WORK_SCHEMA.items()])
