"""The input and output registries: every registered format round-trips through detection.

Each input format gets a sample file of its own (tile dumps written by ``tileprof.views.writers``,
run sources from ``fixtures/``); detection must name that format, by content and by the
generic ``detect`` alike, and its parser must read the file. A format added to the registry
without a sample here fails ``test_every_registered_format_has_a_sample``.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.samples import profile as load_samples
from tests.samples import sample
from tileprof.commands.cli import cli
from tileprof.core.errors import InputError
from tileprof.inputs import (
    DUMP_FORMATS,
    DUMP_INPUTS,
    EXTENSIONS,
    INPUTS,
    RUN_INPUTS,
    detect,
    detect_dump_format,
    read_dump,
)
from tileprof.inputs._format import RUN_SOURCE, TILE_DUMP
from tileprof.inputs.sources import detect_file_kind, detect_kind, load_runs
from tileprof.views.renderers import RUNS_RENDERERS, SUMMARY_RENDERERS
from tileprof.views.writers import write_dump

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RUN_SAMPLES: dict[str, list[Path]] = {
    "PyTorch trace": [FIXTURES / "traces" / "kineto_small.json"],
    "latency benchmarks": [FIXTURES / "seeds" / "000_55f6fcd9cea2f10a.txt"],
    "energy report": [FIXTURES / "seeds" / "003_2d9153cb18ea7de3.txt"],
    "nsys kernel summary": [FIXTURES / "runs" / "nsys_kern_sum.csv"],
    "nsys SQLite export": [FIXTURES / "real" / "h100_2gpu_1s.sqlite"],
    "rocprofv3 kernel trace": [FIXTURES / "real" / "kernel_trace.csv"],
    "Nsight Compute CSV": [FIXTURES / "real" / "cublaslt_gemm_b200_ncu.log"],
    "Tenstorrent ops report": [
        FIXTURES / "real" / "tt_wh_clip_encoder_400.csv",
        FIXTURES / "real" / "ops_perf_results_2025_09_18_11_39_20.csv",
    ],
    "run table": [FIXTURES / "runs" / "generic_runs.csv", FIXTURES / "runs" / "generic_runs.json"],
}
DUMP_SAMPLES = {"json": "d.json", "ndjson": "d.ndjson", "parquet": "d.parquet", "csv": "d.csv"}
READ_ONLY_DUMP_SAMPLES: dict[str, Path] = {
    "tt-device-log": FIXTURES / "real" / "tt-device-log" / "profile_log_device.csv",
}
"""Tile-dump formats tileprof reads but does not write (tests/test_tt_device_log.py)."""


@pytest.fixture()
def dumps(tmp_path: Path) -> dict[str, Path]:
    """One small dump in every dump format, with neutral names (detection must not need them)."""
    profile = load_samples(
        tmp_path, [sample(0, 0, 10, useful=5), sample(1, 4, 6, "k2")], clockHz=1000, tileCount=4
    )
    out = {}
    for name in DUMP_SAMPLES:
        path = tmp_path / f"sample-{name}.bin"
        write_dump(profile, path, name)
        out[name] = path
    return out


def test_every_registered_format_has_a_sample() -> None:
    assert {f.name for f in DUMP_INPUTS} == set(DUMP_SAMPLES) | set(READ_ONLY_DUMP_SAMPLES)
    assert {f.name for f in RUN_INPUTS} == set(RUN_SAMPLES)
    assert {f.kind for f in DUMP_INPUTS} == {TILE_DUMP}
    assert {f.kind for f in RUN_INPUTS} == {RUN_SOURCE}
    assert len({f.name for f in INPUTS}) == len(INPUTS)  # names are unique


@pytest.mark.parametrize("name", list(DUMP_SAMPLES))
def test_dump_formats_round_trip_through_detection(name: str, dumps: dict[str, Path]) -> None:
    path = dumps[name]
    data = path.read_bytes()
    assert detect(path, data).name == name  # by content: the suffix is .bin
    assert detect_dump_format(path, data) == name
    assert detect_kind(path, data) == TILE_DUMP
    assert detect_file_kind(path)[0] == TILE_DUMP
    parsed, clock, tiles, chosen = read_dump(path)
    assert chosen == name and (clock, tiles) == (1000, 4)
    assert parsed.samples["tile"].to_list() == [0, 1]


@pytest.mark.parametrize("name", list(DUMP_SAMPLES))
def test_gzipped_dumps_are_detected_through_gzip(name: str, dumps: dict[str, Path]) -> None:
    zipped = dumps[name].with_suffix(".gz")
    zipped.write_bytes(gzip.compress(dumps[name].read_bytes()))
    assert read_dump(zipped)[3] == name


@pytest.mark.parametrize(
    ("name", "path"), [(n, p) for n, paths in RUN_SAMPLES.items() for p in paths]
)
def test_run_sources_round_trip_through_detection(name: str, path: Path) -> None:
    data = path.read_bytes()
    assert detect(path, data).name == name
    assert detect_kind(path, data) == name
    assert detect_file_kind(path) == (name, data)
    runs = load_runs(path)
    assert runs.kind == name and runs.frame.height > 0


def test_extension_is_the_fallback_when_content_does_not_settle_it(tmp_path: Path) -> None:
    # A JSON array is a run table by content; a blank file says nothing, so the name decides.
    blank = tmp_path / "empty.ndjson"
    blank.write_bytes(b"\n")
    assert detect(blank, b"\n").name == "ndjson"
    assert EXTENSIONS == {
        ".json": "json",
        ".ndjson": "ndjson",
        ".jsonl": "ndjson",
        ".parquet": "parquet",
        ".pq": "parquet",
        ".csv": "csv",
        ".sqlite": "nsys SQLite export",
    }
    with pytest.raises(InputError, match="not a tile dump, latency benchmarks"):
        detect(tmp_path / "x.bin", b"hello")


def test_dump_formats_keep_their_order_for_messages() -> None:
    assert list(DUMP_FORMATS) == ["json", "ndjson", "parquet", "csv", "tt-device-log"]


@pytest.mark.parametrize(("name", "path"), list(READ_ONLY_DUMP_SAMPLES.items()))
def test_read_only_dump_formats_are_detected(name: str, path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    assert detect(path, data).name == name
    assert detect_kind(path, data) == TILE_DUMP
    copy = tmp_path / "neutral.bin"  # by content, not by name
    copy.write_bytes(data)
    assert detect_dump_format(copy, data) == name
    parsed, _, tiles, chosen = read_dump(copy)
    assert chosen == name and parsed.samples.height > 0 and tiles >= 1


def test_a_trace_with_a_tile_key_is_still_a_trace() -> None:
    data = b'{"traceEvents": [], "clockHz": 1}'
    assert detect_kind("t.json", data) == "PyTorch trace"
    # without traceEvents, a Kineto-only key still marks a (broken) trace, after tile keys
    assert detect_kind("t.json", b'{"schemaVersion": 1}') == "PyTorch trace"
    assert detect_kind("t.json", b'{"schemaVersion": 1, "tileCount": 4}') == TILE_DUMP


def test_renderer_registries_give_the_format_choices() -> None:
    assert list(SUMMARY_RENDERERS) == ["table", "json", "csv"]
    assert list(RUNS_RENDERERS) == ["table", "json", "csv", "parquet"]
    assert [r.binary for r in RUNS_RENDERERS.values()] == [False, False, False, True]
    result = CliRunner().invoke(cli, ["runs", "--example", "--format", "parquet"])
    assert result.exit_code == 2
    assert "--format parquet needs -o FILE" in result.stderr
    result = CliRunner().invoke(cli, ["summary", "--example", "--format", "xml"])
    assert result.exit_code == 2 and "'table', 'json', 'csv'" in result.stderr


def test_format_in_rule_is_shared_by_runs_and_report(
    tmp_path: Path, dumps: dict[str, Path]
) -> None:
    """``--format-in`` names the tile dumps' format; GPU files are still read as GPU files."""
    csv_dump = dumps["csv"]
    trace = tmp_path / "trace.json"
    shutil.copy(RUN_SAMPLES["PyTorch trace"][0], trace)
    runner = CliRunner()
    result = runner.invoke(
        cli, ["runs", str(csv_dump), str(trace), "--format-in", "csv", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    assert '"kind": "PyTorch trace"' in result.stdout and '"kind": "tile dump"' in result.stdout
    out = tmp_path / "r.html"
    result = runner.invoke(
        cli, ["report", str(csv_dump), str(trace), "--format-in", "csv", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "PyTorch trace" in out.read_text()


def test_the_summary_document_is_a_registered_kind() -> None:
    """``summary --format json`` documents are recognised by the registry, by their keys, before
    a tile dump's looser rules (a diff side is read as groups, not as its sample list)."""
    from tileprof.inputs import SUMMARY_INPUT
    from tileprof.inputs._format import SUMMARY_DOCUMENT
    from tileprof.inputs.sources import read_input

    seed = FIXTURES.parent / "fixtures" / "seed_004_summary.json"
    assert SUMMARY_INPUT in INPUTS and INPUTS.index(SUMMARY_INPUT) == 0
    assert detect(seed, seed.read_bytes()) is SUMMARY_INPUT
    found = read_input(seed)
    assert found.kind == SUMMARY_DOCUMENT and found.data == seed.read_bytes()
    assert SUMMARY_INPUT.parse(seed, found.data)["matchedSampleCount"] > 0


def test_every_command_format_choice_is_a_renderer() -> None:
    """The ``--format`` choices of the commands that declare them apart from the registry
    (to start without it) are the registry's names, in its order."""
    from tileprof.commands.history import HISTORY_FORMATS
    from tileprof.commands.store import STORE_LIST_FORMATS
    from tileprof.views.renderers import (
        HISTORY_RENDERERS,
        OPS_RENDERERS,
        STORE_LIST_RENDERERS,
    )

    assert tuple(HISTORY_RENDERERS) == HISTORY_FORMATS
    assert tuple(STORE_LIST_RENDERERS) == STORE_LIST_FORMATS
    assert list(OPS_RENDERERS) == list(RUNS_RENDERERS)  # runs --ops takes runs' --format
