"""DumpBuilder: vectorised adds, interning, and the three ways out (JSON, NDJSON, frame)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tileprof.core.schema import SAMPLE_SCHEMA
from tileprof.inputs.synthetic.synth import DumpBuilder, SyntheticDump

GEMM_META = [("reason", "OperatorKernel"), ("usefulCycles", "12"), ("physicalWorkCycles", "16")]


def _small() -> SyntheticDump:
    b = DumpBuilder(clock_hz=1000, tile_count=4)
    b.add(
        tile=np.arange(4),
        offset=10,
        duration=[5, 6, 7, 8],
        phase=3,
        epoch=1,
        kind="compute",
        operation="op.1",
        kernel="gemm",
        metadata=GEMM_META,
    )
    b.add(
        tile=[0, 1],
        offset=[20, 20],
        duration=4,
        phase=4,
        kind="exchange",
        metadata_options=[[("reason", "Exchange")], [("usefulCycles", "2.5")]],
        metadata_index=[0, 1],
    )
    b.add(tile=3, offset=30, duration=1)  # bare sample: only the required keys
    return b.build()


def _expected_samples() -> list[dict[str, object]]:
    gemm = [{"name": n, "value": v} for n, v in GEMM_META]
    rows: list[dict[str, object]] = [
        {
            "physicalTile": t,
            "offset": 10,
            "duration": 5 + t,
            "phase": 3,
            "epoch": 1,
            "kind": "compute",
            "operation": "op.1",
            "kernel": "gemm",
            "metadata": gemm,
        }
        for t in range(4)
    ]
    rows.append(
        {
            "physicalTile": 0,
            "offset": 20,
            "duration": 4,
            "phase": 4,
            "kind": "exchange",
            "metadata": [{"name": "reason", "value": "Exchange"}],
        }
    )
    rows.append(
        {
            "physicalTile": 1,
            "offset": 20,
            "duration": 4,
            "phase": 4,
            "kind": "exchange",
            "metadata": [{"name": "usefulCycles", "value": "2.5"}],
        }
    )
    rows.append({"physicalTile": 3, "offset": 30, "duration": 1})
    return rows


def test_json_and_gzip_round_trip(tmp_path: Path) -> None:
    dump = _small()
    for name in ("d.json", "d.json.gz"):
        path = dump.write_json(tmp_path / name)
        raw = gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()
        doc = json.loads(raw)
        assert list(doc) == ["clockHz", "tileCount", "samples"]
        assert (doc["clockHz"], doc["tileCount"]) == (1000, 4)
        assert doc["samples"] == _expected_samples()
        assert list(doc["samples"][0]) == list(_expected_samples()[0])


def test_ndjson(tmp_path: Path) -> None:
    lines = _small().write_ndjson(tmp_path / "d.ndjson").read_text().splitlines()
    assert json.loads(lines[0]) == {"clockHz": 1000, "tileCount": 4}
    assert [json.loads(line) for line in lines[1:]] == _expected_samples()


def test_writers_chunked_output_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing 2 samples at a time gives the same bytes as writing all 7 at once."""
    dump = _small()
    whole = {fmt: (tmp_path / f"whole.{fmt}") for fmt in ("json", "ndjson")}
    dump.write_json(whole["json"])
    dump.write_ndjson(whole["ndjson"])
    monkeypatch.setattr("tileprof.inputs.synthetic.synth._WRITE_CHUNK", 2)
    assert dump.write_json(tmp_path / "c.json").read_bytes() == whole["json"].read_bytes()
    assert dump.write_ndjson(tmp_path / "c.ndjson").read_bytes() == whole["ndjson"].read_bytes()


