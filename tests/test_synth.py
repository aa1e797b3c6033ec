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
