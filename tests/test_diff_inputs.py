"""``tileprof.model.diff_inputs``: how each side of ``tileprof diff`` is read, and which options
each kind of input refuses (issue 38: the survivors of its mutation run, branch ``mutS``).

Expected values are worked out by hand from the samples below, never taken from a diff.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from tests.samples import sample, write_dump
from tileprof.analyses.diff import Rename
from tileprof.analyses.filters import Filters
from tileprof.commands.cli import cli
from tileprof.model.diff_inputs import ReadOptions, compare_files

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
H200 = FIXTURES / "traces" / "h200_train_steps.json.gz"

# before: softmax 2 samples, same 1, gemm 2, gone 1 (6); after: softmax 2, same 1, gemm 2, new 1
BEFORE = [
    sample(0, 0, 100, "gemm", useful=50),
    sample(1, 0, 100, "gemm", useful=50),
    sample(0, 100, 40, "softmax"),
    sample(0, 140, 10, "gone"),
    sample(0, 150, 30, "same"),
    sample(2, 300, 10, "softmax", epoch=2),
]
AFTER = [
    sample(0, 0, 80, "gemm", useful=50),
    sample(1, 0, 80, "gemm", useful=50),
    sample(0, 80, 60, "softmax"),
    sample(0, 140, 20, "new"),
    sample(0, 150, 30, "same"),
    sample(2, 300, 25, "softmax", epoch=2),
]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def documents(tmp_path: Path) -> tuple[Path, Path]:
    """``summary --format json`` of each dump: two summary documents, grouped by kernel."""
    out = []
    for name, samples in (("before", BEFORE), ("after", AFTER)):
        dump = write_dump(tmp_path / f"{name}.json", samples)
        document = tmp_path / f"{name}.summary.json"
        assert run("summary", dump, "--format", "json", "-o", document)[0] == 0
        out.append(document)
    return out[0], out[1]


@pytest.mark.parametrize(
    ("option", "value"),
    [("--epoch", "1"), ("--at", "5"), ("--window", "0:10"), ("--kind", "compute")],
)
def test_a_summary_document_refuses_each_sample_filter_by_name(
    documents: tuple[Path, Path], option: str, value: str
) -> None:
    code, out, err = run("diff", *documents, option, value)
    assert (code, out) == (2, "")
    assert err == (
        f"tileprof: error: {documents[0]} is a summary document (groups, not samples): "
        f"{option} cannot apply to it; only --kernel can\n"
    )


def test_a_summary_document_is_not_regrouped(documents: tuple[Path, Path]) -> None:
    code, out, err = run("diff", *documents, "--group-by", "epoch")
    assert (code, out) == (2, "")
    assert err == (
        f"tileprof: error: {documents[0]} is grouped by []; it cannot be regrouped by ['epoch']\n"
    )


def test_a_broken_summary_document_is_named(documents: tuple[Path, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    document = json.loads(documents[1].read_text())
    document["groups"][0]["phaseCycles"] = "many"
    broken.write_text(json.dumps(document))
    code, out, err = run("diff", documents[0], broken)
    assert (code, out) == (2, "")
    assert err.startswith(f"tileprof: error: {broken}") and "groups[0].phaseCycles" in err
    cut = tmp_path / "cut.json"
    cut.write_bytes(documents[1].read_bytes()[:400])  # still a summary's head, not its end
    code, out, err = run("diff", documents[0], cut)
    assert (code, out) == (2, "")
    assert err.startswith(f"tileprof: error: {cut}: line ") and "truncated" in err


def test_a_summary_document_narrowed_by_kernel(documents: tuple[Path, Path]) -> None:
    """--kernel 's*' keeps softmax (2 samples) and same (1) of each side's 6."""
    diff = compare_files(*documents, ReadOptions(filters=Filters(kernels=("s*",))))
    assert (diff.before.label, diff.after.label) == tuple(map(str, documents))
    assert diff.before.kind == diff.after.kind == "tile"
    for side in (diff.before, diff.after):
        assert side.summary is not None
        assert side.summary.matched_sample_count == 3
        assert side.summary.sample_count == 6
        assert side.summary.samples == []  # the document's longest samples are of every kernel
        assert side.summary.filters == Filters(kernels=("s*",))
    assert set(diff.rows.get_column("group")) == {"softmax", "same"}
    code, out, err = run("diff", *documents, "--kernel", "s*")
    assert code == 0, err
    assert "filters         --kernel s*" in out.splitlines()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--epoch", "1"),
        ("--at", "5"),
        ("--window", "0:10"),
        ("--kind", "compute"),
        ("--group-by", "epoch"),
    ],
)
def test_a_gpu_source_refuses_each_tile_option_by_name(option: str, value: str) -> None:
    code, out, err = run("diff", H200, H200, option, value)
    assert (code, out) == (2, "")
    assert err == (
        f"tileprof: error: {H200} is a PyTorch trace: {option} applies to tile profiles only\n"
    )


def sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_baseline_dump_is_read_with_the_reports_filters_and_both_digests(
    tmp_path: Path,
) -> None:
    """Epoch 1, kernels s*: softmax 40 → 60 and same 30 → 30 phase cycles."""
    from tileprof.model.diff_inputs import baseline_diff
    from tileprof.model.profile import load

    before = write_dump(tmp_path / "before.json", BEFORE)
    after = write_dump(tmp_path / "after.json", AFTER)
    filters = Filters(epoch=1, kernels=("s*",))
    diff = baseline_diff(before, load(after), filters, "the report's dump", ())
    assert (diff.before.label, diff.after.label) == (str(before), "the report's dump")
    assert (diff.before.sha256, diff.after.sha256) == (sha256(before), sha256(after))
    rows = {r["group"]: r for r in diff.rows.iter_rows(named=True)}
    assert set(rows) == {"softmax", "same"}
    assert (rows["softmax"]["phaseCycles_before"], rows["softmax"]["phaseCycles_after"]) == (40, 60)
    assert rows["same"]["status"] == "unchanged"
    by_epoch = baseline_diff(before, load(after), Filters(), "dump", ("epoch",))
    assert by_epoch.before.dimensions == by_epoch.after.dimensions == ("epoch",)
    assert len(by_epoch.rows) == 6  # gemm, softmax ×2 epochs, gone, new, same


def test_a_baseline_summary_document_takes_only_the_kernel_filter(
    documents: tuple[Path, Path], tmp_path: Path
) -> None:
    """The document's groups were filtered when it was written: --epoch 1 narrows the report's
    dump only (softmax 40 + 10 before, both epochs as written; 60 after, epoch 1 only), and
    --kernel s* both sides. A profile without a file (built in Python) has no digest."""
    from tileprof.model.diff_inputs import baseline_diff
    from tileprof.model.profile import load

    no_source = replace(load(write_dump(tmp_path / "dump.json", AFTER)), source=None)
    diff = baseline_diff(documents[0], no_source, Filters(epoch=1, kernels=("s*",)), "d", ())
    rows = {r["group"]: r for r in diff.rows.iter_rows(named=True)}
    assert set(rows) == {"softmax", "same"}
    assert (rows["softmax"]["phaseCycles_before"], rows["softmax"]["phaseCycles_after"]) == (50, 60)
    assert (diff.before.sha256, diff.after.sha256) == (sha256(documents[0]), None)
    assert diff.before.summary is not None
    assert diff.before.summary.filters == Filters(kernels=("s*",))


def test_a_baseline_of_a_gpu_source_is_refused_by_name(tmp_path: Path) -> None:
    from tileprof.core.errors import OptionError
    from tileprof.model.diff_inputs import baseline_diff
    from tileprof.model.profile import load

    dump = load(write_dump(tmp_path / "dump.json", AFTER))
    with pytest.raises(OptionError) as raised:
        baseline_diff(H200, dump, Filters(), "the dump", ())
    assert str(raised.value) == (
        f"cannot compare {H200} (PyTorch trace) with the dump (tile dump): "
        "both sides must be tile profiles or both GPU run sources"
    )


