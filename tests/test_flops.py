"""FLOP formulas against hand-computed counts, and bad input (never an exception)."""

from __future__ import annotations

import pytest

from tileprof.analyses.flops import INT64_MAX, op_work


def test_matrix_products_by_hand() -> None:
    assert op_work("aten::mm", [[4, 8], [8, 3]]).flops == 2 * 4 * 3 * 8  # type: ignore[union-attr]
    w = op_work("aten::addmm", [[3], [4, 8], [8, 3], [], []], ["", "", "", "1", "1"])
    assert w is not None and (w.flops, w.gemm) == (192, (4, 3, 8))
    w = op_work("aten::baddbmm", [[5, 4, 3], [5, 4, 8], [5, 8, 3]])
    assert w is not None and (w.flops, w.batch) == (5 * 192, 5)
    # matmul broadcasts batch dims: (2,1,4,8) @ (3,8,6) → batch 2×3
    w = op_work("aten::matmul", [[2, 1, 4, 8], [3, 8, 6]])
    assert w is not None and w.flops == 2 * 6 * 4 * 6 * 8
    # matrix-vector: (4,8) @ (8) → 4 outputs of length-8 dot products
    assert op_work("aten::matmul", [[4, 8], [8]]).flops == 2 * 4 * 8  # type: ignore[union-attr]
    # linear on a 3-D input: rows = 2·5
    w = op_work("aten::linear", [[2, 5, 8], [3, 8], [3]])
    assert w is not None and (w.flops, w.gemm) == (2 * 10 * 3 * 8, (10, 3, 8))


def test_convolutions_by_hand() -> None:
    # conv2d 1x4x10x10, weight 6x2x3x3, groups 2, stride 2, padding 1, dilation 1:
    # out = ⌊(10 + 2 − 2 − 1)/2⌋ + 1 = 5 per dim; 2 × 25 points × 9 taps × 1 × 6 × 2
    conv = ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "2"]
    w = op_work("aten::conv2d", [[1, 4, 10, 10], [6, 2, 3, 3], [6]], conv)
    assert w is not None and w.flops == 2 * 25 * 9 * 6 * 2
    # dilation 3 on a 1-D conv: extent 3·(3−1)+1 = 7, out = 20 − 7 + 1 = 14
    conv1 = ["", "", "", "[1]", "[0]", "[3]", "False", "[0]", "1"]
    w = op_work("aten::convolution", [[1, 2, 20], [4, 2, 3], []], conv1)
    assert w is not None and w.flops == 2 * 14 * 3 * 4 * 2
    # transposed: input spatial points × taps × weight channels (in, out/groups)
    convt = ["", "", "", "[2]", "[1]", "[1]", "True", "[1]", "1"]
    w = op_work("aten::convolution", [[1, 4, 6], [4, 3, 5], []], convt)
    assert w is not None and w.flops == 2 * 6 * 5 * 4 * 3
    # backward, input grad only (mask [True, False, False]): a transposed conv of grad_out
    back = ["", "", "", "[0]", "[1]", "[0]", "[1]", "False", "[0]", "1", "[True, False, False]"]
    w = op_work("aten::convolution_backward", [[1, 4, 18], [1, 2, 20], [4, 2, 3]], back)
    assert w is not None and w.flops == 2 * 18 * 3 * 4 * 2


def test_attention_by_hand() -> None:
    q, kv = [2, 8, 16, 64], [2, 2, 32, 64]  # grouped-query: 8 query heads, 2 key heads
    w = op_work("aten::scaled_dot_product_attention", [q, kv, kv, [], [], []], [""] * 5 + ["True"])
    assert w is not None
    # two products (Q·Kᵀ, scores·V), each 2 FLOPs × B·H·Sq·D·Sk MACs in full (torch's count);
    # causal, torch's top-left mask: query i of 16 sees keys 0..i of 32, an area of 16²/2 pairs
    full = 2 * 2 * (2 * 8 * 16 * 64 * 32)
    assert w.full_flops == full and w.causal is True
    assert w.flops == full * (16 * 16 // 2) // (16 * 32)
    back = op_work("aten::_scaled_dot_product_flash_attention_backward", [q, q, kv, kv])
    assert back is not None and back.flops == 5 * 2 * 2 * 8 * 16 * 32 * 64


@pytest.mark.parametrize(
    ("name", "dims", "concrete", "problem"),
    [
        ("aten::mm", None, None, "no Input Dims"),
        ("aten::mm", [[4, 8]], None, "input 1 missing"),
        ("aten::mm", [[4, 8], [9, 3]], None, "inner dimensions differ"),
        ("aten::mm", [[4, -8], [8, 3]], None, "not a list of non-negative integers"),
        ("aten::mm", [["4", 8], [8, 3]], None, "not a list of non-negative integers"),
        ("aten::bmm", [[4, 8], [8, 3]], None, "rank"),
        ("aten::conv2d", [[1, 3, 8, 8], [6, 2, 3, 3]], ["", "", "", "[1, 1]"], "channels"),
        ("aten::conv2d", [[1, 2, 2, 2], [6, 2, 5, 5]], None, "does not fit"),
        ("aten::conv2d", [[1, 2, 8, 8], [6, 2, 3, 3]], ["", "", "", "[x]"], "not a list"),
        ("aten::convolution_backward", [[1, 4, 18], [1, 2, 20], [4, 2, 3]], [], "mask"),
        ("aten::_flash_attention_forward", [[1, 1, 4, 8]] * 3 + [[2]], None, "nested"),
        ("aten::mm", [[2**40, 2**40], [2**40, 2]], None, "overflow int64"),
    ],
)
def test_bad_input_is_null_work_with_a_reason(
    name: str, dims: object, concrete: object, problem: str
) -> None:
    w = op_work(name, dims, concrete)  # type: ignore[arg-type]
    assert w is not None and w.flops is None
    assert w.problem is not None and problem in w.problem


def test_unknown_op_has_no_formula_and_the_limit_is_int64() -> None:
    assert op_work("aten::relu", [[4]]) is None
    w = op_work("aten::mm", [[2**31, 2**30], [2**30, 1]])  # 2·2^31·2^30 = 2^62: fits
    assert w is not None and w.flops == 2**62 <= INT64_MAX
