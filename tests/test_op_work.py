"""Op FLOPs and bytes that a reader can trust, on the real TraceLens traces where each figure
was found misleading: causal attention (its convention named on the row and held to
TraceLens), the kernels a FLOP op's work goes to (cuDNN's layout transforms counted apart),
broadcast batched matmul, and the unit of every byte figure."""

from __future__ import annotations

import ast
import csv
import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tileprof.analyses.bytes_moved import op_bytes
from tileprof.analyses.flops import op_work
from tileprof.analyses.ops import op_runs, single_kernel_flops
from tileprof.inputs.sources import load_runs, read_kineto_events
from tileprof.model.ops import ParsedOps, load_ops
from tileprof.views.runs_table import render_ops

TRACELENS = Path(__file__).resolve().parent.parent / "fixtures" / "tracelens"
QWEN = TRACELENS / "h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
FALCON = TRACELENS / "h100_Falconsai_nsfw_image_detection__1016002.json.gz"


@cache
def _ops(trace: Path) -> ParsedOps:
    """The op rows of a trace, read once for the whole module."""
    return load_ops(trace)


def _sheet(trace: Path, sheet: str) -> list[dict[str, str]]:
    folder = trace.parent / trace.name.replace(".json.gz", "_reference")
    with (folder / f"{sheet}.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def _op_row(ops: pl.DataFrame, name: str, dims: str) -> dict[str, Any]:
    compact = json.dumps(ast.literal_eval(dims), separators=(",", ":"))
    rows = ops.filter((pl.col("op") == name) & (pl.col("input_dims") == compact))
    assert rows.height == 1, (name, compact)
    return rows.row(0, named=True)


@pytest.mark.parametrize(
    "trace",
    sorted(
        p
        for p in TRACELENS.glob("*.json.gz")
        if (TRACELENS / p.name.replace(".json.gz", "_reference") / "SDPA_fwd.csv").exists()
    ),
    ids=lambda p: p.name.split("__")[0],
)
def test_attention_flops_equal_tracelens_causal_or_not(trace: Path) -> None:
    """Every SDPA row TraceLens reports (causal Qwen, non-causal Falcon and BERT, H100 and
    MI300X): the same FLOPs, integer for integer, and the row says which mask it counted."""
    ops = _ops(trace).frame
    for r in _sheet(trace, "SDPA_fwd"):
        row = _op_row(ops, r["name"], r["Input Dims_first"])
        assert row["flops"] == round(float(r["GFLOPS_first"]) * 1e9)
        assert row["causal"] is (r["param: causal"] == "True")
        # TraceLens sums float32 durations: equal to the nanosecond the trace records
        assert row["time_us"] == pytest.approx(float(r["Kernel Time (µs)_mean"]), abs=1e-3)


def test_qwen_causal_attention_is_half_the_products_and_keeps_torchs_count() -> None:
    """Qwen's causal SDPA (16×16×559×64) on the H100: 10.24 GFLOP (TraceLens' count), not the
    20.48 that reads as 180.5 TFLOP/s; FlopCounterMode's full count stays on ``full_flops``."""
    ops = _ops(QWEN).frame
    attn = ops.filter(pl.col("op") == "aten::_scaled_dot_product_flash_attention").row(
        0, named=True
    )
    full = 2 * 2 * 16 * 16 * 559 * 559 * 64
    assert attn["flops"] == full // 2 == 10_239_377_408
    assert attn["tflops"] == pytest.approx(attn["flops"] / attn["time_us"] / 1e6)
    assert attn["tflops"] < 100  # 90.3 TFLOP/s, as TraceLens reports; 180.5 before
    # the table and every output's notes say which rows count the unmasked pairs
    notes = _ops(QWEN).notes
    assert any("1 causal attention rows count their products over the unmasked" in n for n in notes)
    table = render_ops(_ops(QWEN).frame, width=400)
    (line,) = [x for x in table.splitlines() if "_scaled_dot_product_flash_attention" in x]
    assert "yes (½)" in line and "causal" in table.splitlines()[1]
    # as a run of the run table (report, links): the shape says causal, so it never links as
    # the same work as the unmasked shape
    runs = op_runs(_ops(QWEN).frame)
    run = runs.filter(pl.col("kernel") == "aten::_scaled_dot_product_flash_attention").row(
        0, named=True
    )
    assert run["shape"].endswith(" causal") and json.loads(run["metadata"])["causal"] is True
    assert run["mac"] * 2 == attn["flops"]
    dims = [[16, 16, 559, 64]] * 3 + [[], [], [], []]
    work = op_work("aten::_scaled_dot_product_flash_attention", dims, ["", "", "", "0.", "True"])
    assert work is not None and work.full_flops == full and work.flops == full // 2


def test_causal_mask_alignment_when_lengths_differ() -> None:
    """Sq ≠ Sk: torch's is_causal is top-left (query i sees keys 0..i), FlashAttention's own
    entry point bottom-right (query i sees keys up to i + Sk − Sq)."""
    q, kv = [1, 2, 4, 16], [1, 2, 12, 16]
    sdpa = op_work("aten::scaled_dot_product_attention", [q, kv, kv], [""] * 5 + ["True"])
    per_pair = 2 * 1 * 2 * (16 + 16)  # two products, 2 FLOPs per MAC, B·H·(D + Dv) per pair
    assert sdpa is not None and sdpa.full_flops == per_pair * 4 * 12
    assert sdpa.flops == per_pair * 4 * 4 // 2  # a 4×4 triangle of 4×12: area 8 pairs
    flash = op_work("aten::_flash_attention_forward", [q, kv, kv, [], []], [""] * 8 + ["True"])
    assert flash is not None and flash.flops == per_pair * (4 * 12 - 4 * 4 // 2)  # 40 pairs


def test_falcon_layout_transform_is_layout_not_gemm() -> None:
    """cuDNN's nchwToNhwcKernel, launched by aten::convolution, is a layout kernel: the family
    comes from the kernel's name, not the launching op."""
    runs = load_runs(FALCON).frame
    by_kernel = {
        k: f
        for k, f in runs.select("kernel", "op_family").iter_rows()
        if "::" in k or "Memset" in k
    }
    layout = [k for k in by_kernel if "nchwToNhwc" in k or "nhwcToNchw" in k]
    assert len(layout) == 2
    assert {by_kernel[k] for k in layout} == {"layout"}
    assert {f for k, f in by_kernel.items() if "fprop" in k} == {"gemm"}


def test_falcon_convolution_flops_go_to_its_gemm_kernel_and_the_rest_counts_apart() -> None:
    """The patch-embedding convolution launches 7 GPU events: one implicit-GEMM fprop kernel
    and 6 that do none of its FLOPs (two NCHW→NHWC and one NHWC→NCHW transform, two memsets,
    the bias add). Its FLOPs are set against the fprop kernel; the rest is ``aux_us``, and the
    two together are TraceLens' Kernel Time for the op."""
    ops = _ops(FALCON).frame
    (ref,) = _sheet(FALCON, "CONV_fwd")
    conv = _op_row(ops, "aten::convolution", ref["Input Dims_first"])
    events = read_kineto_events(FALCON, need="a trace")
    gpu = events.frame.filter(
        pl.col("cat").is_in(["kernel", "gpu_memcpy", "gpu_memset"]),
        pl.col("name").cast(pl.String).str.contains("fprop", literal=True),
    )
    fprop = gpu.get_column("dur").to_list()
    assert len(fprop) == 1
    assert (conv["kernels"], conv["aux_kernels"]) == (7, 6)
    assert conv["total_us"] == pytest.approx(fprop[0])
    assert conv["total_us"] + conv["aux_us"] == pytest.approx(
        float(ref["Kernel Time (µs)_sum"]), abs=1e-3
    )
    assert conv["tflops"] == pytest.approx(conv["flops"] / fprop[0] / 1e6)
    # the trace view gives the FLOPs to that one kernel (before: to none of the seven)
    flops = single_kernel_flops(events)
    (index,) = gpu.get_column("index").to_list()
    assert flops[index] == conv["flops"] == round(float(ref["GFLOPS_first"]) * 1e9)
    # and a note says so, with the op table and with the run table its op rows join
    apart = (
        "h100_Falconsai_nsfw_image_detection__1016002.json.gz: 6 GPU events of 1 FLOP op rows "
        "(layout transforms, copies, fills, elementwise) do none of their work: 31.42 µs "
        "counted apart (aux_us), not in their time or TFLOP/s"
    )
    assert apart in _ops(FALCON).notes
    from tileprof.inputs.gpu.kineto import KIND
    from tileprof.model.gather import _gpu_runs

    assert apart in _gpu_runs(FALCON, KIND, gzip.decompress(FALCON.read_bytes())).notes


def test_ops_without_flops_keep_all_their_kernels() -> None:
    """Only FLOP ops split their kernels: an elementwise op's copy kernels are its work."""
    ops = _ops(QWEN).frame
    bytes_only = ops.filter(pl.col("flops").is_null())
    assert bytes_only.height > 10
    assert bytes_only["aux_kernels"].sum() == 0 and bytes_only["aux_us"].sum() == 0


def test_broadcast_matmul_bytes_use_the_broadcast_batch() -> None:
    """A 1×1×3200×512 @ B 1×32×512×128 (the shapes of the Tenstorrent report where the issue
    was found, ../shared/real-inputs/tenstorrent/ops_perf_results_2025_09_18_11_39_20.csv):
    a batch of 32 products, so 32 outputs of 3200×128 — whichever input has the batch."""
    a, b = [1, 1, 3200, 512], [1, 32, 512, 128]
    for x, y, out in ((a, b, [1, 32, 3200, 128]), ([1, 32, 3200, 512], [1, 1, 512, 128], None)):
        moved = op_bytes("aten::matmul", [x, y], ["c10::BFloat16"] * 2)
        work = op_work("aten::matmul", [x, y])
        assert moved is not None and work is not None and work.batch == 32
        outputs = 32 * 3200 * 128
        assert moved.bytes == 2 * (
            int(pl.Series(x).product()) + int(pl.Series(y).product()) + outputs
        )
        assert work.flops == 2 * 32 * 3200 * 128 * 512
        if out is not None:
            assert outputs == int(pl.Series(out).product())


def test_every_byte_figure_names_its_unit() -> None:
    """MB in tileprof is 10⁶ bytes (TraceLens' "MB" is MiB): the op table's header, the JSON's
    units and the roofline's bandwidth labels say which."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from tileprof.views.html.charts import roofline_figure
    from tileprof.views.html.data import roofline_section
    from tileprof.views.runs_data import render_ops_json

    ops = _ops(QWEN)
    header = render_ops(ops.frame, width=400).splitlines()[1]
    assert "MB (10⁶ B)/call" in header and "MB/call" not in header.replace("MB (10⁶ B)/call", "")
    attn = ops.frame.filter(pl.col("op") == "aten::_scaled_dot_product_flash_attention")
    (ref,) = _sheet(QWEN, "SDPA_fwd")
    # TraceLens' 69.875 "MB" is MiB: the same bytes, 73.27 MB (10⁶ B) here
    assert attn["bytes"].to_list() == [round(float(ref["Data Moved (MB)_first"]) * 2**20)]
    assert json.loads(render_ops_json(ops.frame))["units"]["bytes"].startswith("B (bytes")
    section = roofline_section(op_runs(ops.frame), [])
    assert section is not None and section.plot is not None
    figure = roofline_figure(section.plot)
    FigureCanvasAgg(figure).draw()
    labels = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    roofs = [label for label in labels if "GB/s" in label]
    assert roofs and all("GB/s (10⁹ B/s)" in label for label in roofs)
