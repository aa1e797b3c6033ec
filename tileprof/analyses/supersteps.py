"""Supersteps: the bulk-synchronous view of a profile (definitions: docs/metrics.md).

The device computes, syncs, then exchanges; every superstep lasts as long as its slowest tile.
``phase`` cannot delimit supersteps (it is a per-tile schedule label that only exchanges
share), so supersteps come from timing: per epoch, the maximal connected pieces of the union
of every compute sample's interval across all tiles. For each piece this module measures where
each tile's time goes (late start, busy, internal gaps, sync wait), which tile holds the
superstep up, and how much exchange runs in the sync windows between pieces.

Everything is polars expressions over the sample frame: sorts, window functions, group
aggregations and as-of joins, never a Python loop over samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tileprof.analyses.filters import Filters, apply_filters, check_epoch, group_name, parse_window
from tileprof.core.errors import OptionError
from tileprof.core.schema import COMPUTE_KINDS

SUPERSTEP_FIELDS: tuple[str, ...] = (
    "epoch",
    "index",
    "start",
    "end",
    "cycles",
    "syncAfter",
    "exchangeCycles",
    "overlappedExchangeCycles",
    "activeTiles",
    "idleTiles",
    "tileBalance",
    "activeTileBalance",
    "efficiency",
    "meanSyncWait",
    "maxSyncWait",
    "criticalTile",
    "criticalGroup",
    "stragglerMargin",
    "loadBalanceEfficiency",
    "communicationEfficiency",
    "parallelEfficiency",
    "startSkewCycles",
    "imbalanceCycles",
)
"""One row per superstep, in the JSON document's key order (the last five: POP's terms,
docs/metrics.md "Imbalance (POP)")."""

TILE_FIELDS: tuple[str, ...] = ("epoch", "index", "tile", "busy", "lateStart", "gaps", "syncWait")
"""One row per active tile of a superstep (``--tiles``)."""

EPOCH_FIELDS: tuple[str, ...] = (
    "epoch",
    "start",
    "end",
    "cycles",
    "supersteps",
    "syncWaitCycles",
    "syncWaitShare",
    "leadingExchangeCycles",
    "otherCycles",
    "loadBalanceEfficiency",
    "communicationEfficiency",
    "parallelEfficiency",
    "imbalanceCycles",
    "maxStartSkewCycles",
)
"""One row per epoch segmented: its span and what is lost to sync wait over all of it."""

_COMPOSITE_LIMIT = 2**62
"""Composite sort and search keys must stay below this (Int64); above it, slower paths."""

_NULL_EPOCH = -(2**63)
"""Stands for a missing epoch while joining (samples without an epoch form one epoch)."""

_E, _K = "_epoch", "_index"


@dataclass(frozen=True)
class Supersteps:
    """The superstep frames of one profile, and the options that produced them.

    ``supersteps`` and ``tiles`` hold the rows chosen by ``window``, ``kernels`` and ``top``
    (segmentation always ran on whole epochs); ``epochs`` holds every epoch segmented.
    """

    supersteps: pl.DataFrame
    tiles: pl.DataFrame
    epochs: pl.DataFrame
    clock_hz: int | float
    tile_count: int
    epoch: int | None = None
    min_sync_gap: int = 0
    window: tuple[int, int] | None = None
    kernels: tuple[str, ...] = ()
    top: int | None = None

    def to_document(self, tiles: bool = False) -> dict[str, Any]:
        """The JSON layout: ``supersteps``, then ``tiles`` when asked, then ``epochs``."""
        document: dict[str, Any] = {"supersteps": self.supersteps.to_dicts()}
        if tiles:
            document["tiles"] = self.tiles.to_dicts()
        document["epochs"] = self.epochs.to_dicts()
        document["options"] = {
            "epoch": self.epoch,
            "minSyncGap": self.min_sync_gap,
            "window": None if self.window is None else list(self.window),
            "kernels": list(self.kernels),
            "top": self.top,
            "tileCount": self.tile_count,
            "clockHz": self.clock_hz,
        }
        return document

    def cycles_to_us(self, cycles: int | float) -> float:
        """cycles / clockHz × 10⁶."""
        return cycles * 1_000_000 / self.clock_hz


def superstep_analysis(
    samples: pl.DataFrame,
    *,
    tile_count: int,
    clock_hz: int | float,
    epoch: int | None = None,
    min_sync_gap: int = 0,
    window: tuple[int, int] | str | None = None,
    kernels: Sequence[str] | str = (),
    top: int | None = None,
) -> Supersteps:
    """Segment each epoch (or only ``epoch``) into supersteps and measure them.

    ``window`` (superstep overlaps [START, END)) and ``kernels`` (a compute sample of a
    matching group runs in it) choose which supersteps are listed; ``top`` keeps the N longest,
    longest first. None of them changes the segmentation.
    """
    # Filters checks the types and reads "START:END" windows, as for summary.
    chosen = Filters(
        epoch=epoch,
        window=parse_window(window) if isinstance(window, str) else window,
        kernels=(kernels,) if isinstance(kernels, str) else tuple(kernels),
    )
    _check_options(min_sync_gap, top)
    base = _epoch_samples(samples, chosen.epoch)
    compute = _segment(base, min_sync_gap)
    step_frame = compute.group_by(_E, _K).agg(
        start=pl.col("offset").min(), end=pl.col("_end").max()
    )
    steps = step_frame.lazy()
    tiles = _tile_figures(compute, step_frame).lazy()
    bounds = (
        base.group_by(_E)
        .agg(start=pl.col("offset").min(), end=pl.col("_end").max())
        .collect()
        .lazy()
    )
    exchange = _exchange_figures(base, steps, bounds).collect().lazy()
    step_rows, tile_rows, epoch_rows = pl.collect_all(
        [
            _superstep_figures(compute.lazy(), steps, tiles, exchange, tile_count),
            tiles,
            _epoch_figures(bounds, steps, tiles, exchange, tile_count),
        ]
    )
    step_rows, tile_rows = _select(step_rows, tile_rows, compute, chosen, top)
    return Supersteps(
        supersteps=_public(step_rows, SUPERSTEP_FIELDS),
        tiles=_public(tile_rows, TILE_FIELDS),
        epochs=_public(epoch_rows, EPOCH_FIELDS),
        clock_hz=clock_hz,
        tile_count=tile_count,
        epoch=chosen.epoch,
        min_sync_gap=min_sync_gap,
        window=chosen.window,
        kernels=chosen.kernels,
        top=top,
    )


def compute_samples(
    samples: pl.DataFrame, *, epoch: int | None = None, min_sync_gap: int = 0
) -> pl.DataFrame:
    """Every compute sample of positive length with the superstep it lies in (``epoch``,
    ``index``, ``tile``, ``group``, ``duration``), segmented exactly as ``superstep_analysis``
    segments: the critical path's groups and its what-if re-timing read them
    (``tileprof.analyses.critical``)."""
    _check_options(min_sync_gap, None)
    compute = _segment(_epoch_samples(samples, epoch), min_sync_gap)
    return _public(
        compute.with_columns(duration=pl.col("_end") - pl.col("offset"), group="name"),
        ("epoch", "index", "tile", "group", "duration"),
    )


def _check_options(min_sync_gap: object, top: object) -> None:
    for name, value, least in (("--min-sync-gap", min_sync_gap, 0), ("--top", top, 1)):
        if value is None and name == "--top":
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            raise OptionError(f"{name}: expected an integer, not {value!r}")
        if value < least:
            raise OptionError(f"{name} {value}: must be at least {least}")


def _epoch_samples(samples: pl.DataFrame, epoch: int | None) -> pl.LazyFrame:
    """The samples of ``epoch`` (all when None) with an end and a join-safe epoch key."""
    check_epoch(samples, epoch)
    frame = samples.lazy()
    if epoch is not None:
        frame = frame.filter(pl.col("epoch") == epoch)
    return frame.select(
        pl.col("epoch").fill_null(_NULL_EPOCH).alias(_E),
        "tile",
        "offset",
        "duration",
        (pl.col("offset") + pl.col("duration")).alias("_end"),
        "kind",
        "kernel",
    )


def _segment(base: pl.LazyFrame, min_sync_gap: int) -> pl.DataFrame:
    """Compute samples of positive length, each with the index of the superstep it lies in.

    In offset order, a sample opens a new piece when it starts after every earlier sample of
    its epoch has ended (touching pieces merge) by at least ``min_sync_gap`` cycles.
    """
    compute = _sorted(
        base.filter(_is_compute() & (pl.col("duration") > 0))
        .select(_E, "tile", "offset", "_end", name=group_name())
        .collect(),
        [_E, "offset"],
    )
    compute = _with_reached(compute, [_E])
    gap = pl.col("offset") - pl.col("_reached")
    opens = pl.col("_reached").is_null() | ((gap > 0) & (gap >= min_sync_gap))
    counted = pl.col("_opens").cum_sum()
    return (
        compute.with_columns(_opens=opens.cast(pl.Int64))
        .with_columns((counted - pl.when(pl.col("_new")).then(counted).forward_fill()).alias(_K))
        .drop("_opens", "_new", "_g", "_base", "_reached")
    )


def _sorted(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """``frame`` in ``keys`` order (integer columns), the first key being the epoch.

    Sorted on one composite Int64 key where the keys' ranges allow it (the epoch by its rank
    among the epochs present): polars sorts on several keys are several times slower.
    """
    if frame.height == 0:
        return frame
    epochs = frame.get_column(_E).unique().sort()
    parts = [_epoch_rank(epochs)]
    ranges = [epochs.len()]
    for key in keys[1:]:
        low, high = frame.select(pl.col(key).min().alias("lo"), pl.col(key).max().alias("hi")).row(
            0
        )
        parts.append(pl.col(key) - low)
        ranges.append(high - low + 1)
    product = 1
    for size in ranges:
        product *= size
    if product >= _COMPOSITE_LIMIT:
        return frame.sort(keys)
    composite = parts[0]
    for part, size in zip(parts[1:], ranges[1:], strict=True):
        composite = composite * size + part
    return frame.with_columns(_order=composite).sort("_order").drop("_order")


def _epoch_rank(epochs: pl.Series) -> pl.Expr:
    """Each row's epoch as its index in ``epochs`` (sorted, distinct): a lookup, not a sort."""
    return pl.col(_E).replace_strict(epochs, pl.int_range(epochs.len(), eager=True))


