"""The lead sentence of each report section (``tileprof.views.html.leads``, issue 38).

Each lead is a claim a reader acts on ("the heaviest kernel is …", "the largest single-edit
gain is …"), so every sentence here is held whole, on view models built by hand: tables from
``table_from_frame`` as the report builds them, the row the lead must pick placed where a
wrong pick (the first row, the smallest, the wrong table) gives other words. The figures are
printed by the number policy: 1,500 µs is "1.500 ms", a share of 0.25 is "25.00%".
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import polars as pl

from tileprof.views.html import leads
from tileprof.views.html.data import table_from_frame
from tileprof.views.html.diff_page import DiffRow
from tileprof.views.html.view import (
    BreakdownSection,
    Cell,
    ChartedTable,
    Column,
    CriticalScope,
    CriticalSection,
    Figure,
    Plot,
    QualityCheck,
    Table,
)


def _table(id: str, columns: dict[str, list[Any]], percent: tuple[str, ...] = ()) -> Table:
    frame = pl.DataFrame(columns, strict=False)
    return table_from_frame(id, frame, tuple(columns), percent=percent)


# ---------------------------------------------------------------- the helpers


def test_top_row_is_the_largest_number_of_its_column() -> None:
    # a text cell, a missing number, a zero and two numbers under 1: the largest is 0.5
    table = _table("t", {"name": ["a", "b", "c", "d"], "x": [0.0, None, 0.5, 0.25]})
    row = leads.top_row(table, "x")
    assert row is not None and row[0].text == "c"
    assert leads.top_row(table, "name") is None  # text cells are no number
    assert leads.top_row(table, "absent") is None
    negative = _table("n", {"name": ["a", "b", "c"], "x": [-5.0, -1.0, -3.0]})
    row = leads.top_row(negative, "x")
    assert row is not None and row[0].text == "b"
    nothing = _table("e", {"name": ["a"], "x": [None]})
    assert leads.top_row(nothing, "x") is None


def test_cell_text_reads_the_named_column_or_a_dash() -> None:
    table = _table("t", {"name": ["a"], "x": [1500.0]})
    row = table.rows[0]
    assert leads.cell_text(table, row, "x") == "1,500"
    assert leads.cell_text(table, row, "name") == "a"
    assert leads.cell_text(table, row, "absent") == "—"


# ---------------------------------------------------------------- capture checks, findings


def test_checks_lead_counts_the_failed_and_names_the_first() -> None:
    ok = {"check": "samples-complete", "input": "a.json", "status": "pass"}
    warn1 = {"check": "clock-monotonic", "input": "b.json", "status": "warn"}
    warn2 = {"check": "samples-complete", "input": "c.json", "status": "warn"}
    assert leads.checks_lead([]) == "No input of a kind tileprof checks."
    assert leads.checks_lead([], [("x.csv", "csv")]) == (
        "No input of a kind tileprof checks; 1 input not checked "
        "(tileprof has no capture checks for their kind)."
    )
    assert leads.checks_lead([ok, ok]) == (
        "All 2 capture checks passed: every input supports its figures."
    )
    assert leads.checks_lead([ok], [("x.csv", "csv"), ("y.csv", "csv")]) == (
        "All 1 capture checks passed: every checked input supports its figures; 2 inputs "
        "not checked (tileprof has no capture checks for their kind)."
    )
    assert leads.checks_lead([ok, warn1, warn2]) == (
        "2 of 3 capture checks failed, first clock-monotonic on b.json: the findings they "
        "undermine leave those inputs out, and each section whose figures they undermine "
        "says so."
    )
    assert leads.checks_lead([warn2, ok], [("x.csv", "csv")]) == (
        "1 of 2 capture checks failed, first samples-complete on c.json: the findings they "
        "undermine leave those inputs out, and each section whose figures they undermine "
        "says so; 1 input not checked (tileprof has no capture checks for their kind)."
    )


def test_findings_lead_counts_the_rules_that_fired() -> None:
    clear = SimpleNamespace(status="clear", text="no kernel is launch-bound")
    fired = SimpleNamespace(status="fired", text="gemm waits on sync 40% of its cycles")
    other = SimpleNamespace(status="fired", text="relu is memory-bound")
    assert leads.findings_lead([]) == "No rule of 0 fired."
    assert leads.findings_lead([clear, clear]) == "No rule of 2 fired."
    assert leads.findings_lead([clear, fired, other]) == (  # type: ignore[list-item]
        "2 of 3 rules fired; first: gemm waits on sync 40% of its cycles"
    )


# ---------------------------------------------------------------- tile device, supersteps


def _tile(groups: Table, useful: str | None = "62.50%", empty: bool = False) -> Any:
    headline = [Figure("Matched samples", 4, "4", "")]
    if useful is not None:
        headline.append(Figure("Device useful utilization", 0.625, useful, ""))
    return SimpleNamespace(
        empty=empty,
        summary=SimpleNamespace(sample_count=1234),
        headline=tuple(headline),
        groups=groups,
    )


def test_tile_lead_gives_the_useful_utilization_and_the_heaviest_group() -> None:
    groups = _table("groups", {"group": ["relu", "gemm", "copy"], "phaseCycles": [900, 2500, None]})
    assert leads.tile_lead(_tile(groups)) == (
        "Device useful utilization 62.50% over 3 groups; gemm holds the most phase cycles (2,500)."
    )
    unknown = (
        "Device useful utilization not known (no sample states its useful cycles) over 3 "
        "groups; gemm holds the most phase cycles (2,500)."
    )
    assert leads.tile_lead(_tile(groups, useful=None)) == unknown
    # a dump that states no useful cycles: the figure is there, its value not known ("—")
    stated_none = _tile(groups)
    stated_none.headline = (Figure("Device useful utilization", None, "—", ""),)
    assert leads.tile_lead(stated_none) == unknown
    plain = _table("groups", {"group": ["relu", "gemm"], "samples": [1, 2]})
    assert leads.tile_lead(_tile(plain)) == "Device useful utilization 62.50% over 2 groups."
    assert leads.tile_lead(_tile(groups, empty=True)) == "No sample of 1,234 matched the filters."


def _supersteps(epochs: pl.DataFrame, withheld: tuple[str, ...] = ()) -> Any:
    return SimpleNamespace(result=SimpleNamespace(epochs=epochs), withheld=withheld)


def test_supersteps_lead_reads_the_first_epoch() -> None:
    epochs = pl.DataFrame({"epoch": [3, 4], "supersteps": [1234, 7], "syncWaitShare": [0.25, 0.5]})
    assert leads.supersteps_lead(_supersteps(epochs)) == (
        "Epoch 3: 1,234 supersteps, 25.00% of tile-cycles lost to sync wait."
    )
    unknown = pl.DataFrame(
        {"epoch": [None], "supersteps": [12], "syncWaitShare": [0.125]},
        schema_overrides={"epoch": pl.Int64},
    )
    assert leads.supersteps_lead(_supersteps(unknown)) == (
        "Epoch —: 12 supersteps, 12.50% of tile-cycles lost to sync wait."
    )
    assert leads.supersteps_lead(_supersteps(epochs.clear())) == (
        "No supersteps: no compute sample of positive length is chosen."
    )
    why = ("d.json: check epoch-gap failed (1; first at epoch 2): …", "d.json: check other …")
    assert leads.supersteps_lead(_supersteps(epochs, why)) == (
        "Abstained: d.json: check epoch-gap failed (1; first at epoch 2): …; d.json: check "
        "other …. The figures below rest on this capture, and the ranked edits are not given."
    )


# ---------------------------------------------------------------- GPU runs, tile ops


def _kernels(title: str, kernels: list[str], totals: list[float | None]) -> ChartedTable:
    return ChartedTable(title, _table("k", {"kernel": kernels, "total_us": totals}))


def test_gpu_lead_names_the_heaviest_kernel_of_every_run() -> None:
    runs = _table("runs", {"run": ["base", "fast", "slow"], "time_us": [40.0, None, 2500.0]})
    first = _kernels("Kernels of base", ["relu", "gemm"], [300.0, 1200.0])
    second = _kernels("Kernels of fast", ["softmax", "copy"], [1500.0, 0.5])
    untimed = _kernels("Kernels of slow", ["idle"], [None])
    gpu = SimpleNamespace(runs=runs, kernel_rows=1000, kernels=(untimed, first, second))
    assert leads.gpu_lead(gpu) == (  # type: ignore[arg-type]
        "1,003 GPU runs; the heaviest kernel is softmax, 1.500 ms in all (fast)."
    )
    # no kernel table with a time: the longest run
    gpu = SimpleNamespace(runs=runs, kernel_rows=0, kernels=(untimed,))
    assert leads.gpu_lead(gpu) == "3 GPU runs; the longest is slow at 2.500 ms."  # type: ignore[arg-type]
    untimed_runs = _table("runs", {"run": ["a", "b"], "time_us": [None, None]})
    gpu = SimpleNamespace(runs=untimed_runs, kernel_rows=2, kernels=())
    assert leads.gpu_lead(gpu) == "4 GPU runs, none with a time."  # type: ignore[arg-type]
    # a kernel table whose heaviest kernel took no time is not heavier than one that took some
    idle = _kernels("Kernels of idle", ["nop"], [0.0])
    tiny = _kernels("Kernels of tiny", ["k"], [0.4])
    gpu = SimpleNamespace(runs=untimed_runs, kernel_rows=0, kernels=(idle, tiny))
    assert leads.gpu_lead(gpu) == (  # type: ignore[arg-type]
        "2 GPU runs; the heaviest kernel is k, 0.4000 µs in all (tiny)."
    )


def test_tile_ops_lead_names_the_heaviest_op_over_every_chip() -> None:
    chip0 = _kernels("Ops of n300 · 0", ["matmul", "add"], [800.0, 20.0])
    chip1 = _kernels("Ops of n300 · 1", ["softmax", "matmul"], [2500.0, 700.0])
    chip2 = _kernels("Ops of n300 · 2", ["add"], [None])
    assert leads.tile_ops_lead([chip2, chip0, chip1]) == (
        "3 chips; the heaviest op is softmax, 2.500 ms in all (n300 · 1)."
    )
    assert leads.tile_ops_lead([chip1, chip0]) == (
        "2 chips; the heaviest op is softmax, 2.500 ms in all (n300 · 1)."
    )
    assert leads.tile_ops_lead([chip2]) == "1 chip, no op with a time."
    assert leads.tile_ops_lead([]) == "0 chips, no op with a time."
    # the total's column read wherever it is, the first included
    first_a = ChartedTable("Ops of a", _table("k", {"total_us": [5.0], "kernel": ["x"]}))
    first_b = ChartedTable("Ops of b", _table("k", {"total_us": [10.0], "kernel": ["y"]}))
    assert leads.tile_ops_lead([first_a, first_b]) == (
        "2 chips; the heaviest op is y, 10 µs in all (b)."
    )


# ---------------------------------------------------------------- breakdown


def test_breakdown_lead_reads_the_longest_window_of_the_first_table() -> None:
    windows = _table(
        "bd",
        {
            "trace": ["a.json", "b.json", "c.json"],
            "device": ["0", None, "1"],
            "step": ["1", "2", None],
            "busy_us": [50.0, 1200.0, 10.0],
            "total_us": [100.0, 1600.0, 40.0],
            "exposed_comm_us": [5.0, 250.0, 0.0],
        },
    )
    other = _table("bd2", {"trace": ["z"], "busy_us": [9.0e6], "total_us": [9.0e6]})
    section = BreakdownSection("bd", 0.0, (("windows", windows), ("other", other)))
    assert leads.breakdown_lead(section) == (
        "The device was busy 75.00% of the longest window (b.json · step 2, 1.600 ms); exposed "
        "communication 250 µs."
    )
    # b.json failed a check that undermines its breakdown: the longest window of the others
    bad = dataclasses.replace(section, withheld=(("b.json", "b.json: check x failed"),))
    assert leads.breakdown_lead(bad) == (
        "The device was busy 50.00% of the longest window (a.json · device 0 · step 1, 100 µs); "
        "exposed communication 5 µs; the windows of captures that failed a check are left out."
    )
    # a check across the job's ranks ("") undermines every window; so do those of every trace
    for withheld in (
        (("", "job of 2 ranks: check y failed"),),
        tuple((name, f"{name}: check x failed") for name in ("a.json", "b.json", "c.json")),
    ):
        whys = "; ".join(why for _, why in withheld)
        assert leads.breakdown_lead(dataclasses.replace(section, withheld=withheld)) == (
            f"Abstained: {whys}. The figures below rest on this capture."
        )
    # a breakdown of one trace has no trace column: any failed check is that trace's
    alone = _table("bd", {"device": ["0"], "busy_us": [1.0], "total_us": [2.0]})
    one = BreakdownSection("bd", 0.0, (("w", alone),), (("t.json", "t.json: check x"),))
    assert leads.breakdown_lead(one) == (
        "Abstained: t.json: check x. The figures below rest on this capture."
    )
    # and with no check failed its window is named by its device alone (no "—" for the trace)
    assert leads.breakdown_lead(BreakdownSection("bd", 0.0, (("w", alone),))) == (
        "The device was busy 50.00% of the longest window (device 0, 2 µs); exposed "
        "communication —."
    )
    every = _table(
        "bd",
        {
            "trace": ["a.json"],
            "device": ["0"],
            "step": ["7"],
            "busy_us": [30.0],
            "total_us": [120.0],
        },
    )
    assert leads.breakdown_lead(BreakdownSection("bd", 0.0, (("w", every),))) == (
        "The device was busy 25.00% of the longest window (a.json · device 0 · step 7, 120 µs); "
        "exposed "
        "communication —."
    )
    empty_span = _table("bd", {"trace": ["a"], "busy_us": [0.0], "total_us": [0.0]})
    assert leads.breakdown_lead(BreakdownSection("bd", 0.0, (("w", empty_span),))) == (
        "The device was busy — of the longest window (a, 0 µs); exposed communication —."
    )
    no_busy = _table("bd", {"trace": ["a"], "total_us": [10.0]})
    no_total = _table("bd", {"trace": ["a"], "busy_us": [10.0], "total_us": [None]})
    for table in (no_busy, no_total):
        assert leads.breakdown_lead(BreakdownSection("bd", 0.0, (("w", table),))) == (
            "No GPU window with a span to break down."
        )
    assert leads.breakdown_lead(BreakdownSection("bd", 0.0, ())) == "No GPU window to break down."


def test_breakdown_lead_names_the_device_by_its_name_and_says_which_number_is_the_step() -> None:
    named = _table(
        "bd",
        {
            "trace": ["h100_2gpu_1s.sqlite", "h100_2gpu_1s.sqlite"],
            "device": ["0", "1"],
            "device_name": ["GPU 0", "GPU 1"],
            "step": [None, "3"],
            "busy_us": [962.9, 10.0],
            "total_us": [969.4, 20.0],
        },
    )
    assert leads.breakdown_lead(BreakdownSection("bd", 0.0, (("w", named),))) == (
        "The device was busy 99.33% of the longest window (h100_2gpu_1s.sqlite · GPU 0, "
        "969.4 µs); exposed communication —."
    )


# ---------------------------------------------------------------- across targets


def _linked(
    targets: list[str],
    times: list[float | None],
    peaks: list[float | None] | None = None,
    kind: str | None = "linked",
    title: str = "gemm 1024",
) -> ChartedTable:
    columns: dict[str, list[Any]] = {"target": targets, "time_us": times}
    if peaks is not None:
        columns["peak_fraction"] = peaks
    table = _table("linked-0", columns, percent=("peak_fraction",))
    frame = pl.DataFrame({"target": targets})
    plot = None if kind is None else Plot(kind, "c", title, frame)
    return ChartedTable(title, table, plot=plot)


def test_linked_set_lead_compares_the_fastest_and_the_slowest() -> None:
    # a run of no time and one of 0 µs take no part; the slowest is not the last row
    ct = _linked(["H100", "A100", "MI300X", "L4", "T4"], [30.0, 45.0, None, 0.0, 36.0])
    assert leads.linked_set_lead(ct) == "H100 is fastest at 30 µs; A100 takes 1.500× as long."
    ct = _linked(["A100", "H100"], [45.0, 30.0])
    assert leads.linked_set_lead(ct) == "H100 is fastest at 30 µs; A100 takes 1.500× as long."
    ct = _linked(["A100", "H100"], [0.75, 0.5])  # times under 1 µs are times too
    assert leads.linked_set_lead(ct) == "H100 is fastest at 0.5000 µs; A100 takes 1.500× as long."


def test_linked_set_lead_without_two_times_gives_the_best_fraction_of_peak() -> None:
    one_time = _linked(["H100", "A100", "L4"], [30.0, None, 0.0], peaks=[0.25, 0.5, 0.125])
    assert leads.linked_set_lead(one_time) == "A100 reaches the highest fraction of peak, 50.00%."
    # unlike work (efficiency bars) or no chart: the times are not compared
    efficiency = _linked(["H100", "A100"], [30.0, 45.0], [0.5, 0.25], kind="linked_efficiency")
    assert leads.linked_set_lead(efficiency) == (
        "H100 reaches the highest fraction of peak, 50.00%."
    )
    unplotted = _linked(["H100", "A100"], [30.0, 45.0], [0.5, 0.25], kind=None)
    assert leads.linked_set_lead(unplotted) == (
        "H100 reaches the highest fraction of peak, 50.00%."
    )
    # times of different work and no peak: nothing says which is faster
    unlike = _linked(["H100", "A100"], [30.0, 45.0], [None, None], kind="linked_efficiency")
    assert leads.linked_set_lead(unlike) == (
        "2 runs of different work, none with a known peak: no comparison."
    )
    # the report leaves an efficiency set's times out (they do not compare): the same words
    hidden = _linked(["H100", "A100"], [None, None], [None, None], kind="linked_efficiency")
    assert leads.linked_set_lead(hidden) == (
        "2 runs of different work, none with a known peak: no comparison."
    )
    nothing = _linked(["H100", "A100", "L4"], [None, None, None], [None, None, None])
    assert leads.linked_set_lead(nothing) == (
        "3 runs, none with a time or a known peak to compare."
    )
    peaks_only = ChartedTable(
        "s",
        _table(
            "l", {"target": ["H100", "A100"], "peak_fraction": [0.125, 0.75]}, ("peak_fraction",)
        ),
    )
    assert leads.linked_set_lead(peaks_only) == (
        "A100 reaches the highest fraction of peak, 75.00%."
    )


def _report(
    linked: tuple[ChartedTable, ...] = (),
    devices: ChartedTable | None = None,
    roofline: ChartedTable | None = None,
) -> Any:
    return SimpleNamespace(linked=linked, devices=devices, roofline=roofline)


def test_linked_lead_names_the_sets_or_the_device_spread_or_the_roofline() -> None:
    first = _linked(["A100", "H100"], [45.0, 30.0], title="gemm 1024")
    second = _linked(["A100", "H100"], [10.0, 90.0], title="relu 4096")
    assert leads.linked_lead(_report((first, second))) == (
        "2 linked sets; first, gemm 1024: H100 is fastest at 30 µs; A100 takes 1.500× as long."
    )
    devices = ChartedTable(
        "devices",
        _table(
            "devices",
            {
                "kernel": ["relu", "gemm", "copy"],
                "device_spread": [1.25, 2.5, None],
            },
        ),
    )
    assert leads.linked_lead(_report(devices=devices)) == (
        "No linked set; 3 runs ran on several devices of one target, the widest spread "
        "2.500 (gemm)."
    )
    roofline = ChartedTable("roofline", _table("r", {"target": ["a", "b", "c", "d"]}))
    spreadless = ChartedTable("devices", _table("d", {"kernel": ["relu"], "device_spread": [None]}))
    assert leads.linked_lead(_report(devices=spreadless, roofline=roofline)) == (
        "No linked set; 4 ops and tile groups placed on the roofline."
    )
    assert leads.linked_lead(_report(roofline=roofline)) == (
        "No linked set; 4 ops and tile groups placed on the roofline."
    )
    assert leads.linked_lead(_report()) == (
        "No linked set; 0 ops and tile groups placed on the roofline."
    )


# ---------------------------------------------------------------- data quality, diff


def test_quality_lead_counts_the_warnings_and_names_the_first() -> None:
    ok = QualityCheck("duplicate samples", 0, "pass", "")
    gaps = QualityCheck("clock gaps", 1234, "warn", "")
    zero = QualityCheck("zero-length samples", 3, "warn", "")
    assert leads.quality_lead([ok, ok]) == "All 2 data-quality checks passed."
    assert leads.quality_lead([]) == "All 0 data-quality checks passed."
    assert leads.quality_lead([ok, gaps, zero]) == (
        "2 of 3 data-quality checks warn; first clock gaps (1,234)."
    )


def _diff_section(figures: list[Figure], rows: list[DiffRow], labels: list[str]) -> Any:
    columns = tuple(Column(label, label, label != "group") for label in labels)
    return SimpleNamespace(figures=tuple(figures), rows=tuple(rows), columns=columns)


def test_diff_lead_gives_the_net_change_and_the_first_row() -> None:
    figures = [
        Figure("Total µs", 1.0, "1 µs", ""),
        Figure("Net change in total_us", -12.5, "-12.5", ""),
        Figure("Top 3 groups explain", 0.5, "50.00%", ""),
    ]
    labels = ["group", "before", "after", "Δ", "Δ%"]
    first = DiffRow(
        "changed",
        (
            Cell("~ gemm", "gemm"),
            Cell("30", 30.0),
            Cell("20", 20.0),
            Cell("-10", -10.0),
            Cell("-33.3%", -0.333),
        ),
    )
    second = DiffRow(
        "added",
        (Cell("+ relu", "relu"), Cell("—", None), Cell("5", 5.0), Cell("+5", 5.0), Cell("—", None)),
    )
    section = _diff_section(figures, [first, second], labels)
    assert leads.diff_lead(section) == (
        "Net change in total_us: -12.5; the largest change is gemm (-10)."
    )
    no_delta = _diff_section(figures[:1], [first], ["group", "before", "after", "d", "d%"])
    assert leads.diff_lead(no_delta) == "No net change to report; the largest change is gemm (—)."
    assert leads.diff_lead(_diff_section(figures, [], labels)) == (
        "Net change in total_us: -12.5; no group on either side."
    )


# ---------------------------------------------------------------- critical path


def _scope(
    title: str,
    length_us: float,
    parts: dict[str, list[Any]],
    candidates: dict[str, list[Any]],
) -> CriticalScope:
    percent = ("share", "gain_share")
    return CriticalScope(
        id=title,
        title=title,
        length=f"{length_us:g} µs",
        length_us=length_us,
        bar="",
        parts=_table("parts", parts, percent=percent),
        on_path=_table("on", {"name": []}),
        what_if=(),
        candidates=_table("candidates", candidates, percent=percent),
    )


PARTS = {"class": ["sync wait", "compute", "launch"], "share": [0.25, 0.625, 0.125]}


def test_critical_lead_gives_the_longest_path_its_main_class_and_the_best_edit() -> None:
    short = _scope(
        "step 1", 90.0, {"class": ["compute"], "share": [1.0]}, {"edit": ["x"], "gain_us": [9.0]}
    )
    longest = _scope(
        "step 2",
        120.0,
        PARTS,
        {
            "edit": ["no-launch", "balance", "fuse"],
            "gain_us": [12.0, 30.0, 0.0],
            "gain_share": [0.1, 0.25, 0.0],
        },
    )
    third = _scope("step 3", 100.0, PARTS, {"edit": ["y"], "gain_us": [50.0]})
    section = CriticalSection("critical", (short, longest, third))
    assert leads.critical_lead(section) == (
        "The longest critical path is 120 µs (step 2), 62.50% of it compute; the largest "
        "single-edit gain is balance, 25.00% of it."
    )
    # the longest path's input failed a check that undermines its edits: none is named
    withheld = dataclasses.replace(longest, withheld=("t.json: check … failed",))
    assert leads.critical_lead(CriticalSection("critical", (short, withheld, third))) == (
        "The longest critical path is 120 µs (step 2), 62.50% of it compute; its single-edit "
        "gains are not given: a capture check of its input failed."
    )


def test_critical_lead_names_the_largest_part_of_the_path() -> None:
    # copies count as gpu_compute: the class alone would read as a compute-bound path
    gpu = dataclasses.replace(
        _scope("step 1", 969.4, {"class": ["gpu_compute"], "share": [0.9932]}, {"edit": []}),
        on_path=_table(
            "on",
            {
                "name": ["aten::copy_", "Memcpy HtoD"],
                "class": ["cpu", "gpu_compute"],
                "share": [0.05, 0.9499],
            },
            percent=("share",),
        ),
    )
    assert leads.critical_lead(CriticalSection("c", (gpu,))) == (
        "The longest critical path is 969.4 µs (step 1), 99.32% of it gpu_compute; Memcpy "
        "HtoD (gpu_compute) alone is 94.99% of it; no single edit tried would shorten it."
    )
    tile = dataclasses.replace(
        gpu, on_path=_table("on", {"group": ["gemm_a", "sync"], "share": [0.625, 0.25]}, ("share",))
    )
    assert "; gemm_a alone is 62.50% of it;" in leads.critical_lead(CriticalSection("c", (tile,)))


def test_critical_lead_reads_the_gain_column_wherever_it_stands() -> None:
    # the gain first, the edit after it: the gain is read by its key, not by a position
    scope = _scope("step 1", 10.0, PARTS, {"gain_us": [2.0, 4.0], "edit": ["fuse", "no-launch"]})
    assert leads.critical_lead(CriticalSection("c", (scope,))) == (
        "The longest critical path is 10 µs (step 1), 62.50% of it compute; the largest "
        "single-edit gain is no-launch, — of it."
    )


def test_critical_lead_ranks_tile_edits_by_cycles_and_says_when_no_edit_helps() -> None:
    # a tile epoch: gain_cycles ranks the edits, not the gain in µs beside it
    tile = _scope(
        "epoch 1",
        10.0,
        PARTS,
        {
            "edit": ["balance", "no-sync"],
            "gain_us": [9.0, 1.0],
            "gain_cycles": [100.0, 4000.0],
            "gain_share": [0.01, 0.4],
        },
    )
    assert leads.critical_lead(CriticalSection("c", (tile,))) == (
        "The longest critical path is 10 µs (epoch 1), 62.50% of it compute; the largest "
        "single-edit gain is no-sync, 40.00% of it."
    )
    nothing = _scope(
        "epoch 1", 10.0, {"class": ["compute"]}, {"edit": ["balance"], "gain_cycles": [0.0]}
    )
    assert leads.critical_lead(CriticalSection("c", (nothing,))) == (
        "The longest critical path is 10 µs (epoch 1); no single edit tried would shorten it."
    )
    worse = _scope("step 1", 10.0, PARTS, {"edit": ["fuse"], "gain_us": [-3.0]})
    assert leads.critical_lead(CriticalSection("c", (worse,))) == (
        "The longest critical path is 10 µs (step 1), 62.50% of it compute; no single edit "
        "tried would shorten it."
    )
    untried = _scope("step 1", 10.0, PARTS, {"edit": ["fuse"], "gain_us": [None]})
    assert leads.critical_lead(CriticalSection("c", (untried,))) == (
        "The longest critical path is 10 µs (step 1), 62.50% of it compute; no single edit "
        "tried would shorten it."
    )
    assert leads.critical_lead(CriticalSection("c", ())) == (
        "No epoch or step to follow: no critical path."
    )


def test_every_lead_is_registered_for_the_templates() -> None:
    names = {n for n in dir(leads) if n.endswith("_lead")}
    assert names == {n for n in leads.LEADS if n.endswith("_lead")}
    assert all(leads.LEADS[n] is getattr(leads, n) for n in names)
    assert leads.LEADS["LINKED_OPEN"] == leads.LINKED_OPEN == 3
