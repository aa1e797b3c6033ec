"""``tileprof.views.breakdown_export``'s pieces by hand (issue 38: the module's mutation run):
the key cells, the windows in words, the ranks of a side, infinities in JSON, the plain
table's names and fitting, and the job tables of HTA's NCCL rank."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.views import breakdown_export as B

RANK0 = Path(__file__).resolve().parent.parent / "fixtures" / "hta" / "nccl_2xA100_rank0.json.gz"


def test_key_cells_name_the_device_the_step_and_its_window_rule() -> None:
    """A device without a name is its number; no device and no name is every device; a step
    found from its CPU side or its launches is marked; a breakdown of several traces leads
    with the trace."""
    row = {"trace": "t.json", "device": 0, "device_name": None, "step": None}
    assert B._key_cells(row, 1) == ["0", "whole"]
    named = {**row, "device_name": "NVIDIA H100", "step": 3, "window_from": "cpu_step"}
    assert B._key_cells(named, 1) == ["0 NVIDIA H100", "#3 (cpu)"]
    launches = {**named, "window_from": "launch_attribution"}
    assert B._key_cells(launches, 2) == ["t.json", "0 NVIDIA H100", "#3 (launches)"]
    every = {**row, "device": None, "window_from": "gpu_annotation", "step": 4}
    assert B._key_cells(every, 1) == ["all", "#4"]


def test_windows_in_words() -> None:
    row = {"trace": "t.json", "device": None, "device_name": None, "step": None}
    assert B._window_words(row, 1) == "the whole trace on all devices"
    gpu = {**row, "device": 1, "device_name": "NVIDIA H200", "step": 6}
    assert B._window_words(gpu, 2) == "step 6 on GPU 1 (NVIDIA H200) of t.json"
    assert B._window({"window": 0, "step_before": 1, "step_after": 2}) == "whole"
    assert B._window({"window": 2, "step_before": 4, "step_after": None}) == "#4 → —"


def test_the_ranks_of_a_side() -> None:
    def ranks(values: list[int | None]) -> str:
        frame = pl.DataFrame({"rank": values, "before": [1.0] * len(values)})
        return B._ranks(frame.cast({"rank": pl.Int64}), "before")

    assert ranks([None]) == "no rank (no distributedInfo)"
    assert ranks([0]) == "rank 0"
    assert ranks([1, 0, 1]) == "ranks 0, 1"
    assert ranks([None, 2]) == "rank 2 and no rank"


def test_an_infinite_change_is_a_word_in_json() -> None:
    assert B._signed_inf(math.inf) == "+inf" and B._signed_inf(-math.inf) == "-inf"
    assert B._signed_inf(1.5) == 1.5 and B._signed_inf("x") == "x"


def test_the_plain_table_cuts_names_and_drops_figures_to_fit() -> None:
    """Names lose their middle on a narrow terminal, then the figures go, rightmost first; an
    empty name is a dash."""
    rows = [["x" * 50, "1", "2"], ["", "3", "4"]]
    assert B._table("T", ["name", "alpha", "beta"], rows, names=1).splitlines() == [
        "T",
        "name" + " " * 48 + "alpha  beta",
        "x" * 50 + "      1     2",
        "—" + " " * 55 + "3     4",
    ]
    narrow = B._table("T", ["name", "alpha", "beta"], rows, width=30, names=1).splitlines()
    assert narrow == ["T", "name", "x" * 15 + "…" + "x" * 14, "—"]


def test_a_frame_table_formats_its_figures_and_names_its_first_column() -> None:
    """Strings as they are, numbers by the number policy, a missing one a dash; only the first
    column is a name (left-aligned), and the width is the terminal's."""
    frame = pl.DataFrame(
        {"job": ["nccl×2"], "rank": [0], "trace": ["t.json"], "x": [1234.5], "y": [None]},
        schema_overrides={"y": pl.Float64},
    )
    assert B._frame_table("R", frame, None).splitlines() == [
        "R",
        "job     rank   trace      x  y",
        "nccl×2     0  t.json  1,234  —",
    ]
    assert B._frame_table("R", frame, 25).splitlines() == [
        "R", "job     rank   trace", "nccl×2     0  t.json"
    ]  # fmt: skip


