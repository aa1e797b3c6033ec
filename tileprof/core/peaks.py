"""Dense peak throughput of the GPUs tileprof knows, from NVIDIA's datasheets.

Figures are dense (no structured sparsity), in TFLOP/s (TOPS for int8) where one
multiply-accumulate counts as two operations. NVIDIA's datasheets print the Hopper tensor-core
figures *with* sparsity; the dense figure is half of that, as their footnote says. A device
that matches no entry, or a dtype an entry lacks, gets no peak: null, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Peak:
    """One device's dense peaks per dtype, and where they are printed."""

    device: str
    tflops: dict[str, float]
    citation: str


_A100_CITATION = (
    "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web), "
    "SXM column: FP32 19.5 TFLOPS, TF32 156, BF16/FP16 312, INT8 624 TOPS (dense); "
    "identical for the 40 GB and 80 GB parts; no FP8"
)
_HOPPER_SXM = {
    "f32": 67.0,
    "tf32": 494.5,  # 989 with sparsity
    "bf16": 989.5,  # 1,979 with sparsity
    "f16": 989.5,  # 1,979 with sparsity
    "f8": 1979.0,  # 3,958 with sparsity
    "int8": 1979.0,  # 3,958 with sparsity
}

PEAKS: tuple[Peak, ...] = (
    Peak(
        "A100 (40 GB and 80 GB)",
        {"f32": 19.5, "tf32": 156.0, "f16": 312.0, "bf16": 312.0, "int8": 624.0},
        _A100_CITATION,
    ),
    Peak(
        "H100 SXM",
        dict(_HOPPER_SXM),
        "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column: FP32 67 TFLOPS; TF32 989, "
        "BF16/FP16 1,979, FP8 3,958, INT8 3,958 TOPS with sparsity, halved for dense",
    ),
    Peak(
        "H200 (SXM)",
        dict(_HOPPER_SXM),
        "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column: FP32 67 TFLOPS; TF32 989, "
        "BF16/FP16 1,979, FP8 3,958, INT8 3,958 TOPS with sparsity, halved for dense",
    ),
)

# How a device name as written (nvidia-smi, torch, a benchmark table) maps to an entry.
# H100 PCIe/NVL and H200 NVL have lower peaks than the SXM parts, so only names that say SXM
# (H100), that name the SXM part's memory ("NVIDIA H100 80GB HBM3", as torch and nvidia-smi
# print it: the PCIe part is "H100 PCIe" with HBM2e, the NVL part "H100 NVL" with 94 GB), or
# do not say NVL (H200, whose plain name is the SXM part) match. A model number must not follow
# a letter: GH200 (Grace Hopper) is not an H200 and has no entry.
_NAME_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![a-z])a100"), "A100 (40 GB and 80 GB)"),
    (
        re.compile(
            r"(?<![a-z])h100(?!.*(?:pcie|nvl))(?:.*sxm|\s*80\s*gb\s*hbm3(?!e))"
            r"|sxm.*(?<![a-z])h100"
        ),
        "H100 SXM",
    ),
    (re.compile(r"(?<![a-z])h200(?!.*nvl)"), "H200 (SXM)"),
)
_BY_DEVICE = {p.device: p for p in PEAKS}


def peak_for(target: str | None) -> Peak | None:
    """The peaks entry a device name refers to, or None."""
    if not target:
        return None
    text = target.lower()
    for rx, device in _NAME_RULES:
        if rx.search(text):
            return _BY_DEVICE[device]
    return None


def peak_tflops(target: str | None, dtype: str | None) -> float | None:
    """Dense peak TFLOP/s of ``target`` for ``dtype``; None when either is unknown."""
    peak = peak_for(target)
    if peak is None or dtype is None:
        return None
    return peak.tflops.get(dtype)
