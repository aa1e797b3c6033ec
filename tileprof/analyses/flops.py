"""FLOPs of one PyTorch op from the shapes and arguments the profiler recorded.

Pure functions of an op name, its ``Input Dims`` and its ``Concrete Inputs`` (what
``torch.profiler`` writes with ``record_shapes=True``); nothing here reads a trace. The
formulas are ``torch.utils.flop_counter``'s, so a count agrees with ``FlopCounterMode``
integer for integer: one multiply-accumulate is two FLOPs, bias additions are not counted,
and attention counts its two (forward) or five (backward) matrix products — with one
exception. **Causal attention** counts the products over the unmasked part of the score
matrix only (``causal_pairs2``): half of it when Sq = Sk, as FlashAttention's benchmarks and
TraceLens count it, so that a causal kernel's TFLOP/s is the work it does and can never read
above peak. ``FlopCounterMode`` counts causal attention in full; ``Work.full_flops`` keeps
that count, and ``is_causal`` is reported beside every attention count.

Ops come in two tiers. ``PRIMARY`` ops are the dispatcher-level ops ``FlopCounterMode``
counts (``aten::mm``, ``aten::convolution``, the attention kernels' entry points…);
``COMPOSITE`` ops (``aten::linear``, ``aten::matmul``, ``aten::conv2d``,
``aten::scaled_dot_product_attention``) call a primary op and are counted only when the trace
shows no counted op inside them. ``tileprof.analyses.ops`` applies that rule.

A count is an ``int`` or ``None``; ``None`` always comes with a ``problem`` that says why
(missing or inconsistent dims, a product beyond int64) so that a caller can count and report
such ops. No input raises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

INT64_MAX = 2**63 - 1


class WorkError(ValueError):
    """Dims or arguments that do not describe the op; its text says what is wrong."""


@dataclass(frozen=True)
class Work:
    """One op call's FLOPs (None when unknown, with ``problem`` saying why) and its shape.

    ``gemm`` is ``(M, N, K)`` for matrix products (per batch element for ``bmm``, with
    ``batch``), so that runs of equal GEMMs can be linked; ``causal`` is the recorded
    ``is_causal`` of an attention op, and ``full_flops`` the count without its mask
    (``FlopCounterMode``'s) where the mask removed work.
    """

    flops: int | None
    problem: str | None = None
    gemm: tuple[int, int, int] | None = None
    batch: int | None = None
    causal: bool | None = None
    full_flops: int | None = None


Dims = Sequence[Any]
Concrete = Sequence[Any]


def _shape(dims: Dims, i: int, rank: int | tuple[int, ...] | None = None) -> list[int]:
    """``dims[i]`` as a list of non-negative ints, of one of the ranks given."""
    if i >= len(dims):
        raise WorkError(f"input {i} missing")
    d = dims[i]
    if not isinstance(d, list) or not all(type(v) is int and v >= 0 for v in d):
        raise WorkError(f"input {i} dims {d!r} are not a list of non-negative integers")
    ranks = (rank,) if isinstance(rank, int) else rank
    if ranks is not None and len(d) not in ranks:
        raise WorkError(f"input {i} has rank {len(d)}, expected {' or '.join(map(str, ranks))}")
    return list(d)


def _ints(concrete: Concrete, i: int, n: int, default: int) -> list[int]:
    """A recorded int list such as ``[2, 1]`` (or one int, repeated) at position ``i``."""
    text = str(concrete[i]).strip() if i < len(concrete) else ""
    if not text:
        return [default] * n
    try:
        values = [int(v) for v in text.strip("[]").replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise WorkError(f"argument {i} {text!r} is not a list of integers") from None
    if len(values) == 1:
        values = values * n
    if len(values) != n:
        raise WorkError(f"argument {i} {text!r} has {len(values)} values, expected {n}")
    return values


def _bool(concrete: Concrete, i: int | None) -> bool | None:
    if i is None or i >= len(concrete):
        return None
    text = str(concrete[i]).strip().lower()
    return {"true": True, "false": False, "1": True, "0": False}.get(text)


def _bools(concrete: Concrete, i: int, n: int) -> list[bool]:
    text = str(concrete[i]).strip() if i < len(concrete) else ""
    if not text:
        raise WorkError(f"argument {i} (output mask) not recorded")
    parts = [p.strip().lower() for p in text.strip("[]").split(",")]
    values = [{"true": True, "false": False}.get(p) for p in parts]
    if len(values) < n or any(v is None for v in values):
        raise WorkError(f"argument {i} {text!r} is not a list of {n} booleans")
    return [bool(v) for v in values[:n]]


def mm_work(a: list[int], b: list[int]) -> Work:
    m, k = a
    k2, n = b
    if k != k2:
        raise WorkError(f"inner dimensions differ: {a} @ {b}")
    return Work(2 * m * n * k, gemm=(m, n, k))


def bmm_work(a: list[int], b: list[int]) -> Work:
    bt, m, k = a
    bt2, k2, n = b
    if bt != bt2 or k != k2:
        raise WorkError(f"batch or inner dimensions differ: {a} @ {b}")
    return Work(2 * bt * m * n * k, gemm=(m, n, k), batch=bt)


def matmul_work(a: list[int], b: list[int]) -> Work:
    """``torch.matmul``'s product of two tensors of any rank ≥ 1 (broadcast batch dims)."""
    if not a or not b:
        raise WorkError("matmul of a 0-d tensor")
    a2 = [1, *a] if len(a) == 1 else a
    b2 = [*b, 1] if len(b) == 1 else b
    m, k = a2[-2:]
    k2, n = b2[-2:]
    if k != k2:
        raise WorkError(f"inner dimensions differ: {a} @ {b}")
    batch = _broadcast(a2[:-2], b2[:-2])
    bt = prod(batch)
    return Work(2 * bt * m * n * k, gemm=(m, n, k), batch=bt if batch else None)


def _broadcast(x: list[int], y: list[int]) -> list[int]:
    out = []
    for i in range(1, max(len(x), len(y)) + 1):
        p = x[-i] if i <= len(x) else 1
        q = y[-i] if i <= len(y) else 1
        if p != q and 1 not in (p, q):
            raise WorkError(f"batch dimensions {x} and {y} do not broadcast")
        out.append(max(p, q) if 0 not in (p, q) else 0)
    return out[::-1]


def linear_work(x: list[int], w: list[int]) -> Work:
    if not x or x[-1] != w[1]:
        raise WorkError(f"input {x} does not match weight {w}")
    rows = prod(x[:-1])
    return Work(2 * rows * w[0] * w[1], gemm=(rows, w[0], w[1]))


def conv_flop_count(x: list[int], w: list[int], out: list[int], transposed: bool) -> int:
    """``torch.utils.flop_counter.conv_flop_count``: 2 × spatial points × kernel × batch ×
    the weight's two channel dims (so groups are in the weight shape)."""
    spatial = (x if transposed else out)[2:]
    return 2 * prod(spatial) * prod(w[2:]) * x[0] * w[0] * w[1]


@dataclass(frozen=True)
class ConvArgs:
    """Where a convolution op records its arguments (``None``: not an argument of it)."""

    stride: int | None
    padding: int | None
    dilation: int | None
    transposed: int | None = None
    output_padding: int | None = None
    groups: int | None = None
    transposed_always: bool = False


def conv_out(
    x: list[int], w: list[int], st: list[int], pad: list[int], dil: list[int]
) -> list[int]:
    """Output shape of a (not transposed) convolution."""
    spatial = []
    for i, size in enumerate(x[2:]):
        extent = dil[i] * (w[2 + i] - 1) + 1
        span = size + 2 * pad[i] - extent
        if span < 0 or st[i] <= 0:
            raise WorkError(f"kernel {w[2:]} does not fit input {x[2:]} (padding {pad})")
        spatial.append(span // st[i] + 1)
    return [x[0], w[0], *spatial]


def conv_work(dims: Dims, concrete: Concrete, where: ConvArgs) -> Work:
    x = _shape(dims, 0, (3, 4, 5))
    w = _shape(dims, 1, len(x))
    n = len(x) - 2
    transposed = where.transposed_always or bool(_bool(concrete, where.transposed))
    groups = _ints(concrete, where.groups, 1, 1)[0] if where.groups is not None else 1
    if groups <= 0:
        raise WorkError(f"groups {groups}")
    cin = w[0] if transposed else w[1] * groups
    if x[1] != cin:
        raise WorkError(f"input channels {x[1]} do not match weight {w} with groups {groups}")
    if transposed:
        return Work(conv_flop_count(x, w, [], True))
    st = _ints(concrete, where.stride, n, 1) if where.stride is not None else [1] * n
    pad = _ints(concrete, where.padding, n, 0) if where.padding is not None else [0] * n
    dil = _ints(concrete, where.dilation, n, 1) if where.dilation is not None else [1] * n
    return Work(conv_flop_count(x, w, conv_out(x, w, st, pad, dil), False))


def conv_backward_work(dims: Dims, concrete: Concrete) -> Work:
    """``aten::convolution_backward``: grad_input and grad_weight as the output mask asks
    (torch's ``conv_backward_flop``); grad_bias is not counted."""
    grad_out = _shape(dims, 0, (3, 4, 5))
    x = _shape(dims, 1, len(grad_out))
    w = _shape(dims, 2, len(grad_out))
    transposed = bool(_bool(concrete, 7))
    mask = _bools(concrete, 10, 2)

    def t(s: list[int]) -> list[int]:
        return [s[1], s[0], *s[2:]]

    flops = 0
    if mask[0]:
        flops += conv_flop_count(grad_out, w, x, not transposed)
    if mask[1]:
        pair = (grad_out, x) if transposed else (x, grad_out)
        flops += conv_flop_count(t(pair[0]), t(pair[1]), t(w), False)
    return Work(flops)


def _qkv(dims: Dims, first: int) -> tuple[list[int], list[int], list[int]]:
    q = _shape(dims, first, 4)
    k = _shape(dims, first + 1, 4)
    v = _shape(dims, first + 2, 4)
    b, hq, _, d = q
    if not (b == k[0] == v[0] and k[1] == v[1] and k[3] == d and k[2] == v[2]):
        raise WorkError(f"query {q}, key {k} and value {v} do not match")
    if k[1] == 0 or hq % k[1]:
        raise WorkError(f"query heads {hq} are not a multiple of key heads {k[1]}")
    return q, k, v


def causal_pairs2(sq: int, sk: int, bottom_right: bool) -> int:
    """Twice the unmasked area of a causal Sq × Sk score matrix (an integer for every Sq, Sk).

    Top-left alignment (torch's ``is_causal``: query i sees keys 0..i): Sq² when Sq ≤ Sk, else
    2·Sq·Sk − Sk². Bottom-right (FlashAttention's ``_flash_attention_*``: query i sees keys up
    to i + Sk − Sq): 2·Sq·Sk − Sq² when Sq ≤ Sk, else Sk². Both are Sq² (half of 2·Sq·Sk) when
    Sq = Sk, the count TraceLens and FlashAttention's benchmarks use."""
    if bottom_right:
        return 2 * sq * sk - sq * sq if sq <= sk else sk * sk
    return sq * sq if sq <= sk else 2 * sq * sk - sk * sk


def _masked(full: int, per_pair: int, sq: int, sk: int, causal: bool | None, br: bool) -> Work:
    """The attention count for ``full`` = ``per_pair`` × 2·Sq·Sk FLOPs: over the unmasked
    pairs when causal (``full_flops`` keeping the whole count), else in full."""
    if not causal or sq * sk == 0:
        return Work(full, causal=causal)
    return Work(per_pair * causal_pairs2(sq, sk, br), causal=True, full_flops=full)


def sdpa_work(
    dims: Dims,
    concrete: Concrete,
    causal_at: int | None,
    nested_at: int | None,
    bottom_right: bool = False,
) -> Work:
    """Attention forward: scores = Q·Kᵀ and out = scores·V, over the unmasked pairs."""
    if nested_at is not None and nested_at < len(dims) and dims[nested_at]:
        raise WorkError("variable-length (nested) attention: sequence lengths are not recorded")
    q, k, v = _qkv(dims, 0)
    b, h, sq, d = q
    sk, dv = k[2], v[3]
    flops = 2 * b * h * sq * d * sk + 2 * b * h * sq * sk * dv
    causal = _bool(concrete, causal_at)
    return _masked(flops, b * h * (d + dv), sq, sk, causal, bottom_right)


def sdpa_backward_work(
    dims: Dims,
    concrete: Concrete,
    causal_at: int | None,
    nested_at: int | None,
    bottom_right: bool = False,
) -> Work:
    """Attention backward: the five products of torch's ``sdpa_backward_flop_count``, over
    the unmasked pairs."""
    if nested_at is not None and nested_at < len(dims) and dims[nested_at]:
        raise WorkError("variable-length (nested) attention: sequence lengths are not recorded")
    g = _shape(dims, 0, 4)
    q, k, v = _qkv(dims, 1)
    b, h, sq, d = q
    sk, dv = k[2], v[3]
    if g != [b, h, sq, dv]:
        raise WorkError(f"grad_out {g} does not match query {q} and value {v}")
    flops = 2 * b * h * (sq * d * sk + sq * dv * sk + sk * sq * dv + sq * sk * d + d * sq * sk)
    causal = _bool(concrete, causal_at)
    return _masked(flops, b * h * (3 * d + 2 * dv), sq, sk, causal, bottom_right)


Formula = Callable[[Dims, Concrete], Work]


def _mm(dims: Dims, c: Concrete) -> Work:
    return mm_work(_shape(dims, 0, 2), _shape(dims, 1, 2))


def _addmm(dims: Dims, c: Concrete) -> Work:
    return mm_work(_shape(dims, 1, 2), _shape(dims, 2, 2))


def _bmm(dims: Dims, c: Concrete) -> Work:
    return bmm_work(_shape(dims, 0, 3), _shape(dims, 1, 3))


def _baddbmm(dims: Dims, c: Concrete) -> Work:
    return bmm_work(_shape(dims, 1, 3), _shape(dims, 2, 3))


def _conv(where: ConvArgs) -> Formula:
    return lambda dims, c: conv_work(dims, c, where)


def _attn(causal_at: int | None, nested_at: int | None = None, br: bool = False) -> Formula:
    return lambda dims, c: sdpa_work(dims, c, causal_at, nested_at, br)


def _attn_bwd(causal_at: int | None, nested_at: int | None = None, br: bool = False) -> Formula:
    return lambda dims, c: sdpa_backward_work(dims, c, causal_at, nested_at, br)


_CONVOLUTION = ConvArgs(3, 4, 5, transposed=6, output_padding=7, groups=8)

PRIMARY: dict[str, Formula] = {
    "aten::mm": _mm,
    "aten::addmm": _addmm,
    "aten::_scaled_mm": _mm,
    "aten::bmm": _bmm,
    "aten::baddbmm": _baddbmm,
    "aten::convolution": _conv(_CONVOLUTION),
    "aten::_convolution": _conv(_CONVOLUTION),
    "aten::convolution_overrideable": _conv(_CONVOLUTION),
    "aten::cudnn_convolution": _conv(ConvArgs(3, 2, 4, groups=5)),
    "aten::_slow_conv2d_forward": _conv(ConvArgs(4, 5, None)),
    "aten::convolution_backward": conv_backward_work,
    "aten::_scaled_dot_product_efficient_attention": _attn(6),
    "aten::_scaled_dot_product_flash_attention": _attn(4),
    "aten::_scaled_dot_product_cudnn_attention": _attn(6),
    "aten::_scaled_dot_product_flash_attention_for_cpu": _attn(4),
    "aten::_scaled_dot_product_fused_attention_overrideable": _attn(5),
    "aten::_flash_attention_forward": _attn(8, nested_at=3, br=True),
    "aten::_efficient_attention_forward": _attn(None, nested_at=4),
    "aten::_cudnn_attention_forward": _attn(10, nested_at=4),
    "aten::_scaled_dot_product_efficient_attention_backward": _attn_bwd(11),
    "aten::_scaled_dot_product_flash_attention_backward": _attn_bwd(11),
    "aten::_scaled_dot_product_cudnn_attention_backward": _attn_bwd(14),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": _attn_bwd(7),
    "aten::_scaled_dot_product_fused_attention_overrideable_backward": _attn_bwd(13),
    "aten::_flash_attention_backward": _attn_bwd(11, nested_at=6, br=True),
    "aten::_efficient_attention_backward": _attn_bwd(None, nested_at=6),
    "aten::_cudnn_attention_backward": _attn_bwd(14),
}
"""Dispatcher-level ops, as ``FlopCounterMode`` counts them (plus the CPU and cuDNN attention
entry points it has no entry for)."""


def _linear(dims: Dims, c: Concrete) -> Work:
    return linear_work(_shape(dims, 0), _shape(dims, 1, 2))


def _matmul(dims: Dims, c: Concrete) -> Work:
    return matmul_work(_shape(dims, 0), _shape(dims, 1))


_CONV_ND = ConvArgs(3, 4, 5, groups=6)
_CONV_T = ConvArgs(3, 4, 7, output_padding=5, groups=6, transposed_always=True)

COMPOSITE: dict[str, Formula] = {
    "aten::linear": _linear,
    "aten::matmul": _matmul,
    "aten::conv1d": _conv(_CONV_ND),
    "aten::conv2d": _conv(_CONV_ND),
    "aten::conv3d": _conv(_CONV_ND),
    "aten::conv_transpose1d": _conv(_CONV_T),
    "aten::conv_transpose2d": _conv(_CONV_T),
    "aten::conv_transpose3d": _conv(_CONV_T),
    "aten::scaled_dot_product_attention": _attn(5),
}
"""Ops that call a primary op; counted only where no primary op is recorded inside them."""


def has_formula(name: str) -> bool:
    return name in PRIMARY or name in COMPOSITE


def op_work(name: str, dims: Dims | None, concrete: Concrete | None = None) -> Work | None:
    """The FLOPs of one call of ``name``; None when tileprof has no formula for the op.

    Missing, malformed or inconsistent dims give ``Work(None, problem)``, as does a count
    beyond int64; nothing raises.
    """
    formula = PRIMARY.get(name) or COMPOSITE.get(name)
    if formula is None:
        return None
    if not dims:
        return Work(None, "no Input Dims (record with record_shapes=True)")
    try:
        work = formula(dims, concrete or ())
    except WorkError as exc:
        return Work(None, str(exc))
    except (TypeError, ValueError, IndexError) as exc:
        return Work(None, f"malformed arguments ({exc})")
    if work.flops is not None and work.flops > INT64_MAX:
        return Work(None, f"{work.flops} FLOPs overflow int64", work.gemm, work.batch, work.causal)
    if work.full_flops is not None and work.full_flops > INT64_MAX:
        return Work(work.flops, None, work.gemm, work.batch, work.causal)
    return work
