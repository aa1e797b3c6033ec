"""Device names as torch, nvidia-smi and benchmark tables write them, mapped to cited peaks."""

from __future__ import annotations

import pytest

from tileprof.core.peaks import peak_for, peak_tflops, peaks


@pytest.mark.parametrize(
    ("name", "device"),
    [
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM 40 GB"),
        ("A100 SXM4 80 GB", "NVIDIA A100 SXM 80 GB"),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM 80 GB"),
        ("H100 SXM 80 GB", "NVIDIA H100 SXM"),
        ("NVIDIA H100 SXM5 80GB", "NVIDIA H100 SXM"),
        # what torch.cuda.get_device_name() and nvidia-smi print for the H100 SXM part
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
        ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
        ("NVIDIA H200", "NVIDIA H200"),
        ("NVIDIA H200 141GB HBM3e", "NVIDIA H200"),
        ("NVIDIA B200", "NVIDIA B200"),
        ("AMD Instinct MI300X VF", "AMD Instinct MI300X"),
        ("AMD Instinct MI300X", "AMD Instinct MI300X"),
        ("AMD Instinct MI250X", "AMD Instinct MI250X"),
        # no cited entry: never a guess
        ("NVIDIA A100 80GB PCIe", None),
        ("AMD Instinct MI250", None),
        ("NVIDIA H100 NVL", None),
        ("NVIDIA H200 NVL", None),
        ("NVIDIA GH200 480GB", None),
        ("NVIDIA GH200 144G HBM3e", None),
        ("GPU (nsys)", None),
        ("", None),
        (None, None),
    ],
)
def test_device_names(name: str | None, device: str | None) -> None:
    peak = peak_for(name)
    assert (peak.device if peak else None) == device


def test_h100_hbm3_gets_the_sxm_peaks() -> None:
    assert peak_tflops("NVIDIA H100 80GB HBM3", "f16") == 989.5
    assert peak_tflops("NVIDIA GH200 480GB", "f16") is None


def test_a_gpus_matrix_peaks_per_dtype_and_their_sources() -> None:
    """The H100 SXM datasheet's dense matrix figures, one per tileprof dtype, cited by every
    source its peaks name (the whitepaper gives the vector BF16 figure), sorted and joined."""
    peak = peak_for("NVIDIA H100 SXM")
    assert peak is not None
    assert peak.tflops == {
        "f32": 67.0, "tf32": 494.5, "f16": 989.5, "bf16": 989.5, "f8": 1979.0, "int8": 1979.0,
    }  # fmt: skip
    whitepaper, datasheet = peak.citation.split("; ")
    assert whitepaper.startswith("NVIDIA H100 Tensor Core GPU Architecture whitepaper (V1.0)")
    assert datasheet.startswith("NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column")


def test_a_chip_has_no_matrix_peak_per_dtype_and_peaks_lists_the_gpus() -> None:
    """A Tenstorrent chip's FPU peak depends on the op's fidelity and cores, so its entry has
    no per-dtype figure; ``peaks`` lists every GPU spec and no chip or tile device."""
    chip = peak_for("Tenstorrent Wormhole n150")
    assert chip is not None and chip.device == "Tenstorrent Wormhole n150"
    assert chip.tflops == {}
    assert "tt-perf-report" in chip.citation and chip.citation.count("; ") == 1
    assert [p.device for p in peaks()] == [
        "NVIDIA A100 SXM 40 GB", "NVIDIA A100 SXM 80 GB", "NVIDIA B200", "NVIDIA H100 PCIe",
        "NVIDIA H100 SXM", "NVIDIA H200", "AMD Instinct MI250X", "AMD Instinct MI300X",
    ]  # fmt: skip
    assert all(p.tflops["f16"] > 0 for p in peaks())


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("NVIDIA H100 SXM", "bf16"), 989.5),  # no family: matrix units
        (("NVIDIA H100 SXM", "bf16", "gemm"), 989.5),
        (("NVIDIA H100 SXM", "bf16", "attention"), 989.5),
        (("NVIDIA H100 SXM", "bf16", "softmax"), 133.8),  # vector work: the whitepaper's
        (("NVIDIA H100 SXM", "f16", "softmax"), None),  # no vector FP16 figure cited
        (("NVIDIA H100 SXM", None), None),
        (("NVIDIA H100 SXM", "f64"), None),
        ((None, "bf16"), None),
        (("NVIDIA H100 SXM", "bf16", "gemm", "LoFi", 64), 989.5),  # no per-core figures
        (("Tenstorrent Wormhole n150", "bf16", "gemm", "LoFi", 64), 3.638888889 * 64),
        (("Tenstorrent Wormhole n150", "bf16", None, " HiFi4 ", 2), 1.027777778 * 2),
        (("Tenstorrent Wormhole n150", "bf16", "softmax", "LoFi", 64), None),
        (("Tenstorrent Wormhole n150", "bf16", "gemm", "HiFi9", 64), None),
        (("Tenstorrent Wormhole n150", "bf16", "gemm", "LoFi", None), None),
        (("Tenstorrent Wormhole n150", "bf16", "gemm", "LoFi", 0), None),
        (("Tenstorrent Wormhole n150", "bf16", "gemm", "", 64), None),
        # a tile device's peak scales with the tiles and clock its name states
        (("tile device (1472 tiles @ 1.5 GHz)", "f16"), 1472 * 1.5e9 * 128 / 1e12),
        (("tile device (736 tiles @ 1 GHz)", "f16"), 736 * 1e9 * 128 / 1e12),
    ],
)
def test_peak_by_dtype_family_fidelity_and_cores(args: tuple, expected: float | None) -> None:
    assert peak_tflops(*args) == (pytest.approx(expected) if expected is not None else None)
