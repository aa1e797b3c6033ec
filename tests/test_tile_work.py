"""A tile group's stated work (kernelSpec, Σ outputElements) from hand-built samples."""

from __future__ import annotations

import polars as pl

from tileprof.analyses.tile_work import group_work


def test_group_work_by_hand() -> None:
    samples = pl.DataFrame(
        {
            "kernel": ["g", "g", "g", "m", "", "x"],
            "kind": ["compute"] * 4 + ["exchange", "compute"],
            "metadataId": [0, 0, 1, 2, None, 3],
        },
        schema={"kernel": pl.String, "kind": pl.String, "metadataId": pl.UInt32},
    )
    metadata = (
        (("kernelSpec", "Gemm { k: 8 }"), ("outputElements", "10")),
        (("kernelSpec", "Gemm { k: 8 }"), ("outputElements", "5")),
        (("kernelSpec", "Other"), ("outputElements", "not a number")),
        (("kernelSpec", "A"),),
    )
    work = {r["name"]: r for r in group_work(samples, metadata).iter_rows(named=True)}
    assert (work["g"]["kernelSpec"], work["g"]["kernelSpecs"], work["g"]["outputElements"]) == (
        "Gemm { k: 8 }",
        1,
        10 + 10 + 5,
    )
    # an unparsable count is not a count; a sample without metadata states nothing
    assert (work["m"]["kernelSpec"], work["m"]["outputElements"]) == ("Other", None)
    assert (work["exchange"]["kernelSpecs"], work["exchange"]["outputElements"]) == (0, None)
    assert work["x"]["outputElements"] is None