def _is_compute() -> pl.Expr:
    """kind is one of ``COMPUTE_KINDS`` (compute, or a Tenstorrent RISC), compared on the
    categorical (no per-sample strings); null kind: no."""
    return pl.col("kind").cast(pl.String).is_in(COMPUTE_KINDS).fill_null(False)


def _with_reached(ordered: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Add ``_reached``: the latest end among the earlier rows of the row's group (null for a
    group's first row), for a frame sorted by ``keys`` then offset.

    A running maximum that restarts per group is slow as a window function over a hundred
    thousand small groups, so the groups are laid end to end instead: group g's ends, taken
    relative to its first start, are shifted into [g·H, (g+1)·H) with H above every group's
    extent. One running maximum over the whole column then carries nothing from an earlier
    group but a value below the group's range, which reads as "no earlier row".
    """
    new_group = pl.any_horizontal(pl.col(k) != pl.col(k).shift(1) for k in keys).fill_null(True)
    ordered = ordered.with_columns(
        _new=new_group,
        _g=new_group.cast(pl.Int64).cum_sum() - 1,
        _base=pl.when(new_group).then(pl.col("offset")).forward_fill(),
    )
    groups = int(ordered.select(pl.col("_new").sum()).item())
    extent = int(ordered.select((pl.col("_end") - pl.col("_base")).max()).item() or 0) + 1
    if (
        groups * extent >= _COMPOSITE_LIMIT
    ):  # would overflow Int64: restart the maximum per group instead
        reached = pl.col("_end").cum_max().shift(1).over("_g")
    else:
        shift = pl.col("_g") * extent
        encoded = (shift + pl.col("_end") - pl.col("_base")).cum_max().shift(1) - shift
        reached = pl.when(encoded >= 0).then(encoded + pl.col("_base"))
    return ordered.with_columns(_reached=reached)


def _tile_figures(compute: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Per (superstep, active tile): busy, first start, last end and the four-way split."""
    per_tile = (
        _tile_unions(compute)
        .join(steps, on=[_E, _K])
        .with_columns(
            lateStart=pl.col("_first") - pl.col("start"),
            gaps=pl.col("_last") - pl.col("_first") - pl.col("busy"),
            syncWait=pl.col("end") - pl.col("_last"),
        )
        .drop("start", "end")
    )
    return _sorted(per_tile, [_E, _K, "tile"])


def _tile_unions(compute: pl.DataFrame) -> pl.DataFrame:
    """busy (union length), first start and last end of each (epoch, superstep, tile): each
    sample adds the part of it that ends beyond every earlier sample of its group.

    ``compute`` is in (epoch, offset) order; a stable sort on the tile alone makes it
    (epoch, tile, offset), where each (epoch, superstep, tile) is a run of rows (the superstep
    index rises with offset). Each group's figures are then read off its last row.
    """
    keys = [_E, "tile", _K]
    ordered = _with_reached(
        _sorted(compute.select(*keys, "offset", "_end"), [_E, "tile", "offset"]),
        keys,
    )
    added = (pl.col("_end") - pl.max_horizontal("offset", "_reached")).clip(lower_bound=0)
    total = pl.col("_added").cum_sum()
    last_row = pl.col("_new").shift(-1).fill_null(True)
    return (
        ordered.with_columns(_added=added)
        .with_columns(
            busy=total - pl.when(pl.col("_new")).then(total - pl.col("_added")).forward_fill(),
            _last=pl.max_horizontal("_end", "_reached"),
        )
        .filter(last_row)
        .select(*keys, pl.col("busy").cast(pl.Int64), pl.col("_base").alias("_first"), "_last")
    )


def _superstep_figures(
    compute: pl.LazyFrame,
    steps: pl.LazyFrame,
    tiles: pl.LazyFrame,
    exchange: pl.LazyFrame,
    tile_count: int,
) -> pl.LazyFrame:
    """One row per superstep with every ``SUPERSTEP_FIELDS`` figure."""
    last = pl.col("_last")
    per_step = tiles.group_by(_E, _K).agg(
        activeTiles=pl.len().cast(pl.Int64),
        _busy=pl.col("busy").sum(),
        _maxBusy=pl.col("busy").max(),
        _wait=pl.col("syncWait").sum(),
        maxSyncWait=pl.col("syncWait").max(),
        criticalTile=pl.col("tile")
        .sort_by([last, pl.col("tile")], descending=[True, False])
        .first(),
        _runnerUp=last.sort(descending=True).slice(1, 1).first(),
        startSkewCycles=(pl.col("lateStart").max() - pl.col("lateStart").min()).cast(pl.Int64),
    )
    length = pl.col("end") - pl.col("start")
    active = pl.col("activeTiles")
    rows = (
        steps.join(per_step, on=[_E, _K])
        .join(_critical_group(compute, per_step), on=[_E, _K], how="left")
        .join(exchange, on=[_E, _K], how="left")
        .sort(_E, _K)
        .with_columns(
            cycles=length,
            syncAfter=pl.col("start").shift(-1).over(_E) - pl.col("end"),
            exchangeCycles=pl.col("exchangeCycles").fill_null(0),
            overlappedExchangeCycles=pl.col("overlappedExchangeCycles").fill_null(0),
            idleTiles=(tile_count - active).clip(lower_bound=0),
            tileBalance=pl.col("_busy") / (pl.col("_maxBusy") * tile_count),
            activeTileBalance=pl.col("_busy") / (pl.col("_maxBusy") * active),
            efficiency=pl.col("_busy") / (length * tile_count),
            meanSyncWait=pl.col("_wait") / active,
            stragglerMargin=pl.col("end") - pl.col("_runnerUp"),
            **_pop_figures(length, active),
        )
        .with_columns(
            parallelEfficiency=pl.col("loadBalanceEfficiency") * pl.col("communicationEfficiency")
        )
    )
    return rows


def _pop_figures(length: pl.Expr, active: pl.Expr) -> dict[str, pl.Expr]:
    """POP's load balance (mean / max busy over the active tiles), communication efficiency
    (max busy / length) and the tile-cycles lost to imbalance (Σ (max busy − busy))."""
    return {
        "loadBalanceEfficiency": pl.col("_busy") / (pl.col("_maxBusy") * active),
        "communicationEfficiency": pl.col("_maxBusy") / length,
        "imbalanceCycles": (pl.col("_maxBusy") * active - pl.col("_busy")).cast(pl.Int64),
    }


def _critical_group(compute: pl.LazyFrame, per_step: pl.LazyFrame) -> pl.LazyFrame:
    """The group of the critical tile's last sample: latest end, then latest start, then name."""
    critical = per_step.select(_E, _K, pl.col("criticalTile").alias("tile"))
    return (
        compute.join(critical, on=[_E, _K, "tile"])
        .with_columns(pl.col("name").cast(pl.String))
        .sort([_E, _K, "_end", "offset", "name"], descending=[False, False, True, True, False])
        .group_by(_E, _K, maintain_order=True)
        .agg(criticalGroup=pl.col("name").first())
    )


def _windows(steps: pl.LazyFrame, bounds: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The segments that partition each epoch's span, and its sync windows.

    Segment 0 is the leading window [epoch start, S₀); superstep k is segment 2k + 1 and the
    window after it, [E_k, S_{k+1}) (the last one: [E_k, epoch end)), segment 2k + 2. A
    leading window of zero length is left out, so no two segments start at the same cycle.
    """
    first = steps.group_by(_E).agg(_s0=pl.col("start").min())
    leading = (
        bounds.join(first, on=_E, how="left")
        .filter(pl.col("_s0").is_null() | (pl.col("_s0") > pl.col("start")))
        .select(_E, pl.col("start").alias("_at"), pl.lit(0, pl.Int64).alias("_seg"))
    )
    opening = steps.select(_E, pl.col("start").alias("_at"), (2 * pl.col(_K) + 1).alias("_seg"))
    closing = steps.select(_E, pl.col("end").alias("_at"), (2 * pl.col(_K) + 2).alias("_seg"))
    segments = pl.concat([leading, opening, closing]).sort(_E, "_at")
    starts = pl.concat(
        [
            bounds.select(_E, pl.lit(-1, pl.Int64).alias(_K), pl.col("start").alias("_ws")),
            steps.select(_E, _K, pl.col("end").alias("_ws")),
        ]
    )
    following = steps.select(_E, (pl.col(_K) - 1).alias(_K), pl.col("start").alias("_next"))
    windows = (
        starts.join(following, on=[_E, _K], how="left")
        .join(bounds.select(_E, pl.col("end").alias("_T")), on=_E)
        .select(_E, _K, "_ws", _we=pl.coalesce("_next", "_T"))
    )
    return segments, windows


def _exchange_figures(
    base: pl.LazyFrame, steps: pl.LazyFrame, bounds: pl.LazyFrame
) -> pl.LazyFrame:
    """Per window after superstep k (k = −1: the leading window): exchange and other
    non-compute cycles of the samples it holds; per superstep: overlapped exchange cycles."""
    segments, windows = (part.collect() for part in _windows(steps, bounds))
    others = base.filter(~_is_compute()).with_row_index("_id").collect()
    last_cycle = pl.when(pl.col("duration") > 0).then(pl.col("_end") - 1).otherwise("offset")
    located = _segment_of(others, segments, "offset", "_segA")
    located = _segment_of(located.with_columns(_b=last_cycle), segments, "_b", "_segB")
    located = located.with_columns(
        _jlo=(pl.col("_segA") + 1) // 2 - 1,
        _jhi=pl.max_horizontal((pl.col("_segB") // 2) - 1, (pl.col("_segA") + 1) // 2 - 1),
        _exchange=(pl.col("kind") == "exchange").fill_null(False),
    )
    assigned = _assign_windows(located.lazy(), windows.lazy())
    per_window = assigned.group_by(_E, _K).agg(
        exchangeCycles=pl.col("duration").filter(pl.col("_exchange")).sum().cast(pl.Int64),
        _other=pl.col("duration").filter(~pl.col("_exchange")).sum().cast(pl.Int64),
    )
    spans = (
        located.lazy()
        .filter(pl.col("_exchange") & (pl.col("duration") > 0))
        .with_columns(_klo=pl.col("_segA") // 2, _khi=(pl.col("_segB") - 1) // 2)
        .filter(pl.col("_klo") <= pl.col("_khi"))
        .with_columns(pl.int_ranges("_klo", pl.col("_khi") + 1).alias(_K))
        .explode(_K)
        .join(steps, on=[_E, _K])
        .with_columns(
            _in=(pl.min_horizontal("_end", "end") - pl.max_horizontal("offset", "start")).clip(
                lower_bound=0
            )
        )
        .group_by(_E, _K)
        .agg(overlappedExchangeCycles=pl.col("_in").sum().cast(pl.Int64))
    )
    return per_window.join(spans, on=[_E, _K], how="full", coalesce=True)


def _segment_of(frame: pl.DataFrame, segments: pl.DataFrame, at: str, name: str) -> pl.DataFrame:
    """The segment each row's cycle ``at`` falls in (the last segment starting at or before
    it, in the row's epoch).

    A binary search over one composite key (the epoch's rank × a stride above every span,
    plus the cycle) needs no sort of the samples; when the key could overflow, an as-of join
    per epoch does the same.
    """
    epochs = segments.get_column(_E).unique().sort()
    both = pl.concat([frame.select(pl.col(at).alias("_at")), segments.select("_at")])
    low, high = both.select(pl.col("_at").min().alias("lo"), pl.col("_at").max().alias("hi")).row(0)
    stride = (high or 0) - (low or 0) + 1
    if epochs.len() * stride >= _COMPOSITE_LIMIT:
        ordered = _sorted(frame, [_E, at])
        return ordered.join_asof(
            segments.rename({"_seg": name}),
            left_on=at,
            right_on="_at",
            by=_E,
            strategy="backward",
            check_sortedness=False,
        ).drop("_at")
    shift = _epoch_rank(epochs) * stride
    keys = segments.select(shift + pl.col("_at") - low).to_series()
    found = keys.search_sorted(frame.select(shift + pl.col(at) - low).to_series(), side="right")
    return frame.with_columns(segments.get_column("_seg").gather(found - 1).alias(name))


def _assign_windows(located: pl.LazyFrame, windows: pl.LazyFrame) -> pl.LazyFrame:
    """Each non-compute sample's window: the one it overlaps most, the earliest on a tie; a
    sample that overlaps none (zero length, or inside a superstep) takes the window at or
    after its start."""
    single = located.filter(pl.col("_jlo") == pl.col("_jhi")).with_columns(pl.col("_jlo").alias(_K))
    several = (
        located.filter(pl.col("_jlo") < pl.col("_jhi"))
        .with_columns(pl.int_ranges("_jlo", pl.col("_jhi") + 1).alias(_K))
        .explode(_K)
        .join(windows, on=[_E, _K])
        .with_columns(
            _overlap=pl.min_horizontal("_end", "_we") - pl.max_horizontal("offset", "_ws")
        )
        .sort(["_id", "_overlap", _K], descending=[False, True, False])
        .group_by("_id", maintain_order=True)
        .first()
    )
    columns = [_E, _K, "duration", "_exchange"]
    return pl.concat([single.select(columns), several.select(columns)])


def _epoch_figures(
    bounds: pl.LazyFrame,
    steps: pl.LazyFrame,
    tiles: pl.LazyFrame,
    exchange: pl.LazyFrame,
    tile_count: int,
) -> pl.LazyFrame:
    """Per epoch: span, superstep count, sync wait lost and its share, leading exchange and
    other non-compute cycles."""
    counts = steps.group_by(_E).agg(supersteps=pl.len().cast(pl.Int64))
    waits = tiles.group_by(_E).agg(syncWaitCycles=pl.col("syncWait").sum().cast(pl.Int64))
    leading = exchange.filter(pl.col(_K) == -1).select(
        _E, leadingExchangeCycles=pl.col("exchangeCycles")
    )
    other = exchange.group_by(_E).agg(otherCycles=pl.col("_other").sum().cast(pl.Int64))
    cycles = pl.col("end") - pl.col("start")
    return (
        bounds.join(counts, on=_E, how="left")
        .join(_epoch_pop(tiles), on=_E, how="left")
        .join(waits, on=_E, how="left")
        .join(leading, on=_E, how="left")
        .join(other, on=_E, how="left")
        .with_columns(
            pl.col(
                "supersteps",
                "syncWaitCycles",
                "leadingExchangeCycles",
                "otherCycles",
                "imbalanceCycles",
            )
            .fill_null(0)
            .cast(pl.Int64),
            cycles=cycles,
        )
        .with_columns(
            syncWaitShare=pl.when(cycles > 0).then(
                pl.col("syncWaitCycles") / (cycles * tile_count)
            ),
            loadBalanceEfficiency=pl.col("_meanBusy") / pl.col("_maxBusy"),
            communicationEfficiency=pl.when(cycles > 0).then(pl.col("_maxBusy") / cycles),
        )
        .with_columns(
            parallelEfficiency=pl.col("loadBalanceEfficiency") * pl.col("communicationEfficiency")
        )
        .sort(_E)
    )


def _epoch_pop(tiles: pl.LazyFrame) -> pl.LazyFrame:
    """Per epoch, over its supersteps: Σ mean busy and Σ max busy (over each superstep's
    active tiles), Σ (max − busy) and the largest start skew (docs/metrics.md, "Imbalance
    (POP)": the epoch's load balance is Σ mean / Σ max, not mean / max of per-tile totals)."""
    per_step = (
        tiles.group_by(_E, _K)
        .agg(
            _mean=pl.col("busy").mean(),
            _max=pl.col("busy").max(),
            _lost=(pl.col("busy").max() * pl.len() - pl.col("busy").sum()),
            _skew=pl.col("lateStart").max() - pl.col("lateStart").min(),
        )
        .sort(_E, _K)
    )
    return per_step.group_by(_E).agg(
        # the means added one after another in superstep order: this plan's `sum` of the same
        # sorted rows gave 25248.0 on some calls and 25248.000000000004 on others (polars
        # 2.2.0, on one thread too), and a printed figure must not move between two runs
        _meanBusy=pl.col("_mean").cum_sum().last(),
        _maxBusy=pl.col("_max").sum(),
        imbalanceCycles=pl.col("_lost").sum().cast(pl.Int64),
        maxStartSkewCycles=pl.col("_skew").max().cast(pl.Int64),
    )


def _select(
    steps: pl.DataFrame,
    tiles: pl.DataFrame,
    compute: pl.DataFrame,
    chosen: Filters,
    top: int | None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The supersteps (and their tile rows) that ``window``, ``kernels`` and ``top`` choose."""
    if chosen.window is not None:
        start, stop = chosen.window
        steps = steps.filter((pl.col("start") < stop) & (pl.col("end") > start))
    if chosen.kernels:
        # Matched on each compute sample's group name, the same globs as summary's --kernel.
        named = compute.select(_E, _K, "tile", kernel="name", kind=pl.lit(None, pl.String))
        matching = apply_filters(named, Filters(kernels=chosen.kernels))
        ran = matching.select(_E, _K, "tile").unique()
        steps = steps.join(ran.select(_E, _K).unique(), on=[_E, _K], how="semi")
        tiles = tiles.join(ran, on=[_E, _K, "tile"], how="semi")
    if top is not None:
        steps = steps.sort(["cycles", _E, _K], descending=[True, False, False]).head(top)
    tiles = tiles.join(steps.select(_E, _K), on=[_E, _K], how="semi")
    return steps, tiles


def _public(frame: pl.DataFrame, fields: Sequence[str]) -> pl.DataFrame:
    """The named columns, epoch back to null where the samples had none."""
    renamed = frame.rename({c: n for c, n in ((_E, "epoch"), (_K, "index")) if c in frame.columns})
    return renamed.with_columns(
        pl.when(pl.col("epoch") != _NULL_EPOCH).then(pl.col("epoch")).alias("epoch")
    ).select(fields)
