"""The report's view-model types: plain, typed data that the templates render and tests check.

``data`` fills them from profiles and run tables, ``charts`` draws the figures they describe
(at render time, from ``Plot`` entries and the tile sections' arrays) and the templates lay
them out. Both ``data`` and ``charts`` import these types; neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from tileprof.analyses.balance import TileBalance
from tileprof.analyses.findings import Finding
from tileprof.analyses.summary import Summary
from tileprof.analyses.supersteps import Supersteps
from tileprof.analyses.timeline import ActiveTiles, OccupancyMap
from tileprof.model.gather import InputFile

# ---------------------------------------------------------------- generic building blocks


@dataclass(frozen=True)
class Header:
    """What the report covers and how it was made."""

    title: str
    targets: tuple[str, ...]
    inputs: tuple[InputFile, ...]
    filters: tuple[str, ...]
    """What each tile section applies, one line each: "SOURCE: --epoch 1" (or "none")."""
    group_by: tuple[str, ...]
    version: str
    generated_at: str
    command: str | None = None
    """The command line that made the report (its arguments and the options given)."""


@dataclass(frozen=True)
class Figure:
    """A headline number: its exact value, its printed text and where it is defined."""

    label: str
    value: float | int | None
    text: str
    definition: str


@dataclass(frozen=True)
class Column:
    """A table column; ``numeric`` columns sort by number, others by text."""

    key: str
    label: str
    numeric: bool
    doc: str = ""
    ditto: bool = False
    """A value equal to the one above is shown as a subdued ditto mark (the full value stays in
    the cell for sorting, screen readers and its title; ``sort.js`` redoes the marks)."""
    blank: bool = False
    """No row has a value here: the page names the column under the table instead of showing
    a column of dashes (the model keeps it, so its cells stay addressable)."""


@dataclass(frozen=True)
class Cell:
    """A table cell: what is printed, what it sorts by (None sorts last), its exact value."""

    text: str
    sort: float | str | None
    title: str = ""
    ditto: bool = False
    """Same text as the cell above in a ``Column.ditto`` column: shown as a ditto mark."""


@dataclass(frozen=True)
class Table:
    """A sortable table."""

    id: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    top: int | None = None
    """Rows shown until the reader asks for all of them (an "all" toggle); None shows all."""

    def column(self, key: str) -> list[Cell]:
        """The cells of one column, top to bottom."""
        index = [c.key for c in self.columns].index(key)
        return [row[index] for row in self.rows]


@dataclass(frozen=True)
class Chart:
    """A rendered chart: inline SVG markup (made by ``charts``, never from input text)."""

    id: str
    title: str
    caption: str
    svg: str


# ---------------------------------------------------------------- tile device


@dataclass(frozen=True)
class PhaseSplit:
    """phaseCycles per group split into useful (phaseCycles × usefulUtilization) and other;
    a group of exchange samples only is all ``exchange`` (moving data, not computing)."""

    names: tuple[str, ...]
    useful: np.ndarray
    other: np.ndarray
    exchange: np.ndarray | None = None


@dataclass(frozen=True)
class DurationSpread:
    """p50Cycles, p95Cycles and maximumCycles per group."""

    names: tuple[str, ...]
    p50: np.ndarray
    p95: np.ndarray
    maximum: np.ndarray


@dataclass(frozen=True)
class SuperstepSection:
    """The Supersteps part of a tile section (docs/metrics.md, "Supersteps").

    ``split`` has one row per shown superstep (``label``, and ``lateStart``, ``busy``, ``gaps``,
    ``syncWait`` averaged over its active tiles, which add up to ``cycles``); ``ends`` has the
    last end of every active tile of the longest shown superstep (``tile``, ``end``).
    """

    id: str
    result: Supersteps
    table: Table
    split: pl.DataFrame
    longest: dict[str, Any] | None
    ends: pl.DataFrame
    note: str
    charts: tuple[Chart, ...] = ()
    heat: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    """Tile bins × shown supersteps: the mean busy / cycles over each bin's tiles."""
    critical: tuple[str, ...] = ()
    """One sentence per epoch: its critical path's length and parts (``tileprof critical``)."""
    candidates: Table | None = None
    """The single what-if edits ranked by their gain, largest first."""
    heat_bin: int = 1
    """Tiles per heat-map row (the last row may hold fewer)."""
    withheld: tuple[str, ...] = ()
    """Why the dump's failed capture checks undermine these figures or the ranked edits
    (``integrity.reasons``): the lead abstains and the edits are not shown; empty: they
    hold."""


@dataclass(frozen=True)
class TileSection:
    """The tile-device part of the report for one dump."""

    id: str
    target: str
    source: str
    filters: tuple[str, ...]
    summary: Summary
    headline: tuple[Figure, ...]
    groups: Table
    occupancy: OccupancyMap | None
    active: ActiveTiles | None
    phase: PhaseSplit
    spread: DurationSpread
    balance: TileBalance
    charts: tuple[Chart, ...] = ()
    supersteps: SuperstepSection | None = None

    @property
    def empty(self) -> bool:
        """No sample matched the filters: the page says so instead of empty tables and charts."""
        return self.summary.matched_sample_count == 0


