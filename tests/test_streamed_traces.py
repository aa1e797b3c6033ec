"""A trace in a regular file is read through the compiled decoder's window (issue 33), never
held whole: ``runs``, ``findings`` and ``report`` stream its inventory for the capture checks,
then its events (``gather._streamed_trace``); ``check`` its inventory; ``breakdown``,
``runs --ops``, ``critical``, ``diff`` and ``trace`` its events (``load_timeline``,
``read_kineto_events``, ``gpu_critical.read_trace``, ``diff_inputs.compare_files``,
``trace.trace_inputs``).

Each command's output is held to the output it gives when every file is read whole (the
streaming turned off in the same process), on real traces, plain and gzip, one and a job's
ranks together; the whole read is refused meanwhile, so the streaming is what ran.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile import invoke
from tileprof.inputs._common import read_bytes

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RANKS = [FIXTURES / "hta" / "sampled_rank-0.json.gz", FIXTURES / "hta" / "sampled_rank-1.json.gz"]
TRACES = [
    FIXTURES / "traces" / "kineto_small.json",
    FIXTURES / "hta" / "nccl_2xA100_rank0.json.gz",
    FIXTURES / "traces" / "h200_train_steps.json.gz",
]
COMMANDS = [
    ["runs", "--format", "json"],
    ["runs", "--ops"],
    ["findings", "--format", "json"],
    ["report"],
    ["breakdown", "--format", "json"],
    ["check"],
    ["critical"],
]
_GENERATED = re.compile(r"<dt>Generated</dt><dd>[^<]*</dd>")


def _output(command: list[str], paths: list[Path], folder: Path) -> str:
    out = ["-o", str(folder / "r.html"), "--force"] if command[0] == "report" else []
    code, stdout, stderr, exc = invoke(*command, *paths, *out)
    assert exc is None and code in (0, 1), stderr  # check: 1 when a check fails
    if command[0] == "report":
        return _GENERATED.sub("", (folder / "r.html").read_text(encoding="utf-8"))
    return f"exit {code}\n{stdout}"


def _whole_reads_refused(monkeypatch: pytest.MonkeyPatch, paths: list[Path]) -> None:
    """Reading any of ``paths`` whole (``decode_content``, which every whole read of a file
    goes through) fails the test."""
    import tileprof.inputs._common as common
    import tileprof.inputs.sources as sources

    real = common.decode_content
    names = {p.resolve() for p in paths}

    def refused(path: Path, data: bytes) -> bytes:
        assert Path(path).resolve() not in names, f"{path} read whole"
        return real(path, data)

    monkeypatch.setattr(common, "decode_content", refused)
    monkeypatch.setattr(sources, "decode_content", refused)


def _streaming_off(monkeypatch: pytest.MonkeyPatch) -> None:
    import tileprof.inputs.sources as sources
    import tileprof.inputs.timelines as timelines
    import tileprof.model.diff_inputs as diff_inputs
    import tileprof.model.gather as gather
    import tileprof.model.integrity as integrity

    monkeypatch.setattr(diff_inputs, "streamed_trace", lambda path: None)
    monkeypatch.setattr(gather, "_streamed_trace", lambda path, checks: None)
    monkeypatch.setattr(timelines, "_streamed_trace", lambda path: None)
    monkeypatch.setattr(integrity, "streamed_trace_checks", lambda path, rules: None)
    monkeypatch.setattr(sources, "streamed_trace", lambda path: None)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("plain", [False, True], ids=["as-written", "gunzipped"])
def test_streamed_commands_say_what_whole_reads_say(
    command: list[str], plain: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traces = [*TRACES, *RANKS] if command[0] != "breakdown" else RANKS
    paths = _copies(traces, tmp_path, plain)
    _assert_streamed_as_whole(_output, command, paths, tmp_path, monkeypatch)


def _copies(traces: list[Path], folder: Path, plain: bool) -> list[Path]:
    """``traces`` copied into ``folder``, as written or (``plain``) gunzipped."""
    paths = []
    for i, trace in enumerate(traces):
        copy = folder / (f"{i}_{trace.name}".removesuffix(".gz") if plain else trace.name)
        copy.write_bytes(read_bytes(trace) if plain else trace.read_bytes())
        paths.append(copy)
    return paths


def _assert_streamed_as_whole(
    output: Callable[[list[str], list[Path], Path], str],
    command: list[str],
    paths: list[Path],
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``command``'s output over ``paths`` with their whole reads refused equals its output
    with the streaming turned off."""
    with monkeypatch.context() as patched:
        _whole_reads_refused(patched, paths)
        streamed = output(command, paths, folder)
    _streaming_off(monkeypatch)
    assert streamed == output(command, paths, folder)


