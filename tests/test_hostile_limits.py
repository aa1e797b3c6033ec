"""Hostile input that must not hurt (issue 32): names that would hang a backtracking regular
expression, gzip bombs and claims of size, raw terminal escapes, and a full disk under the store.

Each test fails on the code before it: the names hung `runs` (hours), the bomb decompressed
whole, the escapes reached the terminal raw, the full disk was a traceback.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hostile import ROOT, assert_one_line_error, invoke
from tests.samples import sample, write_dump
from tileprof.core import patterns, specs
from tileprof.core.errors import OptionError

ESC_TITLE = "\x1b]0;pwned\x07"
ESC_CLEAR = "\x1b[2J"

# --- time: names that made backtracking patterns hang -------------------------------------


def test_every_spec_pattern_is_linear_time() -> None:
    """The registry's match and exclude patterns are RE2's (no backtracking)."""
    for spec in specs.registry():
        for rx in (*spec.match, *spec.exclude):
            assert isinstance(rx, patterns.Pattern), (spec.path, rx)


def test_spec_matching_reads_only_the_names_head() -> None:
    """A device name of 200 KB (``"h100 " × 40,000``: seconds per 10 KB before, hours for
    this one) is matched by its first NAME_PATTERN_LIMIT characters."""
    assert specs.spec_for("h100 " * 40_000) is None
    long = "NVIDIA H100 80GB HBM3 " + "x" * 200_000
    found = specs.spec_for(long)
    assert found is not None and found.name == "NVIDIA H100 SXM"
    late = "x" * patterns.NAME_PATTERN_LIMIT + " NVIDIA H100 80GB HBM3"
    assert specs.spec_for(late) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM 40 GB"),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM 80 GB"),
        ("NVIDIA A100-PCIE-40GB", None),
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
        ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
        ("NVIDIA H100 NVL", None),
        ("NVIDIA H100 80GB HBM3e", None),
        ("NVIDIA H200", "NVIDIA H200"),
        ("NVIDIA H200 NVL", None),
        ("NVIDIA GH200 480GB", None),
        ("AMD Instinct MI300X VF", "AMD Instinct MI300X"),
    ],
)
def test_rewritten_patterns_match_as_the_look_arounds_did(name: str, expected: str | None) -> None:
    found = specs.spec_for(name)
    assert (found.name if found else None) == expected


def test_a_user_spec_with_a_look_around_is_one_line(tmp_path: Path) -> None:
    bundled = (ROOT / "tileprof/data/specs/b200.toml").read_text()
    spec = tmp_path / "mine.toml"
    spec.write_text(bundled.replace("match = ['(?:^|[^a-z])b200']", "match = ['(?<![a-z])b200']"))
    runs = tmp_path / "runs.csv"
    runs.write_text("target,workload,kernel,time_us\nB200,w,gemm,1\n")
    message = assert_one_line_error("runs", runs, "--spec", spec, contains="mine.toml: match")
    assert "look-around" in message


def test_runs_on_a_200_kb_device_name_finishes(tmp_path: Path) -> None:
    """The issue's reproducer, in a process of its own: before, it never finished."""
    path = tmp_path / "runs.csv"
    path.write_text(f"target,workload,kernel,time_us\n{'h100 ' * 40_000},w,gemm_k,1\nB,w,k,2\n")
    done = subprocess.run(
        [sys.executable, "-m", "tileprof", "runs", str(path), "--format", "json"],
        capture_output=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["runs"]) == 2


