"""FLOP formulas against hand-computed counts, and bad input (never an exception)."""

from __future__ import annotations

import pytest

from tileprof.analyses.flops import INT64_MAX, causal_pairs2, has_formula, op_work


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


@pytest.mark.parametrize(
    ("name", "dims", "problem"),
    [
        ("aten::mm", [[4, 8], [8, 3, 1]], "input 1 has rank 3, expected 2"),
        ("aten::addmm", [[3], [4, 8], [8, 3, 1]], "input 2 has rank 3, expected 2"),
        ("aten::bmm", [[5, 4, 8], [5, 8]], "input 1 has rank 2, expected 3"),
        ("aten::conv2d", [[1, 4], [6, 4]], "input 0 has rank 2, expected 3 or 4 or 5"),
        ("aten::conv2d", [[1, 4, 10, 10], [6, 4, 3]], "input 1 has rank 3, expected 4"),
        (
            "aten::convolution_backward",
            [[1, 4, 18], [1, 2], [4, 2, 3]],
            "input 1 has rank 2, expected 3",
        ),
        (
            "aten::convolution_backward",
            [[1, 4, 18], [1, 2, 20], [4, 2]],
            "input 2 has rank 2, expected 3",
        ),
        (
            "aten::_scaled_dot_product_flash_attention",
            [[1, 1, 4, 8, 1], [1, 1, 4, 8], [1, 1, 4, 8]],
            "input 0 has rank 5, expected 4",
        ),
        (
            "aten::_scaled_dot_product_flash_attention",
            [[1, 1, 4, 8], [1, 1, 4, 8], [1, 1, 4, 8, 1]],
            "input 2 has rank 5, expected 4",
        ),
        (
            "aten::bmm",
            [[5, 4, 8], [6, 8, 3]],
            "batch or inner dimensions differ: [5, 4, 8] @ [6, 8, 3]",
        ),
        ("aten::matmul", [[2, 4, 8], [3, 8, 6]], "batch dimensions [2] and [3] do not broadcast"),
        ("aten::matmul", [[], [8]], "matmul of a 0-d tensor"),
        ("aten::linear", [[2, 5, 8], [3, 7]], "input [2, 5, 8] does not match weight [3, 7]"),
        ("aten::mm", [], "no Input Dims (record with record_shapes=True)"),
        (
            "aten::_scaled_dot_product_flash_attention_backward",
            [[1, 1, 4, 9], [1, 1, 4, 8], [1, 1, 4, 8], [1, 1, 4, 8]],
            "grad_out [1, 1, 4, 9] does not match query [1, 1, 4, 8] and value [1, 1, 4, 8]",
        ),
    ],
)
def test_each_problem_in_full(name: str, dims: object, problem: str) -> None:
    """A wrong rank is named as such (not as malformed arguments, nor counted)."""
    w = op_work(name, dims)  # type: ignore[arg-type]
    assert w is not None and (w.flops, w.problem) == (None, problem)


def test_dims_that_are_no_list_are_malformed_arguments() -> None:
    w = op_work("aten::mm", 5)  # type: ignore[arg-type]
    assert w is not None and w.flops is None
    assert w.problem is not None and w.problem.startswith("malformed arguments (")


def test_the_backward_convolutions_output_mask() -> None:
    # two recorded booleans are enough (grad_bias is not counted); one is not
    dims = [[1, 4, 18], [1, 2, 20], [4, 2, 3]]
    back = ["", "", "", "[0]", "[1]", "[0]", "[1]", "False", "[0]", "1", "[True, False]"]
    w = op_work("aten::convolution_backward", dims, back)
    assert w is not None and w.flops == 2 * 18 * 3 * 4 * 2  # as in test_convolutions_by_hand
    w = op_work("aten::convolution_backward", dims, [*back[:10], "[True]"])
    assert w is not None and (w.flops, w.problem) == (
        None,
        "argument 10 '[True]' is not a list of 2 booleans",
    )


def test_causal_pairs_when_the_query_is_longer_than_the_keys() -> None:
    """Twice the unmasked area of a 6 × 2 score matrix (6 queries, 2 keys). Top-left: query i
    sees keys up to i, so only a triangle of legs 2 is masked: 6·2 − 2²/2 = 10, twice 20.
    Bottom-right: query i sees keys up to i + 2 − 6, so only a triangle of legs 2 is left:
    2²/2 = 2, twice 4. Square (4 × 4): half of 16 either way, twice 16."""
    assert causal_pairs2(6, 2, bottom_right=False) == 20
    assert causal_pairs2(6, 2, bottom_right=True) == 4
    assert causal_pairs2(4, 4, bottom_right=False) == causal_pairs2(4, 4, bottom_right=True) == 16
    # through an op: B = H = 1, D = Dv = 8, so each unmasked pair is 2·(8 + 8) FLOPs
    q, kv = [1, 1, 6, 8], [1, 1, 2, 8]
    w = op_work("aten::scaled_dot_product_attention", [q, kv, kv], [""] * 5 + ["True"])
    assert w is not None and w.flops == 16 * 20 and w.full_flops == 2 * 2 * 6 * 8 * 2


