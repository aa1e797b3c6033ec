"""Inputs for the report tests: a generated tile profile and a hand-built run table.

The generated profile is plausible (each tile runs its samples one after another, BSP-style
compute then exchange) and vectorised, so the benchmark can ask it for a million samples.
The run table mirrors issue 3's layout (seeds 000 and 003, a trace's kernels, a linked set)
so the GPU sections are tested without the GPU parsers.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from tileprof.core.schema import SAMPLE_SCHEMA
from tileprof.model.profile import Profile
from tileprof.views.html.data import LinkedSet, RunInputs

KERNELS = (
    "gemm_f16_tile_k80",
    "attention_softmax_d72",
    "layernorm_f16",
    "fill_zero_u64",
    "<script>alert(1)</script>",
    None,  # exchange
)


def generated_profile(
    samples: int = 20_000, tiles: int = 1472, seed: int = 4, source: str = "generated"
) -> Profile:
    """``samples`` samples over ``tiles`` tiles; kernel names include an XSS probe."""
    rng = np.random.default_rng(seed)
    wanted, samples = samples, -(-samples * 10 // 9)  # about a tenth are dropped below
    steps = -(-samples // tiles)
    step = np.repeat(np.arange(steps), tiles)[:samples]
    tile = np.tile(np.arange(tiles), steps)[:samples]
    kernel_index = step % len(KERNELS)
    base = np.array([4000, 9000, 1500, 300, 700, 2500])[kernel_index]
    duration = (base * rng.uniform(0.5, 1.5, samples)).astype(np.int64)
    # Some tiles sit out a step: they do no work (zero duration is removed below).
    busy = rng.random(samples) > 0.1
    gap = rng.integers(0, 200, samples)
    slot = np.zeros((steps, tiles), dtype=np.int64)
    slot.flat[:samples] = duration + gap
    offset = (np.cumsum(slot, axis=0) - slot).reshape(-1)[:samples] + 100_000
    names = [KERNELS[k] for k in kernel_index]
    kind = ["exchange" if n is None else "compute" for n in names]
    # Metadata is per kernel (as a dump interns it), so it survives writing and reading.
    useful_of = {"gemm_f16_tile_k80": 2400.0, "attention_softmax_d72": 5400.0}
    useful = np.array([useful_of.get(n or "", np.nan) for n in names])
    physical = np.where(np.isnan(useful), np.nan, useful * 1.25)
    meta_id = np.array([0 if n == "gemm_f16_tile_k80" else 1 for n in names])
    has_meta = ~np.isnan(useful)
    frame = pl.DataFrame(
        {
            "tile": tile,
            "offset": offset,
            "duration": duration,
            "phase": step,
            "epoch": np.where(step < steps // 2, 1, 2),
            "kind": kind,
            "operation": [f"op{k}" for k in kernel_index],
            "kernel": names,
            "usefulCycles": pl.Series(useful).fill_nan(None),
            "physicalWorkCycles": pl.Series(physical).fill_nan(None),
            "metadataId": pl.Series(np.where(has_meta, meta_id, -1)).replace(-1, None),
        }
    ).cast(SAMPLE_SCHEMA)
    frame = frame.filter(pl.Series(busy)).head(wanted)
    metadata = tuple(
        (("usefulCycles", f"{u:g}"), ("physicalWorkCycles", f"{u * 1.25:g}"))
        for u in useful_of.values()
    )
    return Profile(frame, metadata, 1_500_000_000, tiles, source, "generated")


def run_rows() -> list[dict[str, object]]:
    """Rows in the run-table layout of docs/runs.md, as issue 3's parsers make them."""
    rows: list[dict[str, object]] = []
    for gpu, workload, tk, ind in (
        ("A100 SXM4 80 GB", "small", 66.04, 22.92),
        ("A100 SXM4 80 GB", "tiny-online", 15.28, 22.85),
        ("H100 SXM 80 GB", "small", 53.86, 18.84),
    ):
        common = {
            "target": gpu,
            "target_kind": "gpu",
            "workload": workload,
            "kernel": "train step",
            "op_family": "train_step",
            "dtype": "f32",
            "per": "step",
            "source": "000.txt: $.held_out[0]",
        }
        rows.append(
            common
            | {
                "implementation": "trainkernel",
                "time_us": tk,
                "baseline_implementation": "inductor",
                "baseline_time_us": ind,
                "speedup": ind / tk,
            }
        )
        rows.append(common | {"implementation": "inductor", "time_us": ind})
    for i, (schedule, us) in enumerate(
        (
            ("selected WMMA", 56.53),
            ("WGMMA shared group 1", 93.59),
            ("WGMMA register-source A", 104.85),
        )
    ):
        rows.append(
            {
                "target": "H100 SXM 80 GB",
                "target_kind": "gpu",
                "workload": "small",
                "implementation": schedule,
                "kernel": "train step",
                "per": "step",
                "time_us": us,
                "source": f"000.txt: $.h100_calibration[{i}]",
                "baseline_implementation": None if i == 0 else "selected WMMA",
                "baseline_time_us": None if i == 0 else 56.53,
                "speedup": None if i == 0 else 56.53 / us,
            }
        )
    for dtype, seconds, joules, pf in (
        ("f32", 0.0588, 19.6, 0.96),
        ("tf32", 0.00786, 2.53, 0.9),
        ("f16", 0.00436, 1.43, 0.81),
        ("int8", 0.00251, 0.82, 0.7),
    ):
        rows.append(
            {
                "target": "A100 SXM4 40 GB",
                "target_kind": "gpu",
                "workload": "gemm 8192³",
                "implementation": f"{dtype} cublas",
                "kernel": "cublas gemm",
                "op_family": "gemm",
                "dtype": dtype,
                "shape": "8192x8192x8192",
                "per": "GEMM",
                "time_us": seconds * 1e6,
                "mac": 8192**3,
                "energy_j": joules,
                "energy_raw_j": joules * 1.3,
                "peak_fraction": pf,
                "source": "003.txt: $.gemm",
            }
        )
    for name, calls, total in (
        ("ampere_sgemm_128x64_nn", 12, 480.0),
        ("void at::native::softmax<float>", 12, 96.0),
    ):
        rows.append(
            {
                "target": "NVIDIA H200",
                "target_kind": "gpu",
                "workload": "trace",
                "kernel": name,
                "op_family": "gemm" if "gemm" in name else "softmax",
                "dtype": "f32",
                "per": "call",
                "calls": calls,
                "total_us": total,
                "time_us": total / calls,
                "p50_us": total / calls,
                "p95_us": total / calls,
                "max_us": total / calls * 1.2,
                "launch_op": "aten::mm",
                "source": "trace.json.gz: kernel",
            }
        )
    return rows


def run_inputs() -> RunInputs:
    """A run table with every GPU section's material, a linked set and notes."""
    runs = pl.DataFrame(run_rows(), infer_schema_length=None)
    tile_row = pl.DataFrame(
        [
            {
                "target": "tile device (1472 tiles @ 1.5 GHz)",
                "target_kind": "tile",
                "kernel": "gemm_f16_tile_k80",
                "op_family": "gemm",
                "dtype": "f16",
                "per": "phase",
                "time_us": 23.3,
                "peak_fraction": 0.17,
                "source": "dump.json",
            }
        ]
    )
    gemm_f16 = runs.filter((pl.col("op_family") == "gemm") & (pl.col("dtype") == "f16"))
    linked = LinkedSet("gemm · f16", pl.concat([tile_row, gemm_f16], how="diagonal_relaxed"))
    return RunInputs(
        runs,
        (linked,),
        notes=("trace.json.gz: 3 events with no correlation id",),
        cpu_only_traces=("cpu_trace.json",),
    )
