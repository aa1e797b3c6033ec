"""A fast, numpy-driven generator of realistic tile dumps for the benchmarks.

``tileprof.synth`` (the fixture builder) was not on main when this was written, and building
millions of Python sample dicts would make generation slower than the thing being measured.
Here the per-sample values come from numpy and each sample is one bytes template fill; the
distinct metadata lists (a few hundred, as in real dumps) are encoded once.

Shape (as issue 6 asks): about 40% of samples carry the seed-004 full metadata list (11 entries),
the rest 0 to 3 entries, 15% are exchange samples; 1472 tiles, 1.5 GHz.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

TILES = 1472
CLOCK_HZ = 1_500_000_000


def _full_list(kernel_index: int, useful: int, physical: int) -> list[dict[str, str]]:
    """The seed-004 metadata layout (11 entries), varied per kernel."""
    return [
        {"name": "reason", "value": "OperatorKernel"},
        {"name": "value", "value": str(500 + kernel_index)},
        {
            "name": "kernelSpec",
            "value": f"AttentionSoftmax {{ head_dimension: {8 * kernel_index + 8}, "
            f"key_columns: 729, padded_key_columns: 768 }}",
        },
        {"name": "outputElements", "value": str(13312 + kernel_index)},
        {"name": "input0Elements", "value": "11664"},
        {"name": "usefulCycles", "value": str(useful)},
        {"name": "physicalWorkCycles", "value": str(physical)},
        {
            "name": "workEstimateBasis",
            "value": "softmax: arithmetic/conversion issue slots, "
            "excluding loads and row addressing",
        },
        {"name": "invocations", "value": "1"},
        {"name": "uniformInvocations", "value": "true"},
        {"name": "arguments", "value": f"[16, {kernel_index}, 0]"},
    ]


def _short_list(count: int, useful: int, physical: int) -> list[dict[str, str]]:
    entries = [
        {"name": "reason", "value": "OperatorKernel"},
        {"name": "usefulCycles", "value": str(useful)},
        {"name": "physicalWorkCycles", "value": str(physical)},
    ]
    return entries[:count]


def sample_lines(samples: int, seed: int = 4) -> list[bytes]:
    """``samples`` compact JSON sample objects (no separators)."""
    rng = np.random.default_rng(seed)
    kernels = [f"kernel_{k:02d}_gemm_f16_rows_interleaved_k80_c{16 * k}" for k in range(48)]
    variants = 8
    # metadata texts: [kernel][variant] -> full list; short lists by (count, variant)
    full = [
        [
            orjson.dumps(_full_list(k, 20000 + 97 * k + 13 * v, 23040 + 11 * v))
            for v in range(variants)
        ]
        for k in range(len(kernels))
    ]
    short = [
        [orjson.dumps(_short_list(c, 300 + 7 * v, 400 + 5 * v)) for v in range(variants)]
        for c in range(4)
    ]
    is_exchange = rng.random(samples) < 0.15
    has_full = ~is_exchange & (rng.random(samples) < 0.40 / 0.85)
    kernel = rng.integers(0, len(kernels), samples)
    variant = rng.integers(0, variants, samples)
    short_count = rng.integers(0, 4, samples)
    tile = rng.integers(0, TILES, samples)
    phase = rng.integers(0, 400, samples)
    epoch = rng.integers(1, 3, samples)
    duration = rng.integers(100, 50_000, samples)
    offset = phase * 40_000 + rng.integers(0, 30_000, samples)
    lines: list[bytes] = []
    append = lines.append
    for i in range(samples):
        if is_exchange[i]:
            meta = short[int(short_count[i]) % 2][int(variant[i])]
            append(
                b'{"physicalTile":%d,"offset":%d,"duration":%d,"phase":%d,"epoch":%d,'
                b'"kind":"exchange","operation":"exchange.%d","metadata":%s}'
                % (tile[i], offset[i], duration[i], phase[i], epoch[i], phase[i] % 64, meta)
            )
            continue
        k = int(kernel[i])
        meta = (
            full[k][int(variant[i])] if has_full[i] else short[int(short_count[i])][int(variant[i])]
        )
        append(
            b'{"physicalTile":%d,"offset":%d,"duration":%d,"phase":%d,"epoch":%d,'
            b'"kind":"compute","operation":"operation.%d","kernel":"%s","metadata":%s}'
            % (tile[i], offset[i], duration[i], phase[i], epoch[i], k, kernels[k].encode(), meta)
        )
    return lines


def write_dumps(samples: int, folder: Path) -> tuple[Path, Path]:
    """Write (JSON, NDJSON) dumps of ``samples`` samples into ``folder``, reusing existing ones."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path = folder / f"dump_{samples}.json"
    ndjson_path = folder / f"dump_{samples}.ndjson"
    if json_path.exists() and ndjson_path.exists():
        return json_path, ndjson_path
    header = b'{"clockHz":%d,"tileCount":%d' % (CLOCK_HZ, TILES)
    chunk = 200_000
    lines = sample_lines(samples)
    tmp_json = json_path.with_suffix(".json.tmp")
    tmp_ndjson = ndjson_path.with_suffix(".ndjson.tmp")
    with open(tmp_json, "wb") as out_json, open(tmp_ndjson, "wb") as out_ndjson:
        out_json.write(header + b',"samples":[')
        out_ndjson.write(header + b"}\n")
        for start in range(0, len(lines), chunk):
            part = lines[start : start + chunk]
            out_json.write((b"," if start else b"") + b",".join(part))
            out_ndjson.write(b"\n".join(part) + b"\n")
        out_json.write(b"]}\n")
    tmp_json.replace(json_path)
    tmp_ndjson.replace(ndjson_path)
    return json_path, ndjson_path
