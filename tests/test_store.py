"""The profile store: add/list/rm, `summary --store` with both engines, and their faults.

Expected summaries come from `tileprof summary DUMP`, which parses the source dump and
aggregates the whole frame at once: an independent path from the store's (Delta tables, group
buckets, parts put together, dask workers).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner, Result

from tests.report_samples import generated_profile
from tileprof.commands.cli import cli
from tileprof.views.writers import dump_bytes

RUNS = 4


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def dump_of(folder: Path, seed: int, samples: int = 5_000) -> Path:
    path = folder / f"nightly{seed}.parquet"
    profile = generated_profile(samples=samples, tiles=64, seed=seed, source=str(path))
    path.write_bytes(dump_bytes(profile, "parquet"))
    return path


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("dumps")
    return [dump_of(folder, seed) for seed in range(RUNS)]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, dumps: list[Path]) -> str:
    uri = str(tmp_path_factory.mktemp("store") / "profiles")
    for index, dump in enumerate(dumps):
        result = invoke(
            "store", "add", str(dump), "--store", uri, "--run", f"r{index}",
            "--label", f"commit=c{index}", "--label", "model=m",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert result.output == f"added run r{index} from {dump}\n"
    return uri


def run_ids(uri: str) -> list[str]:
    result = invoke("store", "list", "--store", uri, "--format", "json")
    assert result.exit_code == 0, result.output
    return [r["run"] for r in json.loads(result.output)]


def test_list_shows_records(store: str, dumps: list[Path]) -> None:
    import hashlib

    result = invoke("store", "list", "--store", store, "--format", "json", "--label", "commit=c2")
    [record] = json.loads(result.output)
    assert record["run"] == "r2"
    assert record["labels"] == {"commit": "c2", "model": "m"}
    assert record["source"] == "nightly2.parquet"
    assert record["sha256"] == hashlib.sha256(dumps[2].read_bytes()).hexdigest()
    rows = pl.read_parquet(dumps[2]).height
    assert (record["clockHz"], record["tileCount"], record["sampleCount"]) == (
        1_500_000_000,
        64,
        rows,
    )
    table = invoke("store", "list", "--store", store)
    assert "r3" in table.output and "commit=c3 model=m" in table.output


def test_same_source_again_is_a_no_op(store: str, dumps: list[Path]) -> None:
    copy = dumps[0].with_name("renamed.parquet")
    copy.write_bytes(dumps[0].read_bytes())
    result = invoke("store", "add", str(copy), "--store", store)
    assert result.exit_code == 0
    assert "already stored as run r0 (same sha256), nothing added" in result.output
    assert run_ids(store) == ["r0", "r1", "r2", "r3"]


def sample_runs(uri: str) -> dict[str, int]:
    frame = pl.read_delta(f"{uri}/samples").group_by("run").len()
    return dict(frame.iter_rows())


def test_a_dump_that_fails_to_parse_adds_nothing(
    store: str, dumps: list[Path], tmp_path: Path
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"clockHz": 1.5e9, "samples": [{"physicalTile": 0, "offset": ')
    before = sample_runs(store)
    result = invoke("store", "add", str(broken), "--store", store)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "broken.json" in result.output
    assert run_ids(store) == ["r0", "r1", "r2", "r3"]
    heights = {f"r{i}": pl.read_parquet(d).height for i, d in enumerate(dumps)}
    assert sample_runs(store) == before == heights


def test_rm_removes_the_run_and_its_rows(tmp_path: Path, dumps: list[Path]) -> None:
    uri = str(tmp_path / "s")
    assert invoke("store", "add", *map(str, dumps[:2]), "--store", uri).exit_code == 0
    first, second = run_ids(uri)
    assert first == f"nightly0-{_sha(dumps[0])[:8]}"
    result = invoke("store", "rm", "--store", uri, "--run", first)
    assert result.exit_code == 0 and result.output == f"removed run {first} (nightly0.parquet)\n"
    assert run_ids(uri) == [second]
    assert sample_runs(uri) == {second: pl.read_parquet(dumps[1]).height}
    assert set(pl.read_delta(f"{uri}/stats")["run"]) == {second}
    assert set(pl.read_delta(f"{uri}/metadata")["run"]) == {second}
    missing = invoke("store", "rm", "--store", uri, "--run", first)
    assert missing.exit_code == 2 and "no such run" in missing.output


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_sample_table_is_partitioned_by_run_and_sorted_by_group(store: str) -> None:
    from deltalake import DeltaTable

    table = DeltaTable(f"{store}/samples")
    assert table.metadata().partition_columns == ["run"]
    files = table.file_uris(file_pruning_predicate=[("run", "=", "r1")])
    assert files and all("/run=r1/" in f for f in files)
    groups = pl.read_parquet(files[0])["group"].to_list()
    assert groups == sorted(groups, key=lambda g: (g is not None, g or ""))


@pytest.mark.parametrize(
    "options",
    [
        (),
        ("--epoch", "1", "--group-by", "kind"),
        ("--kernel", "gemm*", "--window", "150000:400000", "--group-by", "tile"),
        ("--at", "250000", "--group-by", "phase"),
    ],
)
@pytest.mark.parametrize("output_format", ["json", "table", "csv"])
def test_summary_of_a_stored_run_is_that_of_its_dump(
    store: str, dumps: list[Path], options: tuple[str, ...], output_format: str
) -> None:
    expected = invoke("summary", str(dumps[1]), "--format", output_format, *options)
    assert expected.exit_code == 0, expected.output
    for task_samples in ("1000000", "900"):  # whole run, then group buckets of ~900 samples
        got = invoke(
            "summary", "--store", store, "--run", "r1", "--format", output_format,
            "--task-samples", task_samples, *options,
        )  # fmt: skip
        assert got.exit_code == 0, got.output
        assert got.output == expected.output


def dump_documents(dumps: list[Path], options: tuple[str, ...]) -> list[dict[str, Any]]:
    documents = []
    for index, dump in enumerate(dumps):
        result = invoke("summary", str(dump), "--format", "json", *options)
        assert result.exit_code == 0, result.output
        labels = {"commit": f"c{index}", "model": "m"}
        documents.append({"run": f"r{index}", "labels": labels, **json.loads(result.output)})
    return documents


def test_engines_agree_byte_for_byte_on_a_local_cluster(store: str, dumps: list[Path]) -> None:
    options = ("--epoch", "2", "--kernel", "*_*", "--group-by", "run,kind,phase")
    common = ["summary", "--store", store, "--format", "json", "--task-samples", "1500"]
    polars_run = invoke(*common, *options)
    dask_run = subprocess.run(
        [sys.executable, "-m", "tileprof", *common, *options, "--engine", "dask", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert polars_run.exit_code == 0, polars_run.output
    assert dask_run.returncode == 0, dask_run.stderr
    assert dask_run.stdout == polars_run.output
    expected = dump_documents(
        dumps, ("--epoch", "2", "--kernel", "*_*", "--group-by", "kind,phase")
    )
    assert json.loads(polars_run.output) == {"runs": expected}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local:
        yield local


class KillOnFirstTask:
    """A worker plugin that kills its worker's process the first time any worker starts a
    task (a marker file makes it once per cluster)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish == "executing":
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_killed_mid_job_is_retried(
    store: str, dumps: list[Path], cluster: Any, tmp_path: Path
) -> None:
    from distributed import Client
    from distributed.diagnostics.plugin import WorkerPlugin

    plugin = type("Killer", (KillOnFirstTask, WorkerPlugin), {})(str(tmp_path / "killed"))
    with Client(cluster) as client:
        client.register_plugin(plugin, name="killer")
        result = invoke(
            "summary", "--store", store, "--format", "json", "--group-by", "run",
            "--engine", "dask", "--scheduler", cluster.scheduler_address,
        )  # fmt: skip
        client.unregister_worker_plugin("killer")
    assert (tmp_path / "killed").exists()  # a worker did die during the job
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"runs": dump_documents(dumps, ())}