def test_runs_on_a_kineto_trace_with_a_200_kb_device_name_finishes(tmp_path: Path) -> None:
    """The issue's other reproducer: the bundled Kineto trace, its device named
    `"h100 " × 40,000` (matched against the spec registry as the run table's is)."""
    from tileprof.model.examples import example_file

    trace = json.loads(gzip.decompress(example_file("trace")))
    trace["deviceProperties"][0]["name"] = "h100 " * 40_000
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    done = subprocess.run(
        [sys.executable, "-m", "tileprof", "runs", str(path), "--format", "json"],
        capture_output=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    devices = json.loads(done.stdout)["sources"][0]["metadata"]["devices"]
    assert devices["0"].startswith("h100 h100")


def test_kernel_names_that_backtracked_display_quickly() -> None:
    """``kernel_display_name`` on template names that took seconds per 10 KB (``f<aaa…``)."""
    from tileprof.core.text import kernel_display_name

    assert kernel_display_name("f<" + "a" * 200_000).startswith("f<")
    assert kernel_display_name("f<" + "a(" * 100_000).startswith("f<")


def test_normalize_and_match_run_in_re2(capfd: pytest.CaptureFixture[str]) -> None:
    """``--normalize`` and ``--match`` patterns meet kernel names through RE2: a look-around is
    refused in one line, and a pattern that backtracks in Python finishes on a long name."""
    from tileprof.analyses.diff import Rename, compile_normalize

    with pytest.raises(OptionError, match="--normalize"):
        compile_normalize("(?<=a)b")
    assert capfd.readouterr().err == ""
    rx = compile_normalize("(a*)*b")
    assert rx is not None and rx.sub("", "a" * 100_000) == "a" * 100_000
    assert Rename.parse("*a*a*a*b=*x*y*z*w").apply("a" * 10_000) is None


# --- the terminal: names with ESC sequences are printed escaped ----------------------------

HOSTILE_KERNEL = f"gemm{ESC_TITLE}{ESC_CLEAR}"


def _raw(text: str) -> bool:
    return "\x1b" in text or "\x07" in text


@pytest.fixture(scope="module")
def hostile_dumps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("escapes")
    before = [sample(0, 0, 100, HOSTILE_KERNEL), sample(1, 0, 50, "k2")]
    after = [sample(0, 0, 300, HOSTILE_KERNEL), sample(1, 0, 50, "k2")]
    return (
        write_dump(folder / "before.json", before, clockHz=1e9, tileCount=2),
        write_dump(folder / f"after{ESC_CLEAR}.json", after, clockHz=1e9, tileCount=2),
    )


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_diff_fail_on_broken_line_is_escaped(hostile_dumps: tuple[Path, Path], fmt: str) -> None:
    """The ``broken:`` line names the kernel: raw, ESC]0 set the window title."""
    before, after = hostile_dumps
    held = "phaseCycles may not rise by more than 5%"
    code, out, err, exc = invoke("diff", before, after, "--fail-on", held, "--format", fmt)
    assert exc is None and code == 1, err
    assert "broken: phaseCycles of gemm\\x1b]0;pwned\\x07" in out + err
    assert not _raw(err)
    if fmt == "table":
        assert not _raw(out)


def test_store_add_line_is_escaped(hostile_dumps: tuple[Path, Path], tmp_path: Path) -> None:
    _, after = hostile_dumps
    code, out, err, exc = invoke("store", "add", after, "--store", tmp_path / "store")
    assert exc is None and code == 0, err
    assert "after\\x1b[2J.json" in out and not _raw(out + err)


@pytest.mark.parametrize(
    "command",
    [("findings",), ("report", "-o", "{dir}/r\x1b[2J.html"), ("trace", "-o", "{dir}/t\x1b.json")],
)
def test_every_command_line_is_escaped(
    hostile_dumps: tuple[Path, Path], tmp_path: Path, command: tuple[str, ...]
) -> None:
    """findings' messages, the written file's path, trace's summary line, and no matplotlib
    glyph warning echoing a raw ESC from a chart label."""
    _, after = hostile_dumps
    args = [a.format(dir=tmp_path) for a in command]
    code, out, err, exc = invoke(args[0], after, *args[1:])
    assert exc is None and code == 0, err
    assert not _raw(out + err), (out + err)[:500]
    assert "Glyph" not in err


# --- memory: gzip bombs and claims of size --------------------------------------------------


def _bomb(path: Path, head: bytes, mib: int) -> Path:
    """``head`` then ``mib`` MiB of spaces, gzipped as one small member repeated (about
    1,000× smaller than its text, as gzip bombs are)."""
    member = gzip.compress(b" " * (1 << 20), 9)
    path.write_bytes(gzip.compress(head) + member * mib)
    return path


@pytest.mark.parametrize(
    ("name", "head", "command"),
    [
        ("runs.csv.gz", b"target,workload,kernel,time_us\n", "runs"),
        ("trace.json.gz", b'{"traceEvents": [', "runs"),
        ("dump.json.gz", b'{"clockHz": 1e9, "tileCount": 2, "samples": [', "summary"),
        ("dump.csv.gz", b"physicalTile,offset,duration\n", "summary"),
        (
            "nsys.csv.gz",
            b"Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
            b"StdDev (ns),Name\n",
            "runs",
        ),
    ],
)
def test_a_gzip_bomb_is_refused_past_its_ratio(
    tmp_path: Path, name: str, head: bytes, command: str
) -> None:
    """Before, every gzipped kind but NDJSON was decompressed whole (a 10 MB gzip of 10 GB
    passed 6 GB). Now past 100× its size (at least the floor, made 4 MiB here) it is one line,
    under an address-space limit the whole bomb would not fit in (80 MiB of text, 48 MiB
    of headroom); the dump goes through the compiled decoder, whose own floor is 64 MiB."""
    from tests.hostile import run_under_memory_limit

    bomb = _bomb(tmp_path / name, head, 80)
    code, err = run_under_memory_limit(
        command, bomb, headroom=48 << 20 if command == "runs" else 160 << 20, gzip_floor=4 << 20
    )
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"tileprof: error: {bomb}: gzip data decompresses to more than")


