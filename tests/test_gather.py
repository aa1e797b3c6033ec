"""``tileprof.model.gather``: the one reader of ``runs``, ``findings`` and ``report`` (issue 38,
branch ``mutV``), by hand: what each kind of input becomes (its name, kind, runs, size and
digest, op rows, timeline, critical path and capture checks), each only when asked, the
example profile with its own name and filters, and what ``read_inputs`` passes on."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import polars as pl
import pytest

from tests.test_check import clean_samples, write_dump, write_export
from tileprof.analyses.filters import Filters
from tileprof.analyses.integrity import load_checks
from tileprof.model.gather import (
    EXAMPLE_RUN_FILES,
    capture_checks,
    example_run_files,
    gather_inputs,
    read_inputs,
)
from tileprof.model.reading import DumpReading, load_profile

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TRACE = FIXTURES / "traces" / "kineto_small.json"
NSYS_CSV = FIXTURES / "runs" / "nsys_kern_sum.csv"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def four(tmp_path: Path) -> list[Path]:
    """A tile dump, a PyTorch trace, an nsys SQLite export and an nsys kernel summary CSV."""
    dump = write_dump(tmp_path / "d.json", clean_samples())
    trace = tmp_path / "t.json"
    trace.write_bytes(TRACE.read_bytes())
    return [dump, trace, write_export(tmp_path / "e.sqlite"), NSYS_CSV]


def test_each_kind_of_input_becomes_its_source(four: list[Path]) -> None:
    sources = gather_inputs(
        four, Filters(), ops=True, timelines=True, critical=True, checks=load_checks()
    )
    assert [(s.name, s.path, s.kind) for s in sources] == [
        (str(four[0]), four[0], "tile dump"),
        (str(four[1]), four[1], "PyTorch trace"),
        (str(four[2]), four[2], "nsys SQLite export"),
        (str(NSYS_CSV), NSYS_CSV, "nsys kernel summary"),
    ]
    assert [s.runs.kind for s in sources] == [s.kind for s in sources]
    assert [s.runs.frame.height for s in sources] == [1, 5, 1, 3]
    assert [s.size for s in sources] == [p.stat().st_size for p in four]
    assert [s.sha256 for s in sources] == [None] * 4  # no digests asked
    dump = sources[0]
    assert dump.profile is not None and dump.profile.tile_count == 4
    assert dump.filters == Filters() and dump.runs.metadata["matchedSampleCount"] == 24
    assert [s.profile is None for s in sources[1:]] == [True] * 3
    assert [None if s.ops is None else s.ops.height for s in sources] == [None, 3, None, None]
    assert [s.timeline is not None for s in sources] == [False, True, True, False]
    assert [s.critical is not None for s in sources] == [False, True, True, False]
    assert sources[1].critical is not None and sources[1].critical["traces"][0]["steps"]
    checked = [s.checked for s in sources]
    assert [len(c.rows) if c else None for c in checked] == [5, 7, 4, 0]
    assert [{r["input"] for r in c.rows} if c else None for c in checked[:3]] == [
        {str(p)} for p in four[:3]
    ]
    frame = capture_checks(sources, load_checks())
    assert frame.height == 16
    failed = frame.filter(pl.col("count") > 0).select("input", "check", "count").rows()
    assert failed == [(str(four[1]), "kernel-without-launch", 2)]  # the fixture's two
    assert frame["input"].unique(maintain_order=True).to_list() == [str(p) for p in four[:3]]
    assert [s.describe()["file"] for s in sources] == [str(p) for p in four]
    assert [s.describe()["runs"] for s in sources] == [1, 5, 1, 3]


def test_nothing_is_read_that_was_not_asked(four: list[Path]) -> None:
    sources = gather_inputs(four, Filters())
    assert [s.ops for s in sources] == [None] * 4
    assert [s.timeline for s in sources] == [None] * 4
    assert [s.critical for s in sources] == [None] * 4
    assert [s.checked for s in sources] == [None] * 4
    assert [s.runs.frame.height for s in sources] == [1, 5, 1, 3]


def test_digests_come_from_the_one_read_or_the_file(four: list[Path]) -> None:
    """With ``digests``, each GPU file's sha256 comes from its read; a dump's, which its loader
    may stream, too when it was read whole; ``input_file`` takes a missing one from the file."""
    digested = gather_inputs(four, Filters(), digests=True)
    assert [s.sha256 for s in digested] == [_sha(p) for p in four]
    plain = gather_inputs(four, Filters())
    files = [s.input_file() for s in plain]
    assert [(f.path, f.kind, f.size_bytes, f.sha256) for f in files] == [
        (str(p), s.kind, p.stat().st_size, _sha(p)) for p, s in zip(four, plain, strict=True)
    ]


def test_the_example_profile_keeps_its_name_and_filters(tmp_path: Path) -> None:
    example = load_profile(None, True, DumpReading())
    dump = write_dump(tmp_path / "d.json", clean_samples())
    own = Filters(kind="compute")
    sources = gather_inputs(
        [dump], Filters(epoch=1), example=example, example_filters=own, example_name="ref",
        checks=load_checks(),
    )  # fmt: skip
    first, second = sources
    assert (first.name, first.path, first.kind) == ("ref", None, "tile dump")
    assert first.profile is example
    assert first.filters == own and second.filters == Filters(epoch=1)
    assert first.runs.metadata["matchedSampleCount"] == example.summary(own).matched_sample_count
    assert second.runs.metadata["matchedSampleCount"] == 12
    assert first.checked is not None and {r["input"] for r in first.checked.rows} == {"ref"}
    assert len(first.checked.rows) == 5
    assert set(first.runs.frame["source"]) == {"ref"}
    # without its own filters the example takes the files' filters
    again = gather_inputs([], Filters(kind="compute"), example=example)
    assert again[0].filters == Filters(kind="compute") and again[0].name == "example"


def test_read_inputs_passes_on_how_dumps_are_read_and_the_examples_filters(
    tmp_path: Path,
) -> None:
    dump = write_dump(tmp_path / "d.json", clean_samples())
    trace = tmp_path / "t.json"
    trace.write_bytes(TRACE.read_bytes())
    read = DumpReading(tile_count=6)
    inputs = read_inputs([dump, trace], Filters(), read=read)
    (tile,) = inputs.tiles
    assert tile.profile.tile_count == 6 and tile.name == "d.json"
    assert len(inputs.timelines) == 1 and len(inputs.critical) == 1
    assert inputs.critical[0]["traces"][0]["steps"]
    assert [f.sha256 for f in inputs.files] == [_sha(dump), _sha(trace)]
    assert inputs.runs is not None  # a GPU file: the run table, the dump's group first
    assert inputs.runs.runs["source"].to_list() == [
        "d.json",
        *(f"t.json: device {d}" for d in (0, 1, 0, 0, 0)),
    ]
    example = load_profile(None, True, DumpReading())
    own = Filters(kind="compute")
    with_example = read_inputs([], Filters(), example=example, example_filters=own)
    assert [t.filters for t in with_example.tiles] == [own]
    assert with_example.tiles[0].name == "example"


def test_the_example_run_files_are_the_packaged_seeds() -> None:
    files = example_run_files()
    assert [f.name for f in files] == list(EXAMPLE_RUN_FILES)
    assert [f.parent.parts[-2:] for f in files] == [("data", "seeds")] * 2
    assert all(f.is_file() for f in files)
    sources = gather_inputs(files, Filters())
    assert [s.kind for s in sources] == ["latency benchmarks", "energy report"]


def test_read_inputs_gives_the_findings_of_every_source_and_their_abstentions() -> None:
    """The report's findings over the trace's op rows, breakdown, kernels and critical path;
    with the capture checks, the rules the trace's failed check (2 kernels without a launch)
    undermines abstain."""
    inputs = read_inputs([TRACE], Filters())
    assert {f.rule.id: f.status for f in inputs.findings} == {
        "critical-gain": "fired",
        "host-bound": "clear",
        "launch-bound": "clear",
        "exposed-communication": "clear",
        "exposed-copies": "clear",
        "small-kernels": "abstained",
        "compute-under-used": "abstained",
        "straggler": "not applicable",
        "low-occupancy": "not applicable",
        "dispatch-bound": "not applicable",
        "host-gaps": "not applicable",
        "imbalance": "not applicable",
        "start-skew": "not applicable",
        "communication": "not applicable",
        "op-gaps": "not applicable",
        "exchange-heavy": "not applicable",
        "sync-wait": "not applicable",
        "low-utilization": "not applicable",
    }
    assert inputs.checks is None
    checked = read_inputs([TRACE], Filters(), checks=load_checks())
    assert checked.checks is not None and checked.checks.height == 7
    assert checked.checks["count"].sum() == 2
    abstained = {f.rule.id for f in checked.findings if f.status == "abstained"}
    assert abstained == {
        "critical-gain",
        "host-bound",
        "launch-bound",
        "exposed-communication",
        "exposed-copies",
        "small-kernels",
        "compute-under-used",
    }


def test_read_inputs_names_the_example_as_asked() -> None:
    example = load_profile(None, True, DumpReading())
    inputs = read_inputs([], Filters(), example=example, example_name="reference")
    assert [t.name for t in inputs.tiles] == ["reference"] and inputs.files == ()
    assert inputs.runs is None


def test_read_inputs_builds_the_run_table_its_notes_links_and_files() -> None:
    """A trace with op rows (its two parser notes kept, no CPU-only trace), a run table and a
    links file: the links file is listed among the inputs with its own digest, and its set is
    the first linked set."""
    h200 = FIXTURES / "traces" / "h200_train_steps.json.gz"
    table = FIXTURES / "runs" / "generic_runs.csv"
    links = FIXTURES / "runs" / "links.toml"
    inputs = read_inputs([h200, table], Filters(), links=links)
    assert inputs.runs is not None
    assert [n.split(":")[0] for n in inputs.runs.notes] == ["h200_train_steps.json.gz"] * 2
    assert inputs.runs.notes[1].startswith("h200_train_steps.json.gz: 5 GPU events of 3 FLOP")
    assert inputs.runs.cpu_only_traces == ()
    assert [s.key for s in inputs.runs.linked_sets] == [
        "layer 3 GEMM (links file)",
        "workload layer3 (workload)",
        "gemm · f16 (different sizes: compare efficiency, not time) (op_family·dtype)",
    ]
    assert [s.runs.height for s in inputs.runs.linked_sets] == [1, 2, 2]  # rows per target
    sources = gather_inputs([h200, table], Filters())
    assert inputs.runs.runs.height == sum(s.runs.frame.height for s in sources)
    assert [(f.path, f.kind, f.size_bytes, f.sha256) for f in inputs.files] == [
        (str(h200), "PyTorch trace", h200.stat().st_size, _sha(h200)),
        (str(table), "run table", table.stat().st_size, _sha(table)),
        (str(links), "links (TOML)", links.stat().st_size, _sha(links)),
    ]


def test_an_nsight_compute_file_reaches_its_findings() -> None:
    ncu = FIXTURES / "real" / "cublaslt_gemm_b200_ncu.log"
    statuses = {f.rule.id: f.status for f in read_inputs([ncu], Filters()).findings}
    assert statuses["low-occupancy"] == "clear"
    assert {k for k, v in statuses.items() if v != "not applicable"} == {"low-occupancy"}


def test_an_export_with_no_kernels_has_no_critical_path(tmp_path: Path) -> None:
    """An nsys export whose kernel table is empty holds no process to build a step from: no
    critical path (not a document of no traces), no runs."""
    export = write_export(tmp_path / "e.sqlite")
    connection = sqlite3.connect(export)
    connection.execute("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL")
    connection.commit()
    connection.close()
    (source,) = gather_inputs([export], Filters(), critical=True, timelines=True)
    assert source.critical is None and source.runs.frame.height == 0
    (kept,) = gather_inputs([write_export(tmp_path / "k.sqlite")], Filters(), critical=True)
    assert kept.critical is not None
    assert [t["trace"] for t in kept.critical["traces"]] == ["k.sqlite pid 42"]


def test_the_findings_of_an_h200_trace_and_a_rule_table_of_ones_own() -> None:
    """The H200 trace's op rows have a ridge point (the spec registry's): compute-under-used
    fires rather than abstains; a rule table given is the one evaluated."""
    from tileprof.analyses.findings import RULES

    h200 = FIXTURES / "traces" / "h200_train_steps.json.gz"
    statuses = {f.rule.id: f.status for f in read_inputs([h200], Filters()).findings}
    fired = {k for k, v in statuses.items() if v == "fired"}
    assert fired == {"host-bound", "launch-bound", "compute-under-used", "critical-gain"}
    assert {k for k, v in statuses.items() if v == "clear"} == {
        "exposed-communication",
        "exposed-copies",
        "small-kernels",
    }
    own = [r for r in RULES if r.id == "compute-under-used"]
    findings = read_inputs([h200], Filters(), rules=own).findings
    assert [(f.rule.id, f.status) for f in findings] == [("compute-under-used", "fired")]


def test_format_in_reads_what_detection_refuses_as_a_dump_of_that_format(tmp_path: Path) -> None:
    """Without ``--format-in`` a file of no known kind is detection's error; with it, the file is
    a dump of that format, whose loader words the error."""
    from tileprof.core.errors import InputError

    unknown = tmp_path / "x.dat"
    unknown.write_text("hello there\n")
    with pytest.raises(InputError, match="not a tile dump, latency benchmarks"):
        gather_inputs([unknown], Filters())
    with pytest.raises(InputError) as caught:
        gather_inputs([unknown], Filters(), read=DumpReading(format_in="json"))
    assert str(caught.value) == f"{unknown}: line 1, column 1: malformed JSON: invalid character"


def test_an_epoch_the_example_lacks_is_refused_by_its_own_filters() -> None:
    from tileprof.core.errors import OptionError

    example = load_profile(None, True, DumpReading())
    with pytest.raises(OptionError) as caught:
        gather_inputs([], Filters(), example=example, example_filters=Filters(epoch=999))
    assert str(caught.value) == "--epoch 999: no samples in that epoch (epochs: 0, 1, 2)"
    (kept,) = gather_inputs([], Filters(epoch=999), example=example, example_filters=Filters())
    assert kept.filters == Filters()


def test_the_engine_given_reads_the_files(four: list[Path]) -> None:
    """The files go to the engine asked for: one that makes no sense is refused, not replaced
    by the default threads."""
    from tileprof.core.errors import OptionError
    from tileprof.model.engines import Engine

    with pytest.raises(OptionError, match="--engine 'nope': one of"):
        gather_inputs(four[:2], Filters(), engine=Engine(name="nope"))
    assert len(gather_inputs(four[:2], Filters(), engine=Engine())) == 2


def test_several_dumps_are_read_quietly_and_each_has_room_for_its_analyses(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One dump may draw its progress bar (``quiet=False``); two or more never do (bars drawn
    over each other). Each loaded dump asks room for its analyses: twice its samples' size
    and the report's slack."""
    from tileprof.core import memory
    from tileprof.model import gather

    loads: list[bool] = []
    real_load = gather.load

    def spy(path: Path, **keywords: object) -> object:
        loads.append(bool(keywords["quiet"]))
        return real_load(path, **keywords)  # type: ignore[arg-type]

    asked: list[int] = []
    monkeypatch.setattr(gather, "load", spy)
    monkeypatch.setattr(memory, "can_reserve", lambda size: asked.append(size) or True)
    dumps = [write_dump(tmp_path / f"d{i}.json", clean_samples()) for i in range(3)]
    loud = DumpReading(quiet=False)
    one = gather_inputs(dumps[:1], Filters(), read=loud)
    assert loads == [False]
    assert one[0].profile is not None
    size = one[0].profile.samples.estimated_size()
    assert memory.ANALYSIS_FACTOR * size + memory.REPORT_SLACK in asked  # (the loader asks too)
    loads.clear()
    gather_inputs(dumps[:2], Filters(), read=loud)
    assert loads == [True, True]
    loads.clear()
    gather_inputs(dumps, Filters(), read=loud)
    assert loads == [True, True, True]


