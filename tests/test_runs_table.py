"""``tileprof.views.runs_table``: ``tileprof runs`` in the terminal, each cell held by hand
(issue 38: the module's mutation run, branch ``mutX``).

The rows are built here, every figure stated: 1500 µs is ``1.500 ms``, 0.8081 of peak is
``80.81%``, a speedup of 2 is ``2×`` (docs/runs.md, and the number policy in docs/metrics.md,
"How numbers are shown").
"""

from __future__ import annotations

from typing import Any

import polars as pl

from tests.test_supersteps_table import cells, tables
from tileprof.analyses.ops import OP_SCHEMA
from tileprof.core.run_schema import RUN_SCHEMA
from tileprof.views import runs_table
from tileprof.views.runs_table import (
    DEVICE_RUN_FIT,
    FILE_TITLE,
    OP_FIT,
    RUN_FIT,
    _op_fit,
    _roofline,
    render,
    render_ops,
    run_fit,
)


def runs_of(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=RUN_SCHEMA)


FULL_RUN = {
    "target": "NVIDIA H200",
    "target_kind": "gpu",
    "device": "GPU 0",
    "workload": "gemm 4k",
    "implementation": "cublas_f16",
    "kernel": "sm90_gemm",
    "op_family": "gemm",
    "dtype": "f16",
    "time_us": 1500.0,
    "per": "call",
    "calls": 12,
    "mac": 10**12,
    "tflops": 252.1,
    "peak_fraction": 0.8081,
    "roofline_fraction": 0.5,
    "bound": "compute",
    "energy_j": 1.43,
    "speedup": 2.0,
    "devices": 2,
    "device_min_us": 1500.0,
    "device_max_us": 1521.3,
    "device_spread": 0.0142,
    "slowest_device": "GPU 1",
}
BARE_RUN = {"target": "tile device", "target_kind": "tile", "kernel": "group_b"}
"""A run that states nothing but its name: every figure ``—``, the kernel for the
implementation, no device, no workload."""


def test_every_run_cell_of_a_full_and_a_bare_run() -> None:
    [table] = tables(render(runs_of([FULL_RUN, BARE_RUN]), pl.DataFrame()))
    header, full, bare = table
    assert header == list(DEVICE_RUN_FIT.titles)
    assert header == [
        "target",
        "device",
        "workload",
        "implementation / kernel",
        "family",
        "dtype",
        "time",
        "device spread",
        "per",
        "calls",
        "TFLOP/s",
        "peak",
        "roofline",
        "J",
        "speedup",
    ]
    assert full == [
        "NVIDIA H200",
        "GPU 0",
        "gemm 4k",
        "cublas_f16",  # the implementation before the kernel
        "gemm",
        "f16",
        "1.500 ms",
        "1.42% of 2, slowest GPU 1",
        "call",
        "12",
        "252.1",
        "80.81%",
        "50.00% compute",
        "1.430",
        "2×",
    ]
    # a missing time is "—", as every other missing figure
    assert bare == ["tile device", "—", "—", "group_b", "—", "—", "—"] + ["—"] * 8


def test_the_run_table_has_device_columns_only_where_a_run_ran_on_several_devices() -> None:
    one = {**FULL_RUN, "devices": 1, "device": None}
    [[header, row]] = tables(render(runs_of([one]), pl.DataFrame()))
    assert header == list(RUN_FIT.titles)
    assert "device" not in header and "device spread" not in header
    assert row[header.index("time")] == "1.500 ms"
    assert run_fit(runs_of([one])) is RUN_FIT
    assert run_fit(runs_of([one, BARE_RUN])) is RUN_FIT  # devices unknown: no spread
    assert run_fit(runs_of([BARE_RUN, FULL_RUN])) is DEVICE_RUN_FIT
    assert run_fit(runs_of([FULL_RUN]).drop("devices")) is RUN_FIT
    assert RUN_FIT.drop_first == runs_table.RUN_DROP_FIRST
    assert DEVICE_RUN_FIT.drop_first == (*runs_table.RUN_DROP_FIRST, "device spread", "device")
    assert RUN_FIT.keep == DEVICE_RUN_FIT.keep == ("workload",)
    assert RUN_FIT.full_width == runs_table.TABLE_WIDTH == 250