def test_the_job_tables_of_hta_nccl_rank() -> None:
    """HTA's 2×A100 NCCL rank alone: its 21 collectives and its overlap row, titled."""
    lines = CliRunner().invoke(cli, ["breakdown", str(RANK0)]).stdout.splitlines()
    at = lines.index("Collectives across ranks")
    assert lines[at + 2].split() == [
        "nccl×2", "0", "0", "broadcast", "1", "2", "Float", "212,480", "30.98", "6.860", "6.860",
        "0", "0",
    ]  # fmt: skip
    at = lines.index("Ranks: compute and communication overlap")
    assert lines[at + 1 : at + 3] == [
        "job     rank                      trace  collectives  computation_us  total_comm_us  "
        "exposed_comm_us  overlapped_comm_us  comm_overlap",
        "nccl×2     0  nccl_2xA100_rank0.json.gz           21         116,047         46,876  "
        "         39,529               7,347        0.1567",
    ]


def test_the_three_tables_of_the_hand_built_trace_whole(tmp_path: Path) -> None:
    """tests/test_breakdown.py's hand-built trace at a 0.03 µs kernel wait: busy 40 of 72 µs,
    idle 32 (host wait 25, kernel wait 0.02, other 6.98), 4 kernels all launched (mean 4.25
    µs, delays 10 and 23 µs, 1 shorter than its launch), 5 events on stream 7; its one step
    is the whole trace. Every cell, every title."""
    import json

    from tests.test_breakdown import HAND_BUILT

    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(HAND_BUILT))
    out = CliRunner().invoke(cli, ["breakdown", str(trace), "--kernel-wait-us", "0.03"]).stdout
    device = "0 NVIDIA H100 80GB HBM3"
    time = (
        "             38              0                0                2                  2  "
        "     40       32        72  44.44%            25         0.02000     6.980"
    )
    launch = (
        "        4         4           4.250              4              6                   "
        "10                   23                   23                   23                    1"
    )
    stream = "       7       5       40       32            25         0.02000     6.980"
    assert out.splitlines() == [
        "Time breakdown (µs)",
        "device                   step   computation µs  total_comm µs  exposed_comm µs  "
        "total_memcpy µs  exposed_memcpy µs  busy µs  idle µs  total µs    idle  host_wait µs  "
        "kernel_wait µs  other µs",
        f"{device}  whole {time}",
        f"{device}  #3    {time}",
        "",
        "Kernel launches (µs)",
        "device                   step   kernels  launched  launch_us_mean  launch_us_p50  "
        "launch_us_p95  launch_delay_us_p50  launch_delay_us_p95  launch_delay_us_p99  "
        "launch_delay_us_max  shorter_than_launch",
        f"{device}  whole{launch}",
        f"{device}  #3   {launch}",
        "",
        "Idle per stream (µs)",
        "device                   step   stream  events  busy µs  idle µs  host_wait µs  "
        "kernel_wait µs  other µs",
        f"{device}  whole{stream}",
        f"{device}  #3   {stream}",
        "",
        "kernel wait: idle gaps under 0.03000 µs (--kernel-wait-us)",
    ]
    document = CliRunner().invoke(cli, ["breakdown", str(RANK0), "--format", "json"]).stdout
    assert document.startswith('{\n  "breakdown": [\n') and '"job": "nccl×2"' in document


def test_a_table_rich_reads_otherwise_is_laid_out_by_rich() -> None:
    """A name with a "[" (rich markup): rich lays the table out, names left and figures
    right, names cut to fit."""
    rows = [["k[0]", "1"], ["short", "22"]]
    assert B._table("T", ["name", "a"], rows, names=1).splitlines() == [
        "T", "name    a", "k[0]    1", "short  22"
    ]  # fmt: skip
    long = B._table("T", ["name", "a"], [["k[0]" + "x" * 60, "1"]], width=30, names=1)
    assert long.splitlines() == [
        "T",
        "name                         a",
        "k[0]" + "x" * 9 + "…" + "x" * 13 + "  1",
    ]