def test_a_trace_read_whole_gives_what_a_streamed_one_gives(
    monkeypatch: pytest.MonkeyPatch, four: list[Path]
) -> None:
    """A trace the streaming decoder declines is read whole: the same runs, op rows, timeline,
    critical path and checks."""
    from tileprof.model import gather

    asked = {"ops": True, "timelines": True, "critical": True, "checks": load_checks()}
    (streamed,) = gather_inputs(four[1:2], Filters(), **asked)  # type: ignore[arg-type]
    monkeypatch.setattr(gather, "_streamed_trace", lambda path, checks: None)
    (whole,) = gather_inputs(four[1:2], Filters(), **asked)  # type: ignore[arg-type]
    assert whole.ops is not None and streamed.ops is not None
    assert whole.ops.height == streamed.ops.height == 3
    assert whole.ops.equals(streamed.ops)
    assert whole.runs.frame.equals(streamed.runs.frame)
    assert whole.timeline is not None and whole.critical == streamed.critical
    assert whole.checked is not None and streamed.checked is not None
    assert whole.checked.rows == streamed.checked.rows


def test_two_inputs_of_one_file_name_are_named_by_their_paths(four: list[Path]) -> None:
    """a/t.json and b/t.json: every row, note, op row, timeline and critical path of each names
    its path, so the run table, the kernel sets and the devices of one run (keyed on the file
    of ``source``) keep them apart; the inputs whose file name is their own keep it."""
    from tileprof.analyses.run_analysis import kernel_sets

    first, second = four[1].parent / "a" / "t.json", four[1].parent / "b" / "t.json"
    for copy in (first, second):
        copy.parent.mkdir()
        copy.write_bytes(TRACE.read_bytes())
    paths = [four[0], first, second, NSYS_CSV]
    sources = gather_inputs(paths, Filters(), ops=True, timelines=True, critical=True)
    dump, a, b, csv = sources
    for source, name in ((a, str(first)), (b, str(second))):
        files = source.runs.frame.get_column("source").str.split(": ").list.first()
        assert set(files) == {name}
        assert source.ops is not None and set(source.ops.get_column("source")) == {name}
        assert source.timeline is not None and source.timeline.name == name
        assert source.critical is not None
        assert {t["trace"] for t in source.critical["traces"]} == {name}
    assert set(dump.runs.frame.get_column("source").str.split(": ").list.first()) == {"d.json"}
    assert set(csv.runs.frame.get_column("source").str.split(": ").list.first()) == {NSYS_CSV.name}
    own = gather_inputs([first], Filters(), timelines=True)[0]  # alone: its file name
    assert own.timeline is not None and own.timeline.name == "t.json"
    runs = pl.concat([a.runs.frame, b.runs.frame])
    titles = [title for title, _ in kernel_sets(runs)]
    assert len(titles) == len(set(titles)) == 2 * len(kernel_sets(a.runs.frame))


def test_the_notes_of_two_inputs_of_one_file_name_name_their_paths(tmp_path: Path) -> None:
    """The Qwen trace's notes (causal attention, op rows doing none of their work) begin with
    the path of the copy they are about, not with a file name both copies share."""
    qwen = FIXTURES / "tracelens" / "h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
    copies = [tmp_path / rank / "trace.json.gz" for rank in ("rank0", "rank1")]
    for copy in copies:
        copy.parent.mkdir()
        copy.write_bytes(qwen.read_bytes())
    for source, copy in zip(gather_inputs(copies, Filters()), copies, strict=True):
        assert len(source.runs.notes) == 2
        assert all(n.startswith(f"{copy}: ") for n in source.runs.notes), source.runs.notes