def test_roofline_cell() -> None:
    assert _roofline({"roofline_fraction": None, "bound": "compute"}) == "—"
    assert _roofline({"roofline_fraction": 0.25, "bound": None}) == "25.00% ?"
    assert _roofline({"roofline_fraction": 0.25, "bound": "memory"}) == "25.00% memory"
    tile = {"target_kind": "tile", "roofline_fraction": 0.25, "bound": "memory"}
    assert _roofline({**tile, "mac": None}) == "25.00% issue-slot memory"  # no FLOPs
    assert _roofline({**tile, "mac": 0}) == "25.00% memory"
    assert _roofline({**tile, "target_kind": "gpu", "mac": None}) == "25.00% memory"
    assert _roofline({"roofline_fraction": 1.0, "bound": "memory"}) == "100.00% memory"
    assert _roofline({"roofline_fraction": 1.25, "bound": "compute"}) == "125.00% compute !"


def test_a_narrow_terminal_drops_the_lowest_priority_columns_and_says_so() -> None:
    text = render(runs_of([{**FULL_RUN, "devices": 1}]), pl.DataFrame(), width=100)
    [[header, row]] = tables(text)
    assert row[header.index("time")] == "1.500 ms" and row[header.index("speedup")] == "2×"
    dropped = [t for t in RUN_FIT.titles if t not in header]
    assert dropped
    assert set(dropped) == set(RUN_FIT.drop_first[: len(dropped)])  # lowest priority first
    for kept in ("target", "workload", "implementation / kernel", "time", "speedup"):
        assert kept in header
    assert f"not shown: {', '.join(dropped)} (a wider terminal or --format csv shows them)" in text
    assert all(len(line) <= 100 for line in text.splitlines())


LINKED_SCHEMA = {
    "set_id": pl.Int64,
    "set": pl.String,
    "link_by": pl.String,
    "runs": pl.Int64,
    "text": pl.String,
}


def test_render_heads_and_sets_and_notes() -> None:
    linked = pl.DataFrame(
        [
            {"set_id": 1, "set": "workload w", "link_by": "workload", "runs": 3, "text": "a"},
            {"set_id": 1, "set": "workload w", "link_by": "workload", "runs": 1, "text": "b\x07"},
            {"set_id": 2, "set": "gemm · f16", "link_by": "shape", "runs": 2, "text": None},
        ],
        schema=LINKED_SCHEMA,
    )
    text = render(runs_of([BARE_RUN]), linked, ["first\x1b[31m", "second"])
    lines = text.splitlines()
    assert lines[0] == "runs (1)"
    assert lines[0 : lines.index("linked sets (2)")][-1] == ""  # a blank line before the sets
    runs, sets = tables(text)
    assert runs[1][:4] == ["tile device", "—", "group_b", "—"]
    assert sets == [
        ["set", "linked by", "runs", "target's representative run"],
        ["workload w", "workload", "3", "a"],
        ["", "", "1", "b\\x07"],  # the set and its link once, control characters shown
        ["gemm · f16", "shape", "2", ""],
    ]
    assert lines[-2:] == ["note: first\\x1b[31m", "note: second"]
    only = render(runs_of([BARE_RUN]), linked, linked_only=True)
    assert only.splitlines()[0] == "linked sets (2)"
    assert "runs (" not in only and "group_b" not in only


def test_the_linked_sets_table_whole_and_a_long_text_folded() -> None:
    """Runs right-aligned, the rest left, no padding at the edges; a representative's text
    longer than its column folds onto the next lines, whole (never cut with "…")."""
    long = "T " + "x" * 70 + " end"
    linked = pl.DataFrame(
        [
            {"set_id": 1, "set": "workload w", "link_by": "workload", "runs": 3, "text": "a"},
            {"set_id": 1, "set": "workload w", "link_by": "workload", "runs": 12, "text": "b"},
            {"set_id": 2, "set": "gemm", "link_by": "shape", "runs": 2, "text": long},
        ],
        schema=LINKED_SCHEMA,
    )
    x28 = "x" * 28
    assert render(runs_of([]), linked, linked_only=True, width=60).splitlines() == [
        "linked sets (2)",
        "set        ┃ linked by ┃ runs ┃ target's representative run",
        "━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━",
        "workload w │ workload  │    3 │ a",
        "           │           │   12 │ b",
        "gemm       │ shape     │    2 │ T",
        f"           │           │      │ {x28}",
        f"           │           │      │ {x28}",
        "           │           │      │ xxxxxxxxxxxxxx end",
    ]


