"""The nsys ``cuda_gpu_kern_sum`` CSV reader called on bytes: each row's figures in µs, the
older layouts' names, and every refusal's place and words."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tileprof.core.errors import InputError
from tileprof.inputs.gpu.nsys import parse

HEADER = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"
OLDER = "Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,StdDev,Name"


def _rows(text: str, **options: Any) -> list[dict[str, Any]]:
    frame = parse("dir/k.csv", text.encode(), **options).frame
    columns = ["target", "source", "kernel", "per", "time_us", "calls", "total_us", "p50_us"]
    columns.append("max_us")
    rows = frame.select(*columns, "metadata").to_dicts()
    return [{**r, "metadata": json.loads(r["metadata"])} for r in rows]  # stored as JSON text


def _error(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    with pytest.raises(InputError) as info:
        parse("k.csv", data)
    return str(info.value)


def test_rows_of_the_current_layout_after_nsys_progress_lines() -> None:
    text = "\n".join(
        [
            "Generating SQLite file report.sqlite",
            "",
            HEADER,
            '60.0,3000,3,1000.0,900.0,800,1300,250.5,"gemm<a, b>"',
            ",,,,,,,,",
            "",
            '40.0,2000,1,2000,2000,2000,2000,nan,"two\nlines"',
            "1,1,1,1,1,1,1,0,last",
        ]
    )
    rows = _rows(text, target="H100")
    assert [(r["source"], r["kernel"]) for r in rows] == [
        ("k.csv: line 4", "gemm<a, b>"),
        ("k.csv: line 7", "two\nlines"),
        ("k.csv: line 9", "last"),
    ]
    first = rows[0]
    assert (first["target"], first["per"]) == ("H100", "call")  # each figure is per call
    assert (first["time_us"], first["calls"], first["total_us"]) == (1.0, 3, 3.0)
    assert (first["p50_us"], first["max_us"]) == (0.9, 1.3)
    assert first["metadata"]["time_percent"] == 60.0
    assert first["metadata"]["min_ns"] == 800
    assert first["metadata"]["stddev_ns"] == 250.5
    assert _rows(text)[0]["target"] == "GPU (nsys)"


def test_an_older_layout_reads_by_its_names_and_lacks_the_median() -> None:
    (row,) = _rows("\n".join([OLDER, "100,5000,2,2500,2000,3000,707.1,k"]))
    assert (row["time_us"], row["p50_us"], row["max_us"]) == (2.5, None, 3.0)
    assert row["metadata"]["stddev_ns"] == 707.1 and row["metadata"]["min_ns"] == 2000
    no_spread = OLDER.replace(",StdDev", "")
    (row,) = _rows("\n".join([no_spread, "100,5000,2,2500,2000,3000,k"]))
    assert row["metadata"]["stddev_ns"] is None


def test_the_64_bit_range_is_inclusive_of_its_top() -> None:
    (row,) = _rows(f"{HEADER}\n1,1,9223372036854775807,1,1,1,1,0,k")
    assert row["calls"] == 2**63 - 1
    assert _error(f"{HEADER}\n1,1,9223372036854775808,1,1,1,1,0,k") == (
        "k.csv: line 2, column 3 (Instances): out of range: 9223372036854775808"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"Time (%),x\n\xff", "byte 11: not UTF-8 text"),
        ("nothing here\n", "line 1: no `Time (%),…` header of a cuda_gpu_kern_sum report"),
        (f"x\n{HEADER},Name\n", "line 2: column 'Name' is named twice"),
        (
            "Time (%),Total Time (ns),Instances,Name",
            "line 1: missing 'Avg (ns)', 'Min (ns)', 'Max (ns)'; expected " + HEADER,
        ),
        (
            HEADER.replace("Max (ns)", "Peak").replace("Instances", "Calls"),
            "line 1: unknown column 'Calls' (column 3); missing 'Instances', 'Max (ns)'; expected",
        ),
        (f"{HEADER}\n1,1,1,1,1,1,1,0", "line 2: 8 fields, expected 9"),
        (f"{HEADER}\n1,1,x,1,1,1,1,0,k", "line 2, column 3 (Instances): not a number: 'x'"),
        (
            f"{HEADER}\n1,1,1,inf,1,1,1,0,k",
            "line 2, column 4 (Avg (ns)): not a finite number: 'inf'",
        ),
        (f"{HEADER}\n1,1,1,1,1,-1,1,0,k", "line 2, column 6 (Min (ns)): out of range: -1"),
        (f"{HEADER}\n1,1,1,1e19,1,1,1,0,k", "line 2, column 4 (Avg (ns)): out of range: 1e19"),
        (
            f'{HEADER}\n1,1,1,1,1,1,1,0,"k\n',
            "line 2: a quoted cell is never closed (truncated file?)",
        ),
        (f'{HEADER}\n1,1,1,1,1,1,1,0,"k"x\n', "line 2: malformed CSV: ',' expected after '\"'"),
    ],
)
def test_a_bad_report_is_refused_at_its_place(text: str | bytes, message: str) -> None:
    assert _error(text).startswith(f"k.csv: {message}")