def test_frame() -> None:
    frame, metadata = _small().to_frame()
    assert frame.schema == pl.Schema(SAMPLE_SCHEMA)
    assert frame["usefulCycles"].to_list() == [12.0] * 4 + [None, 2.5, None]
    assert frame["physicalWorkCycles"].to_list() == [16.0] * 4 + [None, None, None]
    assert frame["epoch"].to_list() == [1] * 4 + [None] * 3
    assert frame["kernel"].cast(pl.String).to_list() == ["gemm"] * 4 + [None] * 3
    ids = frame["metadataId"].to_list()
    assert ids[:4] == [0] * 4 and ids[6] is None
    assert metadata[0] == tuple(GEMM_META)
    assert metadata[ids[5]] == (("usefulCycles", "2.5"),)


def test_lengths_must_agree() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        DumpBuilder().add(tile=[0, 1], offset=[0, 1, 2], duration=1)


def test_empty_build() -> None:
    dump = DumpBuilder().build()
    assert len(dump) == 0 and dump.span_cycles == 0
    assert dump.to_frame()[0].height == 0


def test_frame_phase_is_null_where_not_given() -> None:
    frame, _ = _small().to_frame()
    assert frame["phase"].to_list() == [3] * 4 + [4, 4, None]


@pytest.mark.parametrize(
    "per_sample",
    [
        {"duration": [1, 2, 3]},
        {"epoch": [0, 1, 2]},
        {"phase": [5, 6, 7]},
        {"kernel": ["a", None, "a"]},
        {"metadata_options": [[("reason", "x")]], "metadata_index": [0, -1, 0]},
    ],
    ids=["duration", "epoch", "phase", "kernel", "metadata_index"],
)
def test_any_per_sample_argument_sets_the_count(per_sample: dict[str, object]) -> None:
    """One per-sample argument among scalars makes the call add one sample per value."""
    b = DumpBuilder()
    assert b.add(**{"tile": 0, "offset": 0, "duration": 1, **per_sample}) == 3  # type: ignore[arg-type]
    dump = b.build()
    assert len(dump) == 3 and all(len(c) == 3 for c in dump.codes.values())
    assert len(dump.metadata_id) == 3 and len(dump.phase) == 3


def test_per_sample_strings_are_interned() -> None:
    b = DumpBuilder()
    b.add(tile=[0, 1, 2, 3], offset=0, duration=1, kernel=["a", None, "b", "a"], kind="k")
    b.add(tile=0, offset=0, duration=1, kernel="b", kind="k")
    dump = b.build()
    assert dump.strings["kernel"] == ["a", "b"] and dump.strings["kind"] == ["k"]
    assert dump.codes["kernel"].tolist() == [0, -1, 1, 0, 1]
    assert dump.strings_of("kernel").tolist() == ["a", None, "b", "a", "b"]
    assert {c.dtype for c in dump.codes.values()} == {np.dtype(np.int32)}


def test_metadata_lists_are_interned_and_a_scalar_index_broadcasts() -> None:
    b = DumpBuilder()
    b.add(tile=[0, 1], offset=0, duration=1, metadata=GEMM_META)
    b.add(tile=[2, 3], offset=0, duration=1, metadata=GEMM_META)
    options = [[("reason", "x")], GEMM_META]
    b.add(tile=[0, 1], offset=5, duration=1, metadata_options=options, metadata_index=1)
    dump = b.build()
    assert dump.metadata == [tuple(GEMM_META)]
    assert dump.metadata_id.tolist() == [0] * 6


def test_empty_builds_keep_their_dtypes() -> None:
    b = DumpBuilder()
    b.add(tile=[], offset=[], duration=[], metadata_options=[], metadata_index=[])
    dump = b.build()
    assert len(dump) == 0 and dump.metadata_id.dtype == np.int64
    assert {c.dtype for c in DumpBuilder().build().codes.values()} == {np.dtype(np.int32)}


def test_metadata_and_options_together_are_refused() -> None:
    with pytest.raises(ValueError, match=r"^give either metadata or metadata_options, not both$"):
        DumpBuilder().add(
            tile=0, offset=0, duration=1, metadata=GEMM_META, metadata_options=[GEMM_META]
        )
