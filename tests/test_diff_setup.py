"""``diff`` says first when its two sides ran on different setups (device, clock, tile count,
the software a trace states), in every format, with or without a gate: a change between an H100
and an MI300X is the device's as much as the code's, and a reader of the headline must know it
before reading it. Before, only ``--fail-on`` said so (as its abstention)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from markupsafe import escape

from tests.samples import sample, write_dump
from tileprof.commands.cli import cli

SAMPLES = [sample(0, 0, 100, "gemm"), sample(1, 0, 80, "softmax")]
NOTE = (
    "not the same setup: the two sides differ in clockHz 1000000 → 1350000, tileCount 16 → 32; "
    "every change below is the setup's as much as the code's"
)


def _dumps(tmp_path: Path, *, same: bool = False) -> list[str]:
    before = write_dump(tmp_path / "before.json", SAMPLES, clockHz=1_000_000, tileCount=16)
    after = write_dump(
        tmp_path / "after.json",
        SAMPLES,
        clockHz=1_000_000 if same else 1_350_000,
        tileCount=16 if same else 32,
    )
    return [str(before), str(after)]


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["diff", *args])
    return result.exit_code, result.stdout


def test_the_table_says_it_first(tmp_path: Path) -> None:
    code, out = _run(*_dumps(tmp_path))
    assert code == 0
    assert out.splitlines()[0] == NOTE


def test_json_names_each_field_that_differs(tmp_path: Path) -> None:
    code, out = _run(*_dumps(tmp_path), "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["setup_differs"] == ["clockHz 1000000 → 1350000", "tileCount 16 → 32"]
    assert "abstained" not in document


@pytest.mark.parametrize(("fmt", "expected"), [("markdown", f"**{NOTE}**"), ("html", None)])
def test_markdown_and_html_say_it_before_the_figures(
    tmp_path: Path, fmt: str, expected: str | None
) -> None:
    out_path = tmp_path / f"diff.{fmt}"
    code, _ = _run(*_dumps(tmp_path), "--format", fmt, "-o", str(out_path))
    assert code == 0
    text = out_path.read_text()
    if expected is not None:
        assert text.splitlines()[2] == expected
        return
    note = f'<p class="setup-note">{escape("N" + NOTE[1:])}.</p>'
    assert note in text
    assert text.index(note) < text.index('<p class="lead">')


def test_a_gate_that_abstains_for_it_says_it_once(tmp_path: Path) -> None:
    code, out = _run(*_dumps(tmp_path), "--fail-on", "phaseCycles may not rise by more than 5%")
    assert code == 3
    first = out.splitlines()[0]
    assert first == (
        "abstained, no verdict: the two sides differ in clockHz 1000000 → 1350000, "
        "tileCount 16 → 32"
    )
    assert "not the same setup" not in out


def test_judged_anyway_it_is_still_said_first(tmp_path: Path) -> None:
    gate = ("--fail-on", "phaseCycles may not rise by more than 5%", "--allow-different")
    code, out = _run(*_dumps(tmp_path), *gate)
    assert code == 0
    assert out.splitlines()[0] == NOTE


def test_the_same_setup_says_nothing(tmp_path: Path) -> None:
    paths = _dumps(tmp_path, same=True)
    _, table = _run(*paths)
    _, document = _run(*paths, "--format", "json")
    assert "not the same setup" not in table
    assert "setup_differs" not in json.loads(document)


def test_a_file_or_csv_output_says_it_on_stderr(tmp_path: Path) -> None:
    """CSV is data with no place for a sentence, and a file is not what a reader sees: the
    note goes to stderr too (once, and not when the gate judged under --allow-different,
    whose own note says it)."""
    out = tmp_path / "diff.csv"
    result = CliRunner().invoke(cli, ["diff", *_dumps(tmp_path), "--format", "csv", "-o", str(out)])
    assert result.exit_code == 0
    assert result.stderr == f"tileprof: note: {NOTE}\n"
    assert "not the same setup" not in out.read_text()
    gate = ("--fail-on", "phaseCycles may not rise by more than 5%", "--allow-different")
    judged = CliRunner().invoke(cli, ["diff", *_dumps(tmp_path), *gate, "--format", "json"])
    assert judged.stderr.count("the two sides differ in") == 1
    assert judged.stderr.startswith("tileprof: note: judged under --allow-different: ")
    again = tmp_path / "again.csv"
    alone = CliRunner().invoke(
        cli, ["diff", *_dumps(tmp_path), "--allow-different", "--format", "csv", "-o", str(again)]
    )  # no gate: nothing was judged under it, and the note stays
    assert (alone.exit_code, alone.stderr) == (0, f"tileprof: note: {NOTE}\n")


HTA = Path(__file__).resolve().parent.parent / "fixtures" / "hta"
RANKS = [str(HTA / "sampled_rank-0.json.gz"), str(HTA / "sampled_rank-1.json.gz")]
"""Ranks 0 and 1 of one 128-rank job, captured over the same two steps (HTA's sample)."""


def _with_info(
    tmp_path: Path,
    source: str,
    name: str,
    *,
    device: str | None = None,
    clock: tuple[float, int | None] | None = None,
    **info: object,
) -> str:
    """``source`` with its distributedInfo changed by ``info`` (a key given None: removed;
    ``rank=None``: no distributedInfo at all), with ``device`` its one GPU named, and with
    ``clock`` = (µs added to every ``ts``, ``baseTimeNanoseconds`` or None) its clock moved."""
    import gzip

    document = json.loads(gzip.decompress(Path(source).read_bytes()))
    if clock is not None:
        for event in document["traceEvents"]:
            if isinstance(event.get("ts"), (int, float)):
                event["ts"] += clock[0]
        if clock[1] is not None:
            document["baseTimeNanoseconds"] = clock[1]
    changed = {**document["distributedInfo"], **info}
    document["distributedInfo"] = {k: v for k, v in changed.items() if v is not None}
    if "rank" in info and info["rank"] is None:
        del document["distributedInfo"]
    if device is not None:
        document["deviceProperties"] = [{"id": 0, "name": device}]
    path = tmp_path / name
    path.write_bytes(gzip.compress(json.dumps(document).encode()))
    return str(path)


def test_two_ranks_of_one_job_are_not_said_to_be_a_change() -> None:
    """The HTA pair's +9.82% is the difference between two GPUs of one job, not a change
    between runs: the table says so before its headline, and a gate gives no verdict."""
    code, out = _run(*RANKS)
    assert code == 0
    first, headline = out.splitlines()[0], out.splitlines()[3]
    assert first == (
        "not the same rank: before is rank 0 and after rank 1 of a job of 128 ranks (nccl, "
        "distributedInfo), captured over the same time: two GPUs of one run, so every change "
        "below is between them, not between runs (`tileprof breakdown` compares the ranks of "
        "one job)"
    )
    assert headline.startswith("total µs        607,844 → 667,530")
    code, out = _run(*RANKS, "--fail-on", "total_us of * may not rise by more than 5%")
    assert code == 3
    assert out.splitlines()[0] == (
        "abstained, no verdict: the two sides differ in rank 0 of 128 (nccl) → 1 of 128 (nccl)"
    )
    assert "not the same rank" not in out
    _, document = _run(*RANKS, "--format", "json")
    assert json.loads(document)["setup_differs"] == ["rank 0 of 128 (nccl) → 1 of 128 (nccl)"]
    gate = ("--fail-on", "total_us of * may not rise by more than 5%", "--allow-different")
    code, out = _run(*RANKS, *gate)
    assert code == 3  # judged: every breach is of a group with too few calls
    assert out.splitlines()[0].startswith("abstained, no verdict: 55 breaches are of groups")


def test_the_same_rank_of_two_runs_says_nothing(tmp_path: Path) -> None:
    after = _with_info(tmp_path, RANKS[1], "rank0.json.gz", rank=0)
    _, table = _run(RANKS[0], after)
    _, document = _run(RANKS[0], after, "--format", "json")
    assert "not the same" not in table
    assert "setup_differs" not in json.loads(document)
    unnamed = _with_info(tmp_path, RANKS[1], "no-rank.json.gz", rank=None)
    _, table = _run(RANKS[0], unnamed)
    assert "not the same" not in table


def test_a_job_of_another_size_is_another_setup(tmp_path: Path) -> None:
    """Rank 0 of 128 against rank 0 of 64 is a change of scale, not two GPUs of one run."""
    after = _with_info(tmp_path, RANKS[0], "of64.json.gz", world_size=64)
    _, table = _run(RANKS[0], after)
    assert table.splitlines()[0] == (
        "not the same setup: the two sides differ in rank 0 of 128 (nccl) → 0 of 64 (nccl); "
        "every change below is the setup's as much as the code's"
    )


def test_a_job_that_names_no_backend_and_the_same_rank_on_other_gpus(tmp_path: Path) -> None:
    """Without a backend the rank reads "0 of 128"; the same rank on two GPU models is a
    setup difference like any other, not "not the same rank"."""
    before = _with_info(tmp_path, RANKS[0], "b.json.gz", backend=None, device="NVIDIA A100")
    after = _with_info(tmp_path, RANKS[1], "a.json.gz", backend=None, device="NVIDIA A100")
    _, table = _run(before, after)
    assert table.splitlines()[0] == (
        "not the same rank: before is rank 0 and after rank 1 of a job of 128 ranks "
        "(distributedInfo), captured over the same time: two GPUs of one run, so every change "
        "below is between them, not between runs (`tileprof breakdown` compares the ranks of "
        "one job)"
    )
    _, document = _run(before, after, "--format", "json")
    assert json.loads(document)["setup_differs"] == ["rank 0 of 128 → 1 of 128"]
    other = _with_info(tmp_path, RANKS[1], "h.json.gz", rank=0, backend=None, device="NVIDIA H100")
    _, table = _run(before, other)
    assert table.splitlines()[0] == (
        "not the same setup: the two sides differ in device NVIDIA A100 → NVIDIA H100; every "
        "change below is the setup's as much as the code's"
    )


START_US = 1_682_725_897_000_000
"""About when HTA's sampled ranks begin, in µs since the Unix epoch (their ``ts``)."""


def test_the_same_ranks_captured_apart_are_two_runs(tmp_path: Path) -> None:
    """Rank 1 captured a day later (its window ends 86,398.8 s before rank 0's begins) is
    rank 1 of another run: the changes mix the runs' change with the difference between
    ranks. The same window written against a
    ``baseTimeNanoseconds`` (as newer PyTorch writes it) is still the same time; a clock that
    is not Unix time tells nothing, and the note says only what it knows."""
    later = _with_info(tmp_path, RANKS[1], "later.json.gz", clock=(86_400e6, None))
    _, table = _run(RANKS[0], later)
    assert table.splitlines()[0] == (
        "not the same rank: before is rank 0 and after rank 1 of a job of 128 ranks (nccl, "
        "distributedInfo), captured 86,399 s apart: two runs, so every change below mixes the "
        "change between them with the difference between two ranks (compare the same rank of "
        "each run)"
    )
    _, table = _run(later, RANKS[0])  # the later capture as before: as far apart
    assert "before is rank 1 and after rank 0" in table and "captured 86,399 s apart" in table
    based = _with_info(tmp_path, RANKS[1], "based.json.gz", clock=(-START_US, START_US * 1000))
    _, table = _run(RANKS[0], based)
    assert "captured over the same time: two GPUs of one run" in table.splitlines()[0]
    unknown = _with_info(tmp_path, RANKS[1], "uptime.json.gz", clock=(-START_US, None))
    _, table = _run(RANKS[0], unknown)
    assert table.splitlines()[0] == (
        "not the same rank: before is rank 0 and after rank 1 of a job of 128 ranks (nccl, "
        "distributedInfo); if both are of one run, every change below is between two of its "
        "GPUs, not between runs (compare one rank of each run; `tileprof breakdown` compares "
        "the ranks of one job)"
    )
    code, out = _run(RANKS[0], later, "--fail-on", "total_us of * may not rise by more than 5%")
    assert code == 3 and out.startswith("abstained, no verdict: the two sides differ in rank")


def test_every_reading_of_a_trace_gives_its_base_time(tmp_path: Path) -> None:
    """The compiled decoder, in memory and streamed, and msgspec's reading (a document the
    decoder declines) read ``baseTimeNanoseconds`` alike; one that is no integer is none."""
    from tileprof.inputs.gpu import kineto
    from tileprof.inputs.gpu.kineto_clock import unix_window_ns

    based = Path(_with_info(tmp_path, RANKS[1], "b.json.gz", clock=(-START_US, START_US * 1000)))
    import gzip

    data = gzip.decompress(based.read_bytes())
    pending = kineto.decode_file(based)
    assert pending is not None
    readings = [
        kineto.decode_events(based, data).events(),
        pending[0].events(),
        kineto._read_with_msgspec(based, data),
    ]
    assert [r.base_time_ns for r in readings] == [START_US * 1000] * 3
    windows = [unix_window_ns(r.frame, r.base_time_ns) for r in readings]
    plain = kineto.decode_events(RANKS[1], gzip.decompress(Path(RANKS[1]).read_bytes())).events()
    expected = unix_window_ns(plain.frame, None)
    assert expected is not None and None not in windows
    for window in windows:  # the moved ts were written by float arithmetic: within 1 µs
        assert window == pytest.approx(expected, abs=1000)
    document = json.loads(data)
    document["baseTimeNanoseconds"] = "soon"
    odd = json.dumps(document).encode()
    assert kineto.decode_events(based, odd).events().base_time_ns is None


def test_a_capture_window_is_unix_time_or_not_known() -> None:
    """µs since the epoch, or counted from a base; another clock, no event, or a time that is
    no finite number: not known."""
    import polars as pl

    from tileprof.inputs.gpu.kineto_clock import unix_window_ns

    def frame(ts: list[float], dur: list[float]) -> pl.DataFrame:
        return pl.DataFrame({"ts": ts, "dur": dur}, schema={"ts": pl.Float64, "dur": pl.Float64})

    assert unix_window_ns(frame([START_US, START_US + 10], [5, 20]), None) == (
        START_US * 1000,
        (START_US + 30) * 1000,
    )
    assert unix_window_ns(frame([2, 1], [1, 1]), START_US * 1000) == (
        (START_US + 1) * 1000,
        (START_US + 3) * 1000,
    )
    assert unix_window_ns(frame([2, 1], [1, 1]), None) is None  # µs since boot, say
    assert unix_window_ns(frame([], []), START_US * 1000) is None
    assert unix_window_ns(frame([START_US, float("inf")], [1, 1]), None) is None
    late = 4_102_444_800 * 10**6  # 2100-01-01 in µs
    assert unix_window_ns(frame([late - 10], [9]), None) is not None
    assert unix_window_ns(frame([late - 10], [10]), None) is None
