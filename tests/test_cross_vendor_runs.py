"""One ``runs`` table over every vendor's profile: an H100 nsys export, an MI300X Kineto trace,
a Tenstorrent ops report and the tile example, linked where the work is the same."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from tileprof.commands.cli import cli

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "fixtures" / "real"
NSYS = REAL / "h100_2gpu_1s.sqlite"
MI300 = REAL / "mi300_gaunernst_bert-small-uncased__1016001.json.gz"
TT = REAL / "tt_wh_clip_encoder_400.csv"
ENERGY = ROOT / "fixtures" / "seeds" / "003_2d9153cb18ea7de3.txt"


def runs_json(*args: str | Path) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["runs", *map(str, args), "--format", "json"])
    assert result.exit_code == 0, result.stderr
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def test_one_table_over_four_vendors() -> None:
    doc = runs_json("--example", NSYS, MI300, TT)
    runs = doc["runs"]
    assert isinstance(runs, list)
    kinds = {r["target"]: r["target_kind"] for r in runs}
    # the two H100s of the nsys export are one target, told apart by device
    assert kinds["GPU"] == "gpu"
    nsys = {r["device"] for r in runs if r["source"].startswith("h100_2gpu_1s.sqlite")}
    assert nsys == {"GPU 0", "GPU 1"}
    assert kinds["Tenstorrent wormhole_b0"] == "tile"
    assert any(k == "tile" and t.startswith("tile device") for t, k in kinds.items())
    sources = doc["sources"]
    assert isinstance(sources, list)
    assert [s["kind"] for s in sources] == [
        "tile dump",
        "nsys SQLite export",
        "PyTorch trace",
        "Tenstorrent ops report",
    ]
    sets = doc["linkedSets"]
    assert isinstance(sets, list)
    gemm = [s for s in sets if s["set"].startswith("gemm · bf16")]
    targets = {s["target"] for s in gemm}
    assert "Tenstorrent wormhole_b0" in targets and len(targets) >= 2


def test_a_matmul_links_as_equal_work_with_a_gpu_gemm_of_its_shape(tmp_path: Path) -> None:
    frame = pd.read_csv(TT, low_memory=False)
    mm = frame[frame["OP CODE"] == "MinimalMatmulOp"].head(2).copy()
    for column in ("INPUT_0_Y_PAD[LOGICAL]", "INPUT_0_X_PAD[LOGICAL]"):
        mm[column] = "8192[8192]"
    for column in ("INPUT_1_Y_PAD[LOGICAL]", "INPUT_1_X_PAD[LOGICAL]"):
        mm[column] = "8192[8192]"
    mm["INPUT_0_DATATYPE"] = "FLOAT32"
    path = tmp_path / "ops_perf_results_gemm.csv"
    mm.to_csv(path, index=False)
    doc = runs_json(ENERGY, path)
    sets = doc["linkedSets"]
    assert isinstance(sets, list)
    same = [s for s in sets if s["link_by"] == "shape" and "8192x8192x8192" in s["set"]]
    assert {s["target"] for s in same if "f32" in s["set"]} == {
        "NVIDIA A100-SXM4-40GB",
        "Tenstorrent wormhole_b0",
    }
    tt = next(s for s in same if s["target"].startswith("Tenstorrent"))
    assert tt["time_us"] is not None and tt["flops"] == 2 * 8192**3
