"""rocprofv3 kernel traces, held to a pandas re-aggregation; both column sets.

``fixtures/real/kernel_trace.csv`` is the older layout (``Private_Segment_Size``,
``Group_Segment_Size``, integer agent ids); the newer layout (``LDS_Block_Size``,
``Scratch_Size``, register counts, ``Agent N``) is the same dispatches rewritten here.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.core.errors import InputError
from tileprof.core.gpu_events import GPU_EVENT_COLUMNS, GPU_EVENT_SCHEMA
from tileprof.inputs.gpu.rocprof import gpu_events
from tileprof.inputs.sources import detect_file_kind, load_runs

TRACE = Path(__file__).resolve().parent.parent / "fixtures" / "real" / "kernel_trace.csv"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def newer_layout(tmp_path: Path) -> Path:
    frame = pd.read_csv(TRACE)
    frame = frame.rename(
        columns={"Private_Segment_Size": "Scratch_Size", "Group_Segment_Size": "LDS_Block_Size"}
    )
    frame["Agent_Id"] = "Agent " + frame["Agent_Id"].astype(str)
    frame.loc[frame.index % 2 == 1, "Agent_Id"] = "Agent 3"
    frame["VGPR_Count"] = 12
    frame["Accum_VGPR_Count"] = 4
    frame["SGPR_Count"] = 48
    path = tmp_path / "new_kernel_trace.csv"
    frame.to_csv(path, index=False)
    return path


def check_against_pandas(path: Path) -> pl.DataFrame:
    assert detect_file_kind(path)[0] == "rocprofv3 kernel trace"
    runs = load_runs(path).frame
    frame = pd.read_csv(path)
    frame["agent"] = frame["Agent_Id"].astype(str).str.extract(r"(\d+)$")[0].astype(int)
    frame["dur"] = frame["End_Timestamp"] - frame["Start_Timestamp"]
    want = frame.groupby(["agent", "Kernel_Name"])["dur"].agg(["count", "sum", "max"])
    assert runs.height == len(want)
    for r in runs.iter_rows(named=True):
        assert r["target"] == "AMD GPU"  # the agents of one trace are one target
        agent = int(r["device"].removeprefix("agent "))
        count, total, longest = want.loc[(agent, r["kernel"])]
        assert r["calls"] == count
        assert r["total_us"] == pytest.approx(total / 1000, rel=1e-12)
        assert r["max_us"] == pytest.approx(longest / 1000, rel=1e-12)
    return runs


def test_older_column_set_matches_pandas() -> None:
    runs = check_against_pandas(TRACE)
    assert runs["device"].unique().to_list() == ["agent 2"]
    meta = json.loads(runs["metadata"][0])
    assert meta["grid_work_items"] == "1024x1024x1" and meta["workgroup"] == "64x1x1"
    assert meta["lds_bytes"] == 0 and meta["scratch_bytes"] == 0


def test_newer_column_set_matches_pandas_and_agents_are_devices_of_one_target(
    tmp_path: Path,
) -> None:
    runs = check_against_pandas(newer_layout(tmp_path))
    assert runs["target"].unique().to_list() == ["AMD GPU"]
    assert sorted(runs["device"].unique().to_list()) == ["agent 2", "agent 3"]
    meta = json.loads(runs["metadata"][0])
    assert (meta["vgpr"], meta["accum_vgpr"], meta["sgpr"]) == (12, 4, 48)


def test_gpu_event_frame() -> None:
    events = gpu_events(TRACE, TRACE.read_bytes())
    assert events.schema == pl.Schema(GPU_EVENT_SCHEMA)
    assert {c.name for c in GPU_EVENT_COLUMNS if not c.nullable} <= {
        c for c in events.columns if events[c].null_count() == 0
    }
    assert events.height == len(pd.read_csv(TRACE))
    assert events["start_ns"].is_sorted()


def test_truncated_and_garbled_traces_are_one_line(tmp_path: Path) -> None:
    data = TRACE.read_bytes()
    cut = tmp_path / "cut.csv"
    cut.write_bytes(data[: len(data) - 30])
    garbled = tmp_path / "garbled.csv"
    garbled.write_bytes(data.replace(b",2414192765369494,", b",2414192765x69494,", 1))
    for path, words in ((cut, "(truncated file?)"), (garbled, "line 2, column 'End_Timestamp'")):
        code, _, err = run("runs", str(path))
        assert code == 2 and err.count("\n") == 1 and words in err, err


# --- hostile traces (issue 32): one line naming the place, or a correct read -------------

LONG = "void gemm<" + "cute::tuple<int, int>, " * 9000 + ">(float*)"
"""A C++ template name of about 210,000 characters (Python's csv cell limit is 131,072)."""


def edited(tmp_path: Path, line: int, column: str, value: str, name: str = "edit.csv") -> Path:
    """The trace with one cell (``line`` counts the header as 1) set to ``value``, quoted."""
    rows = list(csv.reader(io.StringIO(TRACE.read_text(), newline="")))
    rows[line - 1][rows[0].index(column)] = value
    out = io.StringIO(newline="")
    csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n").writerows(rows)
    path = tmp_path / name
    path.write_text(out.getvalue())
    return path


def one_line(path: Path, *words: str) -> str:
    code, _, err = run("runs", str(path))
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"tileprof: error: {path}"), err
    assert all(w in err for w in words), err
    return err


