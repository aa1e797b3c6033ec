"""Reading the command line's files: one function that both ``runs`` and ``report`` call.

Each file's kind is detected from its content (``tileprof.inputs.detect``). A tile dump
becomes a ``Profile`` and, through its group table, one run per group; a GPU file (latency
benchmarks, energy report, Kineto trace, nsys CSV, run table) becomes its parser's runs.

The ``--format-in`` rule, the same for every command: it names the format of the tile dumps.
A file whose content shows a GPU run source is still read as one; every other file (including
one that detection cannot place) is read as a tile dump in that format.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from tileprof.analyses.filters import Filters, check_epoch
from tileprof.analyses.findings import Finding, Rule
from tileprof.analyses.kernel_metrics import attach_kernel_metrics
from tileprof.analyses.links import Links, linked_sets
from tileprof.core.errors import InputError
from tileprof.core.gpu_events import GpuTimeline
from tileprof.core.memory import REPORT_SLACK, require_room_for_analyses
from tileprof.core.run_schema import ParsedRuns, concat_runs
from tileprof.inputs.sources import (
    SUMMARY_DOCUMENT,
    TILE_DUMP,
    TRACE,
    FileRead,
    StreamReader,
    file_digest,
    read_input,
    streamed_trace,
)
from tileprof.inputs.timelines import TIMELINE_FORMATS, parse_timeline
from tileprof.model.engines import Engine, map_ordered
from tileprof.model.gpu_runs import gpu_runs as _gpu_runs
from tileprof.model.naming import display_names, renamed_frame, renamed_rows, renamed_text
from tileprof.model.profile import Profile, load
from tileprof.model.reading import DumpReading
from tileprof.model.tile_runs import tile_source_runs

if TYPE_CHECKING:
    from tileprof.analyses.integrity import CheckRules
    from tileprof.model.integrity import Checked


@dataclass(frozen=True)
class Source:
    """One input after reading: a tile dump (with its profile and filters) or a GPU run file.

    ``name`` is the file as given (or the example's name); ``runs`` are its rows of the run
    table (for a tile dump, one per group after ``filters``).
    """

    name: str
    path: Path | None
    kind: str
    runs: ParsedRuns
    profile: Profile | None = None
    filters: Filters | None = None
    size: int | None = None
    sha256: str | None = None
    ops: pl.DataFrame | None = None
    """A PyTorch trace's op rows, when ``gather_inputs`` was asked for them (``ops=True``)."""
    timeline: GpuTimeline | None = None
    """A trace's GPU timeline (``tileprof breakdown``), parsed from the same read when asked."""
    checked: Checked | None = None
    """Its capture checks (``tileprof.model.integrity``), from the same read when asked."""
    critical: dict[str, Any] | None = None
    """A trace's or nsys export's critical path per step (``model.gpu_critical``'s document),
    computed from the same read when asked, so the bytes are not kept for it."""

    def input_file(self) -> InputFile:
        """The report header's entry: path, kind, size and sha256 (a GPU file's from its one
        read; a tile dump's, which its loader streamed, in chunks)."""
        size, sha = self.size, self.sha256
        if sha is None and self.path is not None:
            size, sha = file_digest(self.path)
        return InputFile(str(self.path), self.kind, size, sha)

    def describe(self) -> dict[str, Any]:
        """The entry ``runs --format json`` lists under "sources"."""
        return {
            "file": self.name,
            "kind": self.runs.kind,
            "runs": self.runs.frame.height,
            "metadata": self.runs.metadata,
        }


def _read(
    path: Path, format_in: str | None, digest: bool, stream: StreamReader | None = None
) -> FileRead:
    """The file read once (``digest``: with its sha256; ``stream``: ``read_input``'s); with
    ``format_in``, anything not a run source is a dump."""
    try:
        return read_input(path, whole_dumps=True, digest=digest, stream=stream)
    except InputError:
        if format_in is None:
            raise
        return FileRead(path, TILE_DUMP, None)


def gather_inputs(
    paths: Sequence[Path],
    filters: Filters,
    *,
    example: Profile | None = None,
    example_filters: Filters | None = None,
    example_name: str = "example",
    read: DumpReading | None = None,
    ops: bool = False,
    timelines: bool = False,
    critical: bool = False,
    checks: CheckRules | None = None,
    engine: Engine | None = None,
    digests: bool = False,
) -> list[Source]:
    """Every input read once, in command-line order (the example profile first), each file
    by ``engine`` (``model.engines``: threads by default, or dask workers); with ``digests``,
    each file's sha256 is taken from that read (``Source.input_file``, the report's header).

    With ``checks``, each input also gets its capture checks (``Source.checked``; all of them
    together: ``capture_checks``).

    With ``timelines``, a GPU trace that holds a timeline (PyTorch trace, nsys SQLite export)
    also gets it, parsed from the same read; with ``critical``, its critical path per step
    (``Source.critical``), from the same read.

    ``filters`` apply to every tile dump (``example_filters`` to the example profile);
    ``read`` says how tile dumps are read (``--format-in``, the device overrides; ``quiet=False``
    lets large ones draw the progress bar, ``tileprof.core.progress``); ``ops`` adds each
    PyTorch trace's op rows, from the same read (the findings use them).
    """
    read = read or DumpReading()
    sources: list[Source] = []
    if example is not None:
        own = example_filters or filters
        check_epoch(example.samples, own.epoch)
        runs = tile_source_runs(example, own, example_name)
        checked = _checked(example_name, TILE_DUMP, None, example, checks)
        sources.append(Source(example_name, None, TILE_DUMP, runs, example, own, checked=checked))
    reading = functools.partial(
        _source_of,
        filters=filters,
        read=read if len(paths) <= 1 else dataclasses.replace(read, quiet=True),
        ops=ops,
        timelines=timelines,
        critical=critical,
        checks=checks,
        digests=digests,
    )  # several files at once: no progress bars drawn over each other
    sources.extend(map_ordered(reading, list(paths), engine))
    return _named_sources(sources)


def _named_sources(sources: list[Source]) -> list[Source]:
    """``sources``, each file named as ``tileprof breakdown`` names a trace: its file name,
    or the path as given when two inputs share a file name. Its run and op rows' ``source``,
    its notes, its timeline and its critical path's traces then tell rank0/trace.json from
    rank1/trace.json: the run table's rows, the kernel sets and the devices of one run (both
    keyed on the file of ``source``), the findings' places, the critical path and the report's
    capture-check marks."""
    held = [s for s in sources if s.path is not None]
    names = display_names([s.path for s in held if s.path])
    renamed = {
        id(s): _named(s, n) for s, n in zip(held, names, strict=True) if s.path and n != s.path.name
    }
    return [renamed.get(id(s), s) for s in sources]


def _named(source: Source, name: str) -> Source:
    """``source``, whose rows, notes, timeline and critical path name it by its file name,
    named ``name`` instead ("t.json: device 0" becomes "NAME: device 0", an export's
    "t.sqlite pid 7" "NAME pid 7")."""
    assert source.path is not None
    own = source.path.name
    frame, notes = renamed_rows(source.runs.frame, source.runs.notes, own, name)
    runs = dataclasses.replace(source.runs, frame=frame, notes=notes)
    ops = None if source.ops is None else renamed_frame(source.ops, own, name)
    timeline = source.timeline
    if timeline is not None:
        timeline = dataclasses.replace(timeline, name=renamed_text(timeline.name, own, name))
    critical = source.critical
    if critical is not None:
        traces = [{**t, "trace": renamed_text(t["trace"], own, name)} for t in critical["traces"]]
        critical = {**critical, "traces": traces}
    return dataclasses.replace(source, runs=runs, ops=ops, timeline=timeline, critical=critical)


def _source_of(
    path: Path,
    *,
    filters: Filters,
    read: DumpReading,
    ops: bool,
    timelines: bool,
    checks: CheckRules | None,
    critical: bool = False,
    digests: bool = False,
) -> Source:
    """One input file read (``gather_inputs``): where it lies, on a thread or a dask worker."""
    streamed: list[Checked | None] = []

    def stream(source: Path) -> FileRead | None:
        found = _streamed_trace(source, checks)
        if found is None:
            return None
        streamed.append(found[1])
        return found[0]

    found = _read(path, read.format_in, digests, stream)
    if streamed:
        parts = _gpu_parts(found, ops=ops, timelines=timelines)
        return _gpu_source(path, found, streamed[0], parts, critical=critical)
    # a summary document's samples are a small tile dump (``summary`` reads them so too)
    if found.kind in (TILE_DUMP, SUMMARY_DOCUMENT) or found.data is None:
        profile = load(path, **read.keywords, content=found.data)
        require_room_for_analyses(profile.samples.estimated_size(), REPORT_SLACK)
        check_epoch(profile.samples, filters.epoch)
        runs = tile_source_runs(profile, filters, path.name)
        source = Source(str(path), path, TILE_DUMP, runs, profile, filters)
        checked = _checked(str(path), TILE_DUMP, None, profile, checks)
        return dataclasses.replace(source, size=found.size, sha256=found.sha256, checked=checked)
    if found.kind == TRACE:
        found, checked = _decoded_trace(found, checks)
        parts = _gpu_parts(found, ops=ops, timelines=timelines)
    else:
        parts = _gpu_parts(found, ops=ops, timelines=timelines)
        checked = _checked(str(path), found.kind, found.data, None, checks)
    return _gpu_source(path, found, checked, parts, critical=critical)


def _gpu_source(
    path: Path,
    found: FileRead,
    checked: Checked | None,
    parts: tuple[ParsedRuns, pl.DataFrame | None, GpuTimeline | None],
    *,
    critical: bool,
) -> Source:
    """A GPU file's source: its runs, op rows and timeline (``parts``: ``_gpu_parts``), its
    checks and (``critical``) its critical path."""
    runs, op_rows, timeline = parts
    return Source(
        str(path),
        path,
        found.kind,
        runs,
        size=found.size,
        sha256=found.sha256,
        ops=op_rows,
        timeline=timeline,
        checked=checked,
        critical=_critical_of(found, checked) if critical else None,
    )


def _streamed_trace(
    path: Path, checks: CheckRules | None
) -> tuple[FileRead, Checked | None] | None:
    """A PyTorch trace read through the compiled decoder's window, never whole: its inventory
    streamed, checked and let go (unless it names its rank), then its events streamed
    (``streamed_trace``). So `runs`, `findings` and `report` hold the decoder's columns, not the
    file as well. None when the file is not one to stream or the decoder declines it (its
    inventory or its events) or anything in between is refused: the whole read then words the
    error, in its order."""
    checked = None
    if checks is not None:
        from tileprof.model.integrity import streamed_trace_checks

        checked = streamed_trace_checks(path, checks)
        if checked is None:
            return None
    read = streamed_trace(path)
    return None if read is None else (read, checked)


def _decoded_trace(found: FileRead, checks: CheckRules | None) -> tuple[FileRead, Checked | None]:
    """A PyTorch trace's capture checks, then the trace decoded and its read without the bytes
    (``FileRead.decoded``): the runs, op rows, timeline and critical path read the event
    frame, with the file no longer in memory. The checks' inventory goes before the events
    are decoded, so that the two are never in memory together (on the 626 MB trace the
    checks took 690 MB over the file and the decoded events); a file both refuse words the
    decoder's error, as before."""
    try:
        checked = _checked(str(found.path), found.kind, found.data, None, checks)
    except InputError:
        found.kineto_events()  # the decoder's error, when it has one, comes first
        raise
    return found.decoded(), checked


def _gpu_parts(
    found: FileRead, *, ops: bool, timelines: bool
) -> tuple[ParsedRuns, pl.DataFrame | None, GpuTimeline | None]:
    """A GPU file's runs, op rows (``ops``, a PyTorch trace) and timeline (``timelines``); a
    PyTorch trace is decoded once for all of them and the critical path
    (``FileRead.kineto_events``)."""
    path, data = found.path, found.data or b""
    if found.kind != TRACE:
        runs = _gpu_runs(path, found.kind, data)
        if timelines and found.kind in TIMELINE_FORMATS:
            return runs, None, parse_timeline(path, found.kind, data)
        return runs, None, None
    from tileprof.analyses.ops import op_rows
    from tileprof.inputs.gpu.kineto_timeline import timeline_of
    from tileprof.model.gpu_runs import trace_runs_and_op_rows

    events = found.kineto_events()
    # the runs first, as before: their errors and notes come first
    runs, rows = trace_runs_and_op_rows(events)
    if ops and rows is None:
        rows = op_rows(events).frame
    return runs, rows if ops else None, timeline_of(events) if timelines else None


def _critical_of(found: FileRead, checked: Checked | None) -> dict[str, Any] | None:
    """The critical path per step of a PyTorch trace or nsys export (None: another kind, or
    one that holds no host events to build the graph from), its candidates withheld when its
    own failed checks undermine them. A trace's path is read from its decoded events (its
    bytes are gone by now), an export's from its bytes."""
    from tileprof.analyses.integrity import undermined
    from tileprof.inputs.gpu.nsys_sqlite import KIND as NSYS
    from tileprof.model.gpu_critical import trace_critical

    if found.kind != TRACE and (found.kind != NSYS or found.data is None):
        return None
    withheld = undermined(checked.rows if checked else ()).get("candidates", [])
    document = trace_critical([found], withheld=[withheld])
    return document if any(t["steps"] for t in document["traces"]) else None


def _checked(
    name: str, kind: str, data: bytes | None, profile: Profile | None, rules: CheckRules | None
) -> Checked | None:
    if rules is None:
        return None
    from tileprof.model.integrity import input_checks

    return input_checks(name, kind, data, profile, rules)


def capture_checks(sources: Sequence[Source], rules: CheckRules) -> pl.DataFrame:
    """The capture checks of the sources (gathered with ``checks``), then those across the
    ranks of each job."""
    from tileprof.analyses.integrity import check_frame
    from tileprof.model.integrity import job_rows

    checked = [s.checked for s in sources if s.checked is not None]
    rows = [row for c in checked for row in c.rows]
    return check_frame(rows + job_rows(checked, rules))


def run_table(sources: Sequence[Source], links: Links | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The run table of ``sources`` in their order, and its linked sets (docs/runs.md)."""
    runs = attach_kernel_metrics(concat_runs([s.runs.frame for s in sources]))
    return runs, linked_sets(runs, links)


# ---------------------------------------------------------------- the report's inputs


LINKS_KIND = "links (TOML)"
"""The kind the report's header gives a links file: an input, not a capture to check."""


@dataclass(frozen=True)
class InputFile:
    """One input of the report, as the header lists it."""

    path: str
    kind: str
    size_bytes: int | None
    sha256: str | None


@dataclass(frozen=True)
class LinkedSet:
    """Runs of different targets side by side: the same work, or the same kind of work in
    different sizes (``runs.compare``: time or efficiency; issue 10)."""

    key: str
    runs: pl.DataFrame


@dataclass(frozen=True)
class RunInputs:
    """What the GPU and across-targets sections are built from.

    ``runs`` is the run table of docs/runs.md (columns it lacks count as null);
    ``notes`` are the parsers' remarks, ``cpu_only_traces`` the traces with no GPU events.
    """

    runs: pl.DataFrame
    linked_sets: tuple[LinkedSet, ...] = ()
    notes: tuple[str, ...] = ()
    cpu_only_traces: tuple[str, ...] = ()


EXAMPLE_RUN_FILES: tuple[str, ...] = ("000_55f6fcd9cea2f10a.txt", "003_2d9153cb18ea7de3.txt")
"""The seed GPU files ``report --example`` adds, shipped as package data."""


@dataclass(frozen=True)
class TileInput:
    """One tile dump, with the filters its section uses."""

    profile: Profile
    filters: Filters
    name: str


@dataclass(frozen=True)
class ReportInputs:
    """Everything the report reads: tile profiles, GPU runs and the header's file list."""

    tiles: tuple[TileInput, ...]
    runs: RunInputs | None
    files: tuple[InputFile, ...]
    findings: tuple[Finding, ...] = ()
    """The findings' rule table over every input (tile dumps and PyTorch traces alike)."""
    timelines: tuple[GpuTimeline, ...] = ()
    """The GPU timelines of the traces (for the report's time breakdown)."""
    critical: tuple[dict[str, Any], ...] = ()
    """The traces' critical paths per step (``Source.critical``; the report's section)."""
    checks: pl.DataFrame | None = None
    """The capture checks of every input (``tileprof.analyses.integrity``), when asked."""


def example_run_files() -> list[Path]:
    """The packaged seed files (latency benchmarks 000, energy report 003)."""
    folder = resources.files("tileprof") / "data" / "seeds"
    return [Path(str(folder / name)) for name in EXAMPLE_RUN_FILES]


def read_inputs(
    paths: Sequence[Path],
    filters: Filters,
    *,
    example: Profile | None = None,
    example_filters: Filters | None = None,
    example_name: str = "example",
    read: DumpReading | None = None,
    links: Path | None = None,
    rules: Sequence[Rule] | None = None,
    checks: CheckRules | None = None,
    engine: Engine | None = None,
) -> ReportInputs:
    """Read every file once (``gather_inputs``, the reader ``runs`` uses too); tile dumps also
    give one run per group for the linked sets.

    The run table lists the tile groups first, then the GPU files in command-line order.
    ``read`` says how tile dumps are read (``quiet=False`` lets large ones draw the progress
    bar, ``tileprof.core.progress``); ``rules`` is the findings' rule table (default
    ``RULES``); ``checks``, the capture checks' rules: every input is checked, and the findings
    a failed check undermines abstain.
    """
    read = read or DumpReading()
    sources = gather_inputs(
        paths,
        filters,
        example=example,
        example_filters=example_filters,
        example_name=example_name,
        read=read,
        ops=True,
        timelines=True,
        critical=True,
        checks=checks,
        engine=engine,
        digests=True,
    )
    checked = None if checks is None else capture_checks(sources, checks)
    timelines = tuple(s.timeline for s in sources if s.timeline is not None)
    critical = tuple(s.critical for s in sources if s.critical is not None)
    tiles = tuple(
        TileInput(s.profile, s.filters or filters, s.name if s.path is None else s.path.name)
        for s in sources
        if s.profile is not None
    )
    files = tuple(s.input_file() for s in sources if s.path is not None)
    findings = source_findings(sources, rules, checked)
    if links is not None:  # the links file is an input too: its digest says which links held
        size, sha = file_digest(links)
        files = (*files, InputFile(str(links), LINKS_KIND, size, sha))
    gpu = [s for s in sources if s.profile is None]
    if not gpu and links is None:
        # Tile dumps only: no run table to build (the tile sections summarise the dumps).
        return ReportInputs(
            tiles, None, files, findings, timelines, critical=critical, checks=checked
        )
    tile_sources = [s for s in sources if s.profile is not None]
    from tileprof.inputs.links_file import load_links

    runs, sets = run_table([*tile_sources, *gpu], load_links(links) if links is not None else None)
    parsed = [s.runs for s in gpu]
    cpu_only = tuple(
        note for p in parsed if p.kind == TRACE and p.frame.height == 0 for note in p.notes
    )
    from tileprof.core.roofline import roofline_notes

    notes = tuple(note for p in parsed for note in p.notes if note not in cpu_only)
    notes += tuple(roofline_notes(runs))
    return ReportInputs(
        tiles,
        RunInputs(runs, linked_from_frame(sets), notes=notes, cpu_only_traces=cpu_only),
        files,
        findings=findings,
        timelines=timelines,
        checks=checked,
        critical=critical,
    )


TIMELINE_FIGURES = ("breakdown", "ranks")
"""The findings' sources made over every trace's timeline together."""


def source_findings(
    sources: Sequence[Source],
    rules: Sequence[Rule] | None = None,
    checks: pl.DataFrame | None = None,
) -> tuple[Finding, ...]:
    """The findings' rules (default ``RULES``) over the sources' tile dumps and PyTorch
    traces, each op row with its device's ridge point from the spec registry
    (docs/metrics.md, "Findings"). An input whose own failed capture check in ``checks``
    undermines a rule's source is left out of that rule, which judges the other inputs and
    names it (``integrity.with_left_out``); a failed check across a job's ranks abstains
    the rules whose source it undermines."""
    from tileprof.analyses.findings import RULES, STATUS_ORDER, combined, evaluate
    from tileprof.analyses.integrity import abstained_findings, undermined, with_left_out
    from tileprof.model.findings import timeline_frames

    rules = RULES if rules is None else rules
    # tile dumps first, as they stack before the traces' rows (the candidates frame has both)
    parts = [(s, _input_frames(s)) for s in sorted(sources, key=lambda s: s.profile is None)]
    lost = {id(s): undermined(s.checked.rows if s.checked else ()) for s in sources}
    timelines = [(s, s.timeline) for s in sources if s.timeline is not None]

    def frames(leave_out: bool) -> dict[str, pl.DataFrame]:
        def kept(s: Source, figure: str) -> bool:
            return not (leave_out and figure in lost[id(s)])

        inputs = [{k: v for k, v in part.items() if kept(s, k)} for s, part in parts]
        on = {f: [t for s, t in timelines if kept(s, f)] for f in TIMELINE_FIGURES}
        return combined([*inputs, timeline_frames(on["breakdown"], on["ranks"])])

    findings = evaluate(frames(False), rules)
    fed = {id(s): {*part, *(TIMELINE_FIGURES if s.timeline else ())} for s, part in parts}
    failed = [(s, _own_frames(s, part)) for s, part in parts if set(lost[id(s)]) & fed[id(s)]]
    if failed:
        kept = frames(True)
        findings = sorted(
            (
                found
                for finding in findings
                for found in with_left_out([finding], kept, _left_out(finding.rule, failed, lost))
            ),
            key=lambda f: STATUS_ORDER[f.status],
        )
    own = {row["input"] for s in sources if s.checked for row in s.checked.rows}
    across = None if checks is None else checks.filter(~pl.col("input").is_in(list(own)))
    return tuple(abstained_findings(findings, across))


def _left_out(
    rule: Rule,
    failed: Sequence[tuple[Source, dict[str, pl.DataFrame]]],
    lost: Mapping[int, Mapping[str, Sequence[str]]],
) -> dict[str, list[str]]:
    """Why each input whose own failed check undermines ``rule``'s source is left out of it
    (``integrity.with_left_out``), for the inputs that hold a row the rule reads (``failed``:
    each with its own frames, ``_own_frames``): a GPU trace left out of the breakdown is not
    named by a rule of Tenstorrent chips."""
    from tileprof.analyses.findings import rows_read

    why: dict[str, list[str]] = {}
    for source, own in failed:
        reasons = lost[id(source)].get(rule.source)
        frame = own.get(rule.source)
        # one trace makes no ranks frame: its rows are its job's, every one read
        reads = rule.source == "ranks" or (frame is not None and rows_read(rule, frame).height)
        if reasons and reads:
            why.setdefault(rule.source, []).extend(reasons)
    return why


def _own_frames(source: Source, part: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """One input's frames for the findings' rules, its timeline's breakdown among them."""
    from tileprof.model.findings import timeline_frames

    if source.timeline is None:
        return part
    return {**part, **timeline_frames([source.timeline], [])}


def _input_frames(source: Source) -> dict[str, pl.DataFrame]:
    """The frames one input gives the findings' rules (not its timeline's: those are made
    over every trace together, ``model.findings.timeline_frames``)."""
    from tileprof.analyses.findings import gpu_candidate_frame, kernel_frame, ncu_frame, op_frame
    from tileprof.core.specs import ridge_intensity
    from tileprof.inputs.sources import KERNEL_TIMELINE_KINDS, NCU
    from tileprof.model.findings import profile_frames

    frames: dict[str, pl.DataFrame] = {}
    if source.profile is not None:
        frames |= profile_frames(source.profile, source.filters, source.name)
    if source.ops is not None:
        frames["ops"] = op_frame(source.ops, ridge_intensity)
    if source.kind in KERNEL_TIMELINE_KINDS:
        frames["kernels"] = kernel_frame(source.runs.frame, source.name)
    if source.kind == NCU:
        frames["ncu"] = ncu_frame(source.runs.frame, source.name)
    if source.critical is not None:
        frames["candidates"] = gpu_candidate_frame(source.critical)
    return frames


def linked_from_frame(sets: pl.DataFrame) -> tuple[LinkedSet, ...]:
    """``tileprof.analyses.links.linked_sets``'s flat frame (one row per set and target) as sets."""
    out = []
    for (_, label, link_by), frame in sets.group_by(
        ["set_id", "set", "link_by"], maintain_order=True
    ):
        out.append(LinkedSet(f"{label} ({link_by})", frame))
    return tuple(out)