def test_gunzip_reads_what_gzip_reads() -> None:
    """The bounded reader gives gzip's own bytes: members one after another, NUL padding after
    the last; a truncated member or trailing junk is an error."""
    import os

    from tileprof.core.errors import InputError
    from tileprof.inputs._common import gunzip

    where = Path("x.gz")
    for text in (b"", b"abc", os.urandom(300_000), b"y" * 3_000_000):
        packed = gzip.compress(text)
        assert gunzip(where, packed) == text
        assert gunzip(where, packed + gzip.compress(b"zz") + b"\0\0") == text + b"zz"
        for cut in (5, len(packed) // 2, len(packed) - 1):
            with pytest.raises(InputError, match="corrupt or truncated gzip data"):
                gunzip(where, packed[:cut])
    with pytest.raises(InputError, match="corrupt or truncated gzip data"):
        gunzip(where, gzip.compress(b"abc") + b"junk")


def test_gunzip_holds_the_text_once() -> None:
    """A gzip file's text is held once while it is decompressed: its pieces, kept and joined,
    were held twice (the peak of ``breakdown`` and ``runs`` on a gzipped trace). 32 MiB of text
    decompress with a traced peak under 1.25× the text; the pieces and their join need 2×."""
    import tracemalloc

    from tileprof.inputs._common import gunzip

    text = b"[" + b'{"ph":"X","name":"k"},' * ((32 << 20) // 23) + b"{}]"
    packed = gzip.compress(text, compresslevel=1)
    tracemalloc.start()
    try:
        out = gunzip(Path("x.gz"), packed)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out == text
    assert peak < 1.25 * len(text), f"peak {peak:,} for {len(text):,} bytes of text"


# --- the store on a full disk ---------------------------------------------------------------


def test_a_full_disk_under_store_add_is_one_line_and_frees_the_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The samples table's write fails as Delta Lake fails on a full disk: before, a traceback
    (exit 1) and the run id stayed claimed; now one line, exit 2, the id free, the store
    readable, and the same add succeeds once there is room."""
    import deltalake
    from deltalake.exceptions import DeltaError

    from tileprof.model.store import tables

    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 10), sample(1, 5, 10)], clockHz=1e9)
    store = str(tmp_path / "store")
    real = deltalake.write_deltalake

    def full_disk(table: object, *args: object, **kwargs: object) -> None:
        if str(table).rstrip("/").endswith(tables.SAMPLES):
            raise DeltaError("Failed to write: No space left on device (os error 28)")
        real(table, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(deltalake, "write_deltalake", full_disk)
    message = assert_one_line_error("store", "add", dump, "--store", store, "--run", "r1")
    assert "cannot store run 'r1': no space left on device" in message
    assert "the run id is free again" in message
    monkeypatch.setattr(deltalake, "write_deltalake", real)
    code, out, err, exc = invoke("store", "list", "--store", store, "--format", "json")
    assert exc is None and code == 0 and json.loads(out) == [], err
    code, out, err, exc = invoke("store", "add", dump, "--store", store, "--run", "r1")
    assert exc is None and code == 0 and out == f"added run r1 from {dump}\n", err


# --- the highest offset -----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "ndjson", "csv"])
def test_the_highest_offset_is_the_documented_one(tmp_path: Path, fmt: str) -> None:
    """docs/formats.md states 2⁶² (the docs said 2⁶³ − 1 while every reader refused above
    2⁶²): 2⁶² reads, 2⁶² + 1 is one line, in every text form."""
    from tileprof.inputs._common import MAX_CYCLES

    assert MAX_CYCLES == 2**62
    formats = (ROOT / "docs" / "formats.md").read_text()
    assert "| `offset` | integer, 0 ≤ offset ≤ 2⁶² |" in formats
    assert "**The highest offset** is 2⁶² (4,611,686,018,427,387,904 cycles" in formats
    for offset, good in ((2**62, True), (2**62 + 1, False)):
        path = tmp_path / f"d.{fmt}"
        if fmt == "json":
            write_dump(path, [sample(0, offset, 0)], clockHz=1e9, tileCount=1)
        elif fmt == "csv":
            path.write_text(f"physicalTile,offset,duration\n0,{offset},0\n")
        else:
            line = json.dumps({"physicalTile": 0, "offset": offset, "duration": 0})
            path.write_text(f'{{"clockHz": 1e9, "tileCount": 1}}\n{line}\n')
        if good:
            code, _, err, exc = invoke("summary", path, "--format", "json")
            assert exc is None and code == 0, err
        else:
            message = assert_one_line_error("summary", path)
            assert "4611686018427387904" in message or "beyond 2^62 cycles" in message


def test_out_of_memory_names_the_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Running out of memory after the read (here: in the summary) still names the file."""
    import tileprof.model.profile

    def exhausted(*_: object, **__: object) -> None:
        raise MemoryError

    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 10)], clockHz=1e9, tileCount=1)
    monkeypatch.setattr(tileprof.model.profile.Profile, "summary", exhausted)
    message = assert_one_line_error("summary", dump, contains="out of memory")
    assert message.startswith(f"{dump}: out of memory")


