"""The breakdown's HTML view model (``tileprof.views.html.breakdown_data``) over frames built
here: which tables, in which order, under which titles and ids, with which columns and the
definition of each (docs/metrics.md, "Time breakdown")."""

from __future__ import annotations

import polars as pl
import pytest

from tileprof.analyses.collectives import Job
from tileprof.analyses.gpu_breakdown import IDLE_COLUMNS, TIME_COLUMNS, Breakdown
from tileprof.views.html.breakdown_data import DOCS, KEYS, breakdown_section

TIMES = [*KEYS, "window_from", "window_us", "events", *TIME_COLUMNS, *IDLE_COLUMNS]


def _breakdown() -> Breakdown:
    row: dict[str, object] = {key: 1.5 for key in TIMES}
    row.update(trace="t.json", rank=0, device=0, device_name="H100", step=3)
    row.update(window_from="cpu_step", events=12, internal=99)
    rows = pl.DataFrame([row])
    launches = pl.DataFrame({"trace": ["t.json"], "launches": [4], "mean_us": [2.5]})
    streams = pl.DataFrame({"trace": ["t.json"], "stream": [7], "idle_us": [1.0]})
    return Breakdown(rows, launches, streams, kernel_wait_us=12.5)


EMPTY_JOB = Job(pl.DataFrame({"op": []}), pl.DataFrame({"rank": []}))
JOB = Job(pl.DataFrame({"op": ["all_reduce"], "bytes": [1024]}), pl.DataFrame({"rank": [0, 1]}))


def test_one_trace_has_three_tables_in_order() -> None:
    section = breakdown_section(_breakdown(), EMPTY_JOB)
    assert section.id == "breakdown" and section.kernel_wait_us == 12.5 and section.notes == ()
    assert [title for title, _ in section.tables] == [
        "Time per device and step (µs)",
        "Kernel launches",
        "Idle per stream (µs)",
    ]
    assert [table.id for _, table in section.tables] == [
        "breakdown-time",
        "breakdown-launch",
        "breakdown-streams",
    ]
    assert all(table.top is None for _, table in section.tables)  # a few rows show whole


def test_a_long_table_shows_forty_rows_before_its_toggle() -> None:
    """More than 40 (and the slack) rows: the first 40 show, the rest behind "all" (the
    default, 25, would hide rows a reader of one job's steps wants in view)."""
    result = _breakdown()
    many = pl.concat([result.launches] * 46)
    long = breakdown_section(Breakdown(result.rows, many, result.streams), EMPTY_JOB)
    assert long.tables[1][1].top == 40
    assert len(long.tables[1][1].rows) == 46


def test_the_time_table_shows_the_breakdown_columns_in_order_and_nothing_else() -> None:
    time = breakdown_section(_breakdown(), EMPTY_JOB).tables[0][1]
    assert [column.key for column in time.columns] == TIMES
    assert "internal" not in [column.key for column in time.columns]
    docs = {column.key: column.doc for column in time.columns}
    for key, text in DOCS.items():
        assert docs[key] == text
    assert docs["trace"] == ""


def test_the_launch_and_stream_tables_show_every_column() -> None:
    _, launch, streams = (table for _, table in breakdown_section(_breakdown(), EMPTY_JOB).tables)
    assert [column.key for column in launch.columns] == ["trace", "launches", "mean_us"]
    assert [column.key for column in streams.columns] == ["trace", "stream", "idle_us"]
    assert streams.column("stream")[0] is not None


def test_ranks_add_the_collectives_and_the_ranks() -> None:
    section = breakdown_section(_breakdown(), JOB, id="bd", notes=("a note",))
    assert [title for title, _ in section.tables][3:] == ["Collectives across ranks", "Ranks"]
    assert [table.id for _, table in section.tables] == [
        "bd-time",
        "bd-launch",
        "bd-streams",
        "bd-collectives",
        "bd-ranks",
    ]
    collectives, ranks = section.tables[3][1], section.tables[4][1]
    assert [column.key for column in collectives.columns] == ["op", "bytes"]
    assert len(ranks.rows) == 2
    assert section.id == "bd" and section.notes == ("a note",)


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("idle_us", "total_us − busy_us"),
        ("exposed_comm_us", "communication not overlapped by computation"),
        (
            "window_from",
            "the rule of the window: gpu_annotation, cpu_step, launch_attribution, trace",
        ),
    ],
)
def test_the_page_words_each_definition(key: str, words: str) -> None:
    assert DOCS[key] == words
