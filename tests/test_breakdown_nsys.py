"""``tileprof breakdown`` over an nsys SQLite export, held to SQL over the same database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import polars as pl
import pytest

from tests.test_breakdown import _gap_classes, _plain_union
from tileprof.analyses.gpu_breakdown import KERNEL_WAIT_US, breakdown
from tileprof.inputs.timelines import load_timeline

EXPORT = Path(__file__).resolve().parent.parent / "fixtures" / "real" / "h100_2gpu_1s.sqlite"
TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def _sql_events(device: int) -> list[tuple[float, float, str]]:
    """(start µs, end µs, table) of every GPU event of ``device``, by plain SQL."""
    with sqlite3.connect(EXPORT) as conn:
        rows = []
        for table in TABLES:
            sql = f"SELECT start / 1000.0, end / 1000.0 FROM {table} WHERE deviceId = ?"
            rows += [(s, e, table) for s, e in conn.execute(sql, (device,))]
    return rows


@pytest.mark.parametrize("device", [0, 1])
def test_the_export_breakdown_matches_sql(device: int) -> None:
    rows = breakdown([load_timeline(EXPORT)]).rows
    row = rows.filter(pl.col("device") == device, pl.col("step").is_null()).row(0, named=True)
    events = _sql_events(device)
    assert row["events"] == len(events)
    assert row["total_us"] == pytest.approx(
        max(e for _, e, _ in events) - min(s for s, _, _ in events)
    )
    assert row["busy_us"] == pytest.approx(_plain_union([(s, e) for s, e, _ in events]), rel=1e-9)
    memcpy = [(s, e) for s, e, t in events if t.endswith("MEMCPY")]
    assert row["total_memcpy_us"] == pytest.approx(_plain_union(memcpy), rel=1e-9)
    compute = [(s, e) for s, e, t in events if not t.endswith("MEMCPY")]
    assert row["computation_us"] == pytest.approx(_plain_union(compute), rel=1e-9)
    parts = row["idle_host_wait_us"] + row["idle_kernel_wait_us"] + row["idle_other_us"]
    assert parts == pytest.approx(row["idle_us"])


def test_the_export_idle_causes_follow_its_runtime_calls() -> None:
    timeline = load_timeline(EXPORT)
    row = breakdown([timeline]).rows.filter(pl.col("device") == 0).row(0, named=True)
    mine = timeline.events.filter(pl.col("device") == 0)
    host, _, other = _gap_classes(
        list(mine.select("start_ns", "end_ns", "launch_start_ns").iter_rows()),
        KERNEL_WAIT_US * 1000,
    )
    assert row["idle_host_wait_us"] == pytest.approx(host / 1000, abs=1e-6)
    assert row["idle_other_us"] == pytest.approx(other / 1000, abs=1e-6)


def test_an_nvtx_profiler_step_is_a_cpu_step_window(tmp_path: Path) -> None:
    """An export built by hand: three kernels launched (runtime calls 900–400 ns before each)
    and an NVTX ``ProfilerStep#4`` range around the first two launches only."""
    from tests.test_nsys_sqlite import build_export

    path = build_export(
        tmp_path / "e.sqlite",
        [("gemm", 0, 10_000, 20_000), ("ncclDevKernel_AllReduce", 0, 25_000, 30_000),
         ("gemm", 0, 60_000, 70_000)],
    )  # fmt: skip
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, "
                     "text TEXT, globalTid INTEGER)")  # fmt: skip
        conn.execute("INSERT INTO NVTX_EVENTS VALUES (8000, 40000, 59, 'ProfilerStep#4', 1)")
    timeline = load_timeline(path)
    assert timeline.events["kind"].to_list() == ["kernel", "comm", "kernel"]
    result = breakdown([timeline])
    step = result.rows.filter(pl.col("step") == 4).row(0, named=True)
    assert step["window_from"] == "cpu_step"
    assert (step["window_us"], step["busy_us"], step["total_comm_us"]) == (20.0, 15.0, 5.0)
    assert step["idle_host_wait_us"] == pytest.approx(5.0)  # launched at 24.1 µs, after 20 µs
    launch = result.launches.filter(pl.col("step") == 4).row(0, named=True)
    assert (launch["kernels"], launch["launch_delay_us_p50"]) == (2, pytest.approx(0.9))


def test_the_timeline_is_named_by_its_file_and_names_its_devices() -> None:
    from tileprof.inputs.gpu.nsys_sqlite import read_export
    from tileprof.inputs.gpu.nsys_timeline import read_timeline

    data = EXPORT.read_bytes()
    timeline = read_timeline(EXPORT, data)
    assert timeline.name == "h100_2gpu_1s.sqlite"
    assert timeline.devices == read_export(EXPORT, data).devices
    assert sorted(timeline.devices) == [0, 1]