def test_the_python_diff_takes_paths_profiles_and_summaries_alike(tmp_path: Path) -> None:
    """Epoch 1 by keyword or as Filters, on paths, on a path and a Profile, on a Profile and
    a Summary: softmax 40 → 60 each time; a GPU source beside a tile profile is refused."""
    import tileprof
    from tileprof.core.errors import OptionError
    from tileprof.model.profile import load

    before = write_dump(tmp_path / "before.json", BEFORE)
    after = write_dump(tmp_path / "after.json", AFTER)
    loaded = load(after)
    summary = load(before).summary(Filters(epoch=1))
    for rows in (
        tileprof.diff(before, after, epoch=1),
        tileprof.diff(str(before), str(after), filters=Filters(epoch=1)),
        tileprof.diff(before, loaded, epoch=1),
        tileprof.diff(summary, loaded, epoch=1),
    ):
        got = {r["group"]: r for r in rows.iter_rows(named=True)}
        assert set(got) == {"gemm", "softmax", "gone", "new", "same"}
        assert (got["softmax"]["phaseCycles_before"], got["softmax"]["phaseCycles_after"]) == (
            40,
            60,
        )
    both = r"^pass filters either as Filters or as keywords, not both$"
    with pytest.raises(TypeError, match=both):
        tileprof.diff(before, after, filters=Filters(), epoch=1)
    with pytest.raises(OptionError) as raised:
        tileprof.diff(H200, loaded)
    assert str(raised.value) == f"cannot compare {H200} (PyTorch trace) with a tile profile"


def test_the_python_diff_groups_matches_and_normalizes_objects_as_paths(tmp_path: Path) -> None:
    import tileprof
    from tileprof.model.profile import load

    before = write_dump(tmp_path / "before.json", [sample(0, 0, 10, "conv_v1_a", epoch=3)])
    after = write_dump(tmp_path / "after.json", [sample(0, 0, 30, "conv_v2_a", epoch=3)])
    for pair in ((before, after), (load(before), load(after))):
        rows = tileprof.diff(*pair, group_by=["epoch"], match=["conv_v1_*=conv_v2_*"])
        assert rows.select("group", "epoch", "status", "phaseCycles_change").rows() == [
            ("conv_v2_a [epoch=3]", 3, "changed", 20)
        ]
        rows = tileprof.diff(*pair, normalize=r"_v\d")
        assert rows.select("status", "phaseCycles_change").rows() == [("changed", 20)]
    renamed = compare_files(before, after, ReadOptions(), match=[Rename("conv_v1_*", "conv_v2_*")])
    assert renamed.rows.select("status", "phaseCycles_change").rows() == [("changed", 20)]


def run_table(path: Path, target: str, k1_us: float) -> Path:
    """A run table of workload w: k1 3 calls of ``k1_us`` µs each, k2 1 call of 4 µs."""
    path.write_text(
        "target,workload,kernel,time_us,calls,total_us\n"
        f"{target},w,k1,{k1_us},3,{3 * k1_us}\n{target},w,k2,4,1,4\n"
    )
    return path


GATE = ("--fail-on", "total_us may not rise by more than 500%")


def test_gpu_run_tables_by_kernel_and_by_launching_op(tmp_path: Path) -> None:
    """k1 2 → 3 µs a call. A run-table row names a run: its workload is part of its name
    ("k1 · w"). Run tables name no launching op: --per-op groups their kernels by workload,
    implementation and shape ("w"): 4 calls, 10 → 13 µs."""
    before = run_table(tmp_path / "a.csv", "H200", 2)
    after = run_table(tmp_path / "b.csv", "H200", 3)
    diff = compare_files(before, after, ReadOptions())
    assert diff.rows.select("group", "status", "total_us_before", "total_us_after").rows() == [
        ("k1 · w", "changed", 6.0, 9.0),
        ("k2 · w", "unchanged", 4.0, 4.0),
    ]
    assert (diff.before.kind, diff.after.kind) == ("run table", "run table")
    assert diff.before.environment == diff.after.environment == {"device": "H200"}
    per_op = compare_files(before, after, ReadOptions(per_op=True))
    shown = per_op.rows.select("group", "calls_before", "total_us_before", "total_us_after")
    assert shown.rows() == [("w", 4, 10.0, 13.0)]
    assert per_op.before.durations is None and per_op.after.durations is None
    only = compare_files(before, after, ReadOptions(filters=Filters(kernels=("k2",))))
    assert only.rows.get_column("group").to_list() == ["k2 · w"]


