"""The critical path through a tile dump's epochs, and what-if re-timing of it
(docs/metrics.md, "Critical path and what-if").

Under bulk-synchronous execution each superstep lasts as long as its slowest tile, so an
epoch's critical path runs through every superstep's critical tile (its late start, busy time
and internal gaps) and through every window between supersteps. What the other tiles wait at
the sync is their slack: shortening them gains nothing until one of them becomes critical.
What-if edits re-time the supersteps from the per-tile figures the superstep analysis already
measured, without re-running anything: a kernel group scaled by a factor or set to its
roofline time, supersteps balanced (every active tile at the mean busy time), exchange
removed. Every re-timed figure is a whole number of cycles.
"""

from __future__ import annotations

import fnmatch
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from tileprof.analyses.supersteps import compute_samples, superstep_analysis
from tileprof.core.errors import InputError, OptionError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EDIT_KINDS: tuple[str, ...] = (
    "scale",
    "roofline",
    "balance",
    "no-exchange",
    "no-launch",
    "no-host-gaps",
    "on-time",
)
"""The what-if edits (docs/metrics.md defines each): a tile dump takes the first four, a GPU
step (``analyses.gpu_critical``) scale, roofline, no-launch and no-host-gaps, the ranks of a
job also on-time (``match`` holds the rank)."""

_NULL_EPOCH = -(2**63)
_STEP = ["epoch", "index"]
_TILE = ["epoch", "index", "tile"]


@dataclass(frozen=True)
class Edit:
    """One what-if edit: ``scale`` (groups matching ``match`` by ``factor``), ``roofline``
    (groups matching ``match`` at their roofline time), ``balance`` (``supersteps``, every one
    when None) or ``no-exchange``."""

    kind: str
    match: str | None = None
    factor: float | None = None
    supersteps: tuple[int, ...] | None = None

    def describe(self) -> str:
        """The edit as the command line spells it."""
        if self.kind == "scale":
            return f"scale:{self.match}={self.factor:g}"
        if self.kind in ("roofline", "on-time"):
            return f"{self.kind}:{self.match}"
        if self.kind == "balance" and self.supersteps is not None:
            return "balance:" + ",".join(str(k) for k in self.supersteps)
        return self.kind


def parse_edit(text: str) -> Edit:
    """``scale:GLOB=FACTOR``, ``roofline:GLOB``, ``balance``, ``balance:K,K…``,
    ``no-exchange``, ``no-launch``, ``no-host-gaps`` or ``on-time:RANK``; anything else is an
    ``OptionError`` naming the edit."""
    kind, _, rest = text.partition(":")
    if kind in ("no-exchange", "no-launch", "no-host-gaps") and not rest:
        return Edit(kind)
    if kind == "balance":
        if not rest or rest == "all":
            return Edit("balance")
        try:
            return Edit("balance", supersteps=tuple(int(k) for k in rest.split(",")))
        except ValueError:
            raise OptionError(f"--what-if {text!r}: balance takes superstep indices") from None
    if kind == "roofline" and rest:
        return Edit("roofline", match=rest)
    if kind == "on-time" and rest.isdigit():
        return Edit("on-time", match=str(int(rest)))
    if kind == "scale" and "=" in rest:
        match, _, factor = rest.rpartition("=")
        return Edit("scale", match=match, factor=_factor(factor, f"--what-if {text!r}"))
    raise OptionError(
        f"--what-if {text!r}: expected scale:GLOB=FACTOR, roofline:GLOB, balance[:K,…], "
        "no-exchange, no-launch, no-host-gaps or on-time:RANK"
    )


def _factor(value: object, where: str) -> float:
    try:
        factor = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise OptionError(f"{where}: the factor {value!r} is not a number") from None
    if not math.isfinite(factor) or factor < 0:
        raise OptionError(f"{where}: the factor must be a finite number ≥ 0, not {value!r}")
    return factor


def load_edits(path: Path) -> list[Edit]:
    """The ``[[edit]]`` tables of a TOML file, each ``kind = …`` with its fields (``match``,
    ``factor``, ``supersteps``); a file that does not read is an ``InputError`` naming it and
    the edit."""
    try:
        raw = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise InputError(path, None, exc.strerror or "cannot be read") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"byte {exc.start}", "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"bad TOML: {exc}") from None
    edits = raw.get("edit", [])
    if not isinstance(edits, list):
        raise InputError(path, "edit", "expected [[edit]] tables")
    return [_table_edit(path, i, table) for i, table in enumerate(edits)]