@pytest.mark.parametrize("end", [b"\r", b"\r\n"])
def test_bare_cr_and_crlf_line_ends_read_as_lf(tmp_path: Path, end: bytes) -> None:
    path = tmp_path / TRACE.name
    path.write_bytes(TRACE.read_bytes().replace(b"\n", end))
    assert load_runs(path).frame.equals(load_runs(TRACE).frame)


def test_header_repeated_or_a_column_named_twice_is_named(tmp_path: Path) -> None:
    lines = TRACE.read_bytes().split(b"\n")
    again = tmp_path / "again.csv"
    again.write_bytes(b"\n".join([*lines[:4], lines[0], *lines[4:]]))
    one_line(again, "line 5: the header again")
    twice = tmp_path / "twice.csv"
    twice.write_bytes(b"\n".join(ln + b',"agent_id"' if ln else ln for ln in lines))
    one_line(twice, "line 1: column 'agent_id' is named twice")


@pytest.mark.parametrize(
    "column", ["Agent_Id", "Correlation_Id", "Workgroup_Size_X", "Private_Segment_Size"]
)
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "9" * 25, "2.5"])
def test_nan_inf_and_huge_ids_name_the_line(tmp_path: Path, column: str, value: str) -> None:
    one_line(edited(tmp_path, 4, column, value), f"line 4, column '{column}'")


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "", "-5", "1e400", "2.5", "9" * 25])
@pytest.mark.parametrize("column", ["Start_Timestamp", "End_Timestamp"])
def test_non_finite_negative_or_empty_timestamps_are_errors(
    tmp_path: Path, column: str, value: str
) -> None:
    one_line(edited(tmp_path, 3, column, value), f"line 3, column '{column}'")


def test_a_start_timestamp_of_zero_is_read(tmp_path: Path) -> None:
    """0 is a timestamp like any other (issue 38: refusing it, `minimum=1`, passed every
    test): the kernel of line 3 then lasts its end timestamp, in ns."""
    rows = list(csv.reader(io.StringIO(TRACE.read_text(), newline="")))
    end = int(rows[2][rows[0].index("End_Timestamp")])
    runs = load_runs(edited(tmp_path, 3, "Start_Timestamp", "0")).frame
    assert runs["max_us"].max() == pytest.approx(end / 1000, rel=1e-12)