def test_the_gate_abstains_over_two_named_gpus_only(tmp_path: Path) -> None:
    """A100 against H200 differ; "GPU" is the target of a device no source names: not stated,
    so not compared."""
    before = run_table(tmp_path / "a.csv", "H200", 2)
    code, out, _ = run("diff", before, run_table(tmp_path / "c.csv", "A100", 2), *GATE)
    assert code == 3
    assert out.splitlines()[0] == (
        "abstained, no verdict: the two sides differ in device H200 → A100"
    )
    unnamed = run_table(tmp_path / "d.csv", "GPU", 2)
    assert compare_files(before, unnamed, ReadOptions()).after.environment == {"device": None}
    code, out, err = run("diff", before, unnamed, *GATE)
    assert code == 0, err
    assert "abstained" not in out


def versioned_trace(path: Path, runtime: str) -> Path:
    """A one-kernel trace stating its CUDA runtime and driver as PyTorch writes them."""
    kernel = (
        '{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 2, "dur": 5,'
        ' "args": {"device": 0, "stream": 7, "correlation": 1}}'
    )
    path.write_text(
        f'{{"cuda_runtime_version": {runtime}, "traceEvents": [{kernel}],'
        ' "cuda_driver_version": "12.4"}'
    )
    return path


def test_a_traces_versions_and_kind_are_its_sides(tmp_path: Path) -> None:
    before = versioned_trace(tmp_path / "a.json", "12010")
    after = versioned_trace(tmp_path / "b.json", "12040")
    diff = compare_files(before, after, ReadOptions())
    assert (diff.before.kind, diff.before.label) == ("PyTorch trace", str(before))
    assert diff.before.environment == {
        "device": None,
        "cudaRuntime": "12010",
        "cudaDriver": "12.4",
    }
    assert diff.after.environment["cudaRuntime"] == "12040"
    assert diff.rows.select("group", "status", "calls_before", "calls_after").rows() == [
        ("gemm", "unchanged", 1, 1)
    ]
    code, out, _ = run("diff", before, after, *GATE)
    assert code == 3
    assert out.splitlines()[0] == (
        "abstained, no verdict: the two sides differ in cudaRuntime 12010 → 12040"
    )


def test_a_tile_sides_samples_environment_and_label(tmp_path: Path) -> None:
    """Epoch 1's samples are each group's per-call evidence, in cycles; grouped by epoch they
    carry it. The dump states 1 MHz and 16 tiles, and no device."""
    before = write_dump(tmp_path / "before.json", BEFORE, clockHz=1_000_000, tileCount=16)
    after = write_dump(tmp_path / "after.json", AFTER, clockHz=1_000_000, tileCount=16)
    diff = compare_files(before, after, ReadOptions(filters=Filters(epoch=1)))
    assert (diff.before.label, diff.before.kind) == (str(before), "tile")
    assert diff.before.environment == {"clockHz": 1_000_000, "tileCount": 16, "device": None}
    durations = diff.before.durations
    assert durations is not None and durations.columns == ["name", "value"]
    assert durations.schema["name"] == pl.String and durations.schema["value"] == pl.Float64
    assert sorted(durations.rows()) == [
        ("gemm", 100.0),
        ("gemm", 100.0),
        ("gone", 10.0),
        ("same", 30.0),
        ("softmax", 40.0),
    ]
    by_epoch = compare_files(before, after, ReadOptions(group_by=("epoch",)))
    assert by_epoch.after.durations is not None
    assert sorted(by_epoch.after.durations.filter(pl.col("name") == "softmax").rows()) == [
        ("softmax", 1, 60.0),
        ("softmax", 2, 25.0),
    ]
    assert by_epoch.after.dimensions == ("epoch",)
    assert compare_files(before, after, ReadOptions(), top=1).header["topGroups"] == 1


