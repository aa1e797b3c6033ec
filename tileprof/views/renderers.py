"""The output formats of every command that prints a table: one registry entry per format.

A ``Renderer`` names its format, the file suffix it suits, whether it is binary, and renders
one model (``SummaryModel``, ``RunsModel``, ``OpsModel``, ``DiffModel``, ``SuperstepsModel``,
``HistoryModel``, the store's run records, ``ReportModel``, a trace's ``Timeline``) to text or
bytes; a trace format streams into the file instead (``Renderer.stream``). Every output
format of every command is one entry here. The commands build their
``--format`` choices from these dictionaries and write what ``render`` returns; adding a format
is one renderer function plus one entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any, Generic, TypeVar

from tileprof.core.errors import OptionError
from tileprof.core.outputs import say_written, write_bytes, write_text

# Every format's module is imported when it renders, polars with it: a command that reads a
# trace starts decoding it before polars is imported (``core.ahead``), and every command
# that prints imports this registry.
if TYPE_CHECKING:
    import polars as pl

    from tileprof.analyses.collectives import Job
    from tileprof.analyses.critical import CriticalPath
    from tileprof.analyses.diff import Diff
    from tileprof.analyses.findings import Finding
    from tileprof.analyses.gpu_breakdown import Breakdown
    from tileprof.analyses.summary import Summary
    from tileprof.analyses.supersteps import Supersteps

M = TypeVar("M")


@dataclass(frozen=True)
class Renderer(Generic[M]):
    """One output format: ``render(model)`` gives text, or bytes when ``binary``."""

    name: str
    suffix: str
    binary: bool
    render: Callable[[M], str | bytes]
    stream: Callable[[M, IO[bytes]], None] | None = None
    """For a format written piece by piece (a trace): write the model into an open file,
    never holding the whole output in memory. ``render`` then gives the bytes (for tests)."""


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


def _runs_data() -> ModuleType:
    from tileprof.views import runs_data

    return runs_data


def _summary_json() -> ModuleType:
    from tileprof.views import summary_json

    return summary_json


def _summary_csv() -> ModuleType:
    from tileprof.views import summary_csv

    return summary_csv


def _supersteps_export() -> ModuleType:
    from tileprof.views import supersteps_export

    return supersteps_export


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
    return _runs_data().render_json(
        model.runs, model.sets, model.notes, model.sources, linked_only=model.linked_only
    )


SUMMARY_RENDERERS: dict[str, Renderer[SummaryModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _summary_table),
        Renderer("json", ".json", False, lambda m: _summary_json().render(m.summary)),
        Renderer("csv", ".csv", False, lambda m: _summary_csv().render(m.summary)),
    )
}
"""``tileprof summary --format``; the first is the default."""
RUNS_RENDERERS: dict[str, Renderer[RunsModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _runs_table),
        Renderer("json", ".json", False, _runs_json),
        Renderer("csv", ".csv", False, lambda m: _runs_data().render_csv(m.rows)),
        Renderer("parquet", ".parquet", True, lambda m: _runs_data().render_parquet(m.rows)),
    )
}
"""``tileprof runs --format``; the first is the default."""


@dataclass(frozen=True)
class OpsModel:
    """What ``runs --ops`` renders: the op rows of every trace, the notes, the files read."""

    ops: pl.DataFrame
    notes: Sequence[str] = ()
    sources: Sequence[dict[str, Any]] = ()
    width: int | None = None


def _ops_table(model: OpsModel) -> str:
    from tileprof.views import runs_table

    width = model.width or runs_table.OP_TABLE_WIDTH
    return runs_table.render_ops(model.ops, model.notes, width=width)


OPS_RENDERERS: dict[str, Renderer[OpsModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _ops_table),
        Renderer(
            "json",
            ".json",
            False,
            lambda m: _runs_data().render_ops_json(m.ops, list(m.notes), list(m.sources)),
        ),
        Renderer("csv", ".csv", False, lambda m: _runs_data().render_csv(m.ops)),
        Renderer("parquet", ".parquet", True, lambda m: _runs_data().render_parquet(m.ops)),
    )
}
"""``tileprof runs --ops --format``: the same names as ``RUNS_RENDERERS``."""


@dataclass(frozen=True)
class DiffModel:
    """What ``diff`` renders: the comparison and the broken ``--fail-on`` lines."""

    diff: Diff
    broken: tuple[str, ...] = ()
    width: int | None = None
    """The terminal's width when the table goes to one; None: the fixed width of files."""
    abstained: tuple[str, ...] = ()
    """Why ``--fail-on`` gave no verdict: the failed capture checks (coverage), one line each."""

    @property
    def setup_note(self) -> str | None:
        """Said first when the two sides ran on different setups (device, clock, tiles,
        software), unless the gate's abstention already says it."""
        from tileprof.analyses.comparability import setup_note

        before, after = self.diff.before.environment, self.diff.after.environment
        return setup_note(before, after, self.abstained)

    @property
    def work_note(self) -> str | None:
        """Said first when the groups both sides have hold little of either side's time
        (``analyses.shared_work``), unless the gate's abstention already says it."""
        from tileprof.analyses.shared_work import work_note

        line = work_note(self.diff)
        if line is None or any(s.endswith(line) for s in self.abstained):
            return None
        return line

    @property
    def first_notes(self) -> tuple[str, ...]:
        """The notes said before the figures: the setup's, then the work's."""
        return tuple(n for n in (self.setup_note, self.work_note) if n is not None)