def _table_edit(path: Path, index: int, table: Any) -> Edit:
    where = f"edit {index}"
    if not isinstance(table, dict) or table.get("kind") not in EDIT_KINDS:
        raise InputError(path, where, f"'kind' must be one of {', '.join(EDIT_KINDS)}")
    kind = table["kind"]
    match = table.get("match")
    if kind in ("scale", "roofline") and not isinstance(match, str):
        raise InputError(path, where, f"{kind} needs 'match', a glob of group names")
    if kind == "scale":
        try:
            return Edit(kind, match=match, factor=_factor(table.get("factor"), "factor"))
        except OptionError as exc:
            raise InputError(path, where, str(exc)) from None
    if kind == "on-time":
        rank = table.get("rank")
        if type(rank) is not int or rank < 0:
            raise InputError(path, where, "on-time needs 'rank', a rank number")
        return Edit(kind, match=str(rank))
    if kind == "balance" and "supersteps" in table:
        steps = table["supersteps"]
        if not isinstance(steps, list) or not all(type(k) is int for k in steps):
            raise InputError(path, where, "'supersteps' must be a list of superstep indices")
        return Edit(kind, supersteps=tuple(steps))
    return Edit(kind, match=match if kind == "roofline" else None)


@dataclass(frozen=True)
class CriticalPath:
    """The critical path of each epoch, its groups, and the re-timing of ``edits``."""

    epochs: pl.DataFrame
    """Per epoch: ``cycles`` and the path's parts (PATH_PARTS), which add up to it."""
    groups: pl.DataFrame
    """Per epoch and group: its cycles on the path (the critical tiles' samples)."""
    what_if: pl.DataFrame | None
    """Per epoch, with ``edits``: the re-timed cycles, the gain and the new path's parts."""
    candidates: pl.DataFrame
    """Per epoch, the single edits of CANDIDATES ranked by their gain, largest first."""
    edits: tuple[Edit, ...]
    notes: tuple[str, ...]
    clock_hz: int | float
    tile_count: int

    def to_document(self) -> dict[str, Any]:
        """The JSON layout: options, epochs, groups, whatIf, candidates, notes."""
        return {
            "clockHz": self.clock_hz,
            "tileCount": self.tile_count,
            "edits": [e.describe() for e in self.edits],
            "epochs": self.epochs.to_dicts(),
            "groups": self.groups.to_dicts(),
            "whatIf": None if self.what_if is None else self.what_if.to_dicts(),
            "candidates": self.candidates.to_dicts(),
            "notes": list(self.notes),
        }


PATH_PARTS: tuple[str, ...] = (
    "computeCycles",
    "lateStartCycles",
    "gapCycles",
    "exchangeWindowCycles",
    "otherWindowCycles",
)
"""The parts of an epoch's critical path (docs/metrics.md): the critical tiles' busy time,
late starts and internal gaps, the windows holding exchange and the other windows."""


@dataclass(frozen=True)
class _Timed:
    """Epochs re-timed (cycles and the path's parts) and each superstep's critical tile."""

    epochs: pl.DataFrame
    critical: pl.DataFrame


@dataclass(frozen=True)
class _Measured:
    """The superstep analysis' frames the re-timing starts from (null epochs as a key)."""

    tiles: pl.DataFrame
    epochs: pl.DataFrame
    windows: pl.DataFrame
    work: pl.DataFrame
    """Per (epoch, index, tile, group): Σ duration of its compute samples (Int64)."""


def critical_path(
    samples: pl.DataFrame,
    *,
    tile_count: int,
    clock_hz: int | float,
    epoch: int | None = None,
    min_sync_gap: int = 0,
    edits: Sequence[Edit] = (),
    roofline: Mapping[str, float] | None = None,
) -> CriticalPath:
    """The critical path of every epoch (or ``epoch``) and the re-timing of ``edits``.

    ``roofline`` maps a group's name to its roofline fraction (roofline time / measured
    time, the run table's ``roofline_fraction``), for the ``roofline`` edits and candidates.
    """
    measured = _measure(samples, tile_count, clock_hz, epoch, min_sync_gap)
    roofline = dict(roofline or {})
    groups = measured.work.get_column("group").unique().to_list()
    factors, notes = group_factors(groups, edits, roofline)
    base = _retime(measured, {}, None, exchange=True)
    what_if = None
    if edits:
        steps = _balanced_steps(edits)
        exchange = not any(e.kind == "no-exchange" for e in edits)
        what_if = _gain(base, _retime(measured, factors, steps, exchange=exchange))
    return CriticalPath(
        epochs=_public(base.epochs),
        groups=_public(_path_groups(measured, base)),
        what_if=None if what_if is None else _public(what_if),
        candidates=_public(_candidates(measured, base, groups, roofline)),
        edits=tuple(edits),
        notes=tuple(notes),
        clock_hz=clock_hz,
        tile_count=tile_count,
    )


