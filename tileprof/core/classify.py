"""Name the kind of work (``op_family``) and the number format (``dtype``) a run does.

Kernel names are the only evidence most GPU sources give, so the classifier reads them, and
the implementation and workload names, with a short ordered list of rules. The first rule
that matches wins; the order is what makes ``vectorized_elementwise_kernel<…bfloat16_copy…>``
a cast rather than an elementwise kernel. ``docs/runs.md`` lists the rules as written here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tileprof.core.patterns import seen

OP_FAMILIES: tuple[str, ...] = (
    "gemm",
    "attention",
    "softmax",
    "reduce",
    "elementwise",
    "cast",
    "copy",
    "fill",
    "layout",
    "exchange",
    "train_step",
    "inference",
    "other",
)

DTYPES: tuple[str, ...] = ("f32", "tf32", "f16", "bf16", "f8", "int8", "b1")

# Letters that may not touch a dtype token on the left: "bf16" must not read as "f16",
# "bfloat16" not as "float16".
_L = r"(?<![a-z])"
# ...and on the right: "f16" is not "f160", "float" is not "float16".
_R = r"(?![0-9])"

FAMILY_RULES: tuple[tuple[str, str], ...] = (
    # whole steps first: their names may mention any kernel inside them
    ("train_step", r"train[ _-]?step|forward\+loss\+backward"),
    ("inference", r"inference"),
    # attn_fwd/attn_bwd: the Triton attention kernels of ROCm builds (AITER, the MI300X traces)
    ("attention", r"attention|flash|fmha|sdpa|\bmha\b|_mha_|^attn_(?:fwd|bwd)"),
    ("softmax", r"softmax"),
    ("exchange", r"exchange|nccl|all_?reduce|all_?gather|reduce_?scatter|sendrecv|all_?to_?all"),
    # cuBLASLt's and CUTLASS's split-K epilogues and cuDNN's weight-gradient helper sum partial
    # GEMM results: no multiply-accumulates, though cublas/cutlass/wgrad are in their names
    ("reduce", r"splitk_?reduce|reduce_?splitk|reduce_wgrad"),
    # cuDNN's NCHW <-> NHWC transforms, which a convolution launches around its GEMM: layout,
    # whichever op launched them
    ("layout", r"nchw_?to_?nhwc|nhwc_?to_?nchw|nchw2nhwc|nhwc2nchw"),
    (
        "gemm",
        r"gemm|matmul|xmma|wgmma|hmma|imma|bmma|nvjet|cublas|cutlass|"
        r"s1688|s16816|h1688|h16816|h884|i8816|_int_mm|addmm|\bmm\b|bmm|linear|tensor_core|"
        r"popcount|"
        # convolutions are matrix work against the same dense peaks; cuDNN runs most as
        # implicit GEMM (whose names say gemm), so a direct or backward one joins them
        r"conv[123]d|convolution|convolve|fprop|dgrad|wgrad|winograd|"
        # cuDNN's own implicit-GEMM convolutions (ampere_scudnn_128x64_relu_…: the relu is its
        # fused epilogue) and ROCm's Tensile/hipBLASLt GEMMs (Cijk_Alik_Bljk_…)
        r"(?<![a-z])[sdh]cudnn_|^cijk_|"
        # Tenstorrent (tt-metal) op codes: MinimalMatmulOp and Matmul match "matmul" above;
        # OptimizedConvNew is its convolution
        r"optimizedconv",
    ),
    # "cast" and "convert" start a word: ATen's gpu_kernel_impl_nocast and LoadWithCast are not
    # casts
    (
        "cast",
        r"(?<![a-z])(?:cast|convert)|(?:b?float16|half|float8|fp8|bf16|f16|f8)_copy|to_copy|"
        r"quantiz",
    ),
    # MoveDeviceOperation moves a tensor between memories (tt-metal)
    ("copy", r"memcpy|copy|^movedevice"),
    ("fill", r"memset|fill|zero"),
    # tilize/untilize (row-major <-> 32×32 tiles), halo and slice ops are tt-metal's layout ops
    (
        "layout",
        r"rearrange|transpose|permute|layout|im2col|col2im|contiguous|reshape|tilize|"
        r"^halo|slice",
    ),
    # "reduce" but not "reduced": cuDNN's reduced_divisor is an index helper of any kernel
    # cuDNN's batch-norm kernels (cudnn::bn_fw_tr_1C11_…, bn_bw_…) and ATen's group/layer-norm
    # statistics (RowwiseMoments, GammaBetaBackward) reduce over rows
    (
        "reduce",
        r"reduce(?!d)|reduction|sum|mean|norm|nll_loss|argmax|max_pool|avg_pool|"
        r"(?<![a-z])bn_(?:fw|bw)|moments|gammabeta",
    ),
    (
        "elementwise",
        r"elementwise|functor|relu|gelu|silu|sigmoid|tanh|threshold|clamp|dropout|"
        r"multi_tensor_apply|add|mul|div|sub|pow|exp|sgd|adam|"
        # tt-metal's BinaryNgDeviceOperation, UnaryDeviceOperation, eltwise ops
        r"^binary|^unary|eltwise",
    ),
)

DTYPE_RULES: tuple[tuple[str, str], ...] = (
    ("bf16", _L + r"(?:bf16|bfloat16|__nv_bfloat16)" + _R),
    ("f16", _L + r"(?:fp16|f16|float16|half|hgemm|h884|h1688|h16816)" + _R),
    ("f8", _L + r"(?:fp8|f8|float8\w*|e4m3\w*|e5m2\w*)" + _R),
    ("int8", _L + r"(?:int8|i8|s8|imma|igemm|i8816|_int_mm)" + _R),
    ("b1", _L + r"(?:b1|bmma|popcount)" + _R),
    ("tf32", _L + r"(?:tf32|s1688gemm|s1688)" + _R),
    ("f32", _L + r"(?:fp32|f32|float|sgemm|ffma|single)" + _R),
    # cuBLAS nvjet kernels name their types by letter: nvjet_sm90_hsh_… (half) and
    # nvjet_sm90_tst_… (bfloat16), as the launching aten::mm's input types confirm in
    # fixtures/traces/h200_train_steps.json.gz.
    ("f16", r"nvjet_sm\d+_h[a-z]h_"),
    ("bf16", r"nvjet_sm\d+_t[a-z]t_"),
)

# Python's re, not RE2 (core.patterns): the rules need look-arounds, and each is linear as
# written (literal alternatives; the look-arounds are one character wide and follow no
# quantifier that could give back, `float8\w*` having taken every digit). Names are cut to
# the first NAME_PATTERN_LIMIT characters all the same (`seen`).
_FAMILY_RES = tuple((family, re.compile(rx)) for family, rx in FAMILY_RULES)
_DTYPE_RES = tuple((dtype, re.compile(rx)) for dtype, rx in DTYPE_RULES)

# PyTorch's names for tensor element types, as the profiler records them in "Input type".
TORCH_DTYPES: dict[str, str] = {
    "float": "f32",
    "c10::half": "f16",
    "c10::bfloat16": "bf16",
    "c10::float8_e4m3fn": "f8",
    "c10::float8_e5m2": "f8",
    "signed char": "int8",
    "c10::qint8": "int8",
}


def op_family(*names: str | None) -> str:
    """The family of the first name that any rule matches, else ``other``."""
    for name in names:
        if not name:
            continue
        text = seen(name).lower()
        for family, rx in _FAMILY_RES:
            if rx.search(text):
                return family
    return "other"


def dtype(*names: str | None) -> str | None:
    """The dtype named earliest in the first name that names one; None when none does.

    Earliest, not by rule order: ``cast_f16_f8`` is read as f16 (its input), and
    ``sm90_xmma_gemm_bf16bf16_bf16f32_f32`` as bf16 (its operands, not its accumulator).
    """
    for name in names:
        if not name:
            continue
        text = seen(name).lower()
        best: tuple[int, str] | None = None
        for dt, rx in _DTYPE_RES:
            m = rx.search(text)
            if m and (best is None or m.start() < best[0]):
                best = (m.start(), dt)
        if best is not None:
            return best[1]
    return None


def dtype_from_torch_types(types: Iterable[str] | None) -> str | None:
    """The dtype of the first tensor input that PyTorch's profiler recorded, if known."""
    for t in types or ():
        dt = TORCH_DTYPES.get(t.strip().lower())
        if dt is not None:
            return dt
    return None


def classify(*names: str | None) -> tuple[str, str | None]:
    """``(op_family, dtype)`` for a run described by ``names``, most specific first."""
    return op_family(*names), dtype(*names)