def test_render_without_runs_or_sets() -> None:
    text = render(runs_of([]), pl.DataFrame(schema=LINKED_SCHEMA))
    assert text.splitlines() == [
        "runs (0)",
        "",
        "linked sets (0)",
        "no runs of two or more targets share a workload, a shape or an (op_family, dtype)",
    ]
    one = render(runs_of([BARE_RUN]), pl.DataFrame(schema=LINKED_SCHEMA))
    assert one.splitlines()[0] == "runs (1)" and "group_b" in one


def ops_of(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=OP_SCHEMA)


FULL_OP = {
    "target": "NVIDIA H200",
    "op": "aten::scaled_dot_product_attention",
    "input_dims": "[[1, 8, 128, 64]]",
    "dtype": "bf16",
    "causal": True,
    "calls": 2,
    "kernels": 4,
    "calls_without_gpu": 1,
    "aux_kernels": 6,
    "aux_us": 31.42,
    "flops": 2_000_000_000,
    "flops_source": "sdpa shapes",
    "time_us": 15.5,
    "total_us": 31.0,
    "tflops": 129.0,
    "peak_fraction": 0.1304,
    "bytes": 3_000_000,
    "roofline_fraction": 0.4,
    "bound": "memory",
    "time_lost_us": 5.0,
}
BARE_OP = {
    "target": "NVIDIA H200",
    "op": "aten::add",
    "input_dims": "[[4]]",
    "causal": False,
    "calls": 3,
    "kernels": 0,
    "aux_kernels": 0,
    "total_us": 9.0,
    "time_lost_us": 0.0,
    "problem": "no shapes",
}


def test_every_op_cell_of_a_full_and_a_bare_op() -> None:
    text = render_ops(ops_of([FULL_OP, BARE_OP, {**BARE_OP, "op": "x", "problem": None}]))
    assert text.splitlines()[0] == "ops (3)"
    [[header, full, bare, none]] = tables(text)
    assert header == list(OP_FIT.titles)
    assert full == [
        "NVIDIA H200",
        "aten::scaled_dot_product_attention",
        "[[1, 8, 128, 64]]",
        "bf16",
        "2 (1 no GPU)",
        "4",
        "2",
        "yes (½)",
        "15.50 µs",
        "31 µs",  # integral: no decimals (the number policy)
        "31.42 µs (6)",
        "129",
        "13.04%",
        "3",
        "40.00% memory",
        "5 µs",
        "sdpa shapes",
    ]
    assert bare == [
        "NVIDIA H200",
        "aten::add",
        "[[4]]",
        "—",
        "3",
        "0",
        "—",
        "no",
        "—",
        "9 µs",
        "—",
        "—",
        "—",
        "—",
        "—",
        "—",
        "unknown: no shapes",
    ]
    assert none[-1] == "—"


def test_an_op_without_a_mask_beside_one_with_it_is_blank() -> None:
    """The causal column is shown for the attention row; the other op's cell is blank, not
    "no" (it has no mask)."""
    [[header, attention, add]] = tables(render_ops(ops_of([FULL_OP, {**BARE_OP, "causal": None}])))
    assert attention[header.index("causal")] == "yes (½)"
    assert add[header.index("causal")] == ""


def test_numbers_are_right_aligned_and_names_left() -> None:
    """Each column's alignment (docs/runs.md): a short figure sits at the right of its
    column, a short name at the left."""
    text = render(runs_of([FULL_RUN, BARE_RUN]), pl.DataFrame())
    lines = text.splitlines()
    header = cells(next(line for line in lines if "┃" in line))
    bare = next(line for line in lines if line.startswith("tile device"))
    raw = dict(zip(header, bare.split("│"), strict=True))
    for title, justify, _ in runs_table.RUN_COLUMNS:
        if title == FILE_TITLE:
            continue  # shown only where files share a target: the test below
        value = raw[title]
        if title == "target":
            continue  # the first column is as wide as its longest name
        padding_left = len(value) - len(value.lstrip())
        padding_right = len(value) - len(value.rstrip())
        if justify == "right":
            assert padding_right <= 1 < padding_left, (title, value)
        else:
            assert padding_left <= 1 < padding_right, (title, value)