def _measure(
    samples: pl.DataFrame, tile_count: int, clock_hz: int | float, epoch: int | None, gap: int
) -> _Measured:
    result = superstep_analysis(
        samples, tile_count=tile_count, clock_hz=clock_hz, epoch=epoch, min_sync_gap=gap
    )
    keyed = [
        f.with_columns(pl.col("epoch").fill_null(_NULL_EPOCH))
        for f in (result.supersteps, result.tiles, result.epochs)
    ]
    compute = compute_samples(samples, epoch=epoch, min_sync_gap=gap)
    work = (
        compute.with_columns(pl.col("epoch").fill_null(_NULL_EPOCH))
        .group_by([*_TILE, "group"])
        .agg(cycles=pl.col("duration").sum().cast(pl.Int64))
    )
    steps, tiles, epochs = keyed
    return _Measured(tiles, epochs, _windows(steps, epochs), work)


def _windows(steps: pl.DataFrame, epochs: pl.DataFrame) -> pl.DataFrame:
    """Every window of every epoch: the leading one (index −1) and the one after each
    superstep (the tail after the last), with its cycles and whether it holds exchange."""
    first = steps.group_by("epoch").agg(first=pl.col("start").min())
    leading = epochs.join(first, on="epoch", how="left").select(
        "epoch",
        index=pl.lit(-1, pl.Int64),
        cycles=(pl.coalesce("first", "end") - pl.col("start")).cast(pl.Int64),
        exchange=pl.col("leadingExchangeCycles") > 0,
    )
    after = steps.join(epochs.select("epoch", epochEnd="end"), on="epoch").select(
        "epoch",
        pl.col("index").cast(pl.Int64),
        cycles=pl.coalesce("syncAfter", pl.col("epochEnd") - pl.col("end")).cast(pl.Int64),
        exchange=pl.col("exchangeCycles") > 0,
    )
    return pl.concat([leading, after])


def group_factors(
    groups: Sequence[str], edits: Sequence[Edit], roofline: Mapping[str, float]
) -> tuple[dict[str, float], list[str]]:
    """Each group's duration factor under ``edits`` (factors of several edits multiply; a
    group at its roofline takes min(roofline fraction, 1)), and a note for every glob that
    matches no group and every group a roofline edit leaves as it is (no roofline)."""
    factors: dict[str, float] = {}
    notes: list[str] = []
    for edit in edits:
        if edit.kind in ("no-launch", "no-host-gaps", "on-time"):
            notes.append(f"{edit.kind}: applies to GPU steps, not to a tile dump; nothing changed")
        if edit.kind not in ("scale", "roofline") or edit.match is None:
            continue
        matched = [g for g in groups if fnmatch.fnmatchcase(g, edit.match)]
        if not matched:
            notes.append(f"{edit.describe()}: no group matches {edit.match!r}; nothing changed")
        for group in matched:
            if edit.kind == "scale":
                factors[group] = factors.get(group, 1.0) * float(edit.factor or 0.0)
            elif group in roofline:
                factors[group] = factors.get(group, 1.0) * min(roofline[group], 1.0)
            else:
                notes.append(f"{edit.describe()}: {group} has no roofline; left as it is")
    return factors, notes


def _balanced_steps(edits: Sequence[Edit]) -> set[int] | None:
    """The superstep indices a balance edit names; every superstep (-1 marks "all") when one
    names none; None without a balance edit."""
    chosen: set[int] | None = None
    for edit in edits:
        if edit.kind == "balance":
            chosen = chosen or set()
            chosen |= {-1} if edit.supersteps is None else set(edit.supersteps)
    return chosen


