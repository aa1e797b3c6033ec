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


EXAMPLE_FILES: dict[str, tuple[str, str]] = {
    "trace": (
        "examples/h200_train_steps.json.gz",
        "a PyTorch profiler (Kineto) trace of a small training run on an H200",
    ),
    "nsys": ("examples/nsys_kern_sum.csv", "an nsys cuda_gpu_kern_sum CSV"),
    "latency": ("seeds/000_55f6fcd9cea2f10a.txt", "latency benchmarks (seed 000)"),
    "energy": ("seeds/003_2d9153cb18ea7de3.txt", "an NVML energy report (seed 003)"),
    "links": (
        "examples/links.toml",
        "a links file: the tile GEMMs with the energy report's FP16 GEMM",
    ),
}
"""``convert --example-file NAME``: bundled example inputs (under ``tileprof/data``) by name,
with what each is, so that every command in the docs can be tried in an empty folder."""


def example_file(name: str) -> bytes:
    """The bytes of the bundled example input ``name`` (a key of ``EXAMPLE_FILES``)."""
    from importlib import resources

    return (resources.files("tileprof") / "data" / EXAMPLE_FILES[name][0]).read_bytes()
