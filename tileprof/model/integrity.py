"""Reading every input for the capture checks (``tileprof check``, and the checks that
``findings``, ``report``, ``diff`` and ``history`` consult before a verdict).

Each file is detected as every command detects it; its kind picks its checks
(``tileprof.analyses.integrity_gpu``, ``tileprof.analyses.quality.tile_integrity``). PyTorch
traces that name their rank (``distributedInfo``) and share a world size are one job: their
ranks are also checked against each other. A file of a kind with no checks gives no rows,
but is still read as ``runs`` reads it (a file it refuses is refused here too) and named among
the unchecked inputs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from tileprof.analyses.integrity import CheckRules, check_frame, load_checks
from tileprof.core.errors import InputError
from tileprof.inputs.gpu.kineto import KIND as TRACE
from tileprof.inputs.gpu.nsys_sqlite import KIND as NSYS_SQLITE
from tileprof.inputs.sources import (
    SUMMARY_DOCUMENT,
    TILE_DUMP,
    FileRead,
    kind_of_keys,
    parse_runs,
    parse_summary_document,
    read_input,
)
from tileprof.inputs.tile.tenstorrent import KIND as TENSTORRENT
from tileprof.model.profile import Profile
from tileprof.model.reading import DumpReading

if TYPE_CHECKING:
    from tileprof.analyses.integrity_gpu import RankCapture
    from tileprof.inputs.gpu.kineto_inventory import Inventory

Row = dict[str, object]

JOB_INPUT = "job of "
"""How the checks across a job's ranks begin their input: ``job of 8 ranks (ranks 0, 1
given)``, no file."""


@dataclass(frozen=True)
class CheckedFiles:
    """``check``'s answer: one row per input and check, and the inputs of a kind that has no
    capture checks (``(input, kind)``, in command-line order), read but not checked. Naming
    them keeps "every check passed" from reading as a verdict on a file no check looked at."""

    checks: pl.DataFrame
    unchecked: tuple[tuple[str, str], ...] = ()


def check_files(
    paths: Sequence[Path],
    rules: CheckRules | None = None,
    read: DumpReading | None = None,
    *,
    example: Profile | None = None,
) -> CheckedFiles:
    """The capture checks of every file (and of ``example``, a profile already loaded), in
    command-line order, then the checks across the ranks of each job. A file of a kind with
    no checks is read as ``runs`` reads it, so that a broken one is its one-line error."""
    rules = rules or load_checks()
    read = read or DumpReading()
    rows: list[Row] = []
    if example is not None:
        rows += input_checks("example", TILE_DUMP, None, example, rules).rows
    ranks: list[Checked] = []
    unchecked: list[tuple[str, str]] = []
    for path in paths:
        found, streamed = _read_streaming_checks(path, rules)
        if streamed is not None:
            checked = streamed
        elif found.kind in (TRACE, NSYS_SQLITE, TENSTORRENT) and found.data is not None:
            checked = input_checks(str(path), found.kind, found.data, None, rules)
        elif found.kind == TILE_DUMP or found.data is None:
            checked = Checked(_dump(path, found.data, rules, read))
        else:
            _read_unchecked(path, found.kind, found.data)
            unchecked.append((str(path), found.kind))
            continue
        rows += checked.rows
        ranks += [checked] if checked.rank is not None else []
    return CheckedFiles(check_frame(rows + job_rows(ranks, rules)), tuple(unchecked))


def _read_unchecked(path: Path, kind: str, data: bytes) -> None:
    """A file of a kind with no checks, read as the command that takes it reads it (``runs``,
    or ``diff`` for a summary document): a file it refuses is that one-line error."""
    if kind == SUMMARY_DOCUMENT:
        parse_summary_document(path, data)
    else:
        parse_runs(path, kind, data)


@dataclass(frozen=True)
class Checked:
    """One input's check rows; a trace that names its rank keeps what the checks across the
    ranks of its job read of it (``RankCapture``), not its inventory."""

    rows: list[Row]
    name: str = ""
    rank: tuple[int, int] | None = None
    """(world size, rank)"""
    capture: RankCapture | None = None


def input_checks(
    name: str, kind: str, data: bytes | None, profile: Profile | None, rules: CheckRules
) -> Checked:
    """The checks of one input already read: its bytes (``data``) for a PyTorch trace, an
    nsys export or a Tenstorrent report, its ``profile`` for a tile dump (another kind: no
    checks)."""
    from tileprof.analyses.integrity_gpu import export_checks, ops_report_checks
    from tileprof.analyses.quality import tile_integrity

    if profile is not None:
        return Checked(tile_integrity(profile.samples, profile.tile_count, name, rules))
    if data is None:
        return Checked([])
    if kind == TRACE:
        from tileprof.inputs.gpu.kineto_inventory import read_inventory

        return trace_checked(name, read_inventory(name, data), rules)
    if kind == NSYS_SQLITE:
        from tileprof.inputs.gpu.nsys_checks import read_facts

        f = read_facts(name, data)
        return Checked(
            export_checks(f.events, f.capture, f.missing_strings, f.named_devices, name, rules)
        )
    if kind == TENSTORRENT:
        from tileprof.inputs.tile.tenstorrent import op_table

        return Checked(ops_report_checks(op_table(name, data), name, rules))
    return Checked([])


def trace_checked(name: str, inventory: Inventory, rules: CheckRules) -> Checked:
    """The checks of one PyTorch trace's inventory; a trace that names its rank keeps what
    the checks across its job's ranks read of it (``job_rows``)."""
    from tileprof.analyses.integrity_gpu import rank_capture, trace_checks

    rows = trace_checks(inventory.events, name, rules)
    if inventory.rank is None or inventory.world_size is None:
        return Checked(rows)
    rank = (inventory.world_size, inventory.rank)
    return Checked(rows, name, rank, rank_capture(inventory.events))


