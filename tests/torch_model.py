"""The small CPU model whose FLOPs torch's FlopCounterMode counts, shared by the live test
(tests/test_ops.py, when torch is installed) and tools/record_torch_references.py, which
records its trace and counts into fixtures/torch/ so the comparison holds without torch.

It imports torch only inside the functions: the module itself loads anywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def record_model(folder: Path, torch: Any) -> tuple[Path, dict[str, int]]:
    """Run one forward+backward of a small CPU model twice: under FlopCounterMode and under
    torch.profiler; the trace (``folder/model.json``) and FlopCounterMode's per-op counts."""
    from torch.profiler import ProfilerActivity, profile
    from torch.utils import flop_counter as fc

    step = _model_step(torch)
    aten = torch.ops.aten
    # FlopCounterMode has no entry for the CPU attention kernels (it would count them as 0):
    # map them to torch's own attention formulas, so the reference is still torch's.
    # (__wrapped__: custom_mapping wraps each formula once more, as the registry's already are)
    mapping = {
        aten._scaled_dot_product_flash_attention_for_cpu: fc.sdpa_flop.__wrapped__,
        aten._scaled_dot_product_flash_attention_for_cpu_backward: (
            fc.sdpa_backward_flop.__wrapped__
        ),
    }
    with fc.FlopCounterMode(display=False, custom_mapping=mapping) as counter:
        step()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        step()
    trace = folder / "model.json"
    prof.export_chrome_trace(str(trace))
    counts = {
        str(k).replace("aten.", "aten::", 1): int(v)
        for k, v in counter.get_flop_counts()["Global"].items()
    }
    return trace, counts


def _model_step(torch: Any) -> Any:
    """The forward+backward step: convolutions of every kind, linear, bmm, mm, matmul and
    causal and scaled attention, on fixed random inputs (seed 0)."""
    import torch.nn.functional as F

    torch.manual_seed(0)
    nn = torch.nn
    convs = [
        nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2),
        nn.Conv2d(6, 8, 3, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
        nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1, groups=2),
        nn.ConvTranspose1d(6, 4, 4, stride=3, padding=2, dilation=2),
        nn.Conv3d(2, 4, (2, 3, 3), stride=1, padding=(0, 1, 1)),
    ]
    lin = nn.Linear(16, 12)
    x1 = torch.randn(2, 4, 20, requires_grad=True)
    x2 = torch.randn(2, 6, 10, 12)
    x3 = torch.randn(1, 2, 4, 6, 6)
    a = torch.randn(8, 16, requires_grad=True)
    b = torch.randn(96, requires_grad=True)
    q, k, v = (torch.randn(2, 3, n, 8, requires_grad=True) for n in (5, 7, 7))

    def step() -> None:
        h1 = convs[0](x1)
        y = h1.sum() + convs[3](h1).sum() + convs[4](x3).sum()
        h2 = convs[1](x2)
        y = y + h2.sum() + convs[2](h2).sum() + lin(a).sum()
        y = y + torch.bmm(a.view(2, 4, 16), b.view(2, 16, 3)).sum()
        y = y + torch.mm(a, b.view(16, 6)).sum() + torch.matmul(a, a.t()).sum()
        y = y + F.scaled_dot_product_attention(q, k, v, is_causal=True).sum()
        y = y + F.scaled_dot_product_attention(q, k, v, scale=0.5).sum()
        y.backward()

    return step


def record_cpu_softmax(folder: Path, torch: Any) -> Path:
    """A CPU-only torch.profiler trace of ``softmax(x @ w)``: a trace with no GPU event."""
    from torch.profiler import ProfilerActivity, profile

    x = torch.randn(64, 128)
    w = torch.randn(128, 32)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        y = torch.softmax(x @ w, dim=-1)
        y.sum()
    path = folder / "cpu_trace.json"
    prof.export_chrome_trace(str(path))
    return path