def test_a_cached_side_is_its_summary_without_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--cache: the summary from the cache (grouped by epoch, epoch 1 only), no per-call
    evidence; the label is the dump's path."""
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "cache"))
    before = write_dump(tmp_path / "before.json", BEFORE)
    after = write_dump(tmp_path / "after.json", AFTER)
    options = ReadOptions(filters=Filters(epoch=1), group_by=("epoch",), cache=True)
    for _ in range(2):  # cold, then warm
        diff = compare_files(before, after, options)
        assert (diff.before.label, diff.after.label) == (str(before), str(after))
        assert diff.before.durations is None and diff.before.dimensions == ("epoch",)
        rows = diff.rows.filter(pl.col("group").str.starts_with("softmax"))
        assert rows.select("epoch", "phaseCycles_before", "phaseCycles_after").rows() == [
            (1, 40, 60)
        ]
    assert len(list((tmp_path / "cache").glob("*.summary-*.json"))) == 2
    # the reading options reach the cached side: at 2 MHz and 8 tiles, as the plain read
    options = ReadOptions(clock_hz=2e6, tile_count=8, cache=True)
    for cached in (options, dataclasses.replace(options, cache=False)):
        side = compare_files(before, after, cached).before
        assert (side.environment["clockHz"], side.environment["tileCount"]) == (2e6, 8)


@pytest.mark.parametrize("cache", [False, True])
def test_digests_are_each_files_own(
    cache: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dump read whole is digested from that read; one left to its loader (--cache) in
    chunks: each side's sha256 is that of its own file, and none without ``digests``."""
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "cache"))
    before = write_dump(tmp_path / "before.json", BEFORE)
    after = write_dump(tmp_path / "after.json", AFTER)
    options = ReadOptions(cache=cache)
    diff = compare_files(before, after, options, digests=True)
    assert (diff.before.sha256, diff.after.sha256) == (sha256(before), sha256(after))
    plain = compare_files(before, after, options)
    assert (plain.before.sha256, plain.after.sha256) == (None, None)
    gpu = compare_files(H200, H200, ReadOptions(), digests=True)
    assert gpu.before.sha256 == gpu.after.sha256 == sha256(H200)


def test_the_python_diff_of_gpu_sources_and_cached_dumps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kernel rows by default, the launching op's on asking; --cache through ``cache=True``
    writes a summary per side; a normalized GPU pair and the header's top groups."""
    import tileprof

    before = run_table(tmp_path / "a.csv", "H200", 2)
    after = run_table(tmp_path / "b.csv", "H200", 3)
    assert tileprof.diff(before, after).get_column("group").to_list() == ["k1 · w", "k2 · w"]
    assert tileprof.diff(before, after, per_op=True).get_column("group").to_list() == ["w"]
    renamed = tmp_path / "renamed.csv"
    renamed.write_text(after.read_text().replace("k1", "k1_v2"))
    pair = compare_files(before, renamed, ReadOptions(), normalize="_v2", top=1)
    assert pair.rows.select("group", "status").rows() == [
        ("k1 · w", "changed"),
        ("k2 · w", "unchanged"),
    ]
    assert pair.header["topGroups"] == 1
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "cache"))
    dumps = [write_dump(tmp_path / f"{n}.json", s) for n, s in (("b", BEFORE), ("a", AFTER))]
    rows = tileprof.diff(*dumps, cache=True, epoch=1)
    assert rows.filter(pl.col("group") == "softmax").get_column("phaseCycles_after").item() == 60
    assert len(list((tmp_path / "cache").glob("*.summary-*.json"))) == 2
