"""Thresholds for golden comparisons: re-exported from ``tileprof.analyses.thresholds``.

The parser and evaluator live in the analyses layer so that ``tileprof diff --fail-on`` and
``tileprof history --fail-on`` read the same sentences as the pytest plugin.
"""

from __future__ import annotations

from tileprof.analyses.thresholds import Threshold, ThresholdError

__all__ = ["Threshold", "ThresholdError"]