def test_an_existing_scheduler_gives_the_same_bytes(store: str, cluster: Any) -> None:
    common = ["summary", "--store", store, "--format", "json", "--kind", "compute"]
    local = invoke(*common, "--run", "r[02]", "--group-by", "tile", "--task-samples", "700")
    remote = invoke(
        *common, "--run", "r[02]", "--group-by", "tile", "--task-samples", "700",
        "--engine", "dask", "--scheduler", cluster.scheduler_address,
    )  # fmt: skip
    assert local.exit_code == remote.exit_code == 0, remote.output
    assert remote.output == local.output
    assert [r["run"] for r in json.loads(local.output)["runs"]] == ["r0", "r2"]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_store_errors_are_one_line(store: str, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    cases = [
        (["--store", str(tmp_path / "absent")], "no such store"),
        (["--store", str(tmp_path / "plain")], "not a tileprof store"),
        (["--store", store, "--run", "nightly-*"], "no stored run matches --run nightly-*"),
        (["--store", store, "--label", "commit=zzz"], "no stored run matches --label commit=zzz"),
        (
            [
                "--store",
                store,
                "--engine",
                "dask",
                "--scheduler",
                f"tcp://127.0.0.1:{closed_port()}",
            ],
            "cannot reach the dask scheduler",
        ),
        (["--store", store, "--group-by", "run,bogus"], "unknown dimension"),
        (["--store", store, str(tmp_path / "x.json")], "not several"),
        (["--engine", "dask", str(tmp_path / "x.json")], "need --store"),
        (["--store", store, "--tile-count", "4"], "read a DUMP, not --store"),
    ]
    for args, message in cases:
        result = invoke("summary", *args)
        assert result.exit_code == 2, (args, result.output)
        assert result.output.count("\n") == 1 and message in result.output, result.output
        assert "Traceback" not in result.output
    history = invoke("history", "--store", str(tmp_path / "plain"))
    assert history.exit_code == 2 and "not a tileprof store" in history.output
    for place, message in (("plain", "not a tileprof store"), ("absent", "no such store")):
        vacuum = invoke("store", "vacuum", "--store", str(tmp_path / place))
        assert vacuum.exit_code == 2 and vacuum.output.count("\n") == 1, vacuum.output
        assert vacuum.output.startswith("tileprof: error: ") and message in vacuum.output
    gone = invoke("store", "rm", "--store", store, "--run", "never-added")
    assert gone.exit_code == 2
    assert gone.output == f"tileprof: error: --run 'never-added': no such run in {store}\n"


def test_two_processes_adding_at_once_both_land(tmp_path: Path, dumps: list[Path]) -> None:
    uri = str(tmp_path / "fresh")  # neither process finds the tables: both create them too
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "tileprof", "store", "add", str(d), "--store", uri],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for d in dumps[2:4]
    ]
    outputs = [p.communicate(timeout=120) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], outputs
    assert sorted(run_ids(uri)) == sorted(f"nightly{i}-{_sha(dumps[i])[:8]}" for i in (2, 3))
    assert sorted(sample_runs(uri).values()) == sorted(
        pl.read_parquet(d).height for d in dumps[2:4]
    )