def test_empty_stride_padding_and_dilation_cells_are_the_defaults() -> None:
    """conv2d 1×2×8×8 by 4×2×3×3 with stride, padding and dilation not recorded: 1, 0 and 1,
    so 6 × 6 outputs: 2 × 36 × 9 taps × 4 × 2 FLOPs. _slow_conv2d_forward records no dilation
    at all (its kernel_size is argument 2, stride 4, padding 5)."""
    dims = [[1, 2, 8, 8], [4, 2, 3, 3]]
    expected = 2 * 36 * 9 * 4 * 2
    w = op_work("aten::conv2d", dims, ["", "", "", "", "", "", "1"])
    assert w is not None and w.flops == expected
    slow = ["", "", "[3, 3]", "", "[1, 1]", "[0, 0]"]
    w = op_work("aten::_slow_conv2d_forward", dims, slow)
    assert w is not None and w.flops == expected


def test_bmm_keeps_its_gemm_and_a_zero_size_product_is_zero_flops() -> None:
    w = op_work("aten::bmm", [[5, 4, 8], [5, 8, 3]])
    assert w is not None and (w.flops, w.gemm, w.batch) == (2 * 5 * 4 * 3 * 8, (4, 3, 8), 5)
    w = op_work("aten::mm", [[0, 8], [8, 3]])
    assert w is not None and (w.flops, w.problem) == (0, None)


def test_has_formula_for_primary_and_composite_ops_only() -> None:
    assert has_formula("aten::mm") and has_formula("aten::linear")
    assert not has_formula("aten::relu")


def test_flash_forward_without_the_cumulative_lengths_is_counted() -> None:
    """aten::_flash_attention_forward with its three tensors only (no cum_seq_q recorded at
    input 3): counted as dense attention, B = 1, H = 2, S = 4, D = 8, not causal."""
    q = [1, 2, 4, 8]
    w = op_work("aten::_flash_attention_forward", [q, q, q])
    assert w is not None and w.flops == 2 * 2 * (1 * 2 * 4 * 8 * 4)


def test_int64_max_itself_fits_and_an_overflow_keeps_is_causal() -> None:
    """A causal 7 × 7 attention (B = H = 1) counts B·H·(D + Dv) FLOPs per pair of twice the
    unmasked area, 49: with D + Dv = (2^63 − 1) / 49 its count is exactly 2^63 − 1, which
    fits, while the full count (2·7·7·(D + Dv), twice that) does not and is dropped. A
    non-causal attention past int64 is no count, with is_causal still said."""
    per_pair = (2**63 - 1) // 49
    assert per_pair * 49 == 2**63 - 1
    q, k, v = [1, 1, 7, 1], [1, 1, 7, 1], [1, 1, 7, per_pair - 1]
    w = op_work("aten::scaled_dot_product_attention", [q, k, v], [""] * 5 + ["True"])
    assert w is not None and (w.flops, w.full_flops, w.causal) == (INT64_MAX, None, True)
    big = [1, 1, 2**31, 1]
    w = op_work("aten::_scaled_dot_product_flash_attention", [big, big, big], [""] * 4 + ["False"])
    assert w is not None and w.flops is None and w.causal is False
    assert w.problem == f"{2**64} FLOPs overflow int64"


def test_matmul_of_vectors_and_of_two_matrices() -> None:
    """torch.matmul makes a 1-D left operand a row (1 × K) and a 1-D right one a column: a
    vector of 8 times an 8 × 3 matrix is 3 dot products of length 8; two vectors one; two
    matrices have no batch."""
    w = op_work("aten::matmul", [[8], [8, 3]])
    assert w is not None and (w.flops, w.gemm, w.batch) == (2 * 3 * 8, (1, 3, 8), None)
    w = op_work("aten::matmul", [[8], [8]])
    assert w is not None and (w.flops, w.gemm, w.batch) == (2 * 8, (1, 1, 8), None)
    w = op_work("aten::matmul", [[4, 8], [8, 3]])
    assert w is not None and (w.flops, w.gemm, w.batch) == (2 * 4 * 3 * 8, (4, 3, 8), None)
