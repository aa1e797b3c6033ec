"""One reader (issue 21): each input is opened and read once, however many steps need it.

``builtins.open``/``io.open`` (through which ``tileprof.inputs`` opens every file, and the
JSON dump's mapping opens its file) and ``os.open`` are patched to count the opens of each
input; the commands run in this process.
"""

from __future__ import annotations

import gc
import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.hostile import invoke
from tests.samples import sample, write_dump

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TRACE = FIXTURES / "traces" / "kineto_small.json"
NSYS = FIXTURES / "runs" / "nsys_kern_sum.csv"


def test_the_counter_counts(opens: Counter[Path], tmp_path: Path) -> None:
    """The probe is real: a file opened twice counts 2."""
    path = tmp_path / "x.txt"
    path.write_text("x")
    path.read_text()
    with open(path, "rb"):
        pass
    assert opens[path.resolve()] == 3  # write, read_text, open


@pytest.mark.parametrize("fmt", ["table", "html"])
def test_diff_of_two_gpu_files_opens_each_once(
    opens: Counter[Path], tmp_path: Path, fmt: str
) -> None:
    """``--format html`` adds each side's sha256: taken from the same read. A trace in a
    regular file is decoded by the compiled decoder from its own handle (not counted here);
    Python opens it twice: ``read_input`` (its head and sha256) and the scan for the versions
    it states (``sources.trace_versions``), neither holding it whole."""
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_bytes(TRACE.read_bytes())
    after.write_bytes(TRACE.read_bytes())
    opens.clear()
    code, _, err, exc = invoke("diff", before, after, "--format", fmt, "-o", tmp_path / "out")
    assert exc is None and code == 0, err
    assert opens[before.resolve()] == 2
    assert opens[after.resolve()] == 2


def test_diff_of_a_trace_and_an_nsys_csv_reads_each_once(
    opens: Counter[Path], tmp_path: Path
) -> None:
    trace, nsys = tmp_path / "t.json", tmp_path / "k.csv"
    trace.write_bytes(TRACE.read_bytes())
    nsys.write_bytes(NSYS.read_bytes())
    opens.clear()
    code, _, err, exc = invoke("diff", trace, nsys, "--format", "json")
    assert exc is None and code == 0, err
    assert opens[trace.resolve()] == 2  # read_input and the version scan, as above
    assert opens[nsys.resolve()] == 1


def test_report_of_a_dump_and_a_trace_opens_each_once(opens: Counter[Path], tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 10, "gemm"), sample(1, 5, 10, "copy")])
    trace = tmp_path / "t.json"
    trace.write_bytes(TRACE.read_bytes())
    out = tmp_path / "report.html"
    opens.clear()
    code, _, err, exc = invoke("report", dump, trace, "-o", out)
    assert exc is None and code == 0, err
    assert opens[dump.resolve()] == 1
    assert opens[trace.resolve()] == 1
    page = out.read_text(encoding="utf-8")
    for path in (dump, trace):  # the digests in the header come from that one read
        assert hashlib.sha256(path.read_bytes()).hexdigest() in page


def test_runs_of_a_dump_and_gpu_files_opens_each_once(opens: Counter[Path], tmp_path: Path) -> None:
    """``runs`` shares the report's gatherer: the same one open per file."""
    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 10, "gemm")])
    trace, nsys = tmp_path / "t.json", tmp_path / "k.csv"
    trace.write_bytes(TRACE.read_bytes())
    nsys.write_bytes(NSYS.read_bytes())
    opens.clear()
    code, _, err, exc = invoke("runs", dump, trace, nsys, "--format", "json")
    assert exc is None and code == 0, err
    assert [opens[p.resolve()] for p in (dump, trace, nsys)] == [1, 1, 1]


def test_diff_of_two_tile_dumps_opens_each_once(opens: Counter[Path], tmp_path: Path) -> None:
    before = write_dump(tmp_path / "a.json", [sample(0, 0, 10, "gemm")])
    after = write_dump(tmp_path / "b.json", [sample(0, 0, 12, "gemm")])
    opens.clear()
    code, _, err, exc = invoke("diff", before, after, "--format", "json")
    assert exc is None and code == 0, err
    assert opens[before.resolve()] == opens[after.resolve()] == 1


# ------------------------------------------------- a trace's bytes let go once decoded (issue 33)


def _reads_holding_bytes(path: Path) -> list[Any]:
    """The live reads of ``path`` that still hold its bytes."""
    from tileprof.inputs.sources import FileRead

    return [
        o
        for o in gc.get_objects()
        if isinstance(o, FileRead) and o.path.resolve() == path.resolve() and o.data is not None
    ]


@pytest.mark.parametrize("command", ["runs", "findings", "report"])
def test_a_traces_analyses_run_without_its_bytes(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``runs``, ``findings`` and ``report`` decode a trace, check it, then let its bytes go:
    when its runs and op rows are computed, no read of it holds the file (a 626 MB trace's
    ``runs`` peaked in its op rows with the file still in memory)."""
    import tileprof.analyses.ops as ops
    import tileprof.model.gpu_runs as gpu_runs

    trace = tmp_path / "t.json"
    trace.write_bytes(TRACE.read_bytes())
    holding: list[int] = []
    real_runs, real_rows = gpu_runs.trace_runs_and_op_rows, ops.op_rows

    def runs_seen(*args: Any, **kwargs: Any) -> Any:
        holding.append(len(_reads_holding_bytes(trace)))
        return real_runs(*args, **kwargs)

    def rows_seen(*args: Any, **kwargs: Any) -> Any:
        holding.append(len(_reads_holding_bytes(trace)))
        return real_rows(*args, **kwargs)

    monkeypatch.setattr(gpu_runs, "trace_runs_and_op_rows", runs_seen)
    monkeypatch.setattr(ops, "op_rows", rows_seen)
    out = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    code, _, err, exc = invoke(command, trace, *out)
    assert exc is None and code == 0, err
    assert holding and holding == [0] * len(holding), holding


def test_runs_takes_no_digest_and_the_report_does() -> None:
    """The sha256 is taken only where a command shows it (the report's header, ``diff``)."""
    from tileprof.inputs.sources import read_input

    assert read_input(TRACE, digest=False).sha256 is None
    assert read_input(TRACE).sha256 == hashlib.sha256(TRACE.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "text",
    [
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2',  # cut
        '{"traceEvents": [], "distributedInfo": {"rank": "zero", "world_size": 2}}',
        '{"traceEvents": [], "deviceProperties": [{"id": "0", "name": "A100"}]}',
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -2}]}',
        # the checks refuse the rank, the decoder the devices first
        '{"traceEvents": [], "deviceProperties": 5, "distributedInfo": 5}',
    ],
    ids=["truncated", "rank-as-text", "device-id-as-text", "negative-duration", "both-refuse"],
)
def test_the_checked_commands_word_the_decoders_error(text: str, tmp_path: Path) -> None:
    """A trace's capture checks now run before its events are decoded; a file the decoder
    refuses still ends in the decoder's error, the one ``runs`` (no checks) prints."""
    from tests.hostile import assert_one_line_error

    trace = tmp_path / "t.json"
    trace.write_text(text)
    wording = assert_one_line_error("runs", trace)
    assert assert_one_line_error("findings", trace) == wording
    assert assert_one_line_error("report", trace, "-o", tmp_path / "r.html") == wording