@pytest.mark.parametrize("line", [2, 5, 9])
def test_a_long_template_name_is_read(tmp_path: Path, line: int) -> None:
    runs = load_runs(edited(tmp_path, line, "Kernel_Name", LONG)).frame
    assert LONG in runs["kernel"].to_list()
    assert runs["calls"].sum() == len(pd.read_csv(TRACE))


def test_a_row_cut_short_in_the_middle_is_named(tmp_path: Path) -> None:
    """The row's kernel must not become a nameless kernel while the real one loses a call."""
    lines = TRACE.read_bytes().split(b"\n")
    cut = tmp_path / "cut.csv"
    fields = lines[4].split(b",")[:6]  # up to the Kernel_Name (no commas before it)
    cut.write_bytes(b"\n".join([*lines[:4], b",".join(fields), *lines[5:]]))
    one_line(cut, "line 5:", "a row cut short")


@pytest.mark.parametrize("keep", [1, 40, 150, -1])
def test_a_file_cut_inside_its_header_is_named(tmp_path: Path, keep: int) -> None:
    header = TRACE.read_bytes().split(b"\n")[0]
    path = tmp_path / "header.csv"
    path.write_bytes(header[:keep] if keep > 0 else header + b"\n")
    code, _, err = run("runs", str(path))
    assert code == 2 and err.count("\n") == 1 and "line 1" in err, err


def test_a_quoted_newline_in_the_last_row_is_read(tmp_path: Path) -> None:
    last = len(TRACE.read_text().splitlines())
    runs = load_runs(edited(tmp_path, last, "Kernel_Name", "multi\nline<\u2028>")).frame
    assert "multi\nline<\u2028>" in runs["kernel"].to_list()
    assert runs["calls"].sum() == last - 1


# --- a trace written by hand (issue 38): every figure stated from the cells below ----------

HAND = (
    "Kind,Agent_Id,Queue_Id,Stream_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp,"
    "LDS_Block_Size,Scratch_Size,Vgpr_Count,Accum_VGPR_Count,SGPR_Count,"
    "Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z\n"
    "KERNEL_DISPATCH,Agent 1,5,7,gemm,11,1000,3000,512,0,32,8,16,64,2,1,1024,4,1\n"
    " KERNEL_DISPATCH ,Agent 3,5,7,ncclAllReduce,13,2000,2500,0,0,8,0,8,32,1,1,32,1,1\n"
    "MEMORY_COPY,Agent 1,5,7,copy,14,100,200,0,0,0,0,0,1,1,1,1,1,1\n"
    "KERNEL_DISPATCH,Agent 1,6,9,gemm,12,4000,9000,1024,16,24,4,40,128,1,1,2048,1,1\n"
    "KERNEL_DISPATCH,Agent 3,6,9,tiny,15,9007199254740993,9007199254740995,0,0,4,0,4,1,1,1,1,1,1\n"
)
"""Two agents; gemm twice on agent 1 (2 µs on stream 7, then 5 µs on stream 9), an NCCL
kernel on agent 3 (0.5 µs), a copy row (not a dispatch: left out), and a 2 ns kernel whose
timestamps are past 2^53 (a Float64 would read 9007199254740992 and ...996: 4 ns)."""


