"""Op-level rows of PyTorch traces: FLOPs against torch's own FlopCounterMode, GPU time and
peak fractions on the real H200 trace, and bad input."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tileprof.core.peaks import peak_tflops
from tileprof.inputs.sources import load_runs
from tileprof.model.ops import read_ops

TRACES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
H200 = TRACES / "h200_train_steps.json.gz"


def _h200_ops() -> pl.DataFrame:
    return read_ops(H200, gzip.decompress(H200.read_bytes())).frame


RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "torch"
"""FlopCounterMode's counts and the profiler trace of tests/torch_model.py's model, recorded by
tools/record_torch_references.py (torch version inside flop_counts.json)."""


def _assert_flops_equal(trace: Path, data: bytes, reference: dict[str, int]) -> None:
    # Every op family the model exercises is counted by the reference, forward and backward.
    assert set(reference) >= {
        "aten::convolution",
        "aten::convolution_backward",
        "aten::addmm",
        "aten::mm",
        "aten::bmm",
        "aten::_scaled_dot_product_flash_attention_for_cpu",
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
    }
    ops = read_ops(trace, data)
    totals: dict[str, int] = defaultdict(int)
    for r in ops.frame.filter(pl.col("total_flops") > 0).iter_rows(named=True):
        totals[r["op"]] += r["total_flops"]
        assert r["flops_source"] == "formula"
        assert r["target"] == "CPU" and r["peak_fraction"] is None
    # FlopCounterMode counts causal attention in full; tileprof leaves out the masked pairs
    # (docs/metrics.md, "Causal attention"). The model's causal call (tests/torch_model.py):
    # B = 2, H = 3, D = Dv = 8, Sq = 5 queries, Sk = 7 keys; torch's is_causal mask is
    # top-left, so query i sees keys 0..i: 1 + 2 + … + 5 pairs in steps, Sq²/2 = 12.5 as an
    # area, of Sq·Sk = 35. Per masked pair: 2·B·H·(D + Dv) forward, 2·B·H·(3·D + 2·Dv) back.
    masked_pairs = 5 * 7 - 5 * 5 / 2
    masked = {
        "aten::_scaled_dot_product_flash_attention_for_cpu": 2 * 2 * 3 * (8 + 8) * masked_pairs,
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward": (
            2 * 2 * 3 * (3 * 8 + 2 * 8) * masked_pairs
        ),
    }
    assert dict(totals) == {op: n - masked.get(op, 0) for op, n in reference.items()}
    # the one note says so: the causal call's forward and backward rows
    assert [n.split(": ", 1)[1] for n in ops.notes] == [
        "2 causal attention rows count their products over the unmasked pairs only (half of "
        "them when Sq = Sk; torch's FlopCounterMode counts them in full): see their causal column"
    ]
    causal = ops.frame.filter(pl.col("op").str.ends_with("_for_cpu"))["causal"].to_list()
    assert sorted(causal) == [False, True]


def test_flops_equal_recorded_torch_flop_counter_mode() -> None:
    """The recorded trace's FLOPs equal what FlopCounterMode counted for the same step."""
    recorded = json.loads((RECORDED / "flop_counts.json").read_text())
    assert recorded["torch"].startswith("2.13.0")
    trace = RECORDED / "model_trace.json.gz"
    _assert_flops_equal(trace, gzip.decompress(trace.read_bytes()), recorded["flop_counts"])


def test_flops_equal_torch_flop_counter_mode_live(tmp_path: Path) -> None:
    """The same comparison on a fresh recording, whenever torch is installed."""
    torch = pytest.importorskip("torch")
    from tests.torch_model import record_model

    trace, reference = record_model(tmp_path, torch)
    _assert_flops_equal(trace, trace.read_bytes(), reference)
    recorded = json.loads((RECORDED / "flop_counts.json").read_text())
    if torch.__version__ == recorded["torch"]:
        assert reference == recorded["flop_counts"]