def test_out_of_memory_names_the_inputs_not_the_output(tmp_path: Path) -> None:
    """An output written under --force exists, and was named as an input of the line."""
    from tileprof.commands.cli import _out_of_memory

    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 10)], clockHz=1e9, tileCount=1)
    out = tmp_path / "r.html"
    out.write_text("old")
    for flags in (["-o", str(out)], ["--output", str(out)], [f"--output={out}"]):
        line = _out_of_memory([str(dump), *flags, "--force"])
        assert line.startswith(f"{dump}: out of memory"), line
    other = write_dump(tmp_path / "e.json", [sample(0, 0, 10)], clockHz=1e9, tileCount=1)
    line = _out_of_memory(["diff", str(dump), "-o", str(out), str(other), "--force"])
    assert line.startswith(f"{dump}, {other}: out of memory"), line  # inputs on both sides
    assert _out_of_memory(["summary", "--example"]) == (
        "out of memory (try a smaller input, a filter, or the cache layout)"
    )


# --- dask's local cluster ----------------------------------------------------------------------


def test_the_local_dask_cluster_listens_on_loopback_over_tls() -> None:
    """Before, the local cluster's ports took plain TCP (and workers served dashboards): any
    user of the machine could submit work to them."""
    from tileprof.model.engines import local_cluster_options

    options = local_cluster_options(2)
    assert options["host"] == "127.0.0.1"
    assert options["security"].require_encryption
    assert options["dashboard_address"] is None and options["worker_dashboard_address"] is None