def _retime(
    measured: _Measured,
    factors: Mapping[str, float],
    balanced: set[int] | None,
    *,
    exchange: bool,
) -> _Timed:
    """Per epoch: the re-timed cycles and the parts of its critical path.

    A tile's busy time becomes ceil(busy × Σ new durations / Σ durations) over its samples
    in the superstep; a balanced superstep spreads its compute (``_balanced``); a tile left
    with no busy time takes no part; the superstep lasts max(late start + busy + gaps) over
    its tiles (0 when none is left busy), and its critical tile is the one that reaches it
    (the lowest index on a tie).
    """
    working = pl.col("busy") > 0  # a tile left without compute takes no part
    tiles = _retimed_tiles(measured, factors, balanced).with_columns(
        lateStart=pl.when(working).then("lateStart").otherwise(0),
        gaps=pl.when(working).then("gaps").otherwise(0),
    )
    finish = pl.col("lateStart") + pl.col("busy") + pl.col("gaps")
    critical = (
        tiles.with_columns(_finish=finish)
        .sort([*_STEP, "_finish", "tile"], descending=[False, False, True, False])
        .group_by(_STEP, maintain_order=True)
        .first()
    )
    path = critical.group_by("epoch").agg(
        computeCycles=pl.col("busy").sum(),
        lateStartCycles=pl.col("lateStart").sum(),
        gapCycles=pl.col("gaps").sum(),
    )
    windows = measured.windows.with_columns(
        cycles=pl.when(pl.col("exchange") & pl.lit(not exchange)).then(0).otherwise("cycles")
    )
    split = windows.group_by("epoch").agg(
        exchangeWindowCycles=pl.col("cycles").filter(pl.col("exchange")).sum(),
        otherWindowCycles=pl.col("cycles").filter(~pl.col("exchange")).sum(),
    )
    parts = pl.sum_horizontal(*PATH_PARTS)
    epochs = (
        measured.epochs.select("epoch", "supersteps")
        .join(path, on="epoch", how="left")
        .join(split, on="epoch", how="left")
        .with_columns(pl.col(*PATH_PARTS).fill_null(0).cast(pl.Int64))
        .with_columns(cycles=parts.cast(pl.Int64))
        .select("epoch", "cycles", "supersteps", *PATH_PARTS)
        .sort("epoch")
    )
    return _Timed(epochs, critical.select(*_TILE))


def _retimed_tiles(
    measured: _Measured, factors: Mapping[str, float], balanced: set[int] | None
) -> pl.DataFrame:
    tiles = measured.tiles.select(*_TILE, "busy", "lateStart", "gaps")
    if factors:
        factor = pl.col("group").replace_strict(dict(factors), default=1.0, return_dtype=pl.Float64)
        sums = measured.work.group_by(_TILE).agg(
            _old=pl.col("cycles").sum().cast(pl.Float64),
            _new=(pl.col("cycles").cast(pl.Float64) * factor).sum(),
        )
        scaled = (pl.col("busy").cast(pl.Float64) * pl.col("_new") / pl.col("_old")).ceil()
        tiles = (
            tiles.join(sums, on=_TILE, how="left")
            .with_columns(busy=scaled.cast(pl.Int64))
            .drop("_old", "_new")
        )
    if balanced:
        chosen = pl.lit(True) if -1 in balanced else pl.col("index").is_in(sorted(balanced))
        tiles = tiles.with_columns(_chosen=chosen)
        spread = _balanced(tiles.filter("_chosen"))
        tiles = pl.concat([tiles.filter(~pl.col("_chosen")), spread]).drop("_chosen")
    return tiles