def test_h200_op_rows_have_work_and_never_exceed_peak() -> None:
    ops = _h200_ops()
    with_work = ops.filter(pl.col("tflops").is_not_null())
    assert with_work.height > 10
    # the test the issue asks for: no op row above its peak
    assert with_work["peak_fraction"].max() <= 1.0  # type: ignore[operator]
    assert ops.filter(pl.col("peak_fraction") > 1.0).height == 0
    # hand-checked row: fp32 aten::mm 256x1024 @ 1024x1024 = 2·256·1024·1024 FLOPs per call
    mm = ops.filter(
        (pl.col("op") == "aten::mm")
        & (pl.col("input_dims") == "[[256,1024],[1024,1024]]")
        & (pl.col("dtype") == "f32")
    ).row(0, named=True)
    assert mm["flops"] == 2 * 256 * 1024 * 1024
    assert mm["gemm_mnk"] == "256x1024x1024"
    assert mm["tflops"] == pytest.approx(mm["flops"] / mm["time_us"] / 1e6)
    assert mm["peak_tflops"] == peak_tflops("NVIDIA H200", "f32") == 67.0
    # attention: cuDNN SDPA, bf16, q = k = v = 8x8x256x64, causal, counted once (not again in
    # aten::_cudnn_attention_forward inside it): 2 products of 2·64·256·256·64 FLOPs, over the
    # unmasked half of the 256×256 scores
    attn = ops.filter(pl.col("op").str.contains("attention")).filter(pl.col("dtype") == "bf16")
    assert attn["op"].to_list() == ["aten::_scaled_dot_product_cudnn_attention"]
    assert attn["flops"].to_list() == [2 * 2 * 64 * 256 * 256 * 64 // 2]
    assert attn["causal"].to_list() == [True]


def test_h200_op_gpu_time_is_all_kernel_time() -> None:
    """Every GPU event belongs to exactly one op row: the op rows' time (their work kernels'
    and the kernels counted apart) sums to the kernels'."""
    ops = _h200_ops()
    runs = load_runs(H200).frame
    assert ops["total_us"].sum() + ops["aux_us"].sum() == pytest.approx(runs["total_us"].sum())
    assert ops["kernels"].sum() == runs["calls"].sum()


def _trace(events: list[dict[str, Any]]) -> bytes:
    return json.dumps({"traceEvents": events}).encode()


def _op(name: str, ts: float, dur: float, dims: Any, **args: Any) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": name,
        "ts": ts,
        "dur": dur,
        "pid": 1,
        "tid": 1,
        "args": {"Input Dims": dims, "Input type": ["float", "float"], **args},
    }


def test_bad_dims_give_null_work_and_a_note() -> None:
    data = _trace(
        [
            _op("aten::mm", 0, 10, [[4, 8], [9, 2]]),  # inner dims disagree
            _op("aten::mm", 20, 10, "oops"),  # not a list
            _op("aten::mm", 40, 10, None),  # not recorded
            _op("aten::bmm", 60, 10, [[2, 3]]),  # wrong rank, missing input
            _op("aten::mm", 80, 10, [[2**40, 2**40], [2**40, 2]]),  # beyond int64
            _op("aten::mm", 100, 10, [[4, 8], [8, 2]]),  # fine: 2·4·2·8 = 128
        ]
    )
    parsed = read_ops("bad.json", data)
    frame = parsed.frame
    assert frame.filter(pl.col("flops").is_not_null())["flops"].to_list() == [128]
    bad = frame.filter(pl.col("problem").is_not_null())
    assert bad.height == 5 and bad["flops"].null_count() == 5
    assert any("overflow" in p for p in bad["problem"].to_list())
    assert len(parsed.notes) == 1 and parsed.notes[0].startswith("bad.json: 5 op calls")


def test_nested_ops_count_once() -> None:
    """linear → addmm: the work is addmm's, once; linear has no row of its own."""
    data = _trace(
        [
            _op("aten::linear", 0, 100, [[4, 8], [3, 8], [3]]),
            _op("aten::t", 1, 5, [[3, 8]]),
            _op("aten::addmm", 10, 80, [[3], [4, 8], [8, 3], [], []]),
            _op("aten::linear", 200, 100, [[4, 8], [3, 8], [3]]),  # nothing recorded inside
        ]
    )
    frame = read_ops("n.json", data).frame
    got = {(r["op"], r["time_us"]): r["flops"] for r in frame.iter_rows(named=True)}
    assert got == {("aten::addmm", 80.0): 2 * 4 * 3 * 8, ("aten::linear", 100.0): 2 * 4 * 3 * 8}