def test_op_columns_no_row_fills_are_left_out() -> None:
    assert _op_fit(ops_of([FULL_OP, BARE_OP])) is OP_FIT
    plain = {**BARE_OP, "causal": None}
    fit = _op_fit(ops_of([plain]))
    assert fit.titles == tuple(t for t in OP_FIT.titles if t not in ("causal", "apart"))
    assert fit.drop_first == tuple(t for t in OP_FIT.drop_first if t not in ("causal", "apart"))
    assert fit.keep == ("dtype",) and fit.full_width == runs_table.OP_TABLE_WIDTH == 280
    no_apart = _op_fit(ops_of([{**FULL_OP, "aux_kernels": None}, BARE_OP]))
    assert "apart" not in no_apart.titles and "causal" in no_apart.titles
    no_causal = _op_fit(ops_of([{**FULL_OP, "causal": None}]))
    assert "causal" not in no_causal.titles and "apart" in no_causal.titles
    one_apart = _op_fit(ops_of([{**BARE_OP, "aux_kernels": 1, "aux_us": 2.5}]))
    assert "apart" in one_apart.titles  # one kernel counted apart is one
    [[header, _row]] = tables(render_ops(ops_of([plain])))
    assert header == list(fit.titles)


def test_render_ops_without_rows_and_with_notes() -> None:
    assert render_ops(ops_of([]), ["a\x07", "b"]).splitlines() == [
        "ops (0)",
        "note: a\\x07",
        "note: b",
    ]


def test_notes_with_brackets_are_plain_text() -> None:
    """A note names files and kernels, which may hold rich markup: printed as they are."""
    note = "trace [bold]run[/bold] [x].json"
    assert render(runs_of([]), pl.DataFrame(), [note]).splitlines()[-1] == f"note: {note}"
    assert render_ops(ops_of([]), [note]).splitlines()[-1] == f"note: {note}"


def test_rows_of_two_files_of_one_target_say_their_file() -> None:
    """Two traces of one GPU model (two jobs, or two ranks whose files share a name): each
    row names its file beside the target, so that a kernel of one is not read as the
    other's; a file column is shown only then, and is the last column dropped."""
    first = {**BARE_RUN, "target": "NVIDIA H100", "source": "rank0/trace.json: device 0"}
    second = {**first, "source": "rank1/trace.json: op rows", "kernel": "aten::mm"}
    other = {**BARE_RUN, "source": "dump.csv: group_b"}
    runs = runs_of([first, second, other])
    fit = run_fit(runs)
    assert fit.titles == ("target", "file", *RUN_FIT.titles[1:])
    assert fit.drop_first[-1] == "file"
    [[header, *rows]] = tables(render(runs, pl.DataFrame()))
    assert header[:3] == ["target", "file", "workload"]
    assert [row[1] for row in rows] == ["rank0/trace.json", "rank1/trace.json", "dump.csv"]
    full = {**FULL_RUN, "target": "NVIDIA H100", "source": "a.json: device 0"}
    devices = runs_of([full, {**first, "devices": 2}])
    assert run_fit(devices).titles == ("target", "file", *DEVICE_RUN_FIT.titles[1:])
    assert run_fit(runs_of([first, other])) is RUN_FIT  # one file per target
    assert run_fit(runs_of([first, {**first, "kernel": "k2"}])) is RUN_FIT
    assert run_fit(runs_of([])) is RUN_FIT  # no rows: no target, so no file column


def test_op_rows_of_two_traces_of_one_target_say_their_file() -> None:
    """The op table shows the file column only where a target's op rows come from two or more
    traces, after the target, and drops it last."""
    one = {**BARE_OP, "source": "rank0/trace.json"}
    two = {**one, "source": "rank1/trace.json"}
    assert _op_fit(ops_of([one, {**one, "op": "aten::mul"}])) == _op_fit(ops_of([one]))
    assert FILE_TITLE not in _op_fit(ops_of([one])).titles
    fit = _op_fit(ops_of([one, two]))
    assert fit.titles == ("target", "file", *_op_fit(ops_of([one])).titles[1:])
    assert fit.drop_first[-1] == "file"
    [[header, *rows]] = tables(render_ops(ops_of([one, two])))
    assert header[:2] == ["target", "file"]
    assert [row[1] for row in rows] == ["rank0/trace.json", "rank1/trace.json"]
