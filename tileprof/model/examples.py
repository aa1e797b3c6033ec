"""The bundled reference profile behind ``--example``: the run that seed 004 summarizes.

It is rebuilt by a deterministic generator (``tileprof.inputs.synthetic.reference``) rather than
shipped as a
large file; ``summary --example --epoch 1`` reproduces the seed's group table.
"""

from __future__ import annotations

import functools

from tileprof.model.profile import Profile

EXAMPLE_SOURCE = "tileprof reference profile (seed 004)"
EXAMPLE_EPOCH = 1
"""The epoch the reference summary was filtered to (``--epoch 1``)."""


@functools.lru_cache(maxsize=1)
def example_profile() -> Profile:
    """The reference profile, built once per process."""
    from tileprof.inputs.synthetic.reference import build_reference_dump

    dump = build_reference_dump()
    samples, metadata = dump.to_frame()
    return Profile(
        samples, tuple(metadata), dump.clock_hz, dump.tile_count, EXAMPLE_SOURCE, "generated"
    )