def test_trace_flops_argument_is_used_named_and_counted_once() -> None:
    """A ``flops`` argument (what torch.profiler writes with_flops=True where it computes one;
    torch 2.13's CPU export writes none, so this trace is built by hand) is used as recorded,
    and the op inside it is not counted again."""
    data = _trace(
        [
            _op("aten::conv2d", 0, 100, [[1, 2, 5, 5], [3, 2, 3, 3]], flops=999),
            _op("aten::convolution", 1, 90, [[1, 2, 5, 5], [3, 2, 3, 3]]),
            _op("aten::mm", 200, 10, [[8, 16], [16, 4]], flops=1024),
        ]
    )
    frame = read_ops("f.json", data).frame
    got = {r["op"]: (r["flops"], r["flops_source"]) for r in frame.iter_rows(named=True)}
    assert got == {"aten::conv2d": (999, "trace"), "aten::mm": (1024, "trace")}


def test_gpu_events_own_by_the_counted_op_and_orphans_are_noted() -> None:
    """addmm (inside linear) launches a GEMM and a split-K reduce: both are its time; a kernel
    whose launch names no recorded op is counted in a note, not dropped silently."""
    launch = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 12, "dur": 1}
    data = _trace(
        [
            _op("aten::linear", 0, 100, [[4, 8], [3, 8], [3]], **{"External id": 1}),
            _op("aten::addmm", 10, 80, [[3], [4, 8], [8, 3], [], []], **{"External id": 2}),
            {**launch, "args": {"correlation": 7, "External id": 2}},
            {**launch, "args": {"correlation": 8, "External id": 2}},
            *(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": name,
                    "ts": ts,
                    "dur": dur,
                    "args": {"device": 0, "correlation": corr},
                }
                for name, ts, dur, corr in (("gemm", 20, 3.0, 7), ("splitKreduce", 24, 1.0, 8))
            ),
            {
                "ph": "X",
                "cat": "kernel",
                "name": "lost",
                "ts": 30,
                "dur": 2.0,
                "args": {"device": 0, "correlation": 99},
            },
        ]
    )
    parsed = read_ops("k.json", data)
    rows = parsed.frame.to_dicts()
    assert [(r["op"], r["kernels"], r["total_us"], r["target"]) for r in rows] == [
        ("aten::addmm", 2, 4.0, "GPU 0")
    ]
    assert rows[0]["tflops"] == pytest.approx(192 / 4.0 / 1e6)
    assert parsed.notes == [
        "k.json: 1 GPU events have no launching CPU op in the trace and are in no op row"
    ]


def _launch(ts: float, ext: int, corr: int) -> dict[str, Any]:
    args = {"correlation": corr, "External id": ext}
    return {
        "ph": "X",
        "cat": "cuda_runtime",
        "name": "cudaLaunchKernel",
        "ts": ts,
        "dur": 1,
        "args": args,
    }