def test_the_checks_across_ranks_are_made_from_streamed_inventories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job's ranks, streamed, keep their inventories for the checks across the ranks: the
    ``check`` rows of ``findings`` name both ranks' traces as whole reads do."""
    _whole_reads_refused(monkeypatch, RANKS)
    code, out, err, exc = invoke("findings", *RANKS, "--format", "json")
    assert exc is None and code == 0, err
    assert all(rank.name in out for rank in RANKS)


PAIR_COMMANDS = [
    ["diff", "--format", "json"],
    ["diff", "--per-op", "--format", "json"],
    ["diff", "--format", "html"],
    ["diff", "--fail-on", "total_us of * may not rise by more than 5%"],
    ["trace"],
    ["trace", "--critical-path"],
]


def _pair_output(command: list[str], paths: list[Path], folder: Path) -> str:
    """``command``'s output over ``paths``: stdout, or the file it writes (HTML without its
    time of writing)."""
    written = folder / ("out.html" if "html" in command else "out.json")
    out = ["-o", str(written)] if command[0] == "trace" or "html" in command else []
    written.unlink(missing_ok=True)
    code, stdout, stderr, exc = invoke(*command, *paths, *out)
    assert exc is None and code in (0, 1, 3), stderr  # diff --fail-on: 1 broken, 3 abstained
    text = written.read_text(encoding="utf-8") if out else ""
    return f"exit {code}\n{stdout}{stderr}{_GENERATED.sub('', text)}"


@pytest.mark.parametrize("command", PAIR_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("plain", [False, True], ids=["as-written", "gunzipped"])
@pytest.mark.parametrize("pair", [RANKS, TRACES[1:]], ids=["ranks", "traces"])
def test_diff_and_trace_of_streamed_traces_say_what_whole_reads_say(
    command: list[str],
    plain: bool,
    pair: list[Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths = _copies(pair, tmp_path, plain)
    _assert_streamed_as_whole(_pair_output, command, paths, tmp_path, monkeypatch)


def _versioned_trace(runtime: str, driver: str) -> bytes:
    """A one-kernel trace stating its CUDA versions as PyTorch writes them: the runtime before
    ``traceEvents``, the driver after it."""
    kernel = (
        '{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 2, "dur": 5,'
        ' "args": {"device": 0, "stream": 7, "correlation": 1}}'
    )
    return (
        f'{{"cuda_runtime_version": {runtime}, "traceEvents": [{kernel}],'
        f' "cuda_driver_version": "{driver}"}}'
    ).encode()


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_a_streamed_diff_states_the_versions_of_each_side(
    gzipped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate abstains over the two sides' CUDA runtimes as it does from whole reads: the
    versions are scanned from the file, whose text the decoder's window never held whole."""
    import gzip

    paths = []
    for name, runtime in (("before", "12010"), ("after", "12040")):
        text = _versioned_trace(runtime, "12.4")
        path = tmp_path / (f"{name}.json.gz" if gzipped else f"{name}.json")
        path.write_bytes(gzip.compress(text) if gzipped else text)
        paths.append(path)
    _whole_reads_refused(monkeypatch, paths)
    gate = ["diff", *paths, "--fail-on", "total_us of * may not rise by more than 5%"]
    code, out, _err, exc = invoke(*gate)
    assert exc is None and code == 3
    assert "abstained, no verdict: the two sides differ in cudaRuntime" in out  # the table's
    code, _out, err, exc = invoke("diff", paths[0], paths[0], "--fail-on", gate[-1])
    assert (code, exc) == (0, None), err


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 16, 31, 32, 33, 64, 100, 4096])
def test_versions_read_in_chunks_are_those_of_the_whole_text(
    chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk size cuts the keys and values at other places; the look-back (shrunk here to
    40 bytes, longer than any match below) finds each version whole and once."""
    import tileprof.inputs.sources as sources

    monkeypatch.setattr(sources, "VERSION_TAIL_BYTES", 40)
    filler = '{"name": "x_version", "ts": 1}, ' * 3  # holds "_version", matches nothing
    text = (
        f'{{"cuda_runtime_version": 12010, "traceEvents": [{filler}{filler}],'
        f' "hip_runtime_version" :\n "6.2.1", "x": [{filler}],'
        f' "cuda_driver_version": "12.4", "hip_driver_version":60342134}}'
    )
    path = tmp_path / "t.json"
    path.write_text(text)
    assert sources.trace_versions(path, chunk) == [
        (b"cuda_runtime_version", b"12010"),
        (b"hip_runtime_version", b"6.2.1"),
        (b"cuda_driver_version", b"12.4"),
        (b"hip_driver_version", b"60342134"),
    ]
