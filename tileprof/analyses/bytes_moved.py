"""Bytes one PyTorch op call moves, from the shapes and dtypes the profiler recorded.

The definition is TraceLens' (AMD-AGI/TraceLens, ``PerfModel/perf_model.py``), so that its
"Data Moved (MB)" (MiB) is an independent oracle: every input tensor is read once and every
output written once, each at its own size and dtype (a broadcast input counts at its own
size, not the broadcast one; the output has the broadcast shape, so a batched matmul writes
the broadcast batch of both inputs). Nothing is assumed about caches. Where TraceLens departs from
that rule, tileprof follows the rule and ``docs/runs.md`` names the difference:

- convolution: TraceLens drops the bias of ``aten::convolution`` (it looks for three inputs,
  the op records nine); tileprof reads it (out_channels elements);
- reductions: TraceLens cannot read a recorded ``dim`` (the trace writes it as text) and counts
  one output element; tileprof writes the reduced shape;
- layer norm: tileprof uses TraceLens' own count (x read and y written, plus weight, bias, mean
  and variance each of the normalized size, and mean and variance written again in training),
  since it has no recorded output to go by.

Output dtypes: a GEMM, attention or convolution output is the first input's dtype
(``_scaled_mm`` of 1-byte inputs writes 2 bytes), a binary op's the wider of its two tensor
inputs, a unary op's its input's; an ``out=`` tensor, where recorded, is counted as itself.

A count is an ``int``, or ``None`` with a ``problem`` saying why (an op with no model here, a
dtype with no known width, dims that do not fit the op). Nothing raises; nothing is guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

INT64_MAX = 2**63 - 1

# torch's type names as the profiler writes them (``Input type``), by width in bytes
_WIDTH: dict[str, int] = {
    "double": 8,
    "long int": 8,
    "long": 8,
    "float": 4,
    "int": 4,
    "scalar": 4,
    "c10::half": 2,
    "c10::bfloat16": 2,
    "short int": 2,
    "c10::float8_e4m3fn": 1,
    "c10::float8_e4m3fnuz": 1,
    "c10::float8_e5m2": 1,
    "c10::float8_e5m2fnuz": 1,
    "c10::float8_e8m0fnu": 1,
    "unsigned char": 1,
    "signed char": 1,
    "bool": 1,
}


class BytesError(ValueError):
    """Shapes or dtypes that do not describe the op."""


@dataclass(frozen=True)
class Moved:
    """One op call's bytes (None when unknown, ``problem`` saying why)."""

    bytes: int | None
    problem: str | None = None


def width(type_name: Any) -> int:
    """Bytes per element of a recorded ``Input type``."""
    w = _WIDTH.get(str(type_name).lower()) if type_name is not None else None
    if w is None:
        raise BytesError(f"dtype {type_name!r} has no known width")
    return w


def _dims(dims: Sequence[Any], i: int) -> list[int]:
    if i >= len(dims) or not isinstance(dims[i], list):
        raise BytesError(f"input {i} has no recorded shape")
    d = dims[i]
    if not all(type(v) is int and v >= 0 for v in d):
        raise BytesError(f"input {i} dims {d!r} are not non-negative integers")
    return list(d)


def _has(dims: Sequence[Any], i: int) -> bool:
    """Input ``i`` is a recorded tensor (not absent, None or a scalar's ``[]``)."""
    return i < len(dims) and isinstance(dims[i], list) and len(dims[i]) > 0


def _tensor(dims: Sequence[Any], types: Sequence[Any], i: int) -> int:
    """Bytes of input ``i`` at its own size and dtype."""
    return prod(_dims(dims, i)) * width(types[i] if i < len(types) else None)


Model = Callable[[Sequence[Any], Sequence[Any], Sequence[Any]], int]


