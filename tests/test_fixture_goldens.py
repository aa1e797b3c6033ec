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
    from tileprof.examples import EXAMPLE_EPOCH, example_profile

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