# ---------------------------------------------------------------- GPU runs and links


@dataclass(frozen=True)
class Plot:
    """A chart still to draw: which drawing (``charts.PLOTS``), its id, title and rows."""

    kind: str
    id: str
    title: str
    frame: pl.DataFrame


@dataclass(frozen=True)
class RooflinePlot(Plot):
    """The roofline chart still to draw: its points (``frame``), each target's roofs (target,
    roof key, peak TFLOP/s, bandwidth GB/s) and the linked sets' members to join."""

    roofs: pl.DataFrame = field(default_factory=pl.DataFrame)
    links: pl.DataFrame = field(default_factory=pl.DataFrame)


@dataclass(frozen=True)
class ChartedTable:
    """A titled table with its chart (``plot`` says what to draw; ``chart`` is the drawing)."""

    title: str
    table: Table
    chart: Chart | None = None
    plot: Plot | None = None
    note: str = ""
    """Why there is no chart although ``plot`` asked for one (no data to draw), one line."""


@dataclass(frozen=True)
class GpuSection:
    """The GPU runs part of the report."""

    runs: Table
    kernel_rows: int
    speedups: ChartedTable | None
    calibrations: tuple[ChartedTable, ...]
    gemm: ChartedTable | None
    kernels: tuple[ChartedTable, ...]
    counters: Table | None = None
    """Nsight Compute's figures beside the tile groups' useful utilization (when ncu gave any)."""
    withheld: tuple[str, ...] = ()
    """Each failed capture check that undermines the op rows or the kernel tables
    (``integrity.reason_text``): said first, the rows of those inputs rest on it."""


@dataclass(frozen=True)
class BreakdownSection:
    """The GPU time breakdown (``views/html/breakdown_data``): time per device and step,
    launches, idle per stream, and with ranks the collectives and each rank's overlap."""

    id: str
    kernel_wait_us: float
    tables: tuple[tuple[str, Table], ...]
    withheld: tuple[tuple[str, str], ...] = ()
    """(trace, why) per failed capture check that undermines the breakdown
    (``integrity.reason_text``): the trace's file name, or "" for a check across a job's
    ranks (it undermines every row). The lead abstains when its window's trace is named."""
    notes: tuple[str, ...] = ()
    """Said under the lead (``breakdown --format html``): kernels the trace holds no launch
    of (``views.breakdown_export.unlaunched_note``). The report's capture checks say it."""


@dataclass(frozen=True)
class CriticalScope:
    """One epoch or step on ``critical``'s page: its path's length, the path broken down by
    class (a bar and a table), the ops or kernels on it, the what-if and the candidates."""

    id: str
    title: str
    length: str
    """The path's length as printed (cycles and µs for a tile epoch, µs for a GPU step)."""
    length_us: float
    bar: str
    """The breakdown as an inline SVG bar, its names escaped (``critical_data.class_bar``)."""
    parts: Table
    on_path: Table
    what_if: tuple[str, ...]
    candidates: Table
    withheld: tuple[str, ...] = ()
    """Why the candidates are not shown: the input's failed capture checks that undermine
    them (``integrity.undermined``); empty: they hold."""


@dataclass(frozen=True)
class CriticalSection:
    """``critical``'s page and the report's "Critical path" section (``critical_data``)."""

    id: str
    scopes: tuple[CriticalScope, ...]
    edits: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    folded: bool = False
    """Every scope folded to its title and length (the report, where it is one section of
    many; its lead sentence still gives the longest path and the largest gain)."""


@dataclass(frozen=True)
class QualityCheck:
    """One data-quality check: how many things it found and what they were."""

    check: str
    count: int
    status: str
    detail: str


@dataclass(frozen=True)
class Report:
    """The whole page."""

    header: Header
    tiles: tuple[TileSection, ...]
    gpu: GpuSection | None
    linked: tuple[ChartedTable, ...]
    quality: tuple[QualityCheck, ...]
    notes: tuple[str, ...] = field(default=())
    breakdown: BreakdownSection | None = None
    """The GPU time breakdown of the report's PyTorch traces (``tileprof breakdown``)."""
    draw_charts: bool = True
    """Whether ``render`` draws the charts (tests of numbers skip the drawing)."""
    findings: tuple[Finding, ...] = ()
    """The rule table's outcomes, fired first: the page opens with them."""
    roofline: ChartedTable | None = None
    """Every target's ops and tile groups on their rooflines (``data.roofline_section``)."""
    checks: tuple[dict[str, Any], ...] = ()
    """The capture checks of every input (``tileprof.analyses.integrity``): the page opens
    with them."""
    unchecked: tuple[tuple[str, str], ...] = ()
    """(input, kind) of the inputs of a kind tileprof has no capture checks for: named beside
    the checks, so that "all passed" is not read as a verdict on them."""
    devices: ChartedTable | None = None
    """The runs that several devices of one target ran, with their spread
    (``data.device_spread_section``)."""
    critical: CriticalSection | None = None
    """The critical path of each step of the report's traces (``critical_data.gpu_section``)."""
    tile_ops: tuple[ChartedTable, ...] = ()
    """One op table per chip of a tile-array accelerator's per-op report (Tenstorrent):
    ``data.tile_op_tables``."""