def test_a_hand_written_trace_gives_each_dispatch_and_run_by_hand(tmp_path: Path) -> None:
    from tileprof.inputs.gpu.rocprof import parse, read_dispatches

    path = tmp_path / "hand_kernel_trace.csv"
    path.write_text(HAND)
    events = read_dispatches(path, HAND.encode())
    assert events.select(
        "device", "stream", "kind", "start_ns", "end_ns", "name", "correlation"
    ).rows() == [
        (1, 7, "kernel", 1000, 3000, "gemm", 11),
        (3, 7, "comm", 2000, 2500, "ncclAllReduce", 13),
        (1, 9, "kernel", 4000, 9000, "gemm", 12),
        (3, 9, "kernel", 9007199254740993, 9007199254740995, "tiny", 15),
    ]
    figures = ["short_name", "lds_bytes", "scratch_bytes", "vgpr", "accum_vgpr", "sgpr"]
    assert events.select(*figures, "grid", "block").rows() == [
        ("gemm", 512, 0, 32, 8, 16, "1024x4x1", "64x2x1"),
        ("ncclAllReduce", 0, 0, 8, 0, 8, "32x1x1", "32x1x1"),
        ("gemm", 1024, 16, 24, 4, 40, "2048x1x1", "128x1x1"),
        ("tiny", 0, 0, 4, 0, 4, "1x1x1", "1x1x1"),
    ]
    parsed = parse(path, HAND.encode())
    assert parsed.metadata == {"agents": [1, 3], "dispatches": 4}
    runs = parsed.frame
    shown = ["target", "device", "source", "kernel", "calls", "total_us", "p50_us", "p95_us"]
    assert runs.select(*shown, "max_us", "time_us").rows() == [
        (
            "AMD GPU",
            "agent 1",
            "hand_kernel_trace.csv: agent 1",
            "gemm",
            2,
            7.0,
            2.0,
            5.0,
            5.0,
            3.5,
        ),
        (
            "AMD GPU",
            "agent 3",
            "hand_kernel_trace.csv: agent 3",
            "ncclAllReduce",
            1,
            0.5,
            0.5,
            0.5,
            0.5,
            0.5,
        ),
        (
            "AMD GPU",
            "agent 3",
            "hand_kernel_trace.csv: agent 3",
            "tiny",
            1,
            0.002,
            0.002,
            0.002,
            0.002,
            0.002,
        ),
    ]
    gemm, nccl, tiny = (json.loads(m) for m in runs["metadata"])
    # the largest of each resource over the kernel's dispatches; grid and block of the first
    assert gemm == {
        "category": "kernel",
        "streams": "7,9",
        "grid_work_items": "1024x4x1",
        "workgroup": "64x2x1",
        "lds_bytes": 1024,
        "scratch_bytes": 16,
        "vgpr": 32,
        "accum_vgpr": 8,
        "sgpr": 40,
    }
    assert nccl["category"] == "kernel" and nccl["streams"] == "7"
    assert tiny["grid_work_items"] == "1x1x1" and tiny["vgpr"] == 4


def test_a_kernel_that_ends_before_it_starts_is_named(tmp_path: Path) -> None:
    """Line 3's subtract_kernel starts at 2414192765424862: an end 1 ns before is refused,
    naming the kernel (a name past 120 characters shortened to 120)."""
    path = edited(tmp_path, 3, "End_Timestamp", "2414192765424861")
    one_line(path, "kernel 'subtract_kernel(float*, float const*, float const*, int, int)'")
    with pytest.raises(InputError) as caught:
        gpu_events(path, path.read_bytes())
    assert str(caught.value) == (
        f"{path}: kernel 'subtract_kernel(float*, float const*, float const*, int, int)': "
        "ends before it starts"
    )
    rows = list(csv.reader(io.StringIO(path.read_text(), newline="")))
    rows[2][rows[0].index("Kernel_Name")] = LONG
    long = tmp_path / "long.csv"
    long.write_text("\n".join(",".join(f'"{c}"' for c in r) for r in rows) + "\n")
    with pytest.raises(InputError) as caught:
        gpu_events(long, long.read_bytes())
    where = caught.value.where or ""
    assert len(where) == len("kernel ''") + 120 and "…" in where
    assert where.startswith("kernel 'void gemm<cute::tuple<int, int>, ")


