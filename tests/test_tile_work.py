"""A tile group's stated work (kernelSpec, Σ outputElements) from hand-built samples."""

from __future__ import annotations

import polars as pl
import pytest

from tileprof.analyses.tile_work import (
    WORK_SCHEMA,
    group_work,
    spec_fields,
    stated_bytes,
    stated_work,
)


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


def test_a_gemm_groups_work_by_hand() -> None:
    """Gemm { a: f16, k: 80, cols: 112 } over 2 samples writing 3 rows each (336 elements):
    MAC = K × Σ outputElements; bytes = 2 × (K × ΣM + samples × K × N + Σ outputElements)."""
    mac, moved, unknown = stated_work("Gemm { a: f16, k: 80, cols: 112 }", 672, 2)
    assert (mac, moved, unknown) == (80 * 672, 2 * (80 * 6 + 2 * 80 * 112 + 672), None)
    assert stated_work("Gemm { a: q4, k: 80, cols: 112 }", 672, 2) == (80 * 672, None, None)
    assert stated_work("Gemm { k: 80, cols: 112 }", 672, 2) == (80 * 672, None, None)


@pytest.mark.parametrize(
    ("spec", "outputs", "why"),
    [
        (None, 10, "no kernelSpec shared by the group's samples"),
        ("Gemm", 10, "kernelSpec 'Gemm' is not of the form Kind { key: value }"),
        ("Gemm { k: 8 }", 10, "Gemm kernelSpec without k and cols"),
        ("Gemm { cols: 8 }", 10, "Gemm kernelSpec without k and cols"),
        ("Gemm { k: 8, cols: 0 }", 10, "Gemm kernelSpec without k and cols"),
        ("Gemm { k: x, cols: 2 }", 10, "Gemm kernelSpec without k and cols"),
        ("Gemm { k: 8, cols: 4 }", None, "no outputElements stated"),
        ("Gemm { k: 8, cols: 4 }", 10, "outputElements 10 is not a multiple of cols 4"),
        ("Softmax { element: f32 }", 10, "no FLOP rule for Softmax kernels"),
    ],
)
def test_why_a_groups_flops_are_unknown(spec: str | None, outputs: int | None, why: str) -> None:
    mac, moved, unknown = stated_work(spec, outputs, 1)
    assert (mac, moved, unknown) == (None, None, why)


@pytest.mark.parametrize(
    ("kind", "fields", "outputs", "inputs", "expected"),
    [
        ("Copy", {"element": "f32"}, 10, 6, 6 * 4 + 10 * 4),
        ("CopyStrided", {"element": "f16"}, 10, None, 10 * 2 + 10 * 2),
        ("StaticCopy", {"element": "u8"}, 10, None, 20),
        ("Fill", {"element": "i32"}, 10, 99, 40),
        ("Cast", {"from": "f32", "to": "bf16"}, 10, None, 10 * 4 + 10 * 2),
        ("Cast", {"from": "f32", "to": "bf16"}, 10, 12, 12 * 4 + 10 * 2),
        ("ReduceSum", {"element": "f32"}, 2, 64, 64 * 4 + 2 * 4),
        ("ReduceSum", {"element": "f32"}, 2, None, None),
        ("Copy", {"element": "complex"}, 10, None, None),
        ("Cast", {"from": "f32"}, 10, None, None),
        ("Copy", {"element": "f32"}, 0, 5, None),
        ("Copy", {"element": "f32"}, None, 5, None),
        ("Softmax", {"element": "f32"}, 10, 10, None),
    ],
)
def test_bytes_of_a_kernel_that_is_not_a_gemm(
    kind: str, fields: dict[str, str], outputs: int | None, inputs: int | None,
    expected: int | None,
) -> None:  # fmt: skip
    assert stated_bytes(kind, fields, outputs, inputs) == expected


def test_a_kernel_spec_read_field_by_field() -> None:
    assert spec_fields("  Gemm {a: f16 ,k:80, interleaved: true }  ") == (
        "Gemm",
        {"a": "f16", "k": "80", "interleaved": "true"},
    )
    assert spec_fields("Fill { element: f32, stray }") == ("Fill", {"element": "f32"})
    assert spec_fields("Fill {}") == ("Fill", {})
    assert spec_fields("Fill") is None
    assert spec_fields("Fill { a: b } tail") is None


def test_a_groups_input_elements_count_only_where_every_stating_sample_states_them() -> None:
    """Σ input0Elements reaches the bytes only when each sample that states its outputs states
    its inputs too: a ReduceSum group with one sample silent on its inputs has no bytes, and a
    copy group then reads what it writes."""
    samples = pl.DataFrame(
        {
            "kernel": ["r", "r", "q", "q", "c", "c"],
            "kind": ["compute"] * 6,
            "metadataId": [0, 1, 0, 2, 3, 4],
        },
        schema={"kernel": pl.String, "kind": pl.String, "metadataId": pl.UInt32},
    )
    reduce = "ReduceSum { element: f32 }"
    copy = "Copy { element: f16 }"
    metadata = (
        (("kernelSpec", reduce), ("outputElements", "2"), ("input0Elements", " 64 ")),
        (("kernelSpec", reduce), ("outputElements", "3"), ("input0Elements", "96")),
        (("kernelSpec", reduce), ("outputElements", "1")),
        (("kernelSpec", copy), ("outputElements", "10"), ("input0Elements", "4")),
        (("kernelSpec", copy), ("outputElements", "6")),
    )
    frame = group_work(samples, metadata)
    assert frame.schema == pl.Schema(WORK_SCHEMA)
    work = {r["name"]: r for r in frame.iter_rows(named=True)}
    assert (work["r"]["outputElements"], work["r"]["bytes"]) == (5, (64 + 96) * 4 + 5 * 4)
    assert (work["q"]["outputElements"], work["q"]["bytes"]) == (3, None)
    assert (work["c"]["outputElements"], work["c"]["bytes"]) == (16, 16 * 2 + 16 * 2)
    assert work["r"]["workUnknown"] == "no FLOP rule for ReduceSum kernels"
    assert work["r"]["mac"] is None


def test_a_gemm_group_and_no_samples() -> None:
    samples = pl.DataFrame(
        {"kernel": ["g", "g"], "kind": ["compute"] * 2, "metadataId": [0, 1]},
        schema={"kernel": pl.String, "kind": pl.String, "metadataId": pl.UInt32},
    )
    gemm = "Gemm { a: f32, k: 4, cols: 2 }"
    metadata = (
        (("kernelSpec", gemm), ("outputElements", "6")),
        (("kernelSpec", gemm), ("outputElements", "2")),
    )
    row = group_work(samples, metadata).row(0, named=True)
    assert (row["mac"], row["bytes"], row["workUnknown"]) == (
        4 * 8,
        4 * (4 * 4 + 2 * 4 * 2 + 8),
        None,
    )
    empty = group_work(samples.clear(), metadata)
    assert empty.height == 0 and empty.schema == pl.Schema(WORK_SCHEMA)