def _balanced(tiles: pl.DataFrame) -> pl.DataFrame:
    """The supersteps of ``tiles`` balanced: their compute (Σ busy) spread over the active
    tiles so that every tile that gets any finishes at the same cycle F, the earliest
    possible, each keeping its late start and gaps (o = lateStart + gaps).

    Water-filling: with the tiles in rising o, the first j take work when
    (Σ busy + Σ_{i≤j} o_i) / j ≥ o_j, which holds for a prefix 1…J of them; then F =
    ceil((Σ busy + Σ_{i≤J} o_i) / J), each of those tiles is busy F − o and the rest get none.
    When every tile has the same o, each is busy the mean (rounded up).
    """
    o = pl.col("lateStart") + pl.col("gaps")
    ordered = tiles.with_columns(_o=o).sort([*_STEP, "_o", "tile"])
    work = pl.col("busy").sum().over(_STEP).cast(pl.Float64)
    j = pl.int_range(1, pl.len() + 1).over(_STEP).cast(pl.Float64)
    level = (work + pl.col("_o").cum_sum().over(_STEP).cast(pl.Float64)) / j
    ordered = ordered.with_columns(_level=level, _takes=level >= pl.col("_o"))
    finish = pl.col("_level").filter("_takes").last().over(_STEP).ceil().cast(pl.Int64)
    return (
        ordered.with_columns(_finish=finish)
        .with_columns(
            busy=pl.when("_takes").then(pl.col("_finish") - pl.col("_o")).otherwise(0),
        )
        .drop("_o", "_level", "_takes", "_finish")
    )


def _gain(base: _Timed, edited: _Timed) -> pl.DataFrame:
    """The edited epochs beside the measured ones: gain and critical tiles that changed."""
    moved = (
        edited.critical.join(base.critical, on=_STEP, suffix="_before")
        .filter(pl.col("tile") != pl.col("tile_before"))
        .group_by("epoch")
        .agg(changed=pl.len())
    )
    joined = edited.epochs.join(
        base.epochs.select("epoch", measuredCycles="cycles"), on="epoch"
    ).join(moved, on="epoch", how="left")
    changed = pl.col("changed")
    return joined.select(
        "epoch",
        "measuredCycles",
        whatIfCycles="cycles",
        gainCycles=pl.col("measuredCycles") - pl.col("cycles"),
        gainShare=pl.when(pl.col("measuredCycles") > 0).then(
            (pl.col("measuredCycles") - pl.col("cycles")) / pl.col("measuredCycles")
        ),
        criticalTilesChanged=changed.fill_null(0).cast(pl.Int64),
    ).hstack(joined.select(PATH_PARTS))


def _path_groups(measured: _Measured, base: _Timed) -> pl.DataFrame:
    """Per epoch and group: Σ duration of the critical tiles' samples of the group, and its
    share of the epoch's cycles; largest first."""
    on_path = base.critical.join(
        base.epochs.select("epoch", _epochCycles="cycles"), on="epoch", how="left"
    )
    return (
        measured.work.join(on_path, on=_TILE)
        .group_by("epoch", "group")
        .agg(
            pathCycles=pl.col("cycles").sum().cast(pl.Int64),
            _epochCycles=pl.col("_epochCycles").first(),
        )
        .with_columns(
            share=pl.when(pl.col("_epochCycles") > 0).then(
                pl.col("pathCycles") / pl.col("_epochCycles")
            )
        )
        .drop("_epochCycles")
        .sort(["epoch", "pathCycles", "group"], descending=[False, True, False])
    )


CANDIDATES = ("balance", "no-exchange", "roofline:GROUP")
"""The single edits `critical` ranks by their gain: every superstep balanced, exchange
removed, and each group with a roofline at its roofline time."""


def _candidates(
    measured: _Measured, base: _Timed, groups: Sequence[str], roofline: Mapping[str, float]
) -> pl.DataFrame:
    edits = [Edit("balance"), Edit("no-exchange")]
    edits += [Edit("roofline", match=g) for g in sorted(groups) if roofline.get(g, 1.0) < 1.0]
    rows = []
    for edit in edits:
        factors, _ = group_factors(groups, [edit], roofline)
        balanced = _balanced_steps([edit])
        edited = _retime(measured, factors, balanced, exchange=edit.kind != "no-exchange")
        gained = _gain(base, edited).select("epoch", "whatIfCycles", "gainCycles", "gainShare")
        rows.append(gained.with_columns(edit=pl.lit(edit.describe())))
    return (
        pl.concat(rows)
        .select("epoch", "edit", "whatIfCycles", "gainCycles", "gainShare")
        .sort(["epoch", "gainCycles", "edit"], descending=[False, True, False])
    )


def _public(frame: pl.DataFrame) -> pl.DataFrame:
    """Null epochs back to null, private columns dropped."""
    if frame.is_empty() and "epoch" not in frame.columns:
        return frame
    return frame.with_columns(
        pl.when(pl.col("epoch") != _NULL_EPOCH).then(pl.col("epoch")).alias("epoch")
    ).select([c for c in frame.columns if not c.startswith("_")])