def _add_same_id(uri: str, dump: str, barrier: Any, results: Any) -> None:
    """In a child process: ``store add --run same``, held at ``barrier`` just before the
    claim's commit, after both processes have found the id free (the race, made certain)."""
    import deltalake

    real = deltalake.write_deltalake

    def at_the_barrier(table: Any, data: Any, **options: Any) -> Any:
        if str(getattr(table, "table_uri", "")).rstrip("/").endswith("/claims"):
            barrier.wait(timeout=60)
        return real(table, data, **options)

    deltalake.write_deltalake = at_the_barrier  # type: ignore[assignment]
    result = CliRunner().invoke(cli, ["store", "add", dump, "--store", uri, "--run", "same"])
    results.put((result.exit_code, result.output))


def _one_added_one_refused(
    uri: str, outcomes: list[tuple[int, str]], dumps: list[Path], other: str | None = None
) -> None:
    """Exactly one add went on; the other printed one line, exit 2; the store holds one
    run of the id, with the rows of one dump (not two dumps' rows under one record)."""
    assert sorted(code for code, _ in outcomes) == [0, 2], outcomes
    (refused,) = [text for code, text in outcomes if code == 2]
    assert refused.count("\n") == 1 and refused.startswith("tileprof: error: --run 'same': ")
    (added,) = [text for code, text in outcomes if code == 0]
    assert sorted(run_ids(uri)) == sorted(["same", *([other] if other else [])])
    heights = {str(d): pl.read_parquet(d).height for d in dumps}
    assert sample_runs(uri)["same"] == heights[added.split(" from ")[1].strip()]


