"""``roofline:GLOB`` on GPU steps (issue 36): each matching kernel at its roofline time from
the run table (its launching op's roofline figures), and a note for those without one."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.model.gpu_critical import kernel_rooflines

ROOT = Path(__file__).resolve().parent.parent
BERT = str(ROOT / "fixtures/tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz")
GLOB = "*s16816gemm_bf16_256x128_64x3*"  # the kernel on step 6's path


def _critical(*edits: str) -> dict:
    args = ["critical", BERT, "--format", "json"]
    for edit in edits:
        args += ["--what-if", edit]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_roofline_sets_a_kernel_to_its_launching_ops_roofline_time() -> None:
    runs = json.loads(CliRunner().invoke(cli, ["runs", BERT, "--format", "json"]).stdout)["runs"]
    (kernel,) = {r["kernel"] for r in runs if "s16816gemm_bf16_256x128_64x3" in r["kernel"]}
    (op,) = {r["launch_op"] for r in runs if r["kernel"] == kernel}
    op_rows = [r for r in runs if r["kernel"] == op and r["source"].endswith(": op rows")]
    assert op_rows and all(r["roofline_us"] is not None for r in op_rows)
    fraction = sum(r["roofline_us"] * r["calls"] for r in op_rows) / sum(
        r["total_us"] for r in op_rows
    )
    assert 0 < fraction < 1
    at_roofline = _critical(f"roofline:{GLOB}")
    scaled = _critical(f"scale:{GLOB}={fraction!r}")
    steps = at_roofline["traces"][0]["steps"]
    assert any(s["whatIf"]["gainNs"] > 0 for s in steps)
    for mine, plain in zip(steps, scaled["traces"][0]["steps"], strict=True):
        assert mine["whatIf"]["whatIfNs"] == plain["whatIf"]["whatIfNs"]
        assert mine["whatIf"]["notes"] == []


def test_kernels_without_a_roofline_are_left_as_they_are_with_a_note() -> None:
    document = _critical("roofline:Memcpy*")
    for step in document["traces"][0]["steps"]:
        assert step["whatIf"]["gainNs"] == 0
        (note,) = step["whatIf"]["notes"]
        assert "1 of 1 matching kernels have no roofline, left as they are (Memcpy" in note
    nothing = _critical("roofline:no-such-kernel")["traces"][0]["steps"][0]["whatIf"]
    assert nothing["notes"] == ["roofline:no-such-kernel: no kernel matches 'no-such-kernel'"]


def test_kernel_rooflines_need_one_launching_op_with_every_row_known() -> None:
    runs = pl.DataFrame(
        {
            "source": ["t: device 0"] * 4 + ["t: op rows"] * 4,
            "kernel": ["k1", "k2", "k3", "k3", "mm", "mm", "add", "add"],
            "launch_op": ["mm", "add", "mm", "add", None, None, None, None],
            "roofline_fraction": [None] * 8,
            "roofline_us": [None] * 4 + [1.0, 2.0, 1.0, None],
            "calls": [1, 1, 1, 1, 2, 1, 1, 1],
            "total_us": [None] * 4 + [8.0, 8.0, 5.0, 5.0],
        },
        schema_overrides={"roofline_fraction": pl.Float64, "roofline_us": pl.Float64},
    )
    # mm: (1 × 2 + 2 × 1) / (8 + 8) = 0.25; add has a row without a roofline; k3 has two ops
    assert kernel_rooflines(runs) == {"k1": 0.25}