def _diff_text(kind: str) -> Callable[[DiffModel], str]:
    def render(model: DiffModel) -> str:
        from tileprof.views import diff_text

        if kind == "table":
            table = diff_text.render_table(model.diff, model.broken, model.width)
            first = [*model.abstained, *model.first_notes]
            return "".join(f"{line}\n" for line in first) + table
        if kind == "json":
            return _with_abstained(diff_text.render_json(model.diff, model.broken), model)
        if kind == "markdown":
            from tileprof.views.markdown import render_diff

            return render_diff(model.diff, model.broken, model.abstained, model.first_notes)
        return diff_text.render_csv(model.diff)

    return render


def _with_abstained(text: str, model: DiffModel) -> str:
    """The JSON document with ``"abstained"`` (why ``--fail-on`` gave no verdict, when it
    gave none), ``"setup_differs"`` (each field the two sides differ in, when they do) and
    ``"sharedWork"`` with ``"workDiffers"`` (when the groups both sides have hold little of
    either side's time: ``analyses.shared_work``); otherwise the document as it was."""
    import json

    from tileprof.analyses.comparability import differences
    from tileprof.analyses.shared_work import shared_work, work_note

    differ = differences(model.diff.before.environment, model.diff.after.environment)
    shared = shared_work(model.diff)
    work = work_note(model.diff, shared)
    if not model.abstained and not differ and work is None:
        return text
    document = json.loads(text)
    if differ:
        document["setup_differs"] = differ
    if work is not None:
        document["sharedWork"] = shared.document()
        document["workDiffers"] = work
    if model.abstained:
        document["abstained"] = list(model.abstained)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _diff_html(model: DiffModel) -> str:
    from tileprof.views.html import render_diff  # matplotlib, jinja2

    return render_diff(model.diff, model.broken, model.abstained, model.setup_note, model.work_note)


DIFF_RENDERERS: dict[str, Renderer[DiffModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _diff_text("table")),
        Renderer("json", ".json", False, _diff_text("json")),
        Renderer("csv", ".csv", False, _diff_text("csv")),
        Renderer("html", ".html", False, _diff_html),
        Renderer("markdown", ".md", False, _diff_text("markdown")),
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
    epochs: bool = False
    """``--epochs``: the per-epoch table (CSV: the epoch rows instead of the superstep rows)."""


def _supersteps_table(model: SuperstepsModel) -> str:
    from tileprof.views import supersteps_table  # rich: only the table needs it

    width = supersteps_table.TABLE_WIDTH if model.width is None else model.width
    return supersteps_table.render(
        model.result, model.target, tiles=model.tiles, width=width, epochs=model.epochs
    )


SUPERSTEPS_RENDERERS: dict[str, Renderer[SuperstepsModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _supersteps_table),
        Renderer(
            "json", ".json", False, lambda m: _supersteps_export().render_json(m.result, m.tiles)
        ),
        Renderer(
            "csv",
            ".csv",
            False,
            lambda m: _supersteps_export().render_csv(m.result, m.tiles, m.epochs),
        ),
    )
}
"""``tileprof supersteps --format``; the first is the default."""


@dataclass(frozen=True)
class FindingsModel:
    """What ``findings`` renders: every rule's outcome, fired first."""

    findings: Sequence[Finding]
    width: int | None = None
    """The terminal's width when the table goes to one; None: the fixed width of files."""


def _findings_text(kind: str) -> Callable[[FindingsModel], str]:
    def render(model: FindingsModel) -> str:
        from tileprof.views import findings_table  # rich: only the table needs it

        if kind == "json":
            return findings_table.render_json(model.findings)
        width = findings_table.TABLE_WIDTH if model.width is None else model.width
        return findings_table.render(model.findings, width)

    return render


@dataclass(frozen=True)
class HistoryModel:
    """What ``history`` renders: the trend, and (for HTML) the page's generation time."""

    history: Any
    generated_at: Any = None
    width: int | None = None
    """The terminal's width when the table goes to one; None: the fixed width of files."""
    abstained: tuple[str, ...] = ()
    """Why ``--fail-on`` gave no verdict: the failed capture checks (coverage), one line each."""