_OCCUPANCY = """
import resource, sys
import polars as pl
from tests.samples import frame, sample
from tileprof.analyses.timeline import tile_activity
samples = frame([sample(0, 0, 100, "a"), sample(2**20 - 1, 50, 100, "b")])
status = open("/proc/self/status").read().split("VmSize:")[1]
size = int(status.split()[0]) * 1024 + (512 << 20)
resource.setrlimit(resource.RLIMIT_AS, (size, size))
occupancy, active = tile_activity(samples, 2**20)
print(occupancy.cells.shape[0], occupancy.tiles_per_row, float(active.series.sum()))
"""


def test_the_occupancy_map_follows_the_samples_not_the_claimed_tile_count() -> None:
    """Two samples and tileCount 2²⁰ (the documented maximum): before, the map took
    tileCount × groups × bins floats (5 GB; `report` passed 6 GB); now at most 4,096 rows,
    under a 512 MiB address-space limit."""
    done = subprocess.run(
        [sys.executable, "-c", _OCCUPANCY],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "POLARS_MAX_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows, per_row, busy = done.stdout.split()
    assert (int(rows), int(per_row)) == (4096, 256)
    assert float(busy) > 0


# --- the same file added twice at once ------------------------------------------------------


def test_two_adds_of_one_file_under_two_ids_store_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one add reads the file, another add of it under another id runs to the end: the
    first then finds it stored and adds nothing (before: stored twice)."""
    from tileprof.model.store import writes

    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 10), sample(1, 5, 10)], clockHz=1e9)
    store = str(tmp_path / "store")
    real_load = writes.load
    calls = []

    def racing_load(*args: object, **kwargs: object) -> object:
        if not calls:
            calls.append(1)
            code, _, err, exc = invoke("store", "add", dump, "--store", store, "--run", "b")
            assert exc is None and code == 0, err
        return real_load(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(writes, "load", racing_load)
    code, out, err, exc = invoke("store", "add", dump, "--store", store, "--run", "a")
    assert exc is None and code == 0, err
    assert "already stored as run b" in out
    code, out, err, exc = invoke("store", "list", "--store", store, "--format", "json")
    assert [r["run"] for r in json.loads(out)] == ["b"]


def test_an_add_of_a_file_another_add_holds_is_one_line(tmp_path: Path) -> None:
    """A claim on the file left by an add still running (or interrupted) refuses a second add
    under another id, naming the first; ``store rm`` of that id clears it."""
    from tileprof.model.store import writes
    from tileprof.model.store.tables import create_store

    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 10)], clockHz=1e9)
    uri = str(tmp_path / "store")
    store = create_store(uri)
    writes.claim_run(store, "first")
    writes.claim_file(store, dump, writes.file_sha256(dump), "first")
    message = assert_one_line_error("store", "add", dump, "--store", uri, "--run", "second")
    assert "another add of this file (as run first) is under way or was interrupted" in message
    code, out, err, exc = invoke("store", "rm", "--store", uri, "--run", "first")
    assert exc is None and code == 0, err
    code, out, err, exc = invoke("store", "add", dump, "--store", uri, "--run", "second")
    assert exc is None and code == 0 and "added run second" in out, err


# --- fuzz: generated long names through every pattern ---------------------------------------

_TOKENS = ["h100 ", "a100", "pcie", "sxm", "80gb", "nvl", "1", " ", "(", "<", "a", "float8", "_"]


@pytest.mark.fuzz
@settings(max_examples=20, derandomize=True, database=None, deadline=None)
@given(
    st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=4),
    st.integers(min_value=1_000, max_value=60_000),
)
def test_generated_long_names_go_through_every_pattern(parts: list[str], repeats: int) -> None:
    """Names made of the tokens the patterns look for, repeated up to hundreds of KB (the
    family of ``"h100 " × 40,000``): the spec registry, the classifier, kernel display names,
    ``--normalize`` and ``--match`` all finish (no test may run past pytest's own patience;
    the old patterns took hours on such names)."""
    from tileprof.analyses.diff import Rename, compile_normalize
    from tileprof.core.classify import classify
    from tileprof.core.text import kernel_display_name

    name = "".join(parts) * repeats
    specs.spec_for(name)
    classify(name)
    assert len(kernel_display_name(name)) <= 60
    rx = compile_normalize(r"(a|1|\s)*(pcie|x)")
    assert rx is not None and rx.sub("", name).endswith(name[patterns.NAME_PATTERN_LIMIT :])
    Rename.parse("*h100*pcie*=*x*y*").apply(name)


def test_the_balance_chart_draws_at_most_4096_points() -> None:
    """A dump claiming 2²⁰ tiles drew 2²⁰ points, and prefixing the chart's SVG ids took ten
    minutes (a text replace per id); now 4,096 points, each the largest of its run of tiles."""
    import numpy as np

    from tileprof.views.html.charts import balance_profile

    busy = np.zeros(2**20)
    busy[[0, 2**20 - 1]] = [100.0, 100.0]
    tiles, drawn = balance_profile(busy)
    assert len(tiles) == len(drawn) == 4096 and tiles[-1] == 2**20 - 256
    assert drawn[0] == drawn[-1] == 100.0 and drawn[1:-1].max() == 0
    small = np.arange(1472.0)
    assert (balance_profile(small)[1] == small).all()


_CHECKS = """
import resource, sys
from tests.samples import frame, sample
from tileprof.analyses.integrity import load_checks
from tileprof.analyses.quality import tile_integrity
samples = frame([sample(0, 0, 100, "a", epoch=0), sample(5, 50, 100, "b", epoch=2**40)])
status = open("/proc/self/status").read().split("VmSize:")[1]
size = int(status.split()[0]) * 1024 + (256 << 20)
resource.setrlimit(resource.RLIMIT_AS, (size, size))
rows = {row["check"]: row for row in tile_integrity(samples, 2**40, "d", load_checks())}
for check in ("tile-never-appears", "epoch-gap"):
    print(rows[check]["count"], " ".join(rows[check]["places"]))
"""


def test_the_capture_checks_follow_the_samples_not_the_claimed_tiles_or_epochs() -> None:
    """Two samples on tiles 0 and 5, in epochs 0 and 2⁴⁰, of a dump claiming 2⁴⁰ tiles: the
    checks listed every tile that never appears (a list and its texts the size of the claim:
    with tileCount 2²⁰ two seconds of `report`) and every missing epoch number; now counted
    from the distinct tiles and epochs, the first places drawn lazily, under 256 MiB."""
    done = subprocess.run(
        [sys.executable, "-c", _CHECKS],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "POLARS_MAX_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    tiles, epochs = done.stdout.splitlines()
    assert tiles == f"{2**40 - 2} tile 1 tile 2 tile 3 tile 4 tile 6"
    assert epochs == f"{2**40 - 1} epoch 1 epoch 2 epoch 3 epoch 4 epoch 5"
