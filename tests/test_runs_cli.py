"""``tileprof runs`` through click's runner, on the seeds, fixtures and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.core.run_schema import RUN_SCHEMA

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LATENCY = str(FIXTURES / "seeds" / "000_55f6fcd9cea2f10a.txt")
ENERGY = str(FIXTURES / "seeds" / "003_2d9153cb18ea7de3.txt")
SEED_004 = str(FIXTURES / "seed_004_summary.json")  # a tile dump with 3 samples
TRACE = str(FIXTURES / "traces" / "kineto_small.json")
NSYS = str(FIXTURES / "runs" / "nsys_kern_sum.csv")
LINKS = str(FIXTURES / "runs" / "links.toml")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_json_output_of_every_source_kind() -> None:
    code, out, err = run("runs", LATENCY, ENERGY, SEED_004, TRACE, NSYS, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert [s["kind"] for s in doc["sources"]] == [
        "latency benchmarks",
        "energy report",
        "tile dump",
        "PyTorch trace",
        "nsys kernel summary",
    ]
    assert [s["runs"] for s in doc["sources"]] == [24, 6, 1, 5, 3]
    assert len(doc["runs"]) == 39
    assert list(doc["runs"][0]) == list(RUN_SCHEMA)
    tile = [r for r in doc["runs"] if r["target_kind"] == "tile"]
    # seed 004's three samples are all of one kernel
    assert [r["kernel"] for r in tile] == ["attention_softmax_d72_p768_tail_f8_sm4"]
    assert tile[0]["target"] == "tile device (1472 tiles @ 1.5 GHz)"
    assert doc["runs"][24]["metadata"]["idle_baseline_W"] == 67.92575465007738
    sets = {r["set"] for r in doc["linkedSets"]}
    kind = " (different sizes: compare efficiency, not time)"
    assert {"gemm · f16" + kind, "softmax · f32" + kind, "workload small"} <= sets
    assert doc["notes"] == []


def test_table_output_and_linked_only() -> None:
    code, out, _ = run("runs", LATENCY, ENERGY)
    assert code == 0
    assert out.startswith("runs (30)")
    assert "fp16_tensor_core" in out and "80.79%" in out and "linked sets (4)" in out
    code, out, _ = run("runs", LATENCY, ENERGY, "--linked")
    assert code == 0
    assert out.startswith("linked sets (4)")
    assert "fp16_tensor_core" not in out


def test_csv_parquet_and_links(tmp_path: Path) -> None:
    code, out, _ = run("runs", ENERGY, "--format", "csv")
    assert code == 0
    frame = pl.read_csv(out.encode())
    assert frame.columns == list(RUN_SCHEMA)
    assert frame["energy_j"].to_list()[1] == 1.4260743023888982
    target = tmp_path / "runs.parquet"
    code, _, err = run("runs", ENERGY, LATENCY, "--format", "parquet", "-o", str(target))
    assert code == 0, err
    back = pl.read_parquet(target)
    assert back.height == 30 and back.schema == pl.Schema(RUN_SCHEMA)
    code, _, err = run("runs", ENERGY, "--format", "parquet", "-o", str(target))
    assert code == 2 and "already exists" in err
    code, _, err = run("runs", ENERGY, "--format", "parquet")
    assert code == 2 and "-o FILE" in err
    code, out, _ = run("runs", ENERGY, SEED_004, "--links", LINKS, "--linked", "--format", "csv")
    assert code == 0
    linked = pl.read_csv(out.encode())
    assert linked["set"].to_list()[0] == "layer 3 GEMM"


def test_cpu_only_trace_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "cpu.json"
    path.write_text(
        json.dumps(
            {
                "traceEvents": [
                    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": {}}
                ]
            }
        )
    )
    code, out, _ = run("runs", str(path))
    assert code == 0
    assert "note: cpu.json: CPU-only trace (1 CPU ops, no GPU kernel events)" in out


def test_example_adds_the_reference_tile_profile() -> None:
    code, out, err = run("runs", "--example", LATENCY, ENERGY, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    tile = [r for r in doc["runs"] if r["target_kind"] == "tile"]
    assert len(tile) == 19  # the seed's 19 groups, epoch 1
    assert len(doc["runs"]) == 24 + 6 + 19
    f16 = [r for r in doc["linkedSets"] if r["set"].startswith("gemm · f16 ")]
    assert [r["target"] for r in f16] == [
        "tile device (1472 tiles @ 1.5 GHz)",
        "NVIDIA A100-SXM4-40GB",
    ]
    assert f16[1]["shape"] == "8192x8192x8192"  # seed 003's A100 GEMM carries its shape


def test_example_seeds_and_h200_trace_put_no_unlike_work_on_one_time_axis() -> None:
    """The issue's check: every set that shows time holds one workload or one shape (the same
    work); every other set shows no time at all, and says to compare efficiency."""
    trace = str(FIXTURES / "traces" / "h200_train_steps.json.gz")
    code, out, err = run("runs", "--example", LATENCY, ENERGY, trace, "--format", "json")
    assert code == 0, err
    sets: dict[int, list[dict[str, object]]] = {}
    for r in json.loads(out)["linkedSets"]:
        sets.setdefault(int(r["set_id"]), []).append(r)
    assert len(sets) >= 5
    for rows in sets.values():
        if rows[0]["compare"] == "time":
            assert len({r["workload"] for r in rows}) == 1 or len({r["shape"] for r in rows}) == 1
            assert all(r["shape"] == rows[0]["shape"] for r in rows)
        else:
            assert all(r["time_us"] is None and r["speedup"] is None for r in rows)
            assert "compare efficiency, not time" in str(rows[0]["set"])
    gemm = next(rows for rows in sets.values() if str(rows[0]["set"]).startswith("gemm · f16 "))
    assert {r["target"] for r in gemm} == {
        "tile device (1472 tiles @ 1.5 GHz)",
        "NVIDIA A100-SXM4-40GB",
        "NVIDIA H200",
    }
    # the H200's representative is an op row (kernel rows carry no work): its work is known
    h200 = [r for r in gemm if r["target"] == "NVIDIA H200"]
    assert len(h200) == 1 and h200[0]["kernel"].startswith("aten::")
    assert h200[0]["work"] != "work unknown" and h200[0]["tflops"] > 0


TRACE_EVENT = {
    "ph": "X",
    "cat": "kernel",
    "name": "k",
    "ts": 10.0,
    "dur": 5.0,
    "args": {"device": 0, "stream": 7, "correlation": 1},
}


def _trace(**changes: object) -> dict[str, object]:
    return {
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "op", "ts": 0, "dur": 1},
            TRACE_EVENT | changes,
        ]
    }


BAD_INPUTS = [
    ("none.json", json.dumps({"hello": 1, "world": [2]}), "none.json: $: JSON of no known layout"),
    (
        "notrace.json",
        json.dumps({"schemaVersion": 1, "deviceProperties": []}),
        "notrace.json: $: object missing required field `traceEvents`",
    ),
    (
        # the missing traceEvents is the error, not the deviceProperties entry without an id
        "notrace_props.json",
        json.dumps({"deviceProperties": [{"name": "NVIDIA H200"}]}),
        "notrace_props.json: $: object missing required field `traceEvents`",
    ),
    (
        "noname.json",
        json.dumps(_trace(name=None)),
        "noname.json: $.traceEvents[1].name: GPU event without a name",
    ),
    (
        "nonamekey.json",
        json.dumps({"traceEvents": [{k: v for k, v in TRACE_EVENT.items() if k != "name"}]}),
        "nonamekey.json: $.traceEvents[0].name: GPU event without a name",
    ),
    (
        "propsnoid.json",
        json.dumps(_trace() | {"deviceProperties": [{"name": "NVIDIA H200"}]}),
        "propsnoid.json: $.deviceProperties[0]: object missing required field `id`",
    ),
    (
        "negative.json",
        json.dumps(_trace(dur=-3.0)),
        "negative.json: $.traceEvents[1].dur: negative duration -3 µs",
    ),
    (
        "strdur.json",
        json.dumps(_trace(dur="5.0")),
        "strdur.json: $.traceEvents[1].dur: expected `float | null`, got `str`",
    ),
    (
        "strstream.json",
        json.dumps(_trace(args={"device": 0, "stream": "7"})),
        "strstream.json: $.traceEvents[1].args.stream: expected a 64-bit integer, got '7'",
    ),
    (
        "nsys.csv",
        "progress...\nTime (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),"
        "Max (ns),StdDev (ns),GridXYZ,Name\n1,2,3,4,5,6,7,8,9,k\n",
        "nsys.csv: line 2: unknown column 'GridXYZ' (column 9)",
    ),
    (
        "nsysnum.csv",
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
        "StdDev (ns),Name\n1,2,three,4,5,6,7,8,k\n",
        "nsysnum.csv: line 2, column 3 (Instances): not a number: 'three'",
    ),
    (
        "latency.json",
        json.dumps(
            {
                "held_out": [
                    {
                        "gpu": "A100",
                        "workload": "w",
                        "shape": [1],
                        "trainkernel_us": "15.28",
                        "inductor_us": 1.0,
                    }
                ]
            }
        ),
        "latency.json: $.held_out[0].trainkernel_us: expected `float`, got `str`",
    ),
    (
        "energy.json",
        json.dumps(
            {
                "hardware": {"gpu_name": "A100"},
                "gemm_8192": {
                    "shape": [1, 1, 1],
                    "MAC": 1,
                    "stages": {"fp16": {"seconds_per_GEMM": "0.1"}},
                },
            }
        ),
        "energy.json: $.gemm_8192.stages.fp16.seconds_per_GEMM: expected `float`, got `str`",
    ),
    (
        "latency_negative.json",
        json.dumps(
            {
                "held_out": [
                    {
                        "gpu": "A100",
                        "workload": "w",
                        "shape": [1],
                        "trainkernel_us": -15.2,
                        "inductor_us": 1.0,
                    }
                ]
            }
        ),
        "latency_negative.json: $.held_out[0].trainkernel_us: expected `float` > 0.0",
    ),
    (
        "latency_zero.json",
        json.dumps(
            {
                "held_out": [],
                "h100_calibration": [{"workload": "w", "schedule": "s", "latency_us": 0}],
            }
        ),
        "latency_zero.json: $.h100_calibration[0].latency_us: expected `float` > 0.0",
    ),
    (
        "energy_negative.json",
        json.dumps(
            {
                "hardware": {"gpu_name": "A100"},
                "gemm_8192": {
                    "shape": [1, 1, 1],
                    "MAC": 1,
                    "stages": {"fp16": {"seconds_per_GEMM": -0.1}},
                },
            }
        ),
        "energy_negative.json: $.gemm_8192.stages.fp16.seconds_per_GEMM: expected `float` > 0.0",
    ),
    (
        "energy_zero_mac.json",
        json.dumps(
            {
                "hardware": {"gpu_name": "A100"},
                "gemm_8192": {"shape": [1, 1, 1], "MAC": 0, "stages": {}},
            }
        ),
        "energy_zero_mac.json: $.gemm_8192.MAC: expected `int` >= 1",
    ),
    (
        "energy_negative_j.json",
        json.dumps(
            {
                "hardware": {"gpu_name": "A100"},
                "ciresan_mnist_int8_inference": {
                    "stages": {
                        "b": {"seconds_per_epoch": 1.0, "raw_board_energy_J_per_epoch": -2.0}
                    }
                },
            }
        ),
        "energy_negative_j.json: $.ciresan_mnist_int8_inference.stages.b."
        "raw_board_energy_J_per_epoch: expected `float` >= 0.0",
    ),
    (
        "runs.json",
        json.dumps({"runs": [{"target": "X", "workload": "w", "kernel": "k", "time_us": "3"}]}),
        "runs.json: $.runs[0].time_us: expected `float`, got `str`",
    ),
    (
        "runs.csv",
        "target,workload,kernel,time_us\nX,w,k,fast\n",
        "runs.csv: line 2, column 4 (time_us): not a number: 'fast'",
    ),
    (
        "truncated.json",
        '{"traceEvents": [{"ph": "X", ',
        "truncated.json: line 1, column 30: malformed JSON: truncated: the file ends inside the "
        "document",
    ),
    ("unknown.txt", "hello\nworld\n", "unknown.txt: not a tile dump, latency benchmarks"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_one_line_exit_2(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    code, out, err = run("runs", str(path))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"tileprof: error: {tmp_path}/{message}"), err
    assert "Traceback" not in err


def test_missing_file_and_no_arguments(tmp_path: Path) -> None:
    code, _, err = run("runs", str(tmp_path / "nope.json"))
    assert code == 2 and err == f"tileprof: error: {tmp_path}/nope.json: no such file\n"
    code, _, err = run("runs")
    assert code == 2 and "--example" in err


def test_bad_input_as_a_process(tmp_path: Path) -> None:
    path = tmp_path / "negative.json"
    path.write_text(json.dumps(_trace(dur=-1.0)))
    proc = subprocess.run(
        [sys.executable, "-m", "tileprof", "runs", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr


def test_ops_table_json_csv_parquet(tmp_path: Path) -> None:
    trace = str(FIXTURES / "traces" / "h200_train_steps.json.gz")
    code, out, _ = run("runs", "--ops", trace)
    assert (
        code == 0 and out.startswith("ops (") and "aten::_scaled_dot_product_cudnn_attention" in out
    )
    code, out, _ = run("runs", "--ops", trace, "--format", "json")
    doc = json.loads(out)
    assert set(doc) == {"sources", "ops", "units", "notes"}
    # every byte figure names its unit: bytes are whole bytes, never MiB
    assert doc["units"]["bytes"].startswith("B (bytes") and "MiB" in doc["units"]["bytes"]
    assert set(doc["units"]) <= set(doc["ops"][0])
    mm = [
        r
        for r in doc["ops"]
        if r["op"] == "aten::mm" and r["input_dims"] == "[[256,1024],[1024,1024]]"
    ]
    assert {r["flops"] for r in mm} == {2 * 256 * 1024 * 1024}
    assert all(r["peak_fraction"] is None or r["peak_fraction"] <= 1 for r in doc["ops"])
    code, out, _ = run("runs", "--ops", trace, "--format", "csv")
    assert code == 0 and out.splitlines()[0].startswith("target,source,op,")
    pq = tmp_path / "ops.parquet"
    code, _, _ = run("runs", "--ops", trace, "--format", "parquet", "-o", str(pq))
    assert code == 0 and pl.read_parquet(pq).height == len(doc["ops"])
    code, _, err = run("runs", "--ops", str(FIXTURES / "runs" / "generic_runs.csv"))
    assert code == 2 and err.endswith(": --ops needs a PyTorch trace; this is a run table\n")


def test_example_tile_groups_state_their_work_from_sample_metadata() -> None:
    """Seed 004's f16 GEMM group: 384 samples (seed_004_summary.json), each stating kernelSpec
    ``Gemm { a: f16, rows: large, k: 80, cols: 112, interleaved: true }`` and 13,552 output
    elements (121 rows × 112 cols): 384 × 13,552 = 5,203,968 output elements."""
    code, out, err = run("runs", "--example", ENERGY, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    name = "gemm_f16_init_large_rows_interleaved_k80_c112_r121_r122"
    meta = next(r["metadata"] for r in doc["runs"] if r["kernel"] == name)
    assert meta["kernelSpec"] == "Gemm { a: f16, rows: large, k: 80, cols: 112, interleaved: true }"
    assert meta["outputElements"] == 384 * 13_552 == 5_203_968
    assert meta["sampleCount"] == 384
    tile = next(r for r in doc["linkedSets"] if r["kernel"] == name)
    assert tile["work"] == (
        "Gemm { a: f16, rows: large, k: 80, cols: 112, interleaved: true }, "
        "5,203,968 output elements, 0.8326 GFLOP, 5,902,848 useful cycles"
    )
    assert tile["flops"] == 2 * 80 * 5_203_968  # K × Σ outputElements MACs
    assert tile["per"] == "active"


def test_runs_of_two_traces_of_one_file_name_say_which_is_which(tmp_path: Path) -> None:
    """Qwen's and BERT's H100 traces, both saved as trace.json.gz: one target, so each row of
    the run and op tables names its trace's path, and so do the notes (by file name alone,
    two `aten::gelu` rows of one target and a note "trace.json.gz: …" said nothing of
    which run they were)."""
    root = FIXTURES / "tracelens"
    qwen, bert = tmp_path / "rank0" / "trace.json.gz", tmp_path / "rank1" / "trace.json.gz"
    for source, copy in (("h100_Qwen_Qwen1.5-0.5B-Chat__1016005", qwen),
                         ("h100_gaunernst_bert-small-uncased__1016001", bert)):  # fmt: skip
        copy.parent.mkdir()
        copy.write_bytes((root / f"{source}.json.gz").read_bytes())
    code, out, _ = run("runs", str(qwen), str(bert), "--format", "json")
    doc = json.loads(out)
    files = {r["source"].split(": ")[0] for r in doc["runs"]}
    assert code == 0 and files == {str(qwen), str(bert)}
    assert doc["notes"] and all(n.startswith(f"{qwen}: ") for n in doc["notes"])
    code, out, _ = run("runs", str(qwen), str(bert))
    header = next(line for line in out.splitlines() if "┃" in line)
    assert [c.strip() for c in header.split("┃")][:2] == ["target", "file"]
    cells = [line.split("│") for line in out.splitlines() if "│" in line]
    gelu = [row[1].strip()[-19:] for row in cells if row[3].strip() == "aten::gelu"]
    assert gelu == ["rank1/trace.json.gz"] * 2  # BERT's (the cell keeps a long path's end)
    assert {row[1].strip()[-19:] for row in cells} == {"rank0/trace.json.gz", gelu[0]}
    code, out, _ = run("runs", "--ops", str(qwen), str(bert), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and {r["source"] for r in doc["ops"]} == {str(qwen), str(bert)}
    assert [s["file"] for s in doc["sources"]] == [str(qwen), str(bert)]
    assert any(n.startswith(f"{qwen}: ") for n in doc["notes"])
    code, out, _ = run("runs", "--ops", str(qwen), str(bert))
    header = next(line for line in out.splitlines() if "┃" in line)
    assert [c.strip() for c in header.split("┃")][:2] == ["target", "file"]