def test_the_lines_before_a_breakdown_comparison() -> None:
    """The kernel counts' line with its change, none where before had no kernel; nothing
    compared within one rank; the table's header."""
    from tileprof.analyses.breakdown_diff import DIFF_SCHEMA

    base = dict.fromkeys(DIFF_SCHEMA)
    window = {**base, "rank": 0, "trace_at": 0, "gpu": 0, "window": 0, "figure": "busy_us"}
    paired = {**window, "device_before": "0 A", "device_after": "0 A", "before": 1.0,
              "after": 2.0, "delta": 1.0, "change": 1.0, "kernels_before": 5, "kernels_after": 192,
              "per_kernel_change": (2 / 192) / (1 / 5) - 1}  # fmt: skip
    kernels = {**paired, "figure": "kernels", "before": 5.0, "after": 192.0}
    frame = pl.DataFrame([paired, kernels], schema=DIFF_SCHEMA)
    assert B.kernel_count_lines(frame)[0] == (
        "kernels differ in 1 of 1 paired windows (the first: 0 A whole: 5 → 192, +3740.00%): a "
        'change in time the kernel count explains is no speed-up or slowdown; read "per '
        'kernel" (figure / kernels), not "change"'
    )
    none = pl.DataFrame([{**kernels, "kernels_before": 0}], schema=DIFF_SCHEMA)
    assert B.kernel_count_lines(none)[0].startswith(
        "kernels differ in 1 of 1 paired windows (the first: 0 A whole: 0 → 192): a change"
    )
    apart = [{**window, "device_before": "0 A", "before": 1.0},
             {**window, "window": 1, "device_after": "0 A", "after": 2.0}]  # fmt: skip
    assert B.pairing_lines(pl.DataFrame(apart, schema=DIFF_SCHEMA)) == [
        "nothing is compared: no window of before has the rank, device position and window "
        "position of one of after",
        "",
    ]
    ranks = [{**apart[0]}, {**apart[1], "window": 0, "rank": 1}]
    assert B.pairing_lines(pl.DataFrame(ranks, schema=DIFF_SCHEMA))[0] == (
        "nothing is compared: before is rank 0 and after rank 1, and windows pair only within "
        "one rank (to hold two ranks of one job side by side: `tileprof breakdown BEFORE "
        "AFTER`; to compare two runs: one rank of each)"
    )
    table = B.render_diff_table(frame).splitlines()
    header = next(line for line in table if line.startswith("device"))
    assert header.split() == [
        "device", "(before", "→", "after)", "window", "figure", "before", "after", "Δ", "change",
        "per", "kernel",
    ]  # fmt: skip
    row = next(line for line in table if "busy_us" in line)
    assert row.split() == ["0", "A", "→", "0", "A", "whole", "→", "whole", "busy_us", "1", "2",
                           "1", "+100.00%", "-94.79%"]  # fmt: skip
    document = B.render_diff_json(frame)
    assert document.startswith('{\n  "breakdown_diff": [\n')


def test_a_narrow_time_table_drops_kernel_wait_first_and_names_two_traces(tmp_path: Path) -> None:
    """At 180 columns the time table loses kernel wait first (``TIME_DROP_FIRST``: the idle
    share and host wait stay longest), not the rightmost column; a breakdown of two traces
    leads every table with the trace; a name longer than 120 characters is cut to 120 at the
    file width."""
    import json

    from tests.test_breakdown import HAND_BUILT
    from tileprof.model.breakdown import trace_breakdown

    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(HAND_BUILT))
    one = trace_breakdown([trace])
    header = B.render_table(one.breakdown, one.job, width=180).splitlines()[1]
    assert "kernel_wait µs" not in header and header.endswith("host_wait µs  other µs")
    small = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "kineto_small.json"
    two = trace_breakdown([trace, small])
    headers = [line for line in B.render_table(two.breakdown, two.job).splitlines()
               if line.startswith("trace")]  # fmt: skip
    assert len(headers) == 3  # time, launches, streams
    assert all(h.split()[:3] == ["trace", "device", "step"] for h in headers)
    cut = B._table("T", ["name", "a"], [["y" * 130, "1"]], names=1).splitlines()[2]
    assert cut == "y" * 60 + "…" + "y" * 59 + "  1"
