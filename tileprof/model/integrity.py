"""Reading every input for the capture checks (``tileprof check``, and the checks that
``findings``, ``report``, ``diff`` and ``history`` consult before a verdict).

Each file is detected as every command detects it; its kind picks its checks
(``tileprof.analyses.integrity_gpu``, ``tileprof.analyses.quality.tile_integrity``). PyTorch
traces that name their rank (``distributedInfo``) and share a world size are one job: their
ranks are also checked against each other. A file of a kind with no checks gives no rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from tileprof.analyses.integrity import CheckRules, check_frame, load_checks
from tileprof.core.errors import InputError
from tileprof.inputs.gpu.kineto import KIND as TRACE
from tileprof.inputs.gpu.nsys_sqlite import KIND as NSYS_SQLITE
from tileprof.inputs.sources import TILE_DUMP, read_input
from tileprof.inputs.tile.tenstorrent import KIND as TENSTORRENT
from tileprof.model.profile import Profile
from tileprof.model.reading import DumpReading

Row = dict[str, object]


def check_files(
    paths: Sequence[Path],
    rules: CheckRules | None = None,
    read: DumpReading | None = None,
    *,
    example: Profile | None = None,
) -> pl.DataFrame:
    """The capture checks of every file (and of ``example``, a profile already loaded), in
    command-line order, then the checks across the ranks of each job."""
    from tileprof.analyses.quality import tile_integrity

    rules = rules or load_checks()
    read = read or DumpReading()
    rows: list[Row] = []
    if example is not None:
        rows += tile_integrity(example.samples, example.tile_count, "example", rules)
    jobs: dict[int, dict[int, tuple[str, pl.DataFrame]]] = defaultdict(dict)
    for path in paths:
        found = read_input(path, whole_dumps=True)
        if found.kind == TRACE and found.data is not None:
            rows += _trace(path, found.data, rules, jobs)
        elif found.kind == NSYS_SQLITE and found.data is not None:
            rows += _export(path, found.data, rules)
        elif found.kind == TENSTORRENT and found.data is not None:
            from tileprof.analyses.integrity_gpu import ops_report_checks
            from tileprof.inputs.tile.tenstorrent import op_table

            rows += ops_report_checks(op_table(path, found.data), str(path), rules)
        elif found.kind == TILE_DUMP or found.data is None:
            rows += _dump(path, found.data, rules, read)
    rows += _jobs(jobs, rules)
    return check_frame(rows)


def _trace(
    path: Path,
    data: bytes,
    rules: CheckRules,
    jobs: dict[int, dict[int, tuple[str, pl.DataFrame]]],
) -> list[Row]:
    from tileprof.analyses.integrity_gpu import trace_checks
    from tileprof.inputs.gpu.kineto_inventory import read_inventory

    inventory = read_inventory(path, data)
    if inventory.rank is not None and inventory.world_size is not None:
        jobs[inventory.world_size].setdefault(inventory.rank, (str(path), inventory.events))
    return trace_checks(inventory.events, str(path), rules)


def _jobs(jobs: dict[int, dict[int, tuple[str, pl.DataFrame]]], rules: CheckRules) -> list[Row]:
    from tileprof.analyses.integrity_gpu import job_checks

    rows: list[Row] = []
    for world, ranks in sorted(jobs.items()):
        if len(ranks) > 1:
            label = f"job of {world} ranks (ranks {', '.join(map(str, sorted(ranks)))} given)"
            rows += job_checks(dict(sorted(ranks.items())), label, rules)
    return rows


def _export(path: Path, data: bytes, rules: CheckRules) -> list[Row]:
    from tileprof.analyses.integrity_gpu import export_checks
    from tileprof.inputs.gpu.nsys_checks import read_facts

    facts = read_facts(path, data)
    return export_checks(
        facts.events, facts.capture, facts.missing_strings, facts.named_devices, str(path), rules
    )


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
