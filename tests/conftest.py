"""Test-wide settings: the pytester fixture, and the Hypothesis profiles (docs/testing.md).

``ci`` (the default) is derandomized: every run tries the same examples, so a property test
that passes once passes every time, and a failure reproduces on any machine. ``release``
(``HYPOTHESIS_PROFILE=release``) draws twenty times as many random examples, for the checks
before a release. Neither has a deadline or the too-slow health check: the suite runs on loaded
shared machines, and no test asserts on time.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile(
    "ci", derandomize=True, database=None, max_examples=100, print_blob=True, **_COMMON
)
settings.register_profile("release", max_examples=2000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
