"""A job's ranks read on threads and on a dask cluster (``model.engines``; issue 33): every
engine gives the answer a plain loop over the files gives, errors included.

The reference is the analyses run once over every timeline read one after another
(``breakdown``, ``jobs``), and, for ``runs`` and ``report``, the same command with the engine's
map replaced by a plain loop. The dask tests start a local cluster of two worker processes.
"""

from __future__ import annotations

import gzip
import json
import pickle
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from tileprof.analyses.collectives import jobs
from tileprof.analyses.gpu_breakdown import breakdown
from tileprof.commands.cli import cli
from tileprof.core.errors import InputError
from tileprof.inputs.timelines import load_timeline
from tileprof.model import engines
from tileprof.model.breakdown import trace_breakdown
from tileprof.model.engines import Engine, map_ordered

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RANKS = [FIXTURES / "hta" / "sampled_rank-0.json.gz", FIXTURES / "hta" / "sampled_rank-1.json.gz"]
OTHERS = [
    FIXTURES / "hta" / "nccl_2xA100_rank0.json.gz",
    FIXTURES / "traces" / "h200_train_steps.json.gz",
    FIXTURES / "real" / "h100_2gpu_1s.sqlite",
]


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def _plain_loop(
    function: Callable[[Any], Any], items: Sequence[Any], _engine: Any = None
) -> list[Any]:
    return [function(item) for item in items]


def test_threads_give_the_breakdown_and_jobs_of_a_plain_loop() -> None:
    paths = [*RANKS, *OTHERS]
    timelines = [load_timeline(p) for p in paths]
    found = trace_breakdown(paths, engine=Engine("threads"))
    whole = breakdown(timelines)
    job = jobs(timelines)
    for ours, theirs in (
        (found.breakdown.rows, whole.rows),
        (found.breakdown.launches, whole.launches),
        (found.breakdown.streams, whole.streams),
        (found.job.collectives, job.collectives),
        (found.job.ranks, job.ranks),
    ):
        assert ours.equals(theirs, null_equal=True)
    assert found.job.collectives.height > 0  # the two sampled ranks' collectives matched


def test_map_ordered_keeps_order_and_raises_the_first_failure_in_order() -> None:
    def slow_first(value: int) -> int:
        if value in (2, 3):
            raise ValueError(f"bad {value}")
        return value * 10

    assert map_ordered(lambda v: v * 10, list(range(50)), Engine("threads")) == [
        v * 10 for v in range(50)
    ]
    with pytest.raises(ValueError, match="bad 2"):
        map_ordered(slow_first, [0, 1, 2, 3, 4], Engine("threads"))


def test_the_first_bad_file_in_command_line_order_is_named(tmp_path: Path) -> None:
    first = tmp_path / "a.json"
    second = tmp_path / "b.json"
    first.write_text('{"traceEvents": [')
    second.write_text("not json")
    result = _invoke("breakdown", str(RANKS[0]), str(first), str(second))
    assert result.exit_code == 2
    assert "a.json" in result.stderr and "b.json" not in result.stderr


def test_traces_that_share_a_file_name_are_named_in_full(tmp_path: Path) -> None:
    for rank, source in enumerate(RANKS):
        folder = tmp_path / f"rank{rank}"
        folder.mkdir()
        shutil.copy(source, folder / "trace.json.gz")
    paths = [tmp_path / "rank0" / "trace.json.gz", tmp_path / "rank1" / "trace.json.gz"]
    found = trace_breakdown(paths)
    assert found.breakdown.rows.get_column("trace").unique(maintain_order=True).to_list() == [
        str(p) for p in paths
    ]
    assert found.job.ranks.get_column("trace").to_list() == [str(p) for p in paths]


def test_a_rank_given_twice_names_both_files(tmp_path: Path) -> None:
    copy = tmp_path / "again.json.gz"
    shutil.copy(RANKS[0], copy)
    with pytest.raises(InputError, match="given twice") as raised:
        trace_breakdown([RANKS[0], RANKS[1], copy])
    assert raised.value.path == "again.json.gz"


def test_input_errors_survive_pickling_as_a_worker_returns_them() -> None:
    error = InputError("trace.json", "$.traceEvents[3].ts", "not a number")
    back = pickle.loads(pickle.dumps(error))
    assert (type(back), back.path, back.where, back.message, str(back)) == (
        InputError,
        error.path,
        error.where,
        error.message,
        str(error),
    )


