"""Dense peak throughput of the devices tileprof knows: a view of the spec registry.

The figures live in ``tileprof/data/specs/*.toml`` (``tileprof.core.specs``), each with its
datasheet; ``--spec FILE`` adds a user's own. Figures are dense (no structured sparsity), in
TFLOP/s (TOPS for int8) where one multiply-accumulate counts as two operations. A device that
matches no spec, or a dtype its spec lacks, gets no peak: null, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from tileprof.core.specs import (
    DTYPE_CLASS,
    MATRIX_FAMILIES,
    DeviceSpec,
    peak_key,
    registry,
    spec_for,
)


@dataclass(frozen=True)
class Peak:
    """One device's dense matrix peaks per tileprof dtype, and where they are printed."""

    device: str
    tflops: dict[str, float]
    citation: str


def _peak(spec: DeviceSpec) -> Peak:
    tflops = {}
    for dtype, precision in DTYPE_CLASS.items():
        number = spec.peaks.get(f"matrix_{precision}")
        if number is not None and spec.kind == "gpu":
            tflops[dtype] = number.value
    cited = sorted({n.source for n in spec.peaks.values()})
    return Peak(spec.name, tflops, "; ".join(cited))


def peaks() -> tuple[Peak, ...]:
    """Every registered GPU's matrix peaks (the tile device's depend on its size)."""
    return tuple(_peak(s) for s in registry() if s.kind == "gpu")


def peak_for(target: str | None) -> Peak | None:
    """The peaks entry a device name refers to, or None."""
    spec = spec_for(target)
    return _peak(spec) if spec is not None else None


def peak_tflops(
    target: str | None,
    dtype: str | None,
    family: str | None = None,
    fidelity: str | None = None,
    cores: float | None = None,
) -> float | None:
    """Dense peak TFLOP/s of ``target`` for ``dtype`` (matrix units unless ``family`` says the
    work is vector work); None when either is unknown. A Tenstorrent op's matrix work (its
    ``fidelity`` and ``cores`` given) has its FPU peak at that fidelity on those cores instead
    (``DeviceSpec.core_peak_tflops``), whatever its dtype."""
    spec = spec_for(target)
    if spec is not None and fidelity and (family is None or family in MATRIX_FAMILIES):
        core_peak = spec.core_peak_tflops(fidelity, cores)
        if core_peak is not None:
            return core_peak
    key = peak_key(dtype, family)
    if spec is None or key is None:
        return None
    return spec.peak_tflops(key, target)