def _gemm(a: int, b: int, bias: int | None = None, scaled: bool = False) -> Model:
    """A @ B (+ bias at its own size); the output M×N (× batch) at A's dtype."""

    def model(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
        x, w = _dims(dims, a), _dims(dims, b)
        if len(x) < 2 or len(w) < 2:
            raise BytesError(f"GEMM inputs {x} and {w} are not matrices")
        out_w = width(types[a])
        if scaled and out_w == 1:
            out_w = 2  # _scaled_mm of fp8 writes a 16-bit result (TraceLens' rule)
        batch = prod(_broadcast(x[:-2], w[:-2]))  # both inputs' batch dims, broadcast
        total = _tensor(dims, types, a) + _tensor(dims, types, b) + batch * x[-2] * w[-1] * out_w
        if bias is not None and _has(dims, bias):
            total += _tensor(dims, types, bias)
        return total

    return model


def _linear(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
    """x @ Wᵀ + b: x, W and b read; x's rows × out_features written at x's dtype."""
    x, w = _dims(dims, 0), _dims(dims, 1)
    if len(w) != 2 or not x or x[-1] != w[1]:
        raise BytesError(f"input {x} does not match weight {w}")
    total = _tensor(dims, types, 0) + _tensor(dims, types, 1)
    total += prod(x[:-1]) * w[0] * width(types[0])
    return total + (_tensor(dims, types, 2) if _has(dims, 2) else 0)


def _matmul(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
    """Both inputs read at their own size; the output written at the broadcast batch of both
    (A 1×1×M×K @ B 1×32×K×N writes 32 M×N products), as ``flops.matmul_work`` counts it."""
    from tileprof.analyses.flops import WorkError, matmul_work

    try:
        work = matmul_work(_dims(dims, 0), _dims(dims, 1))
    except WorkError as exc:
        raise BytesError(str(exc)) from None
    m, n, _ = work.gemm or (0, 0, 0)
    out = (work.batch or 1) * m * n * width(types[0])
    return _tensor(dims, types, 0) + _tensor(dims, types, 1) + out


def _attention(first: int) -> Model:
    """Q, K and V read; the output (Q's batch, heads and length × V's head size) written."""

    def model(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
        q, v = _dims(dims, first), _dims(dims, first + 2)
        if len(q) != 4 or len(v) != 4:
            raise BytesError(f"query {q} and value {v} are not 4-d")
        out = q[0] * q[1] * q[2] * v[3] * width(types[first])
        return sum(_tensor(dims, types, first + i) for i in range(3)) + out

    return model


def _attention_backward(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
    """grad_out, Q, K, V and the forward output read; dQ, dK and dV written (each the size of
    its input). The output is counted at grad_out's size, which is its own: where it is
    recorded differs (input 4 of flash and cuDNN; in torch's current signature of the
    memory-efficient ops, input 5, after the attention bias). The softmax statistics (a few
    bytes per row) and an attention bias (the forward counts none) are not counted."""
    g, q, k, v = (_tensor(dims, types, i) for i in range(4))
    return g + q + k + v + g + q + k + v


def _conv_out(dims: Sequence[Any], c: Sequence[Any], at: tuple[int, int, int]) -> list[int]:
    from tileprof.analyses.flops import _ints, conv_out

    x, w = _dims(dims, 0), _dims(dims, 1)
    n = len(x) - 2
    stride, padding, dilation = (
        _ints(c, at[0], n, 1),
        _ints(c, at[1], n, 0),
        _ints(c, at[2], n, 1),
    )
    return conv_out(x, w, stride, padding, dilation)


def _conv(at: tuple[int, int, int]) -> Model:
    """x, weight and bias read; the output written at x's dtype (not transposed)."""

    def model(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
        from tileprof.analyses.flops import WorkError

        try:
            out = _conv_out(dims, c, at)
        except WorkError as exc:
            raise BytesError(str(exc)) from None
        total = _tensor(dims, types, 0) + _tensor(dims, types, 1) + prod(out) * width(types[0])
        return total + (_tensor(dims, types, 2) if _has(dims, 2) else 0)

    return model


def _conv_backward(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
    """grad_out, x and weight read; grad_input, grad_weight and grad_bias written as the
    output mask asks."""
    from tileprof.analyses.flops import WorkError, _bools

    try:
        mask = _bools(c, 10, 3)
    except WorkError as exc:
        raise BytesError(str(exc)) from None
    g, x, w = (_tensor(dims, types, i) for i in range(3))
    out_channels = _dims(dims, 0)[1]
    written = (x if mask[0] else 0) + (w if mask[1] else 0)
    return g + x + w + written + (out_channels * width(types[0]) if mask[2] else 0)


def _unary(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
    """The input read and an output of its size written (at the ``out=`` tensor's dtype where
    one is recorded, else the input's)."""
    n = prod(_dims(dims, 0))
    out_w = width(types[1]) if _has(dims, 1) else width(types[0])
    return n * width(types[0]) + n * out_w


def _broadcast(x: list[int], y: list[int]) -> list[int]:
    n = max(len(x), len(y))
    x, y = [1] * (n - len(x)) + x, [1] * (n - len(y)) + y
    out = []
    for p, q in zip(x, y, strict=True):
        if p != q and 1 not in (p, q):
            raise BytesError(f"shapes {x} and {y} do not broadcast")
        out.append(max(p, q))
    return out


def _binary(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
    """Both inputs read at their own size (a Python scalar, recorded as ``[]``, as one element
    of its recorded type, as TraceLens counts it); the broadcast output written."""
    x, y = _dims(dims, 0), _dims(dims, 1)
    wx, wy = width(types[0]), width(types[1])
    out_w = width(types[2]) if _has(dims, 2) else (max(wx, wy) if x and y else wx)
    return prod(x) * wx + prod(y) * wy + prod(_broadcast(x, y)) * out_w


def _layer_norm(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
    """TraceLens' layer-norm count (module docstring): x read, y written, and six tensors of
    the normalized size (weight, bias, mean and variance read; mean and variance written).
    The normalized size is ``normalized_shape`` as recorded, else the weight's or the bias'
    shape (torch requires it to be ``normalized_shape``: traces without Concrete Inputs), else
    there is no count."""
    from tileprof.analyses.flops import WorkError, _ints

    x = _dims(dims, 0)
    text = str(c[1]) if len(c) > 1 else ""
    if text.strip():
        try:
            shape = _ints(c, 1, text.count(",") + 1, 0)
        except WorkError as exc:
            raise BytesError(str(exc)) from None
    elif _has(dims, 2) or _has(dims, 3):
        shape = _dims(dims, 2 if _has(dims, 2) else 3)
    else:
        raise BytesError("argument 1 (normalized_shape) not recorded, nor a weight or bias")
    w = width(types[0])
    tensors = 2 + (1 if _has(dims, 2) else 0) + (1 if _has(dims, 3) else 0) + 2
    return 2 * prod(x) * w + tensors * prod(shape) * w


def _reduce(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
    """The input read; the reduced output (``dim``, ``keepdim`` as recorded; all dims when none
    is) written at the input's dtype."""
    x = _dims(dims, 0)
    text = str(c[1]).strip() if len(c) > 1 else ""
    reduced = set(range(len(x)))
    if text.startswith("[") and text.strip("[] "):
        try:
            reduced = {int(d) % len(x) for d in text.strip("[]").split(",")}
        except (ValueError, ZeroDivisionError):
            raise BytesError(f"dim {text!r} is not a list of integers") from None
    out = [1 if i in reduced else d for i, d in enumerate(x)]
    return prod(x) * width(types[0]) + prod(out) * width(types[0])


def _softmax(dims: Sequence[Any], types: Sequence[Any], c: Sequence[Any]) -> int:
    """The input read and an output of its size written (``half_to_float`` writes f32)."""
    n = prod(_dims(dims, 0))
    to_float = len(c) > 2 and str(c[2]).strip().lower() == "true"
    return n * width(types[0]) + n * (4 if to_float else width(types[0]))


_UNARY = [
    *("copy_", "abs", "neg", "exp", "log", "sqrt", "rsqrt", "sigmoid", "silu", "gelu", "relu"),
    *("tanh", "pow", "clamp", "clamp_min", "clamp_max", "reciprocal", "sin", "cos", "erf"),
]
_BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "gt", "le", "ge"]

MODELS: dict[str, Model] = {
    "aten::mm": _gemm(0, 1),
    "aten::addmm": _gemm(1, 2, bias=0),
    "aten::_scaled_mm": _gemm(0, 1, scaled=True),
    "aten::bmm": _gemm(0, 1),
    "aten::baddbmm": _gemm(1, 2, bias=0),
    "aten::matmul": _matmul,
    "aten::linear": _linear,
    "aten::convolution": _conv((3, 4, 5)),
    "aten::_convolution": _conv((3, 4, 5)),
    "aten::conv1d": _conv((3, 4, 5)),
    "aten::conv2d": _conv((3, 4, 5)),
    "aten::conv3d": _conv((3, 4, 5)),
    "aten::convolution_backward": _conv_backward,
    "aten::scaled_dot_product_attention": _attention(0),
    "aten::_scaled_dot_product_flash_attention": _attention(0),
    "aten::_scaled_dot_product_efficient_attention": _attention(0),
    "aten::_scaled_dot_product_cudnn_attention": _attention(0),
    "aten::_flash_attention_forward": _attention(0),
    "aten::_efficient_attention_forward": _attention(0),
    "aten::_scaled_dot_product_flash_attention_backward": _attention_backward,
    "aten::_scaled_dot_product_efficient_attention_backward": _attention_backward,
    "aten::_scaled_dot_product_cudnn_attention_backward": _attention_backward,
    "aten::_flash_attention_backward": _attention_backward,
    "aten::_efficient_attention_backward": _attention_backward,
    "aten::layer_norm": _layer_norm,
    "aten::native_layer_norm": _layer_norm,
    "aten::sum": _reduce,
    "aten::mean": _reduce,
    "aten::amax": _reduce,
    "aten::amin": _reduce,
    "aten::softmax": _softmax,
    "aten::_softmax": _softmax,
    "aten::log_softmax": _softmax,
    "aten::_log_softmax": _softmax,
    **{f"aten::{name}": _unary for name in _UNARY},
    **{f"aten::{name}_": _unary for name in _UNARY if not name.endswith("_")},
    **{f"aten::{name}": _binary for name in _BINARY},
    **{f"aten::{name}_": _binary for name in _BINARY},
}
"""The ops with a bytes model (module docstring); any other op gets null bytes."""


def op_bytes(
    name: str,
    dims: Sequence[Any] | None,
    types: Sequence[Any] | None,
    concrete: Sequence[Any] | None = None,
) -> Moved | None:
    """The bytes one call of ``name`` moves; None when tileprof has no model for the op."""
    model = MODELS.get(name)
    if model is None:
        return None
    if not dims or not types:
        return Moved(None, "no Input Dims / Input type (record with record_shapes=True)")
    try:
        count = model(dims, types, concrete or ())
    except BytesError as exc:
        return Moved(None, str(exc))
    except (TypeError, ValueError, IndexError) as exc:
        return Moved(None, f"malformed arguments ({exc})")
    if count > INT64_MAX:
        return Moved(None, f"{count} bytes overflow int64")
    return Moved(count)
