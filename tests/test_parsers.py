"""Dump formats: the same dump in every form gives the same profile; bad input is one clear line."""

from __future__ import annotations

import gzip
from pathlib import Path

import msgspec
import polars as pl
import pytest

import tileprof
from tests.samples import document, sample, write_dump
from tileprof.core.errors import InputError
from tileprof.core.schema import SAMPLE_SCHEMA
from tileprof.inputs import detect_dump_format
from tileprof.views.writers import WRITE_FORMATS
from tileprof.views.writers import write_dump as write_profile

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SEED_004 = FIXTURES / "seed_004_summary.json"

MIXED = [
    sample(0, 100, 40, "gemm_f16", useful=10, physical=20, phase=3),
    sample(1, 90, 40, "gemm_f16", useful=12.5, physical=20, phase=4),
    sample(2, 0, 5, None, kind="exchange", phase=None, epoch=None),
    {"physicalTile": 3, "offset": 7, "duration": 1, "kind": "compute"},
    sample(3, 8, 2, "copy", metadata=[{"name": "kernelSpec", "value": "Copy { n: 4 }"}]),
]


def test_seed_004_is_a_valid_dump_with_three_samples() -> None:
    profile = tileprof.load(SEED_004)
    assert profile.samples.height == 3
    assert profile.format == "json"
    assert (profile.clock_hz, profile.tile_count) == (1_500_000_000, 1472)
    assert profile.samples.schema == pl.Schema(SAMPLE_SCHEMA)
    first = profile.records()[0]
    seed = msgspec.json.decode(SEED_004.read_bytes())["samples"][0]
    assert first == seed


def test_other_metadata_is_kept_and_reachable() -> None:
    profile = tileprof.load(SEED_004)
    metadata = dict(profile.metadata[profile.samples["metadataId"][0]])
    assert metadata["kernelSpec"].startswith("AttentionSoftmax")
    assert metadata["workEstimateBasis"].startswith("softmax")
    assert profile.to_pandas()["metadata"][0][2]["name"] == "kernelSpec"


def test_missing_optional_fields_become_null(tmp_path: Path) -> None:
    profile = tileprof.load(write_dump(tmp_path / "d.json", MIXED))
    row = profile.samples.row(3, named=True)
    assert row["phase"] is None and row["epoch"] is None and row["kernel"] is None
    assert row["operation"] is None and row["metadataId"] is None
    assert row["usefulCycles"] is None and row["physicalWorkCycles"] is None
    assert profile.samples["usefulCycles"].to_list()[:2] == [10.0, 12.5]


@pytest.mark.parametrize("fmt", WRITE_FORMATS)
@pytest.mark.parametrize("compressed", [False, True])
def test_every_format_gives_identical_summaries(tmp_path: Path, fmt: str, compressed: bool) -> None:
    original = tileprof.load(write_dump(tmp_path / "d.json", MIXED, clockHz=1e9, tileCount=16))
    target = tmp_path / f"copy.{fmt}{'.gz' if compressed else ''}"
    write_profile(original, target, fmt)
    if compressed:
        assert target.read_bytes()[:2] == b"\x1f\x8b"
    copy = tileprof.load(target)
    assert copy.format == fmt
    assert copy.samples.equals(original.samples)
    assert copy.metadata == original.metadata
    assert (copy.clock_hz, copy.tile_count) == (1_000_000_000, 16)
    assert copy.summary(samples=5).to_document() == original.summary(samples=5).to_document()


def test_cache_layout_round_trips(tmp_path: Path) -> None:
    original = tileprof.load(SEED_004)
    original.save(tmp_path / "cache.parquet")
    copy = tileprof.load(tmp_path / "cache.parquet")
    assert copy.samples.equals(original.samples)
    assert copy.summary().to_document() == original.summary().to_document()


def test_format_detected_from_content_not_only_extension(tmp_path: Path) -> None:
    original = tileprof.load(write_dump(tmp_path / "d.json", MIXED))
    for fmt in WRITE_FORMATS:
        path = tmp_path / f"no-extension-{fmt}"
        write_profile(original, path, fmt)
        assert detect_dump_format(path) == fmt
        assert tileprof.load(path).samples.equals(original.samples)


def test_ndjson_header_is_optional(tmp_path: Path) -> None:
    lines = b"\n".join(msgspec.json.encode(s) for s in MIXED) + b"\n\n"
    path = tmp_path / "d.ndjson"
    path.write_bytes(lines)
    profile = tileprof.load(path)
    assert profile.samples.height == len(MIXED)
    assert (profile.clock_hz, profile.tile_count) == (1_500_000_000, 1472)


def test_options_override_the_dump(tmp_path: Path) -> None:
    path = write_dump(tmp_path / "d.json", MIXED, clockHz=1e9, tileCount=16)
    profile = tileprof.load(path, clock_hz=2e9, tile_count=64)
    assert (profile.clock_hz, profile.tile_count) == (2_000_000_000, 64)


def test_format_override(tmp_path: Path) -> None:
    path = tmp_path / "d.txt"
    path.write_bytes(document(MIXED))
    assert tileprof.load(path, format="json").samples.height == len(MIXED)
    with pytest.raises(InputError):
        tileprof.load(path, format="csv")