def _history(kind: str) -> Callable[[HistoryModel], str]:
    def render(model: HistoryModel) -> str:
        from tileprof.views import history

        if kind == "html":
            from tileprof.views import history_html

            return history_html.render(model.history, model.generated_at, model.abstained)
        if kind == "table":
            table = history.render_table(model.history, model.width)
            return table + "".join(f"{line}\n" for line in model.abstained)
        if kind == "markdown":
            from tileprof.views.markdown import render_history

            return render_history(model.history, model.abstained)
        text: str = getattr(history, f"render_{kind}")(model.history)
        if kind == "json" and model.abstained:
            import json

            document = json.loads(text)
            document["abstained"] = list(model.abstained)
            return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        return text

    return render


FINDINGS_RENDERERS: dict[str, Renderer[FindingsModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _findings_text("table")),
        Renderer("json", ".json", False, _findings_text("json")),
    )
}
"""``tileprof findings --format``; the first is the default."""


HISTORY_RENDERERS: dict[str, Renderer[HistoryModel]] = {
    name: Renderer(name, suffix, False, _history(name))
    for name, suffix in (
        ("table", ".txt"),
        ("json", ".json"),
        ("csv", ".csv"),
        ("html", ".html"),
        ("markdown", ".md"),
    )
}
"""``tileprof history --format``; the first is the default."""


def _store_runs(kind: str) -> Callable[[Sequence[Any]], str]:
    def render(runs: Sequence[Any]) -> str:
        if kind == "json":
            import json

            return json.dumps([r.to_json() for r in runs], indent=2, ensure_ascii=False) + "\n"
        from tileprof.core.outputs import terminal_width
        from tileprof.views.store_table import TABLE_WIDTH, render_runs

        return render_runs(runs, terminal_width(None) or TABLE_WIDTH)  # always to stdout

    return render


STORE_LIST_RENDERERS: dict[str, Renderer[Sequence[Any]]] = {
    name: Renderer(name, suffix, False, _store_runs(name))
    for name, suffix in (("table", ".txt"), ("json", ".json"))
}
"""``tileprof store list --format``; the first is the default."""


@dataclass(frozen=True)
class ReportModel:
    """What ``report`` renders: the report's view model and its optional baseline section."""

    report: Any
    baseline: Any = None


def _report_html(model: ReportModel) -> str:
    from tileprof.views.html import render  # matplotlib, jinja2

    return render(model.report, baseline=model.baseline)


REPORT_RENDERERS: dict[str, Renderer[ReportModel]] = {
    "html": Renderer("html", ".html", False, _report_html)
}
"""``tileprof report``'s one format: a self-contained HTML page."""


def _trace_stream(name: str) -> Callable[[Any, IO[bytes]], None]:
    def stream(timeline: Any, handle: IO[bytes]) -> None:
        import gzip

        if name == "pftrace":
            from tileprof.views.trace.perfetto import write_pftrace

            write_pftrace(handle, timeline)
            return
        from tileprof.views.trace.chrome import write_chrome

        if name == "json.gz":
            with gzip.GzipFile(fileobj=handle, mode="wb", compresslevel=6, mtime=0) as zipped:
                write_chrome(zipped, timeline)
        else:
            write_chrome(handle, timeline)

    return stream


def _streamed_bytes(stream: Callable[[Any, IO[bytes]], None]) -> Callable[[Any], bytes]:
    def render(model: Any) -> bytes:
        import io

        buffer = io.BytesIO()
        stream(model, buffer)
        return buffer.getvalue()

    return render


TRACE_RENDERERS: dict[str, Renderer[Any]] = {
    name: Renderer(name, suffix, True, _streamed_bytes(_trace_stream(name)), _trace_stream(name))
    for name, suffix in (("pftrace", ".pftrace"), ("json", ".json"), ("json.gz", ".json.gz"))
}
"""``tileprof trace``'s formats (a ``tileprof.model.trace.Timeline``), chosen by the output's
name (``tileprof.views.trace.trace_format``)."""


def check_destination(renderer: Renderer[Any], output: Path | None) -> None:
    """A binary format needs a file: it is never written to the terminal."""
    if renderer.binary and (output is None or str(output) == "-"):
        raise OptionError(f"--format {renderer.name} needs -o FILE")


def write_rendered(renderer: Renderer[M], model: M, output: Path | None) -> None:
    """Render ``model`` and write it to ``output`` (stdout for text when None or ``-``); a
    file written is named on stdout (``say_written``)."""
    if renderer.stream is not None:
        check_destination(renderer, output)
        assert output is not None  # checked above
        from tileprof.core.outputs import atomic_writer

        with atomic_writer(output, binary=True) as handle:
            renderer.stream(model, handle)
        say_written(output)
        return
    data = renderer.render(model)
    if isinstance(data, bytes):
        check_destination(renderer, output)
        assert output is not None  # checked above
        write_bytes(output, data)
    else:
        write_text(output, data)
    say_written(output)


