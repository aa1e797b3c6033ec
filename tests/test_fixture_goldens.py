"""tileprof's own fixtures, checked through its pytest plugin (dogfooding the kernel-author path).

``pytest --tileprof-regen`` rewrites ``fixtures/*/aggregates.json`` from these tests;
``test_pytest_plugin.py::test_regen_on_clean_checkout_changes_nothing`` holds that it is a no-op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tileprof.testing import GoldenFile, TileDumpFactory, assert_aggregates_match

SCENARIOS: dict[str, dict[str, Any]] = {
    "exchange-heavy": {"epoch": 1},
    "tail-imbalance": {"epoch": 1},
    "no-work-estimate": {"epoch": 1},
    "empty-match": {"epoch": 1},  # every sample is in epoch 0
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_aggregates(
    name: str, tile_dump: TileDumpFactory, reference_aggregates: Callable[[str], GoldenFile]
) -> None:
    summary = tile_dump(name).summary(**SCENARIOS[name])
    assert_aggregates_match(summary, reference_aggregates(name), rtol=0)


def test_reference_profile_of_seed_004(reference_aggregates: Callable[[str], GoldenFile]) -> None:
    """The generated reference run, filtered as the seed was, against the seed's own numbers."""
    from tileprof.model.examples import EXAMPLE_EPOCH, example_profile

    summary = example_profile().summary(epoch=EXAMPLE_EPOCH)
    assert_aggregates_match(summary, reference_aggregates("reference-004"), rtol=1e-12)


def test_reference_golden_is_the_seed_table() -> None:
    """The seed 004 golden pins exactly the seed's own numbers (copy in fixtures/)."""
    import json
    from pathlib import Path

    from tileprof.testing import Aggregates, aggregates_of

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    seed = fixtures / "seed_004_summary.json"
    golden = Aggregates.load(fixtures / "reference-004" / "aggregates.json")
    from_seed = aggregates_of(json.loads(seed.read_text(encoding="utf-8")))
    assert (golden.groups, golden.header) == (from_seed.groups, from_seed.header)


def _golden(name: str) -> dict[str, Any]:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "fixtures" / name / "aggregates.json"
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def test_goldens_hold_hand_checked_figures() -> None:
    """Fields worked out from each spec by hand, so a regen that pins a wrong value fails here
    (test_scenario_aggregates only says the code agrees with what it last wrote)."""
    golden = _golden("no-work-estimate")
    assert golden["header"]["sampleCount"] == golden["header"]["matchedSampleCount"] == 512
    static = golden["groups"]["static_copy_u32"]
    # 128 samples of 150 cycles, one per tile on 128 tiles, no metadata
    assert {k: static[k] for k in ("sampleCount", "tileCount", "phaseCycles", "workCycles")} == {
        "sampleCount": 128,
        "tileCount": 128,
        "phaseCycles": 150,
        "workCycles": 19_200,
    }
    assert (static["p50Cycles"], static["p95Cycles"], static["meanCycles"]) == (150, 150, 150.0)
    assert static["usefulUtilization"] is None and static["estimatedWorkCycles"] == 0
    strided = golden["groups"]["copy_strided_u64"]
    # durations cycle 300, 420, 360 over 256 samples: 86 × 300, 85 × 420, 85 × 360
    # = 92,100 cycles, mean 359.765625; p50 rank 128 → 360, p95 rank ⌈243.2⌉ = 244 → 420.
    # Sample i and i + 128 share a tile, back to back: the longest pair is 360 + 420 = 780.
    assert (strided["workCycles"], strided["meanCycles"]) == (92_100, 359.765625)
    assert (strided["p50Cycles"], strided["p95Cycles"], strided["maximumCycles"]) == (360, 420, 420)
    assert strided["phaseCycles"] == 780
    tail = _golden("tail-imbalance")
    assert (tail["header"]["sampleCount"], tail["header"]["tileCount"]) == (768, 256)
    exchange = tail["groups"]["exchange"]
    # durations drawn from {2000, 2400, 3100}, all starting together after the GEMM phase
    assert (exchange["maximumCycles"], exchange["phaseCycles"]) == (3100, 3100)
    assert exchange["meanCycles"] == exchange["workCycles"] / 256
    gemm = tail["groups"]["gemm_f16_rows_k80"]
    # useful 0.67 and occupancy 0.9 of each sample's cycles, up to per-sample rounding
    assert gemm["usefulUtilization"] == pytest.approx(0.67, abs=1e-5)
    assert gemm["workLaneOccupancy"] == pytest.approx(0.9, abs=1e-5)
    # three tiles run 3.5 × a normal(22000, 300) duration
    assert 3.5 * 21_000 < gemm["maximumCycles"] < 3.5 * 23_000
    empty = _golden("empty-match")
    assert (empty["header"]["sampleCount"], empty["header"]["matchedSampleCount"]) == (96, 0)
    assert empty["groups"] == {}
