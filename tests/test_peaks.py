"""Device names as torch, nvidia-smi and benchmark tables write them, mapped to cited peaks."""

from __future__ import annotations

import pytest

from tileprof.core.peaks import peak_for, peak_tflops


@pytest.mark.parametrize(
    ("name", "device"),
    [
        ("NVIDIA A100-SXM4-40GB", "A100 (40 GB and 80 GB)"),
        ("A100 SXM4 80 GB", "A100 (40 GB and 80 GB)"),
        ("NVIDIA A100 80GB PCIe", "A100 (40 GB and 80 GB)"),
        ("H100 SXM 80 GB", "H100 SXM"),
        ("NVIDIA H100 SXM5 80GB", "H100 SXM"),
        # what torch.cuda.get_device_name() and nvidia-smi print for the H100 SXM part
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H200", "H200 (SXM)"),
        ("NVIDIA H200 141GB HBM3e", "H200 (SXM)"),
        # no cited entry: never a guess
        ("NVIDIA H100 PCIe", None),
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
