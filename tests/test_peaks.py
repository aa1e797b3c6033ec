"""Device names as torch, nvidia-smi and benchmark tables write them, mapped to cited peaks."""

from __future__ import annotations

import pytest

from tileprof.core.peaks import peak_for, peak_tflops


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