@pytest.mark.parametrize(
    "args",
    [
        ["breakdown", "--format", "json", *map(str, [*RANKS, *OTHERS])],
        ["runs", "--format", "json", *map(str, [*RANKS, *OTHERS])],
    ],
    ids=["breakdown", "runs"],
)
def test_threads_answer_as_a_plain_loop_does(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    threaded = _invoke(*args)
    assert threaded.exit_code == 0, threaded.stderr
    monkeypatch.setattr(engines, "map_ordered", _plain_loop)
    import tileprof.model.breakdown as model_breakdown
    import tileprof.model.gather as gather

    monkeypatch.setattr(model_breakdown, "map_ordered", _plain_loop)
    monkeypatch.setattr(gather, "map_ordered", _plain_loop)
    looped = _invoke(*args)
    assert looped.exit_code == 0, looped.output
    assert threaded.stdout == looped.stdout


def test_scheduler_needs_the_dask_engine() -> None:
    result = _invoke("breakdown", "--scheduler", "tcp://127.0.0.1:1", str(RANKS[0]))
    assert result.exit_code == 2
    assert "--scheduler needs --engine dask" in result.stderr


def test_an_unreachable_scheduler_is_one_line() -> None:
    pytest.importorskip("distributed")
    result = _invoke(
        "breakdown", "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9", str(RANKS[0])
    )
    assert result.exit_code == 2
    assert "cannot reach the dask scheduler" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def _shifted_ranks(tmp_path: Path, count: int) -> list[Path]:
    """``count`` rank traces of one job: the sampled rank 0 renumbered, each shifted in time."""
    with gzip.open(RANKS[0], "rt") as handle:
        document = json.load(handle)
    paths = []
    for rank in range(count):
        copy = dict(document)
        copy["distributedInfo"] = dict(document["distributedInfo"], rank=rank, world_size=count)
        copy["traceEvents"] = [
            dict(e, ts=e["ts"] + 3 * rank) if "ts" in e else e for e in document["traceEvents"]
        ]
        path = tmp_path / f"rank{rank}.json"
        path.write_text(json.dumps(copy))
        paths.append(path)
    return paths


def test_dask_workers_give_the_answer_of_threads(tmp_path: Path) -> None:
    """Each worker reads its own ranks and returns its part; the parts combine to the answer
    threads give, byte for byte, and a bad file is the same one line."""
    pytest.importorskip("distributed")
    paths = [str(p) for p in _shifted_ranks(tmp_path, 4)]
    threads = _invoke("breakdown", "--format", "json", *paths)
    dask = _invoke("breakdown", "--format", "json", "--engine", "dask", *paths)
    assert threads.exit_code == dask.exit_code == 0, dask.output
    assert dask.stdout == threads.stdout
    document = json.loads(dask.stdout)
    assert {row["ranks"] for row in document["collectives"]} == {4}
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "ts": "x"')
    failed = _invoke("runs", "--engine", "dask", paths[0], str(bad))
    assert failed.exit_code == 2
    assert failed.stderr.strip().count("\n") == 0 and "bad.json" in failed.stderr


def test_report_reads_its_files_on_dask_as_on_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")  # the page's date: the same on both
    paths = [str(p) for p in _shifted_ranks(tmp_path, 2)]
    pages = []
    for engine in ("threads", "dask"):
        out = tmp_path / f"{engine}.html"
        result = _invoke("report", "--engine", engine, "-o", str(out), *paths)
        assert result.exit_code == 0, result.output
        pages.append(out.read_text())
    # the page names the command line that made it; everything else is the same
    assert _without_command(pages[0]) == _without_command(pages[1])


def _without_command(page: str) -> str:
    return page.replace(" --engine dask", "")


def test_frames_of_one_engine_are_equal_frames(tmp_path: Path) -> None:
    """A guard on the comparison above: two different inputs do not compare equal."""
    a = trace_breakdown([RANKS[0]]).breakdown.rows
    b = trace_breakdown([RANKS[1]]).breakdown.rows
    assert not a.equals(b)
    assert isinstance(a, pl.DataFrame)