def _read_streaming_checks(path: Path, rules: CheckRules) -> tuple[FileRead, Checked | None]:
    """The file read once (``read_input``), and, for a PyTorch trace whose inventory was
    streamed instead (``streamed_trace_checks``), its checks."""
    streamed: list[Checked] = []

    def stream(source: Path) -> FileRead | None:
        checked = streamed_trace_checks(source, rules)
        streamed.extend([] if checked is None else [checked])
        return None if checked is None else FileRead(source, TRACE, None)

    found = read_input(path, whole_dumps=True, digest=False, stream=stream)
    return found, streamed[0] if streamed else None


def streamed_trace_checks(path: Path, rules: CheckRules) -> Checked | None:
    """The checks of the PyTorch trace in the regular file at ``path``, its inventory read
    through the compiled reader's bounded window (``stream_inventory``), never whole. None when
    the reader declines the file, its keys show another kind, or the checks refuse it: the
    whole read (``input_checks``) then words the error, in its order. A panic in the reader is
    not a refusal: it is the one-line internal error."""
    from tileprof.inputs.gpu.kineto_inventory import stream_inventory

    found = stream_inventory(path)
    if found is None or kind_of_keys(path, found[1]) != TRACE:
        return None
    try:
        return trace_checked(str(path), found[0], rules)
    except InputError:
        return None


def job_rows(checked: Sequence[Checked], rules: CheckRules) -> list[Row]:
    """The checks across the ranks of each job: traces of one world size (a rank given
    twice counts once)."""
    jobs: dict[int, dict[int, tuple[str, RankCapture]]] = defaultdict(dict)
    for c in checked:
        if c.rank is not None and c.capture is not None:
            jobs[c.rank[0]].setdefault(c.rank[1], (c.name, c.capture))
    return _jobs(jobs, rules)


def _jobs(jobs: dict[int, dict[int, tuple[str, RankCapture]]], rules: CheckRules) -> list[Row]:
    from tileprof.analyses.integrity_gpu import job_checks

    rows: list[Row] = []
    for world, ranks in sorted(jobs.items()):
        if len(ranks) > 1:
            label = f"{JOB_INPUT}{world} ranks (ranks {', '.join(map(str, sorted(ranks)))} given)"
            rows += job_checks(dict(sorted(ranks.items())), label, rules)
    return rows


def _dump(path: Path, data: bytes | None, rules: CheckRules, read: DumpReading) -> list[Row]:
    """A tile dump's checks; one whose metadata the loader refuses is scanned for every such
    sample (JSON and NDJSON dumps) and read without their metadata."""
    from tileprof.analyses.quality import tile_integrity
    from tileprof.model.profile import load

    unparsed: list[int] = []
    try:
        profile = load(path, **read.keywords, content=data)
    except InputError as exc:
        if "metadata" not in exc.message:
            raise
        from tileprof.inputs.tile.metadata_scan import scan

        scanned = scan(path)
        if scanned is None or not scanned[0]:
            raise
        unparsed, cleaned = scanned
        profile = load(path, **read.keywords, content=cleaned)
    return tile_integrity(profile.samples, profile.tile_count, str(path), rules, unparsed)
