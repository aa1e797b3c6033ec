"""The output formats of ``summary`` and ``runs``: one registry entry per format.

A ``Renderer`` names its format, the file suffix it suits, whether it is binary, and renders
one model (``SummaryModel`` or ``RunsModel``) to text or bytes. The commands build their
``--format`` choices from these dictionaries and write what ``render`` returns; adding a format
is one renderer function plus one entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import polars as pl

from tileprof.analyses.summary import Summary
from tileprof.core.errors import OptionError
from tileprof.core.outputs import write_bytes, write_text
from tileprof.views import runs_data, summary_csv, summary_json, supersteps_export

if TYPE_CHECKING:
    from tileprof.analyses.diff import Diff
    from tileprof.analyses.supersteps import Supersteps

M = TypeVar("M")


@dataclass(frozen=True)
class Renderer(Generic[M]):
    """One output format: ``render(model)`` gives text, or bytes when ``binary``."""

    name: str
    suffix: str
    binary: bool
    render: Callable[[M], str | bytes]


@dataclass(frozen=True)
class SummaryModel:
    """What ``summary`` renders: the group table and the device it ran on."""

    summary: Summary
    target: str
    present: Sequence[str] = ()
    """What the profile holds (epochs, groups), said when a filter matched nothing."""
    width: int | None = None
    """The terminal's width when the table goes to one; None: the fixed width of files."""


@dataclass(frozen=True)
class RunsModel:
    """What ``runs`` renders: the run table, its linked sets, notes and the sources read."""

    runs: pl.DataFrame
    sets: pl.DataFrame
    notes: Sequence[str] = ()
    sources: Sequence[dict[str, Any]] = ()
    linked_only: bool = False
    width: int | None = None
    """The terminal's width when the table goes to one; None: the fixed width of files."""

    @property
    def rows(self) -> pl.DataFrame:
        """The rows a flat format writes: the linked sets with ``--linked``, else the runs."""
        return self.sets if self.linked_only else self.runs


def _summary_table(model: SummaryModel) -> str:
    from tileprof.views import summary_table  # rich: only the table needs it

    width = summary_table.TABLE_WIDTH if model.width is None else model.width
    return summary_table.render(model.summary, model.target, width, present=model.present)


def _runs_table(model: RunsModel) -> str:
    from tileprof.views import runs_table

    width = runs_table.TABLE_WIDTH if model.width is None else model.width
    return runs_table.render(
        model.runs, model.sets, model.notes, linked_only=model.linked_only, width=width
    )


def _runs_json(model: RunsModel) -> str:
    return runs_data.render_json(
        model.runs, model.sets, model.notes, model.sources, linked_only=model.linked_only
    )


SUMMARY_RENDERERS: dict[str, Renderer[SummaryModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _summary_table),
        Renderer("json", ".json", False, lambda m: summary_json.render(m.summary)),
        Renderer("csv", ".csv", False, lambda m: summary_csv.render(m.summary)),
    )
}
"""``tileprof summary --format``; the first is the default."""
RUNS_RENDERERS: dict[str, Renderer[RunsModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _runs_table),
        Renderer("json", ".json", False, _runs_json),
        Renderer("csv", ".csv", False, lambda m: runs_data.render_csv(m.rows)),
        Renderer("parquet", ".parquet", True, lambda m: runs_data.render_parquet(m.rows)),
    )
}
"""``tileprof runs --format``; the first is the default."""


@dataclass(frozen=True)
class DiffModel:
    """What ``diff`` renders: the comparison and the broken ``--fail-on`` lines."""

    diff: Diff
    broken: tuple[str, ...] = ()


def _diff_text(kind: str) -> Callable[[DiffModel], str]:
    def render(model: DiffModel) -> str:
        from tileprof.views import diff_text

        if kind == "table":
            return diff_text.render_table(model.diff, model.broken)
        if kind == "json":
            return diff_text.render_json(model.diff, model.broken)
        return diff_text.render_csv(model.diff)

    return render


def _diff_html(model: DiffModel) -> str:
    from tileprof.views.html import render_diff  # matplotlib, jinja2

    return render_diff(model.diff, model.broken)


DIFF_RENDERERS: dict[str, Renderer[DiffModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _diff_text("table")),
        Renderer("json", ".json", False, _diff_text("json")),
        Renderer("csv", ".csv", False, _diff_text("csv")),
        Renderer("html", ".html", False, _diff_html),
    )
}
"""``tileprof diff --format``; the first is the default."""


@dataclass(frozen=True)
class SuperstepsModel:
    """What ``supersteps`` renders: the superstep frames, the device, and whether per-tile
    rows were asked for (``--tiles``)."""

    result: Supersteps
    target: str
    tiles: bool = False
    width: int | None = None
    """The terminal's width when the table goes to one; None: the fixed width of files."""


def _supersteps_table(model: SuperstepsModel) -> str:
    from tileprof.views import supersteps_table  # rich: only the table needs it

    width = supersteps_table.TABLE_WIDTH if model.width is None else model.width
    return supersteps_table.render(model.result, model.target, tiles=model.tiles, width=width)


SUPERSTEPS_RENDERERS: dict[str, Renderer[SuperstepsModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _supersteps_table),
        Renderer(
            "json", ".json", False, lambda m: supersteps_export.render_json(m.result, m.tiles)
        ),
        Renderer("csv", ".csv", False, lambda m: supersteps_export.render_csv(m.result, m.tiles)),
    )
}
"""``tileprof supersteps --format``; the first is the default."""


def check_destination(renderer: Renderer[Any], output: Path | None) -> None:
    """A binary format needs a file: it is never written to the terminal."""
    if renderer.binary and (output is None or str(output) == "-"):
        raise OptionError(f"--format {renderer.name} needs -o FILE")


def write_rendered(renderer: Renderer[M], model: M, output: Path | None) -> None:
    """Render ``model`` and write it to ``output`` (stdout for text when None or ``-``)."""
    data = renderer.render(model)
    if isinstance(data, bytes):
        check_destination(renderer, output)
        assert output is not None  # checked above
        write_bytes(output, data)
    else:
        write_text(output, data)
