"""The reference dump rebuilds seed 004: counts, span, physical plausibility, every group.

The group statistics are computed here by a deliberately naive implementation
(``_naive_group_stats``), independent of ``tileprof.analyses.stats``, straight from the seed's
definitions; the fixture is a byte-identical copy of ``shared/seeds/004_b8c9894ad1339892.txt``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tileprof.inputs.synthetic.reference import build_reference_dump
from tileprof.inputs.synthetic.synth import SyntheticDump

SEED_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "seed_004_summary.json"
SEED: dict[str, Any] = json.loads(SEED_PATH.read_text())


@pytest.fixture(scope="module")
def dump() -> SyntheticDump:
    return build_reference_dump()


def _union(offset: npt.NDArray[np.int64], duration: npt.NDArray[np.int64]) -> int:
    """Union length of [offset, offset + duration), by a plain sweep."""
    total, cur_start, cur_end = 0, None, None
    for start, end in sorted(zip(offset.tolist(), (offset + duration).tolist(), strict=True)):
        if cur_end is None or start > cur_end:
            if cur_end is not None and cur_start is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_end is not None and cur_start is not None:
        total += cur_end - cur_start
    return total


def _naive_group_stats(
    dump: SyntheticDump, tile_count: int, clock_hz: int, epoch: int = 1
) -> list[dict[str, Any]]:
    """Per-group statistics as the seed defines them, over samples of one epoch."""
    matched = dump.epoch_valid & (dump.epoch == epoch)
    kernels = dump.strings_of("kernel")[matched]
    kinds = dump.strings_of("kind")[matched]
    keys = np.array([k if k else kd for k, kd in zip(kernels, kinds, strict=True)], dtype=object)
    offset, duration = dump.offset[matched], dump.duration[matched]
    tile, phase = dump.tile[matched], dump.phase[matched]
    useful = dump.metadata_number("usefulCycles")[matched]
    physical = dump.metadata_number("physicalWorkCycles")[matched]
    rows = []
    for name in sorted(set(keys.tolist())):
        g = keys == name
        d = duration[g]
        n = len(d)
        ordered = sorted(d.tolist())
        phase_cycles = _union(offset[g], d)
        work = sum(d.tolist())
        has_useful = ~np.isnan(useful[g])
        has_physical = ~np.isnan(physical[g])
        useful_sum = 0.0
        for v in useful[g][has_useful].tolist():
            useful_sum += v
        physical_sum = 0.0
        for v in physical[g][has_physical].tolist():
            physical_sum += v
        estimated = sum(d[has_useful].tolist())
        rows.append(
            {
                "name": name,
                "dimensions": {},
                "sampleCount": n,
                "tileCount": len(set(tile[g].tolist())),
                "phaseCount": len(set(phase[g].tolist())),
                "phaseCycles": phase_cycles,
                "phaseMs": phase_cycles / clock_hz * 1000,
                "workCycles": work,
                "averageActiveTiles": work / phase_cycles,
                "usefulCycles": useful_sum,
                "estimatedWorkCycles": estimated,
                "usefulUtilization": useful_sum / estimated if estimated else None,
                "workLaneOccupancy": useful_sum / physical_sum if physical_sum else None,
                "deviceUsefulUtilization": (
                    useful_sum / (tile_count * phase_cycles) if estimated and phase_cycles else None
                ),
                "meanCycles": work / n,
                "p50Cycles": ordered[(50 * n + 99) // 100 - 1],
                "p95Cycles": ordered[(95 * n + 99) // 100 - 1],
                "maximumCycles": ordered[-1],
                "firstOffset": int(offset[g].min()),
                "lastOffset": int((offset[g] + d).max()),
            }
        )
    rows.sort(key=lambda r: (-r["phaseCycles"], r["name"]))
    return rows


def _same(got: object, want: object) -> bool:
    if isinstance(want, float) or isinstance(got, float):
        if got is None or want is None:
            return got is want
        assert isinstance(got, int | float) and isinstance(want, int | float)
        return math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0)
    return type(got) is type(want) and got == want


def test_counts_and_span(dump: SyntheticDump) -> None:
    assert len(dump) == SEED["sampleCount"] == 232_260
    assert dump.tile_count == SEED["tileCount"] == 1472
    assert dump.clock_hz == SEED["clockHz"]
    assert np.array_equal(np.unique(dump.tile), np.arange(1472))
    assert dump.span_cycles == SEED["profileSpanCycles"] == 16_746_138
    assert _same(dump.span_cycles / dump.clock_hz * 1000, SEED["profileSpanMs"])
    matched = dump.epoch_valid & (dump.epoch == 1)
    assert int(matched.sum()) == SEED["matchedSampleCount"] == 37_376
    assert not np.isin(dump.epoch[~matched], [1]).any()


def test_no_tile_runs_two_samples_at_once(dump: SyntheticDump) -> None:
    order = np.lexsort((dump.offset, dump.tile))
    tile, start = dump.tile[order], dump.offset[order]
    end = start + dump.duration[order]
    assert (dump.duration > 0).all()
    same_tile = tile[1:] == tile[:-1]
    assert not (same_tile & (start[1:] < end[:-1])).any()


def test_epoch1_groups_match_seed(dump: SyntheticDump) -> None:
    rows = _naive_group_stats(dump, SEED["tileCount"], SEED["clockHz"])
    assert [r["name"] for r in rows] == [g["name"] for g in SEED["groups"]]
    mismatches = [
        (want["name"], key, value, got[key])
        for got, want in zip(rows, SEED["groups"], strict=True)
        for key, value in want.items()
        if not _same(got[key], value)
    ]
    assert mismatches == []
    assert sum(r["sampleCount"] for r in rows) == SEED["matchedSampleCount"]


def test_longest_matched_samples_are_the_seed_samples(dump: SyntheticDump) -> None:
    matched = np.flatnonzero(dump.epoch_valid & (dump.epoch == 1))
    top = matched[
        np.lexsort((dump.offset[matched], dump.tile[matched], -dump.duration[matched]))[:3]
    ]
    kinds, ops, kernels = (dump.strings_of(k) for k in ("kind", "operation", "kernel"))
    got = [
        {
            "physicalTile": int(dump.tile[i]),
            "offset": int(dump.offset[i]),
            "duration": int(dump.duration[i]),
            "phase": int(dump.phase[i]),
            "epoch": int(dump.epoch[i]),
            "kind": kinds[i],
            "operation": ops[i],
            "kernel": kernels[i],
            "metadata": [
                {"name": name, "value": value} for name, value in dump.metadata[dump.metadata_id[i]]
            ],
        }
        for i in top
    ]
    assert got == SEED["samples"]


def test_deterministic(dump: SyntheticDump) -> None:
    again = build_reference_dump()
    for field in ("tile", "offset", "duration", "phase", "epoch", "metadata_id"):
        assert np.array_equal(getattr(again, field), getattr(dump, field))
    assert again.metadata == dump.metadata
    assert again.strings == dump.strings


def test_frame_carries_metadata_numbers(dump: SyntheticDump) -> None:
    frame, metadata = dump.to_frame()
    assert frame.height == len(dump)
    exchange = frame.filter(frame["kind"].cast(str) == "exchange")
    assert exchange["kernel"].null_count() == exchange.height
    assert exchange["usefulCycles"].null_count() == exchange.height
    softmax = frame.filter(
        (frame["kernel"].cast(str) == SEED["groups"][1]["name"]) & (frame["epoch"] == 1)
    )
    assert softmax["usefulCycles"].sum() == SEED["groups"][1]["usefulCycles"]
    assert len(metadata) == frame["metadataId"].n_unique()


def _close(got: object, want: object) -> bool:
    """Deep equality with the seed's float tolerance (1e-12 relative)."""
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and list(got) == list(want)
            and all(_close(got[k], want[k]) for k in want)
        )
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(_close(g, w) for g, w in zip(got, want, strict=True))
        )
    return _same(got, want)


def test_stats_module_reproduces_seed(dump: SyntheticDump) -> None:
    import polars as pl

    from tileprof.analyses.stats import GROUP_FIELDS, group_statistics

    frame, _ = dump.to_frame()
    groups = group_statistics(
        frame.filter(pl.col("epoch") == 1), tile_count=dump.tile_count, clock_hz=dump.clock_hz
    )
    got = [
        {"name": row["name"], "dimensions": {}, **{k: row[k] for k in GROUP_FIELDS}}
        for row in groups.iter_rows(named=True)
    ]
    assert _close(got, SEED["groups"])


@pytest.mark.parametrize("name", ["reference.json.gz", "reference.ndjson"])
def test_summary_of_written_dump_is_the_seed(
    dump: SyntheticDump, tmp_path: Path, name: str
) -> None:
    from tileprof.model.profile import load

    path = tmp_path / name
    if name.endswith(".ndjson"):
        dump.write_ndjson(path)
    else:
        dump.write_json(path)
    document = load(path).summary(epoch=1, samples=3).to_document()
    assert _close(document, SEED)