def test_two_processes_adding_the_same_new_id_at_once(tmp_path: Path, dumps: list[Path]) -> None:
    """Both find the id free and reach the claim together: Delta's conflict check lets one
    claim commit and refuses the other, before either has written a row."""
    import multiprocessing

    uri = str(tmp_path / "same")
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    children = [
        context.Process(target=_add_same_id, args=(uri, str(d), barrier, results))
        for d in dumps[:2]
    ]
    for child in children:
        child.start()
    outcomes = [results.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=60)
    _one_added_one_refused(uri, outcomes, dumps)
    assert "at the same moment; nothing was added" in str(outcomes)


def test_two_commands_adding_the_same_new_id_together(tmp_path: Path, dumps: list[Path]) -> None:
    """The same with two plain ``tileprof store add`` processes started together: whichever
    comes second (at the claim, or after the first one's record) fails with one line."""
    uri = str(tmp_path / "same")
    assert invoke("store", "add", str(dumps[3]), "--store", uri, "--run", "other").exit_code == 0
    command = [sys.executable, "-m", "tileprof", "store", "add", "--store", uri, "--run", "same"]
    processes = [
        subprocess.Popen(
            [*command, str(d)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for d in dumps[1:3]
    ]
    outcomes = [(p.wait(timeout=120), p.communicate()[0]) for p in processes]
    _one_added_one_refused(uri, outcomes, dumps, other="other")
    assert invoke("store", "rm", "--store", uri, "--run", "same").exit_code == 0
    assert "same" not in run_ids(uri) and "same" not in sample_runs(uri)


def test_an_unfinished_add_is_named_and_rm_clears_it(tmp_path: Path, dumps: list[Path]) -> None:
    """A claim without a record (an add killed mid-way) refuses the id with a way out."""
    from tileprof.model.store.tables import create_store
    from tileprof.model.store.writes import claim_run

    uri = str(tmp_path / "unfinished")
    claim_run(create_store(uri), "same")
    again = invoke("store", "add", str(dumps[0]), "--store", uri, "--run", "same")
    assert again.exit_code == 2
    assert again.output == (
        "tileprof: error: --run 'same': another add of that run id is under way or was "
        f"interrupted (if none is running, `tileprof store rm --store {uri} --run same` "
        "clears it)\n"
    )
    cleared = invoke("store", "rm", "--store", uri, "--run", "same")
    assert cleared.exit_code == 0, cleared.output
    assert cleared.output.startswith("removed the unfinished add of run same")
    assert invoke("store", "add", str(dumps[0]), "--store", uri, "--run", "same").exit_code == 0
    assert run_ids(uri) == ["same"]


def test_a_failed_write_releases_its_claim(
    tmp_path: Path, dumps: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails (a full disk, a lost connection) is no add under way: the id is
    free again, and the next add of it lands whole."""
    from tileprof.model.store import writes

    uri = str(tmp_path / "failed")

    def full_disk(*_args: Any) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(writes, "write_profile", full_disk)
        failed = invoke("store", "add", str(dumps[0]), "--store", uri, "--run", "same")
    assert failed.exit_code == 2 and "no space left" in failed.output
    again = invoke("store", "add", str(dumps[0]), "--store", uri, "--run", "same")
    assert again.exit_code == 0, again.output
    assert run_ids(uri) == ["same"]
    assert sample_runs(uri) == {"same": pl.read_parquet(dumps[0]).height}


def _data_files(uri: str, table: str) -> list[Path]:
    return sorted(Path(uri, table).rglob("*.parquet"))


def test_vacuum_compacts_and_deletes_what_no_version_needs(
    tmp_path: Path, dumps: list[Path]
) -> None:
    uri = str(tmp_path / "vacuumed")
    for index in range(3):
        added = invoke("store", "add", str(dumps[index]), "--store", uri, "--run", f"r{index}")
        assert added.exit_code == 0, added.output
    assert invoke("store", "rm", "--store", uri, "--run", "r1").exit_code == 0
    kept = invoke("summary", "--store", uri, "--run", "r2", "--format", "json").output
    removed = _data_files(uri, "samples/run=r1")
    assert removed, "rm leaves the run's files for time travel"
    before = {t: _data_files(uri, t) for t in ("samples", "stats", "runs")}
    dry = invoke("store", "vacuum", "--store", uri, "--retain-hours", "0", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "samples: would delete 1 file no kept version needs" in dry.output
    assert {t: _data_files(uri, t) for t in before} == before  # a dry run deletes nothing
    # the default keeps a week of versions: it compacts, and deletes nothing this young
    default = invoke("store", "vacuum", "--store", uri)
    assert default.exit_code == 0, default.output
    assert "runs: compacted 2 files into 1; deleted 0 files" in default.output
    assert _data_files(uri, "samples/run=r1") == removed
    done = invoke("store", "vacuum", "--store", uri, "--retain-hours", "0")
    assert done.exit_code == 0, done.output
    assert (
        done.output.splitlines()[0]
        == "samples: nothing to compact; deleted 1 file no kept version needs"
    )
    assert _data_files(uri, "samples/run=r1") == []
    assert len(_data_files(uri, "runs")) == 1  # the two records, in one file now
    # the store reads the same after it
    assert run_ids(uri) == ["r0", "r2"]
    assert invoke("summary", "--store", uri, "--run", "r2", "--format", "json").output == kept
    assert invoke("history", "--store", uri, "--format", "json").exit_code == 0
    bad = invoke("store", "vacuum", "--store", uri, "--retain-hours", "-1")
    assert bad.exit_code == 2


def test_duckdb_reads_the_store_and_agrees_with_the_stored_statistics(store: str) -> None:
    """The docs/scale.md query: DuckDB over the Delta tables (through deltalake's Arrow
    dataset; DuckDB's own delta extension is a download). Counts and sums computed by another
    engine must equal the statistics tileprof stored."""
    duckdb = pytest.importorskip("duckdb")
    from deltalake import DeltaTable

    samples = DeltaTable(f"{store}/samples").to_pyarrow_dataset()  # noqa: F841 (DuckDB reads it)
    stats = DeltaTable(f"{store}/stats").to_pyarrow_dataset()  # noqa: F841
    query = """
        SELECT s.run, s."group", count(*) AS n, sum(s.duration) AS work,
               any_value(t.sampleCount) AS stored_n, any_value(t.workCycles) AS stored_work
        FROM samples s JOIN stats t ON t.run = s.run AND t.name = s."group"
        WHERE s.run = 'r2'
        GROUP BY ALL ORDER BY n DESC
    """
    rows = duckdb.sql(query).fetchall()
    assert len(rows) >= 3
    for _run, _group, n, work, stored_n, stored_work in rows:
        assert (n, work) == (stored_n, stored_work)


@pytest.mark.parametrize("task_samples", ["1000000", "500"], ids=["whole-run", "buckets"])
def test_an_epoch_no_stored_run_holds_is_exit_2(
    store: str, dumps: list[Path], task_samples: str
) -> None:
    """As for a dump (``check_epoch``): an --epoch the run does not hold names the epochs it
    does, whether the run is one task or cut into group buckets, where it printed an empty
    table with exit 0."""
    first = run_ids(store)[0]
    result = invoke(
        "summary", "--store", store, "--run", first, "--epoch", "7", "--task-samples", task_samples
    )
    assert result.exit_code == 2, result.output
    from_dump = invoke("summary", str(dumps[0]), "--epoch", "7")  # run r0 is dumps[0]
    assert from_dump.exit_code == 2
    epochs = from_dump.stderr[from_dump.stderr.index("(epochs:") :]
    assert first == "r0" and epochs.startswith("(epochs: 1, 2")
    assert (
        result.stderr == f"tileprof: error: --epoch 7: no samples in that epoch in run r0 {epochs}"
    )
    held = invoke("summary", "--store", store, "--run", first, "--epoch", "1")
    assert held.exit_code == 0, held.output


def test_samples_without_a_group_name_count_once_however_the_run_is_cut(tmp_path: Path) -> None:
    """A sample with neither kernel nor kind has no group name: it is stored first and read by
    the run's first bucket only (``with_unnamed``), so the buckets' summary is the dump's, not
    short of those samples nor holding them once per bucket; the buckets are cut where their
    samples reach ``--task-samples``, in name order."""
    import dataclasses

    from tileprof.model.store.aggregate import plan
    from tileprof.model.store.tables import Store, read_runs

    path = tmp_path / "unnamed.parquet"
    profile = generated_profile(samples=3_000, tiles=64, seed=5, source=str(path))
    unnamed = pl.col("kernel").is_null() & (pl.col("phase") // 6 % 2 == 0)
    samples = profile.samples.with_columns(
        pl.when(unnamed).then(None).otherwise(pl.col("kind")).alias("kind")
    )
    assert 0 < samples.filter(pl.col("kind").is_null()).height < samples.height
    path.write_bytes(dump_bytes(dataclasses.replace(profile, samples=samples), "parquet"))
    uri = str(tmp_path / "store")
    assert invoke("store", "add", str(path), "--store", uri, "--run", "u").exit_code == 0
    expected = invoke("summary", str(path), "--format", "json")
    assert expected.exit_code == 0, expected.output
    for task_samples in ("1000000", "700"):
        got = invoke(
            "summary", "--store", uri, "--run", "u", "--format", "json",
            "--task-samples", task_samples,
        )  # fmt: skip
        assert got.output == expected.output, task_samples
    assert (
        invoke(
            "store", "add", str(dump_of(tmp_path, 1, 300)), "--store", uri, "--run", "s"
        ).exit_code
        == 0
    )
    asked: list[tuple[str, Any]] = []
    scan = Store.scan

    def scan_of(store: Store, name: str, runs: Any = None) -> pl.LazyFrame:
        asked.append((name, runs))
        return scan(store, name, runs)

    every = read_runs(Store(uri))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Store, "scan", scan_of)
        tasks = plan(Store(uri), every, 700)
    assert asked == [("stats", ["u"])]  # only the statistics of the run cut into buckets
    small = [t for t in tasks if t.run == "s"]
    assert len(small) == 1 and small[0].first is None  # a run under the limit: one task
    tasks = [t for t in tasks if t.run == "u"]
    named = samples.filter(pl.col("kind").is_not_null())
    counts = named.group_by(pl.coalesce("kernel", "kind").cast(pl.String).alias("g")).len()
    cuts, total = [], 0
    for name, count in counts.sort("g").iter_rows():
        total += count
        if total >= 700:
            cuts.append(name)
            total = 0
    assert [t.last for t in tasks][: len(cuts)] == cuts and len(tasks) >= 2
    assert [t.with_unnamed for t in tasks] == [True] + [False] * (len(tasks) - 1)
    assert tasks[0].first == counts.get_column("g").min()
    first, exact = counts.sort("g").row(0)  # a bucket that reaches the limit exactly ends there
    records = [r for r in every if r.run == "u"]
    assert plan(Store(uri), records, exact)[0].last == first
    from tileprof.model.store.aggregate import Query, summarize_runs

    records = [r for r in read_runs(Store(uri)) if r.run == "u"]
    ((record, summary),) = summarize_runs(Store(uri), records, Query(), task_samples=700)
    assert summary.source == record.source == path.name  # as the store names the run's dump
    assert repr(summary).startswith("Summary(source='unnamed.parquet', samples=2995 of 2995")


def test_a_store_task_lost_with_its_workers_says_to_lower_task_samples(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import contextlib
    from types import SimpleNamespace

    from distributed.scheduler import KilledWorker

    from tileprof.model.engines import EngineError
    from tileprof.model.store import aggregate

    lost = KilledWorker("task-1", SimpleNamespace(address="tcp://127.0.0.1:1"), 3)

    class Client:
        def submit(self, function: Any, *arguments: Any, pure: bool) -> None:
            return None

        def gather(self, futures: list[Any]) -> list[Any]:
            raise lost

    monkeypatch.setattr(
        aggregate, "dask_client", lambda scheduler, workers: contextlib.nullcontext(Client())
    )
    task = aggregate.Task("r1", 1.5e9, 4)
    with pytest.raises(EngineError) as caught:
        aggregate.dask_parts(Any, [task], aggregate.Query())  # type: ignore[arg-type]
    assert str(caught.value).startswith("dask: a task was lost with its worker too many times (")
    assert str(caught.value).endswith(
        "; the workers may lack memory for one task (lower --task-samples)"
    )


def test_an_epoch_asked_of_a_stored_run_without_samples_names_none(tmp_path: Path) -> None:
    """A run stored from a dump without samples holds no epoch: ``--epoch`` is refused as for
    the dump, the epochs it holds given as "none"."""
    from tests.samples import write_dump

    empty = write_dump(tmp_path / "e.json", [])
    uri = str(tmp_path / "store")
    assert invoke("store", "add", str(empty), "--store", uri, "--run", "e").exit_code == 0
    stored = invoke("summary", "--store", uri, "--run", "e", "--epoch", "3")
    assert stored.exit_code == 2
    assert stored.stderr == (
        "tileprof: error: --epoch 3: no samples in that epoch in run e (epochs: none)\n"
    )
    from_dump = invoke("summary", str(empty), "--epoch", "3")
    assert from_dump.exit_code == 2 and from_dump.stderr.endswith("(epochs: none)\n")


def test_a_store_s_options_reach_every_scan_of_a_summary(
    tmp_path: Path, parquet_scans: list[Any]
) -> None:
    """An object store needs its credentials on every read: the samples' and the metadata's
    scans get the store's storage options too."""
    from tileprof.model.store.aggregate import Query, summarize_runs
    from tileprof.model.store.tables import Store, read_runs

    uri = str(tmp_path / "store")
    dump = dump_of(tmp_path, 3, 400)
    assert invoke("store", "add", str(dump), "--store", uri, "--run", "o").exit_code == 0
    store = Store(uri, {"timeout": "30s"})
    records = read_runs(store)
    before = len(parquet_scans)  # the scans of the add and of the run records
    ((_, summary),) = summarize_runs(store, records, Query())
    scanned = parquet_scans[before:]
    assert summary.samples  # the longest samples' metadata was read
    assert len(scanned) == 2 and scanned == [{"timeout": "30s"}] * 2


def test_a_scheduler_without_the_dask_engine_is_refused(tmp_path: Path) -> None:
    """From Python as on the command line: a cluster's address means nothing to polars."""
    from tileprof.core.errors import OptionError
    from tileprof.model.store.aggregate import Query, summarize_runs
    from tileprof.model.store.tables import Store

    with pytest.raises(OptionError) as caught:
        summarize_runs(Store(str(tmp_path)), [], Query(), scheduler="tcp://127.0.0.1:8786")
    assert str(caught.value) == "--scheduler needs --engine dask"
    with pytest.raises(OptionError) as unknown:
        summarize_runs(Store(str(tmp_path)), [], Query(), engine="spark")
    assert str(unknown.value) == "--engine 'spark': one of polars, dask"
