"""``tileprof.model.integrity``: how ``check`` reads its inputs (issue 38, branch ``mutV``).

``tests/test_check.py`` holds each capture check's counts; these hold what the reading around
them decides: each input opened once, the dumps read with the command line's options, the
example and every input named as given, and the checks across ranks made only of the traces
that name their rank and world size."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.test_check import (
    clean_events,
    clean_report_rows,
    clean_samples,
    counts,
    only,
    write_dump,
    write_report,
    write_trace,
)
from tileprof.core.errors import InputError
from tileprof.model.integrity import check_files
from tileprof.model.reading import DumpReading, load_profile


def test_check_opens_each_input_once(opens: Counter[Path], tmp_path: Path) -> None:
    """A small dump is read whole by ``read_input`` and loaded from those bytes (not opened
    again by its loader); a trace is read once too."""
    dump = write_dump(tmp_path / "d.json", clean_samples())
    trace = write_trace(tmp_path / "t.json.gz", clean_events())
    plain = tmp_path / "plain.json"
    plain.write_bytes(gzip.decompress(trace.read_bytes()))
    opens.clear()
    checked = check_files([dump, trace, plain])
    assert checked.checks["input"].unique(maintain_order=True).to_list() == [
        str(dump),
        str(trace),
        str(plain),
    ]
    assert checked.checks["count"].sum() == 0
    assert {p: opens[p.resolve()] for p in (dump, trace, plain)} == {dump: 1, trace: 1, plain: 1}


def _bad_metadata_samples() -> list[dict[str, Any]]:
    samples = clean_samples()
    samples[4]["metadata"] = [{"name": "usefulCycles", "value": "lots"}]
    return samples


def test_dumps_are_read_with_the_command_lines_tile_count(tmp_path: Path) -> None:
    """``--tile-count`` (``DumpReading``) reaches the loader, also when a dump's metadata is
    scanned and the dump read again without it: 6 tiles claimed, 4 used."""
    clean = write_dump(tmp_path / "clean.json", clean_samples())
    bad = write_dump(tmp_path / "bad.json", _bad_metadata_samples())
    frame = check_files([clean, bad], read=DumpReading(tile_count=6)).checks
    of_clean = frame.filter(pl.col("input") == str(clean))
    assert only(of_clean, "tile-never-appears", 2)["places"] == ["tile 4", "tile 5"]
    of_bad = frame.filter(pl.col("input") == str(bad))
    assert of_bad.height == of_clean.height == 5
    found = {k: v for k, v in counts(of_bad).items() if v}
    assert found == {"tile-never-appears": 2, "metadata-unparsed": 1}
    rows = {r["check"]: r["places"] for r in of_bad.iter_rows(named=True) if r["count"]}
    assert rows == {"tile-never-appears": ["tile 4", "tile 5"], "metadata-unparsed": ["sample 4"]}
    # without the override: the dump's own 4 tiles, all used
    plain = check_files([bad]).checks
    assert {k: v for k, v in counts(plain).items() if v} == {"metadata-unparsed": 1}
    assert set(plain["input"]) == {str(bad)}


def test_the_example_is_checked_under_its_name(tmp_path: Path) -> None:
    """The example profile's rows name it "example", before the files' rows."""
    example = load_profile(None, True, DumpReading())
    dump = write_dump(tmp_path / "d.json", clean_samples())
    frame = check_files([dump], example=example).checks
    assert frame["input"].to_list() == ["example"] * 5 + [str(dump)] * 5
    assert frame["count"].sum() == 0


def _job_inputs(frame: pl.DataFrame) -> list[str]:
    return sorted({i for i in frame["input"].to_list() if i.startswith("job")})


def test_the_checks_across_ranks_need_two_ranks_of_a_named_world(tmp_path: Path) -> None:
    """One rank of a job gives no job rows; two traces that name their rank but no world size
    are two traces, not a job; two ranks of a world of 2 are one."""
    zero = write_trace(tmp_path / "r0.json.gz", clean_events(comm_seqs=(1, 2)), rank=0)
    one = write_trace(tmp_path / "r1.json.gz", clean_events(comm_seqs=(1, 2)), rank=1)
    alone = check_files([zero]).checks
    assert alone.height == 7 and set(alone["input"]) == {str(zero)}
    unsized = []
    for rank in (0, 1):
        document = {
            "traceEvents": clean_events(comm_seqs=(1, 2)),
            "deviceProperties": [{"id": 0, "name": "GPU"}],
            "distributedInfo": {"rank": rank, "backend": "nccl"},
        }
        path = tmp_path / f"unsized{rank}.json"
        path.write_text(json.dumps(document))
        unsized.append(path)
    frame = check_files(unsized).checks
    assert frame.height == 14 and _job_inputs(frame) == []
    job = check_files([zero, one]).checks
    assert _job_inputs(job) == ["job of 2 ranks (ranks 0, 1 given)"]
    assert job.filter(pl.col("input").str.starts_with("job"))["count"].sum() == 0


def test_a_broken_tenstorrent_report_names_its_file(tmp_path: Path) -> None:
    """The report's rows are read by ``op_table`` under the input's name: its refusal names the
    file and the line."""
    rows = clean_report_rows()
    rows[1] = ("Matmul", "tt_dnn_device", "0", "fast")
    report = write_report(tmp_path / "ops.csv", rows)
    with pytest.raises(InputError) as caught:
        check_files([report])
    assert str(caught.value) == (
        f"{report}: line 3, column 'DEVICE KERNEL DURATION [ns]': not a number: 'fast'"
    )


def test_check_takes_no_digest_of_its_inputs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``check`` shows no sha256, so ``read_input`` is asked for none (hashing a 626 MB trace
    took 0.35 s): neither of a file read whole nor of a trace streamed from its handle."""

    class NoDigest:
        @staticmethod
        def sha256(*args: Any) -> Any:
            raise AssertionError("check took a digest")

    from tileprof.inputs import sources

    monkeypatch.setattr(sources, "hashlib", NoDigest)
    trace = write_trace(tmp_path / "t.json.gz", clean_events())
    plain = tmp_path / "plain.json"
    plain.write_bytes(gzip.decompress(trace.read_bytes()))
    report = write_report(tmp_path / "ops.csv", clean_report_rows())
    frame = check_files([trace, plain, report]).checks
    assert frame.height == 7 + 7 + 2 and frame["count"].sum() == 0