# --- bad input: one line naming the file and the place ---------------------------------------


def error_of(path: Path, **options: object) -> str:
    with pytest.raises(InputError) as caught:
        tileprof.load(path, **options)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message
    return message


def test_missing_file(tmp_path: Path) -> None:
    assert "no such file" in error_of(tmp_path / "absent.json")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_bytes(b"")
    assert "empty" in error_of(path)


def test_truncated_json(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_bytes(document(MIXED)[:-25])
    message = error_of(path)
    assert "line 1, column" in message and "truncated" in message


def test_truncated_gzip(tmp_path: Path) -> None:
    path = tmp_path / "cut.json.gz"
    path.write_bytes(gzip.compress(document(MIXED))[:-10])
    assert "gzip" in error_of(path)


@pytest.mark.parametrize("key", ["offset", "duration", "physicalTile"])
def test_sample_missing_required_field(tmp_path: Path, key: str) -> None:
    samples = [dict(s) for s in MIXED]
    del samples[2][key]
    message = error_of(write_dump(tmp_path / "d.json", samples))
    assert "sample 2" in message and key in message


def test_string_where_a_number_belongs(tmp_path: Path) -> None:
    samples = [dict(s) for s in MIXED]
    samples[1]["offset"] = "90"
    message = error_of(write_dump(tmp_path / "d.json", samples))
    assert "sample 1" in message and "offset" in message and "str" in message


@pytest.mark.parametrize(
    ("key", "word"), [("duration", "negative duration"), ("offset", "negative offset")]
)
def test_negative_times(tmp_path: Path, key: str, word: str) -> None:
    samples = [dict(s) for s in MIXED]
    samples[4][key] = -5
    message = error_of(write_dump(tmp_path / "d.json", samples))
    assert "sample 4" in message and word in message


def test_tile_beyond_tile_count(tmp_path: Path) -> None:
    samples = [dict(s) for s in MIXED]
    samples[3]["physicalTile"] = 16
    message = error_of(write_dump(tmp_path / "d.json", samples, tileCount=16))
    assert "sample 3" in message and "tileCount 16" in message


def test_unparseable_useful_cycles(tmp_path: Path) -> None:
    samples = [dict(s) for s in MIXED]
    samples[1]["metadata"] = [{"name": "usefulCycles", "value": "lots"}]
    message = error_of(write_dump(tmp_path / "d.json", samples))
    assert "sample 1" in message and "usefulCycles" in message and "'lots'" in message


def test_unknown_format(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("these are not samples\n")
    assert "unknown format" in error_of(path)


def test_ndjson_errors_name_the_line(tmp_path: Path) -> None:
    lines = [msgspec.json.encode({"clockHz": 1.5e9})] + [msgspec.json.encode(s) for s in MIXED]
    lines[3] = lines[3].replace(b'"duration":5', b'"duration":"5"')
    path = tmp_path / "d.ndjson"
    path.write_bytes(b"\n".join(lines))
    message = error_of(path)
    assert "line 4" in message and "duration" in message
    lines[3] = b'{"physicalTile": 2, "offset": '
    path.write_bytes(b"\n".join(lines))
    assert "line 4" in error_of(path)
    lines[3] = msgspec.json.encode(sample(1, 5, -3))
    path.write_bytes(b"\n".join(lines))
    assert "line 4: negative duration" in error_of(path)


def test_csv_errors_name_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("physicalTile,offset,duration,kernel\n0,10,5,a\n1,ten,5,a\n", encoding="utf-8")
    message = error_of(path)
    assert "line 3, column offset" in message and "'ten'" in message
    path.write_text("physicalTile,duration\n0,5\n", encoding="utf-8")
    assert "column offset" in error_of(path)


def test_parquet_wrong_column_type(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pl.DataFrame({"physicalTile": [0], "offset": [1.5], "duration": [2]}).write_parquet(path)
    message = error_of(path)
    assert "column offset" in message and "Float64" in message


def test_bad_clock_in_dump(tmp_path: Path) -> None:
    assert "clockHz" in error_of(write_dump(tmp_path / "d.json", MIXED, clockHz=0))


def test_tile_dump_is_recognised_from_its_head(tmp_path: Path) -> None:
    from tileprof.inputs import is_tile_dump_head
    from tileprof.inputs.sources import TILE_DUMP, detect_file_kind

    original = tileprof.load(write_dump(tmp_path / "d.json", MIXED))
    for fmt in WRITE_FORMATS:
        path = tmp_path / f"head.{fmt}.gz"
        write_profile(original, path, fmt)
        assert detect_file_kind(path) == (TILE_DUMP, None), fmt
    trace = b'{"traceEvents": [{"name": "samples", "ph": "X"}], "samples": 3}'
    assert not is_tile_dump_head(trace)
    assert not is_tile_dump_head(b"target,workload,kernel,time_us\n")
    assert is_tile_dump_head(document(MIXED))


@pytest.mark.parametrize("writer", ["json", "ndjson"])
def test_integers_beyond_64_bits_are_refused(tmp_path: Path, writer: str) -> None:
    samples = [dict(s) for s in MIXED]
    samples[1]["offset"] = 2**65
    if writer == "json":
        path = write_dump(tmp_path / "d.json", samples)
        where = "sample 1"
    else:
        path = tmp_path / "d.ndjson"
        path.write_bytes(b"\n".join(msgspec.json.encode(s) for s in samples))
        where = "line 2"
    message = error_of(path)
    assert where in message and "offset" in message


def test_offset_plus_duration_must_fit(tmp_path: Path) -> None:
    samples = [dict(s) for s in MIXED]
    samples[2]["offset"] = 2**63 - 1
    assert "sample 2" in error_of(write_dump(tmp_path / "d.json", samples))
    csv_path = tmp_path / "d.csv"
    csv_path.write_text(f"physicalTile,offset,duration\n0,{2**62},{2**62 + 1}\n", encoding="utf-8")
    assert "line 2" in error_of(csv_path)
    parquet = tmp_path / "d.parquet"
    pl.DataFrame(
        {"physicalTile": [0], "offset": pl.Series([2**63], dtype=pl.UInt64), "duration": [1]}
    ).write_parquet(parquet)
    assert "row 0, column offset" in error_of(parquet)


def test_json_array_is_not_taken_for_csv(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b'[{"physicalTile": 0, "offset": 1, "duration": 2}]')
    message = error_of(path)
    assert "column" not in message and "array" in message


def test_folder_as_input(tmp_path: Path) -> None:
    folder = tmp_path / "d.json"
    folder.mkdir()
    assert "folder" in error_of(folder)


def validation_error(samples: list[dict[str, object]], tile_count: int = 16) -> str | None:
    """What ``validate_samples`` says of these samples' frame (None: nothing)."""
    from tests.samples import frame
    from tileprof.inputs._common import validate_samples

    try:
        validate_samples(frame(samples), Path("d.json"), tile_count, lambda i: f"sample {i}")
    except InputError as error:
        return str(error)
    return None


@pytest.mark.parametrize(
    ("durations", "useful", "expected"),
    [
        # durations whose bound (max × count) is beyond 2^63 - 1 but whose sum is not
        ([2**62, 0, 0], [None] * 3, None),
        ([2**62 - 1] * 3, [None] * 3, "sample 2: the durations up to here add up beyond 2^63"),
        # floats whose bound (2 × max × count) is beyond a float but whose sum is not
        ([1] * 3, [1e308, 0.0, 0.0], None),
        ([1] * 3, [1e308, 1e308, 0.0], "sample 1: metadata usefulCycles values up to here"),
        ([1] * 3, [1.0, 2.0, None], None),  # small: the bound rules the sum out
    ],
)
def test_running_sums_are_refused_at_their_first_row_beyond(
    durations: list[int], useful: list[float | None], expected: str | None
) -> None:
    samples = [
        sample(t, 0, d, "k", useful=u, physical=None if u is None else 1.0)
        for t, (d, u) in enumerate(zip(durations, useful, strict=True))
    ]
    message = validation_error(samples)
    assert (message is None) == (expected is None), message
    assert message is None or expected in message


def test_an_end_beyond_64_bits_is_refused_after_every_row_check() -> None:
    """offset + duration beyond 2^63 - 1 with each within 2^62: the end check (run only when
    the largest offset plus the largest duration allow it) names its first row, after the row
    checks."""
    samples = [sample(0, 0, 1, "k"), sample(1, 2**62, 2**62, "k"), sample(2, 2**62 - 1, 2**62, "k")]
    message = validation_error(samples) or ""
    assert (
        "sample 1: offset 4611686018427387904 + duration 4611686018427387904 is beyond" in message
    )
    samples.append(sample(20, 0, 1, "k"))
    assert "sample 3: physicalTile 20 is not below tileCount 16" in (
        validation_error(samples) or ""
    )
    assert validation_error([sample(0, 2**62 - 1, 2**62, "k")]) is None


@pytest.mark.parametrize(
    "values",
    [[1.0, -3.0, None], [-0.5, 0.25], [None, None], [], [float("inf"), 1.0], [-float("inf")]],
)
def test_the_largest_magnitude_without_a_temporary_is_abs_max(values: list[float | None]) -> None:
    from tileprof.inputs._common import _largest

    frame = pl.DataFrame({"x": pl.Series(values, dtype=pl.Float64)})
    assert frame.select(_largest("x")).item() == frame.select(pl.col("x").abs().max()).item()


def test_the_first_failing_check_in_order_names_its_first_row() -> None:
    samples = [sample(0, 0, 1, "k"), sample(20, 0, 1, "k"), sample(1, 0, -5, "k")]
    # the negative duration (sample 2) comes before the tile beyond tileCount (sample 1)
    assert "sample 2: negative duration -5" in (validation_error(samples) or "")
    samples[2] = sample(1, 0, 5, "k")
    message = validation_error(samples) or ""
    assert "sample 1: physicalTile 20 is not below tileCount 16" in message