@dataclass(frozen=True)
class BreakdownModel:
    """What ``breakdown`` renders: the per-device, per-step breakdown and the ranks' jobs."""

    result: Breakdown
    job: Job
    width: int | None = None
    """The terminal's width when the table goes to one; None: the fixed width of files."""


def _breakdown(kind: str) -> Callable[[BreakdownModel], str]:
    """A breakdown format; its module (numpy, through the analysis) loads when it renders, so
    other commands that read this registry do not pay for it."""

    def render(model: BreakdownModel) -> str:
        if kind == "html":
            from tileprof.views.html import render_breakdown  # jinja2: only the page needs it

            return render_breakdown(model.result, model.job)
        from tileprof.views import breakdown_export

        if kind == "table":
            return breakdown_export.render_table(model.result, model.job, model.width)
        if kind == "json":
            return breakdown_export.render_json(model.result, model.job)
        return breakdown_export.render_csv(model.result)

    return render


BREAKDOWN_RENDERERS: dict[str, Renderer[BreakdownModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _breakdown("table")),
        Renderer("json", ".json", False, _breakdown("json")),
        Renderer("csv", ".csv", False, _breakdown("csv")),
        Renderer("html", ".html", False, _breakdown("html")),
    )
}
"""``tileprof breakdown --format``; the first is the default."""


def _breakdown_diff(kind: str) -> Callable[[pl.DataFrame], str]:
    def render(comparison: pl.DataFrame) -> str:
        from tileprof.views import breakdown_export

        if kind == "table":
            return breakdown_export.render_diff_table(comparison)
        if kind == "json":
            return breakdown_export.render_diff_json(comparison)
        return breakdown_export.render_diff_csv(comparison)

    return render


BREAKDOWN_DIFF_RENDERERS: dict[str, Renderer[pl.DataFrame]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _breakdown_diff("table")),
        Renderer("json", ".json", False, _breakdown_diff("json")),
        Renderer("csv", ".csv", False, _breakdown_diff("csv")),
    )
}
"""``tileprof diff --breakdown --format``: the comparison of two GPU time breakdowns
(``analyses.breakdown_diff``)."""


@dataclass(frozen=True)
class CriticalModel:
    """What ``critical`` renders: the critical path, its what-if and the device."""

    result: CriticalPath
    target: str
    width: int | None = None
    """The terminal's width when the table goes to one; None: the fixed width of files."""
    withheld: tuple[str, ...] = ()
    """Why the dump's failed capture checks undermine the ranked edits: shown in their
    place (JSON: ``candidatesWithheld``, the candidates kept); empty: they hold."""


def _critical(render: str) -> Callable[[CriticalModel], str]:
    def rendered(model: CriticalModel) -> str:
        from tileprof.views import critical_table

        if render == "table":
            return critical_table.render_table(
                model.result, model.target, model.width, model.withheld
            )
        if render == "html":
            from tileprof.views.html import render_critical  # jinja2: only the page needs it
            from tileprof.views.html.critical_data import tile_section

            return render_critical(tile_section(model.result, withheld=model.withheld))
        if render == "json":
            return critical_table.render_json(model.result, model.withheld)
        text: str = getattr(critical_table, f"render_{render}")(model.result)
        return text

    return rendered


CRITICAL_RENDERERS: dict[str, Renderer[CriticalModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _critical("table")),
        Renderer("json", ".json", False, _critical("json")),
        Renderer("csv", ".csv", False, _critical("csv")),
        Renderer("html", ".html", False, _critical("html")),
    )
}


@dataclass(frozen=True)
class CheckModel:
    """What ``check`` renders: one row per input and capture check
    (``tileprof.analyses.integrity.CHECK_SCHEMA``)."""

    checks: pl.DataFrame
    width: int | None = None
    """The terminal's width when the table goes to one; None: the fixed width of files."""
    unchecked: tuple[tuple[str, str], ...] = ()
    """The inputs of a kind with no capture checks: (input, kind)."""


def _check_text(kind: str) -> Callable[[CheckModel], str]:
    def render(model: CheckModel) -> str:
        from tileprof.views import check_table  # rich: only the table needs it

        if kind == "json":
            return check_table.render_json(model.checks, model.unchecked)
        width = check_table.TABLE_WIDTH if model.width is None else model.width
        return check_table.render(model.checks, width, model.unchecked)

    return render


CHECK_RENDERERS: dict[str, Renderer[CheckModel]] = {
    r.name: r
    for r in (
        Renderer("table", ".txt", False, _check_text("table")),
        Renderer("json", ".json", False, _check_text("json")),
    )
}
"""``tileprof check --format``; the first is the default."""