def _kernel(name: str, ts: float, dur: float, corr: int, device: int = 0) -> dict[str, Any]:
    args = {"device": device, "correlation": corr}
    return {"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur, "args": args}


MM_DIMS = [[4, 8], [8, 3]]
ADDMM_DIMS = [[3], [4, 8], [8, 3], [], []]


def _idle_calls_trace(*, kernels: bool, second_device: bool = False) -> bytes:
    """Two ``aten::mm`` calls (500 µs and 2000 µs on the CPU), only the first launching a
    3 µs kernel, and one ``aten::addmm`` (700 µs) launching nothing; with ``kernels=False``
    the same ops in a CPU-only trace."""
    events = [
        _op("aten::mm", 0, 500, MM_DIMS, **{"External id": 1}),
        _op("aten::mm", 1000, 2000, MM_DIMS, **{"External id": 2}),
        _op("aten::addmm", 4000, 700, ADDMM_DIMS, **{"External id": 3}),
    ]
    if kernels:
        events += [_launch(10, 1, 7), _kernel("gemm", 20, 3.0, 7)]
    if second_device:
        events += [_op("aten::relu", 5000, 10, [[4, 3]], **{"External id": 4})]
        events += [_launch(5001, 4, 9), _kernel("relu", 5002, 1.0, 9, device=1)]
    props = [{"id": 0, "name": "NVIDIA H200"}, {"id": 1, "name": "NVIDIA H200"}]
    return json.dumps({"traceEvents": events, "deviceProperties": props}).encode()


def test_calls_without_gpu_work_add_no_time_in_a_gpu_trace() -> None:
    """In a trace with GPU events a call that launched nothing adds 0 µs of GPU time and is
    counted apart; its CPU duration (2000 µs, 700 µs) is never mixed into a GPU row."""
    parsed = read_ops("t.json", _idle_calls_trace(kernels=True))
    rows = {r["op"]: r for r in parsed.frame.iter_rows(named=True)}
    assert set(rows) == {"aten::mm", "aten::addmm"}
    mm, addmm = rows["aten::mm"], rows["aten::addmm"]
    # one GPU row per op, on the trace's one device: no CPU row beside it
    assert mm["target"] == addmm["target"] == "NVIDIA H200"
    assert (mm["calls"], mm["kernels"], mm["calls_without_gpu"]) == (2, 1, 1)
    assert mm["total_us"] == 3.0  # the kernel only
    assert mm["time_us"] == 3.0  # per call that ran on the GPU: 3 µs / 1
    flops = 2 * 4 * 3 * 8
    assert mm["flops"] == flops and mm["total_flops"] == 2 * flops
    assert mm["tflops"] == pytest.approx(flops / 3.0 / 1e6)
    assert mm["peak_fraction"] == pytest.approx(flops / 3.0 / 1e6 / 67.0)
    assert (addmm["calls"], addmm["kernels"], addmm["calls_without_gpu"]) == (1, 0, 1)
    assert addmm["total_us"] == 0.0
    assert addmm["time_us"] is None and addmm["tflops"] is None
    assert addmm["peak_fraction"] is None and addmm["flops"] == flops
    assert parsed.notes == [
        "t.json: 2 op calls (2 rows) launched no GPU work: they add 0 µs and are left out "
        "of time_us (calls_without_gpu)"
    ]


def test_cpu_only_trace_times_ops_by_their_own_duration() -> None:
    frame = read_ops("c.json", _idle_calls_trace(kernels=False)).frame
    rows = {r["op"]: r for r in frame.iter_rows(named=True)}
    assert {r["target"] for r in rows.values()} == {"CPU"}
    assert rows["aten::mm"]["total_us"] == 2500.0 and rows["aten::mm"]["time_us"] == 1250.0
    assert rows["aten::addmm"]["time_us"] == 700.0
    assert {r["calls_without_gpu"] for r in rows.values()} == {None}
    assert {r["peak_fraction"] for r in rows.values()} == {None}


def test_idle_call_on_a_several_device_trace_has_no_device() -> None:
    """With kernels on two devices, a call that launched nothing cannot be given one."""
    frame = read_ops("d.json", _idle_calls_trace(kernels=True, second_device=True)).frame
    got = {(r["op"], r["target"], r["calls"], r["calls_without_gpu"]) for r in frame.to_dicts()}
    assert got == {
        ("aten::mm", "NVIDIA H200", 1, 0),
        ("aten::mm", "GPU", 1, 1),
        ("aten::addmm", "GPU", 1, 1),
        ("aten::relu", "NVIDIA H200", 1, 0),
    }
    assert frame.filter(pl.col("target") == "GPU")["total_us"].to_list() == [0.0, 0.0]


def test_h200_with_a_gemm_kernel_removed_keeps_gpu_time_only() -> None:
    """The reviewer's case: the H200 trace without its fp32 tn GEMM kernel. The addmm calls
    that launched only that kernel become GPU calls without GPU work (0 µs), not CPU rows of
    their host duration (2,187 µs before this rule)."""
    trace = json.loads(gzip.decompress(H200.read_bytes()))
    gemm = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n"
    removed = [e for e in trace["traceEvents"] if str(e.get("name", "")).startswith(gemm)]
    assert len(removed) == 4
    trace["traceEvents"] = [e for e in trace["traceEvents"] if e not in removed]
    after = read_ops("after.json", json.dumps(trace).encode()).frame
    before = _h200_ops()
    assert set(after["target"]) == {"NVIDIA H200"}
    assert after["total_us"].sum() == pytest.approx(
        before["total_us"].sum() - sum(e["dur"] for e in removed)
    )
    assert after["calls"].sum() == before["calls"].sum()
    idle = after.filter(pl.col("calls_without_gpu") > 0)
    assert set(idle["op"]) == {"aten::addmm"}
    assert idle["calls_without_gpu"].sum() == len(removed)
    assert idle["total_us"].to_list() == [0.0] * idle.height
    assert after.filter(pl.col("peak_fraction") > 1.0).height == 0
    # no row's per-call time grew: nothing but kernel time went in
    key = ["target", "op", "input_dims", "input_types"]
    joined = before.join(after, on=key, suffix="_after", nulls_equal=True)
    assert joined.height == before.height
    grew = joined.filter(pl.col("time_us_after") > pl.col("time_us") + 1e-9)
    assert grew.height == 0


def test_rows_are_ordered_by_total_time_then_op_then_first_call() -> None:
    """``--sort total`` (docs/runs.md): largest total first; equal totals by op name, then in
    the order of their first call. Six ``aten::mm`` shapes of 10 µs each, an ``aten::addmm``
    of 10 µs after them and an ``aten::bmm`` of 30 µs, on a CPU-only trace."""
    shapes = [[[n, 8], [8, 3]] for n in (6, 1, 5, 2, 4, 3)]
    events = [_op("aten::mm", 20 * i, 10, dims) for i, dims in enumerate(shapes)]
    events += [
        _op("aten::addmm", 200, 10, ADDMM_DIMS),
        _op("aten::bmm", 300, 30, [[2, 4, 8], [2, 8, 3]]),
    ]
    frame = read_ops("o.json", _trace(events)).frame
    assert frame.select("op", "input_dims", "total_us").rows() == [
        ("aten::bmm", "[[2,4,8],[2,8,3]]", 30.0),
        ("aten::addmm", json.dumps(ADDMM_DIMS, separators=(",", ":")), 10.0),
        *(("aten::mm", f"[[{n},8],[8,3]]", 10.0) for n in (6, 1, 5, 2, 4, 3)),
    ]
    # the classifier on the op name (core.classify): all three are matrix products
    assert set(frame["op_family"]) == {"gemm"}


def test_a_gpu_trace_whose_kernels_name_no_device() -> None:
    """Kernels without a ``device`` argument: the row of a call that launched one, and of a
    call that launched nothing, are both on target ``GPU`` (docs/runs.md, ``target``)."""
    events = [
        _op("aten::mm", 0, 500, MM_DIMS, **{"External id": 1}),
        _op("aten::mm", 1000, 2000, MM_DIMS, **{"External id": 2}),
        _launch(10, 1, 7),
        {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 20, "dur": 3.0,
         "args": {"correlation": 7}},
    ]  # fmt: skip
    frame = read_ops("n.json", _trace(events)).frame
    assert frame.select("target", "op", "calls", "kernels", "calls_without_gpu").rows() == [
        ("GPU", "aten::mm", 2, 1, 1)
    ]
    assert frame["time_us"].to_list() == [3.0] and frame["peak_tflops"].to_list() == [None]


def test_a_call_whose_kernel_took_no_time_has_no_tflops() -> None:
    """A 0 µs kernel: the call ran on the GPU (``time_us`` 0, not null), but FLOPs over no
    time are no rate: ``tflops`` and ``peak_fraction`` are null, not infinite."""
    events = [
        _op("aten::mm", 0, 500, MM_DIMS, **{"External id": 1}),
        _launch(10, 1, 7),
        _kernel("gemm", 20, 0.0, 7),
    ]
    props = [{"id": 0, "name": "NVIDIA H200"}]
    data = json.dumps({"traceEvents": events, "deviceProperties": props}).encode()
    (row,) = read_ops("z.json", data).frame.to_dicts()
    assert (row["calls"], row["calls_without_gpu"], row["time_us"]) == (1, 0, 0.0)
    assert row["flops"] == 2 * 4 * 3 * 8
    assert (row["tflops"], row["peak_fraction"], row["peak_tflops"]) == (None, None, 67.0)


def test_a_trace_without_an_op_row_says_so() -> None:
    """A CPU-only trace of ops with neither work nor GPU time (``aten::add`` has no formula)."""
    parsed = read_ops("e.json", _trace([_op("aten::add", 0, 10, [[4], [4]])]))
    assert parsed.frame.height == 0
    assert parsed.notes == ["e.json: no op with known work or GPU time"]


def test_cpu_rows_have_no_peak_even_where_a_spec_matches_cpu(tmp_path: Path) -> None:
    """docs/runs.md: ``peak_tflops`` is null on ``CPU``, whatever ``--spec`` matches."""
    from tileprof.core import specs

    spec = tmp_path / "cpu.toml"
    spec.write_text(
        'name = "a spec matching cpu"\nkind = "gpu"\nmatch = [\'cpu\']\n'
        '[sources]\nmade_up = "written by the test"\n[peaks]\n'
        'matrix_fp32 = { value = 100, unit = "TFLOP/s", source = "made_up" }\n'
        '[memory]\nbandwidth = { value = 2, unit = "TB/s", source = "made_up" }\n'
    )
    specs.use_specs([spec])
    try:
        assert peak_tflops("CPU", "f32") == 100.0  # the spec does match the name
        frame = read_ops("c.json", _idle_calls_trace(kernels=False)).frame
    finally:
        specs.use_specs([])
    assert set(frame["target"]) == {"CPU"} and set(frame["dtype"]) == {"f32"}
    assert frame["peak_tflops"].to_list() == [None, None]
    assert frame["peak_fraction"].to_list() == [None, None]


def test_the_calls_behind_the_rows_have_one_schema_in_either_kind_of_trace() -> None:
    """``ParsedOps.calls`` (``diff --per-op``'s evidence): ``without_gpu`` is a boolean, null
    on a CPU-only trace, so the calls of both kinds of trace stack into one frame."""
    cpu = read_ops("c.json", _idle_calls_trace(kernels=False)).calls
    gpu = read_ops("g.json", _idle_calls_trace(kernels=True)).calls
    assert cpu is not None and gpu is not None
    assert cpu.schema == gpu.schema
    assert cpu.schema["without_gpu"] == pl.Boolean
    assert cpu["without_gpu"].to_list() == [None, None, None]
    assert gpu["without_gpu"].to_list() == [False, True, True]
    assert pl.concat([cpu, gpu]).height == 6


def test_convolution_bytes_read_its_recorded_stride() -> None:
    """A 1×1×5×5 input, a 1×1×3×3 weight and a bias of 1, float, stride 2 (``Concrete
    Inputs``): a 2×2 output, so (25 + 9 + 1 + 4) × 4 bytes; and 2 × 4 outputs × 9 kernel
    points FLOPs."""
    concrete = ["", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]
    dims = [[1, 1, 5, 5], [1, 1, 3, 3], [1], [], [], [], [], [], []]
    event = _op("aten::convolution", 0, 10, dims, **{"Concrete Inputs": concrete})
    event["args"]["Input type"] = ["float"] * 3 + ["ScalarList"] * 3 + ["Scalar"] * 3
    (row,) = read_ops("s.json", _trace([event])).frame.to_dicts()
    assert (row["bytes"], row["flops"]) == ((25 + 9 + 1 + 4) * 4, 2 * 4 * 9)


def test_a_flops_argument_keeps_the_formulas_shape_or_stands_alone() -> None:
    """With a ``flops`` argument the count is the trace's; an op with a formula keeps its
    M×N×K (``aten::mm`` 8×16 @ 16×4: 8x4x16), an op with none (``aten::add``, whose flops
    torch's ``with_flops`` records) is counted from the argument alone."""
    data = _trace(
        [
            _op("aten::mm", 0, 10, [[8, 16], [16, 4]], flops=1024),
            _op("aten::add", 20, 10, [[8, 4], [8, 4]], flops=32),
        ]
    )
    frame = read_ops("f.json", data).frame
    got = {r["op"]: (r["flops"], r["flops_source"], r["gemm_mnk"]) for r in frame.to_dicts()}
    assert got == {"aten::mm": (1024, "trace", "8x4x16"), "aten::add": (32, "trace", None)}


def test_op_runs_by_hand() -> None:
    """``op_runs`` (docs/runs.md, the run table's op rows): the GPU rows with work (FLOPs or
    bytes) and time, as runs per call; ``shape`` the GEMM's M×N×K or the input dims, with
    `` causal`` after a causal attention's; ``mac`` FLOPs / 2 when even; ``metadata`` with
    ``causal`` only where known and ``aux_us`` only where kernels were counted apart."""
    from tileprof.analyses.ops import OP_SCHEMA, op_runs

    def row(op: str, family: str, **values: Any) -> dict[str, Any]:
        base = {"target": "NVIDIA H200", "source": "t.json", "op": op, "op_family": family,
                "dtype": "bf16", "input_dims": "[[4,8],[8,3]]", "input_types": '["a","b"]',
                "calls": 2, "kernels": 2, "calls_without_gpu": 0, "aux_kernels": 0,
                "aux_us": 0.0, "flops": 192, "flops_source": "formula", "time_us": 3.0,
                "total_us": 6.0, "bytes": 100}  # fmt: skip
        return base | values

    frame = pl.DataFrame(
        [
            row("aten::mm", "gemm", gemm_mnk="4x3x8", kernels=3, aux_kernels=1, aux_us=0.5),
            row("attn", "attention", input_dims="[[1,2,4,16]]", causal=True, flops=7),
            row("attn", "attention", input_dims="[[1,2,8,16]]", causal=False, flops=8),
            row("aten::add", "elementwise", flops=None, flops_source=None, bytes=96),
            row("aten::mm", "gemm", target="CPU"),  # not GPU
            row("aten::mm", "gemm", time_us=0.0),  # no time
            row("aten::mm", "gemm", time_us=None),  # no call ran on the GPU
            row("aten::sum", "reduce", flops=None, bytes=None),  # no work
        ],
        schema=OP_SCHEMA,
    )
    runs = op_runs(frame)
    columns = ["target", "target_kind", "source", "kernel", "op_family", "dtype", "shape"]
    assert runs.select(*columns, "per", "calls", "time_us", "total_us", "mac", "bytes").rows() == [
        ("NVIDIA H200", "gpu", "t.json: op rows", "aten::mm", "gemm", "bf16", "4x3x8",
         "call", 2, 3.0, 6.0, 96, 100),
        ("NVIDIA H200", "gpu", "t.json: op rows", "attn", "attention", "bf16",
         "[[1,2,4,16]] causal", "call", 2, 3.0, 6.0, None, 100),
        ("NVIDIA H200", "gpu", "t.json: op rows", "attn", "attention", "bf16", "[[1,2,8,16]]",
         "call", 2, 3.0, 6.0, 4, 100),
        ("NVIDIA H200", "gpu", "t.json: op rows", "aten::add", "elementwise", "bf16",
         "[[4,8],[8,3]]", "call", 2, 3.0, 6.0, None, 96),
    ]  # fmt: skip
    common = {"row": "op", "input_types": '["a","b"]'}
    assert [json.loads(m) for m in runs["metadata"]] == [
        {**common, "input_dims": "[[4,8],[8,3]]", "kernels": 3, "flops_source": "formula",
         "aux_us": 0.5},
        {**common, "input_dims": "[[1,2,4,16]]", "kernels": 2, "flops_source": "formula",
         "causal": True},
        {**common, "input_dims": "[[1,2,8,16]]", "kernels": 2, "flops_source": "formula",
         "causal": False},
        {**common, "input_dims": "[[4,8],[8,3]]", "kernels": 2, "flops_source": None},
    ]  # fmt: skip


def test_many_rows_of_equal_time_keep_the_order_of_their_first_calls() -> None:
    """Sixty ``aten::mm`` shapes of 10, 20 or 30 µs: largest total first, and rows of equal
    total in the order of their first call (a stable sort of the calls, in the test)."""
    calls = [((i * 37) % 61 + 1, 10.0 * (1 + (i * 7) % 3)) for i in range(60)]
    events = [_op("aten::mm", 40 * i, us, [[n, 8], [8, 3]]) for i, (n, us) in enumerate(calls)]
    frame = read_ops("m.json", _trace(events)).frame
    expected = sorted(calls, key=lambda c: -c[1])
    assert frame.select("input_dims", "total_us").rows() == [
        (f"[[{n},8],[8,3]]", us) for n, us in expected
    ]


def test_single_kernel_flops_only_for_calls_with_a_count() -> None:
    """The trace view's FLOPs per kernel (``single_kernel_flops``): an ``aten::mm`` whose one
    kernel does its work gives it 2·4·3·8 FLOPs; an ``aten::add`` (no formula, no ``flops``
    argument) gives its one kernel none, not a null count."""
    from tileprof.analyses.ops import single_kernel_flops
    from tileprof.inputs.sources import kineto_events_of

    events = [
        _op("aten::mm", 0, 50, MM_DIMS, **{"External id": 1}),
        _op("aten::add", 100, 50, [[4, 3], [4, 3]], **{"External id": 2}),
        _launch(10, 1, 7),
        _launch(110, 2, 8),
        _kernel("gemm", 20, 3.0, 7),  # traceEvents[4]
        _kernel("vectorized_elementwise_kernel", 120, 1.0, 8),  # traceEvents[5]
    ]
    assert single_kernel_flops(kineto_events_of("s.json", _trace(events))) == {4: 2 * 4 * 3 * 8}


def test_a_calls_gpu_time_adds_its_events_one_by_one_in_file_order() -> None:
    """Three kernels of one call, 2⁵³ µs then 1 µs twice: added in file order, each 1 µs is
    lost to rounding (2⁵³ + 1 rounds back to 2⁵³), as the objects' sum lost it; any other
    order (1 + 1 first) gives 2⁵³ + 2. Two kernels add the same in either order."""
    big = float(2**53)
    events = [
        _op("aten::mm", 0, 10, MM_DIMS, **{"External id": 1}),
        _launch(1, 1, 7),
        _kernel("gemm", 2, big, 7),
        _launch(3, 1, 8),
        _kernel("gemm", 4, 1.0, 8),
        _launch(5, 1, 9),
        _kernel("gemm", 6, 1.0, 9),
        _op("aten::mm", 20, 10, [[2, 8], [8, 3]], **{"External id": 2}),
        _launch(21, 2, 10),
        _kernel("gemm", 22, big, 10),
        _launch(23, 2, 11),
        _kernel("gemm", 24, 1.0, 11),
    ]
    frame = read_ops("t.json", _trace(events)).frame
    totals = {r["input_dims"]: (r["kernels"], r["total_us"]) for r in frame.iter_rows(named=True)}
    assert totals == {"[[4,8],[8,3]]": (3, big), "[[2,8],[8,3]]": (2, big)}


@pytest.mark.parametrize("flops", [0, 2**63 - 1])
def test_a_flops_argument_at_either_end_of_int64_is_a_count(flops: int) -> None:
    frame = read_ops("f.json", _trace([_op("aten::add", 0, 10, [[8, 4], [8, 4]], flops=flops)]))
    assert frame.frame.select("flops", "flops_source", "problem").row(0) == (flops, "trace", None)
