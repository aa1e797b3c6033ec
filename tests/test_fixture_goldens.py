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
    pytest.importorskip("tileprof.reference", reason="reference generator not on this branch yet")
    from tileprof.examples import EXAMPLE_EPOCH, example_profile

    summary = example_profile().summary(epoch=EXAMPLE_EPOCH)
    assert_aggregates_match(summary, reference_aggregates("reference-004"), rtol=1e-12)