def test_the_agent_column_is_named_as_the_file_spells_it(tmp_path: Path) -> None:
    data = edited(tmp_path, 4, "Agent_Id", "GPU x").read_bytes()
    path = tmp_path / "lower.csv"
    path.write_bytes(data.replace(b'"Agent_Id"', b'"agent_id"', 1))
    with pytest.raises(InputError) as caught:  # the reader's own case folding
        gpu_events(path, path.read_bytes())
    assert str(caught.value) == f"{path}: line 4, column 'agent_id': not an agent: 'GPU x'"


def test_dispatches_of_one_start_and_end_keep_the_files_order(tmp_path: Path) -> None:
    head = "Kind,Agent_Id,Kernel_Name,Start_Timestamp,End_Timestamp\n"
    rows = [f"KERNEL_DISPATCH,1,{k},100,200\n" for k in ("zeta", "alpha", "mid", "beta")]
    data = (head + "".join(rows) + "KERNEL_DISPATCH,1,first,50,60\n").encode()
    events = gpu_events(tmp_path / "ties.csv", data)
    assert events["name"].to_list() == ["first", "zeta", "alpha", "mid", "beta"]


def test_dispatches_without_an_agent_keep_their_run_and_resources(tmp_path: Path) -> None:
    """An empty Agent_Id is no agent (device null): its kernel's row stays, with the largest
    LDS of its dispatches (512 and 64 bytes: 512)."""
    from tileprof.inputs.gpu.rocprof import parse

    data = (
        b"Kind,Agent_Id,Kernel_Name,Start_Timestamp,End_Timestamp,LDS_Block_Size\n"
        b"KERNEL_DISPATCH,,k,1000,3000,512\n"
        b"KERNEL_DISPATCH,,k,5000,6000,64\n"
    )
    parsed = parse(tmp_path / "none.csv", data)
    assert parsed.metadata == {"agents": [], "dispatches": 2}
    row = parsed.frame.row(0, named=True)
    assert parsed.frame.height == 1 and row["device"] is None and row["calls"] == 2
    assert row["total_us"] == pytest.approx(3.0)
    assert json.loads(row["metadata"])["lds_bytes"] == 512


def test_an_agents_target() -> None:
    from tileprof.inputs.gpu.rocprof import agent_target

    assert agent_target(None) == "AMD GPU"
    assert agent_target(2) == "AMD GPU (agent 2)"


def test_a_header_in_another_case_is_detected_and_read_as_the_reader_matches_it(
    tmp_path: Path,
) -> None:
    """The reader matches column names without regard to case; detection must too, or the
    same file is "unknown format" before the reader could read it."""
    lines = TRACE.read_text().splitlines(keepends=True)
    want = load_runs(TRACE).frame
    for spelled in (str.lower, str.upper):
        path = tmp_path / f"{spelled.__name__}_kernel_trace.csv"
        path.write_text(spelled(lines[0]) + "".join(lines[1:]))
        assert detect_file_kind(path)[0] == "rocprofv3 kernel trace"
        runs = load_runs(path).frame
        assert runs.select("kernel", "calls", "total_us", "max_us").equals(
            want.select("kernel", "calls", "total_us", "max_us")
        )


def test_a_header_after_a_byte_order_mark_and_spaces_is_detected_and_read(tmp_path: Path) -> None:
    """A byte-order mark and then a space before the first column name: the file's content
    loses the mark before detection (``_common.check_encoding``), and detection and the reader
    strip the names alike, so the file is recognised and read as without them."""
    lines = TRACE.read_text().splitlines(keepends=True)
    want = load_runs(TRACE).frame.select("kernel", "calls", "total_us", "max_us")
    names = next(csv.reader([lines[0]]))
    header = ", ".join(names) + "\n"  # unquoted: a space before a quote keeps the quote
    path = tmp_path / "bom_kernel_trace.csv"
    path.write_bytes(b"\xef\xbb\xbf " + (header + "".join(lines[1:])).encode())
    assert detect_file_kind(path)[0] == "rocprofv3 kernel trace"
    assert load_runs(path).frame.select("kernel", "calls", "total_us", "max_us").equals(want)
