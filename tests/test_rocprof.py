"""rocprofv3 kernel traces, held to a pandas re-aggregation; both column sets.

``fixtures/real/kernel_trace.csv`` is the older layout (``Private_Segment_Size``,
``Group_Segment_Size``, integer agent ids); the newer layout (``LDS_Block_Size``,
``Scratch_Size``, register counts, ``Agent N``) is the same dispatches rewritten here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli
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
        agent = int(r["target"].removeprefix("AMD GPU (agent ").rstrip(")"))
        count, total, longest = want.loc[(agent, r["kernel"])]
        assert r["calls"] == count
        assert r["total_us"] == pytest.approx(total / 1000, rel=1e-12)
        assert r["max_us"] == pytest.approx(longest / 1000, rel=1e-12)
    return runs


def test_older_column_set_matches_pandas() -> None:
    runs = check_against_pandas(TRACE)
    assert runs["target"].unique().to_list() == ["AMD GPU (agent 2)"]
    meta = json.loads(runs["metadata"][0])
    assert meta["grid_work_items"] == "1024x1024x1" and meta["workgroup"] == "64x1x1"
    assert meta["lds_bytes"] == 0 and meta["scratch_bytes"] == 0


def test_newer_column_set_matches_pandas_and_agents_are_targets(tmp_path: Path) -> None:
    runs = check_against_pandas(newer_layout(tmp_path))
    assert sorted(runs["target"].unique().to_list()) == ["AMD GPU (agent 2)", "AMD GPU (agent 3)"]
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
