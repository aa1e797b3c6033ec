"""A trace in a regular file is read through the compiled decoder's window (issue 33), never
held whole: ``runs``, ``findings`` and ``report`` stream its inventory for the capture checks,
then its events (``gather._streamed_trace``); ``check`` its inventory; ``breakdown``,
``runs --ops`` and ``critical`` its events (``load_timeline``, ``read_kineto_events``,
``gpu_critical.read_trace``).

Each command's output is held to the output it gives when every file is read whole (the
streaming turned off in the same process), on real traces, plain and gzip, one and a job's
ranks together; the whole read is refused meanwhile, so the streaming is what ran.
"""

from __future__ import annotations

import re
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
    import tileprof.model.gather as gather
    import tileprof.model.integrity as integrity

    monkeypatch.setattr(gather, "_streamed_trace", lambda path, checks: None)
    monkeypatch.setattr(timelines, "_streamed_trace", lambda path: None)
    monkeypatch.setattr(integrity, "streamed_trace_checks", lambda path, rules: None)
    monkeypatch.setattr(sources, "streamed_trace", lambda path: None)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("plain", [False, True], ids=["as-written", "gunzipped"])
def test_streamed_commands_say_what_whole_reads_say(
    command: list[str], plain: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = []
    for i, trace in enumerate([*TRACES, *RANKS] if command[0] != "breakdown" else RANKS):
        copy = tmp_path / (f"{i}_{trace.name}".removesuffix(".gz") if plain else trace.name)
        copy.write_bytes(read_bytes(trace) if plain else trace.read_bytes())
        paths.append(copy)
    with monkeypatch.context() as patched:
        _whole_reads_refused(patched, paths)
        streamed = _output(command, paths, tmp_path)
    _streaming_off(monkeypatch)
    assert streamed == _output(command, paths, tmp_path)


def test_the_checks_across_ranks_are_made_from_streamed_inventories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job's ranks, streamed, keep their inventories for the checks across the ranks: the
    ``check`` rows of ``findings`` name both ranks' traces as whole reads do."""
    _whole_reads_refused(monkeypatch, RANKS)
    code, out, err, exc = invoke("findings", *RANKS, "--format", "json")
    assert exc is None and code == 0, err
    assert all(rank.name in out for rank in RANKS)
