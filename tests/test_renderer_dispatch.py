"""The output-format registries (``tileprof.views.renderers``): each entry's metadata and what
each renderer calls, with what.

Every view function a renderer reaches is replaced by a recorder that returns its own name and
the ``repr`` of its arguments, and the models are built from named tokens, so each assertion
pins the function a format dispatches to and the exact arguments it hands over (widths and
their defaults, ``linked_only``, ``tiles``, ``epochs``, ``withheld``, ``unchecked``,
``abstained``, the diff's first notes). The rest pins what the module adds itself: the JSON
documents it extends, the gzip stream of ``trace -o x.json.gz``, ``check_destination`` and
``write_rendered``. Written for mutation testing of ``renderers.py`` (docs/testing.md): the
registries are built at import, so each factory-built format is also rendered by a renderer
its factory builds during the test (``rendered``), where a mutant of the factory shows.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import struct
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from tileprof.analyses import comparability, shared_work
from tileprof.core import outputs
from tileprof.core.errors import OptionError
from tileprof.views import (
    breakdown_export,
    check_table,
    critical_table,
    diff_text,
    findings_table,
    history,
    history_html,
    markdown,
    renderers,
    runs_data,
    runs_table,
    store_table,
    summary_csv,
    summary_json,
    summary_table,
    supersteps_export,
    supersteps_table,
)
from tileprof.views import html as html_views
from tileprof.views.html import critical_data
from tileprof.views.renderers import (
    BREAKDOWN_DIFF_RENDERERS,
    BREAKDOWN_RENDERERS,
    CHECK_RENDERERS,
    CRITICAL_RENDERERS,
    DIFF_RENDERERS,
    FINDINGS_RENDERERS,
    HISTORY_RENDERERS,
    OPS_RENDERERS,
    REPORT_RENDERERS,
    RUNS_RENDERERS,
    STORE_LIST_RENDERERS,
    SUMMARY_RENDERERS,
    SUPERSTEPS_RENDERERS,
    TRACE_RENDERERS,
    BreakdownModel,
    CheckModel,
    CriticalModel,
    DiffModel,
    FindingsModel,
    HistoryModel,
    OpsModel,
    Renderer,
    ReportModel,
    RunsModel,
    SummaryModel,
    SuperstepsModel,
    check_destination,
    write_rendered,
)
from tileprof.views.trace import chrome, perfetto


class Token:
    """A stand-in model part that the recorders only ``repr``: ``<name>``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def token(name: str) -> Any:
    """A ``Token`` typed as whatever the model's field wants."""
    return Token(name)


def call_text(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """``name(arg, …, key=value, …)`` with every value as its ``repr``."""
    parts = [*map(repr, args), *(f"{key}={value!r}" for key, value in kwargs.items())]
    return f"{name}({', '.join(parts)})"


def recorder(name: str) -> Callable[..., str]:
    """A view function that answers with the call it got."""

    def record(*args: Any, **kwargs: Any) -> str:
        return call_text(name, args, kwargs)

    return record


def byte_recorder(name: str) -> Callable[..., bytes]:
    """A binary view function (parquet) that answers with the call it got, as bytes."""

    def record(*args: Any, **kwargs: Any) -> bytes:
        return call_text(name, args, kwargs).encode()

    return record


def json_recorder(name: str) -> Callable[..., str]:
    """A JSON view function whose document (compact, so a re-dump shows) names the call."""

    def record(*args: Any, **kwargs: Any) -> str:
        return json.dumps({"call": call_text(name, args, kwargs)})

    return record


TEXT_VIEWS: tuple[tuple[Any, str], ...] = (
    (summary_table, "render"),
    (summary_json, "render"),
    (summary_csv, "render"),
    (runs_table, "render"),
    (runs_table, "render_ops"),
    (runs_data, "render_json"),
    (runs_data, "render_ops_json"),
    (runs_data, "render_csv"),
    (diff_text, "render_table"),
    (diff_text, "render_csv"),
    (markdown, "render_diff"),
    (markdown, "render_history"),
    (supersteps_table, "render"),
    (supersteps_export, "render_json"),
    (supersteps_export, "render_csv"),
    (findings_table, "render"),
    (findings_table, "render_json"),
    (history, "render_table"),
    (history, "render_csv"),
    (history_html, "render"),
    (store_table, "render_runs"),
    (html_views, "render"),
    (html_views, "render_diff"),
    (html_views, "render_breakdown"),
    (html_views, "render_critical"),
    (critical_data, "tile_section"),
    (breakdown_export, "render_table"),
    (breakdown_export, "render_json"),
    (breakdown_export, "render_csv"),
    (breakdown_export, "render_diff_table"),
    (breakdown_export, "render_diff_json"),
    (breakdown_export, "render_diff_csv"),
    (critical_table, "render_table"),
    (critical_table, "render_json"),
    (critical_table, "render_csv"),
    (check_table, "render"),
    (check_table, "render_json"),
)
"""Every text view function a renderer calls, by the module it is looked up on."""

WIDTHS: tuple[tuple[Any, str, int], ...] = (
    (summary_table, "TABLE_WIDTH", 1001),
    (runs_table, "TABLE_WIDTH", 1002),
    (runs_table, "OP_TABLE_WIDTH", 1003),
    (supersteps_table, "TABLE_WIDTH", 1004),
    (findings_table, "TABLE_WIDTH", 1005),
    (check_table, "TABLE_WIDTH", 1006),
    (store_table, "TABLE_WIDTH", 1007),
)
"""The fixed widths of files, each made distinct so that a default names its own module's."""


def short(module: Any) -> str:
    """``summary_table`` for ``tileprof.views.summary_table``; ``html`` for the package."""
    return str(module.__name__).rsplit(".", 1)[-1]


@pytest.fixture()
def views(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replace every view function the renderers reach by a recorder, and the fixed widths."""
    for module, name in TEXT_VIEWS:
        monkeypatch.setattr(module, name, recorder(f"{short(module)}.{name}"))
    monkeypatch.setattr(runs_data, "render_parquet", byte_recorder("runs_data.render_parquet"))
    for module, name in ((diff_text, "render_json"), (history, "render_json")):
        monkeypatch.setattr(module, name, json_recorder(f"{short(module)}.{name}"))
    for module, name, width in WIDTHS:
        monkeypatch.setattr(module, name, width)


# --- the registries' entries --------------------------------------------------------------

REGISTRIES: tuple[tuple[str, Mapping[str, Renderer[Any]], list[tuple[str, str, bool, bool]]], ...]
REGISTRIES = (
    (
        "summary",
        SUMMARY_RENDERERS,
        [
            ("table", ".txt", False, False),
            ("json", ".json", False, False),
            ("csv", ".csv", False, False),
        ],
    ),
    (
        "runs",
        RUNS_RENDERERS,
        [
            ("table", ".txt", False, False),
            ("json", ".json", False, False),
            ("csv", ".csv", False, False),
            ("parquet", ".parquet", True, False),
        ],
    ),
    (
        "ops",
        OPS_RENDERERS,
        [
            ("table", ".txt", False, False),
            ("json", ".json", False, False),
            ("csv", ".csv", False, False),
            ("parquet", ".parquet", True, False),
        ],
    ),
    (
        "diff",
        DIFF_RENDERERS,
        [
            ("table", ".txt", False, False),
            ("json", ".json", False, False),
            ("csv", ".csv", False, False),
            ("html", ".html", False, False),
            ("markdown", ".md", False, False),
        ],
    ),
    (
        "supersteps",
        SUPERSTEPS_RENDERERS,
        [
            ("table", ".txt", False, False),
            ("json", ".json", False, False),
            ("csv", ".csv", False, False),
        ],
    ),
    (
        "findings",
        FINDINGS_RENDERERS,
        [("table", ".txt", False, False), ("json", ".json", False, False)],
    ),
    (
        "history",
        HISTORY_RENDERERS,
        [
            ("table", ".txt", False, False),
            ("json", ".json", False, False),
            ("csv", ".csv", False, False),
            ("html", ".html", False, False),
            ("markdown", ".md", False, False),
        ],
    ),
    (
        "store list",
        STORE_LIST_RENDERERS,
        [("table", ".txt", False, False), ("json", ".json", False, False)],
    ),
    ("report", REPORT_RENDERERS, [("html", ".html", False, False)]),
    (
        "trace",
        TRACE_RENDERERS,
        [
            ("pftrace", ".pftrace", True, True),
            ("json", ".json", True, True),
            ("json.gz", ".json.gz", True, True),
        ],
    ),
    (
        "breakdown",
        BREAKDOWN_RENDERERS,
        [
            ("table", ".txt", False, False),
            ("json", ".json", False, False),
            ("csv", ".csv", False, False),
            ("html", ".html", False, False),
        ],
    ),
    (
        "breakdown diff",
        BREAKDOWN_DIFF_RENDERERS,
        [
            ("table", ".txt", False, False),
            ("json", ".json", False, False),
            ("csv", ".csv", False, False),
        ],
    ),
    (
        "critical",
        CRITICAL_RENDERERS,
        [
            ("table", ".txt", False, False),
            ("json", ".json", False, False),
            ("csv", ".csv", False, False),
            ("html", ".html", False, False),
        ],
    ),
    (
        "check",
        CHECK_RENDERERS,
        [("table", ".txt", False, False), ("json", ".json", False, False)],
    ),
)
"""Each registry's entries in order: (name, suffix, binary, streams). The first is the
command's default ``--format``; the suffix names the files ``-o`` suits; a binary format never
goes to the terminal; only a trace streams into its file."""


@pytest.mark.parametrize(
    ("registry", "expected"),
    [pytest.param(registry, expected, id=label) for label, registry, expected in REGISTRIES],
)
def test_registry_entries(
    registry: Mapping[str, Renderer[Any]], expected: list[tuple[str, str, bool, bool]]
) -> None:
    """The ``--format`` choices, their order (the default first), suffixes and kinds are the
    commands' interface: pin every one."""
    assert list(registry) == [name for name, _, _, _ in expected]
    got = [(r.name, r.suffix, r.binary, r.stream is not None) for r in registry.values()]
    assert got == expected


REGISTRY_BY_LABEL: dict[str, Mapping[str, Renderer[Any]]] = {
    label: registry for label, registry, _ in REGISTRIES
}


def _trace_renderer(name: str) -> Callable[[Any], bytes]:
    """A trace format's ``render`` built now: its stream into a buffer."""
    return renderers._streamed_bytes(renderers._trace_stream(name))


def _diff_renderer(name: str) -> Callable[[Any], str]:
    """A diff format's ``render`` built now (the page has a function of its own)."""
    return renderers._diff_html if name == "html" else renderers._diff_text(name)


FACTORIES: dict[str, Callable[[str], Callable[[Any], Any]]] = {
    "diff": _diff_renderer,
    "findings": renderers._findings_text,
    "history": renderers._history,
    "store list": renderers._store_runs,
    "trace": _trace_renderer,
    "breakdown": renderers._breakdown,
    "breakdown diff": renderers._breakdown_diff,
    "critical": renderers._critical,
    "check": renderers._check_text,
}
"""The functions that build a registry's renderers from the format's name, by registry."""


def rendered(label: str, name: str, model: Any) -> Any:
    """What format ``name`` of registry ``label`` makes of ``model``, by the registry's entry
    and, for a registry built by a factory (``_history("table")``), by a renderer that factory
    builds now, which must agree. The registries are built once, at import: a change to a
    factory (a mutant) shows only in a renderer it builds after the change."""
    text = REGISTRY_BY_LABEL[label][name].render(model)
    if label in FACTORIES:
        assert FACTORIES[label](name)(model) == text
    return text


# --- dispatch: one case per format ----------------------------------------------------------

SUMMARY = token("summary")
RUNS, SETS, OPS = token("runs"), token("sets"), token("ops")
SOURCES = ({"path": "a.csv"},)
RESULT, JOB, COMPARISON = token("result"), token("job"), token("comparison")
FINDING, CHECKS, HISTORY, GENERATED = token("f1"), token("checks"), token("history"), token("gen")
UNCHECKED = (("a.csv", "run table"),)

DISPATCH: list[Any] = [
    # summary
    pytest.param(
        "summary",
        "table",
        SummaryModel(SUMMARY, "n300", present=("epoch 1",)),
        "summary_table.render(<summary>, 'n300', 1001, present=('epoch 1',))",
        id="summary-table-file-width",
    ),
    pytest.param(
        "summary",
        "table",
        SummaryModel(SUMMARY, "n300", width=90),
        "summary_table.render(<summary>, 'n300', 90, present=())",
        id="summary-table-terminal-width",
    ),
    pytest.param(
        "summary",
        "json",
        SummaryModel(SUMMARY, "n300", width=90),
        "summary_json.render(<summary>)",
        id="summary-json",
    ),
    pytest.param(
        "summary",
        "csv",
        SummaryModel(SUMMARY, "n300", width=90),
        "summary_csv.render(<summary>)",
        id="summary-csv",
    ),
    # runs
    pytest.param(
        "runs",
        "table",
        RunsModel(RUNS, SETS, ("n1",), SOURCES, linked_only=True, width=90),
        "runs_table.render(<runs>, <sets>, ('n1',), linked_only=True, width=90)",
        id="runs-table-linked-terminal",
    ),
    pytest.param(
        "runs",
        "table",
        RunsModel(RUNS, SETS),
        "runs_table.render(<runs>, <sets>, (), linked_only=False, width=1002)",
        id="runs-table-file-width",
    ),
    pytest.param(
        "runs",
        "json",
        RunsModel(RUNS, SETS, ("n1",), SOURCES, linked_only=True, width=90),
        "runs_data.render_json(<runs>, <sets>, ('n1',), ({'path': 'a.csv'},), linked_only=True)",
        id="runs-json-linked",
    ),
    pytest.param(
        "runs",
        "json",
        RunsModel(RUNS, SETS, ("n1",), SOURCES),
        "runs_data.render_json(<runs>, <sets>, ('n1',), ({'path': 'a.csv'},), linked_only=False)",
        id="runs-json",
    ),
    pytest.param(
        "runs",
        "csv",
        RunsModel(RUNS, SETS, linked_only=True),
        "runs_data.render_csv(<sets>)",
        id="runs-csv-linked",
    ),
    pytest.param(
        "runs",
        "csv",
        RunsModel(RUNS, SETS),
        "runs_data.render_csv(<runs>)",
        id="runs-csv",
    ),
    pytest.param(
        "runs",
        "parquet",
        RunsModel(RUNS, SETS, linked_only=True),
        b"runs_data.render_parquet(<sets>)",
        id="runs-parquet-linked",
    ),
    pytest.param(
        "runs",
        "parquet",
        RunsModel(RUNS, SETS),
        b"runs_data.render_parquet(<runs>)",
        id="runs-parquet",
    ),
    # runs --ops
    pytest.param(
        "ops",
        "table",
        OpsModel(OPS, ("n1",), SOURCES, width=90),
        "runs_table.render_ops(<ops>, ('n1',), width=90)",
        id="ops-table-terminal",
    ),
    pytest.param(
        "ops",
        "table",
        OpsModel(OPS, ("n1",)),
        "runs_table.render_ops(<ops>, ('n1',), width=1003)",
        id="ops-table-file-width",
    ),
    pytest.param(
        "ops",
        "json",
        OpsModel(OPS, ("n1",), SOURCES, width=90),
        "runs_data.render_ops_json(<ops>, ['n1'], [{'path': 'a.csv'}])",
        id="ops-json",
    ),
    pytest.param(
        "ops", "csv", OpsModel(OPS, width=90), "runs_data.render_csv(<ops>)", id="ops-csv"
    ),
    pytest.param(
        "ops",
        "parquet",
        OpsModel(OPS, width=90),
        b"runs_data.render_parquet(<ops>)",
        id="ops-parquet",
    ),
    # supersteps
    pytest.param(
        "supersteps",
        "table",
        SuperstepsModel(RESULT, "n300", tiles=True, width=90),
        "supersteps_table.render(<result>, 'n300', tiles=True, width=90, epochs=False)",
        id="supersteps-table-tiles",
    ),
    pytest.param(
        "supersteps",
        "table",
        SuperstepsModel(RESULT, "n300", epochs=True),
        "supersteps_table.render(<result>, 'n300', tiles=False, width=1004, epochs=True)",
        id="supersteps-table-epochs",
    ),
    pytest.param(
        "supersteps",
        "json",
        SuperstepsModel(RESULT, "n300", tiles=True, epochs=False),
        "supersteps_export.render_json(<result>, True)",
        id="supersteps-json-tiles",
    ),
    pytest.param(
        "supersteps",
        "json",
        SuperstepsModel(RESULT, "n300", tiles=False, epochs=True),
        "supersteps_export.render_json(<result>, False)",
        id="supersteps-json",
    ),
    pytest.param(
        "supersteps",
        "csv",
        SuperstepsModel(RESULT, "n300", tiles=True, epochs=False),
        "supersteps_export.render_csv(<result>, True, False)",
        id="supersteps-csv-tiles",
    ),
    pytest.param(
        "supersteps",
        "csv",
        SuperstepsModel(RESULT, "n300", tiles=False, epochs=True),
        "supersteps_export.render_csv(<result>, False, True)",
        id="supersteps-csv-epochs",
    ),
    # findings
    pytest.param(
        "findings",
        "table",
        FindingsModel((FINDING,), width=90),
        "findings_table.render((<f1>,), 90)",
        id="findings-table-terminal",
    ),
    pytest.param(
        "findings",
        "table",
        FindingsModel((FINDING,)),
        "findings_table.render((<f1>,), 1005)",
        id="findings-table-file-width",
    ),
    pytest.param(
        "findings",
        "json",
        FindingsModel((FINDING,), width=90),
        "findings_table.render_json((<f1>,))",
        id="findings-json",
    ),
    # history (the JSON document with abstained lines: below)
    pytest.param(
        "history",
        "html",
        HistoryModel(HISTORY, GENERATED, width=90, abstained=("a1",)),
        "history_html.render(<history>, <gen>, ('a1',))",
        id="history-html",
    ),
    pytest.param(
        "history",
        "table",
        HistoryModel(HISTORY, GENERATED, width=90, abstained=("a1", "a2")),
        "history.render_table(<history>, 90)a1\na2\n",
        id="history-table-abstained",
    ),
    pytest.param(
        "history",
        "table",
        HistoryModel(HISTORY),
        "history.render_table(<history>, None)",
        id="history-table",
    ),
    pytest.param(
        "history",
        "markdown",
        HistoryModel(HISTORY, GENERATED, width=90, abstained=("a1",)),
        "markdown.render_history(<history>, ('a1',))",
        id="history-markdown",
    ),
    pytest.param(
        "history",
        "csv",
        HistoryModel(HISTORY, GENERATED, width=90, abstained=("a1",)),
        "history.render_csv(<history>)",
        id="history-csv-abstained",
    ),
    pytest.param(
        "history",
        "json",
        HistoryModel(HISTORY, GENERATED, width=90),
        '{"call": "history.render_json(<history>)"}',
        id="history-json-unchanged",
    ),
    # report
    pytest.param(
        "report",
        "html",
        ReportModel(token("report"), token("baseline")),
        "html.render(<report>, baseline=<baseline>)",
        id="report-baseline",
    ),
    pytest.param(
        "report",
        "html",
        ReportModel(token("report")),
        "html.render(<report>, baseline=None)",
        id="report",
    ),
    # breakdown
    pytest.param(
        "breakdown",
        "table",
        BreakdownModel(RESULT, JOB, width=90),
        "breakdown_export.render_table(<result>, <job>, 90)",
        id="breakdown-table-terminal",
    ),
    pytest.param(
        "breakdown",
        "table",
        BreakdownModel(RESULT, JOB),
        "breakdown_export.render_table(<result>, <job>, None)",
        id="breakdown-table",
    ),
    pytest.param(
        "breakdown",
        "json",
        BreakdownModel(RESULT, JOB, width=90),
        "breakdown_export.render_json(<result>, <job>)",
        id="breakdown-json",
    ),
    pytest.param(
        "breakdown",
        "csv",
        BreakdownModel(RESULT, JOB, width=90),
        "breakdown_export.render_csv(<result>)",
        id="breakdown-csv",
    ),
    pytest.param(
        "breakdown",
        "html",
        BreakdownModel(RESULT, JOB, width=90),
        "html.render_breakdown(<result>, <job>)",
        id="breakdown-html",
    ),
    # diff --breakdown
    pytest.param(
        "breakdown diff",
        "table",
        COMPARISON,
        "breakdown_export.render_diff_table(<comparison>)",
        id="breakdown-diff-table",
    ),
    pytest.param(
        "breakdown diff",
        "json",
        COMPARISON,
        "breakdown_export.render_diff_json(<comparison>)",
        id="breakdown-diff-json",
    ),
    pytest.param(
        "breakdown diff",
        "csv",
        COMPARISON,
        "breakdown_export.render_diff_csv(<comparison>)",
        id="breakdown-diff-csv",
    ),
    # critical
    pytest.param(
        "critical",
        "table",
        CriticalModel(RESULT, "n300", width=90, withheld=("w1",)),
        "critical_table.render_table(<result>, 'n300', 90, ('w1',))",
        id="critical-table-terminal",
    ),
    pytest.param(
        "critical",
        "table",
        CriticalModel(RESULT, "n300"),
        "critical_table.render_table(<result>, 'n300', None, ())",
        id="critical-table",
    ),
    pytest.param(
        "critical",
        "json",
        CriticalModel(RESULT, "n300", width=90, withheld=("w1",)),
        "critical_table.render_json(<result>, ('w1',))",
        id="critical-json",
    ),
    pytest.param(
        "critical",
        "csv",
        CriticalModel(RESULT, "n300", width=90, withheld=("w1",)),
        "critical_table.render_csv(<result>)",
        id="critical-csv",
    ),
    pytest.param(
        "critical",
        "html",
        CriticalModel(RESULT, "n300", width=90, withheld=("w1",)),
        "html.render_critical(\"critical_data.tile_section(<result>, withheld=('w1',))\")",
        id="critical-html",
    ),
    # check
    pytest.param(
        "check",
        "table",
        CheckModel(CHECKS, width=90, unchecked=UNCHECKED),
        "check_table.render(<checks>, 90, (('a.csv', 'run table'),))",
        id="check-table-terminal",
    ),
    pytest.param(
        "check",
        "table",
        CheckModel(CHECKS),
        "check_table.render(<checks>, 1006, ())",
        id="check-table-file-width",
    ),
    pytest.param(
        "check",
        "json",
        CheckModel(CHECKS, width=90, unchecked=UNCHECKED),
        "check_table.render_json(<checks>, (('a.csv', 'run table'),))",
        id="check-json",
    ),
]


@pytest.mark.usefixtures("views")
@pytest.mark.parametrize(("label", "name", "model", "expected"), DISPATCH)
def test_dispatch(label: str, name: str, model: Any, expected: str | bytes) -> None:
    """Each format calls its own view function with exactly the model's parts it needs: the
    terminal's width when it has one, else its table's fixed width; the flags passed through;
    the abstained lines a history table ends with."""
    assert rendered(label, name, model) == expected


# --- diff: the first notes and the JSON document ------------------------------------------


@dataclass(frozen=True, repr=False)
class Side:
    """One side of a diff: only its environment is read here."""

    environment: Any


@dataclass(frozen=True, repr=False)
class FakeDiff:
    """The diff a ``DiffModel`` holds; the recorders show it as ``<diff>``."""

    before: Side = field(default_factory=lambda: Side(token("before-env")))
    after: Side = field(default_factory=lambda: Side(token("after-env")))

    def __repr__(self) -> str:
        return "<diff>"


class SharedStub:
    """``shared_work``'s answer: its ``document()`` is what ``sharedWork`` holds."""

    def __init__(self, document: dict[str, Any]) -> None:
        self._document = document

    def document(self) -> dict[str, Any]:
        return self._document

    def __repr__(self) -> str:
        return "<shared>"


@dataclass
class Notes:
    """What the comparability and shared-work analyses answer, and the calls they got."""

    setup: str | None = None
    work: str | None = None
    differ: list[str] = field(default_factory=list)
    shared: SharedStub = field(default_factory=lambda: SharedStub({"groups": 1, "of": 3}))
    calls: list[str] = field(default_factory=list)


@pytest.fixture()
def notes(monkeypatch: pytest.MonkeyPatch, views: None) -> Notes:
    """Replace the analyses a ``DiffModel`` asks for its notes and its JSON keys."""
    state = Notes()

    def fake_setup_note(*args: Any) -> str | None:
        state.calls.append(call_text("setup_note", args, {}))
        return state.setup

    def fake_differences(*args: Any) -> list[str]:
        state.calls.append(call_text("differences", args, {}))
        return state.differ

    def fake_shared_work(*args: Any) -> SharedStub:
        state.calls.append(call_text("shared_work", args, {}))
        return state.shared

    def fake_work_note(*args: Any) -> str | None:
        state.calls.append(call_text("work_note", args, {}))
        return state.work

    monkeypatch.setattr(comparability, "setup_note", fake_setup_note)
    monkeypatch.setattr(comparability, "differences", fake_differences)
    monkeypatch.setattr(shared_work, "shared_work", fake_shared_work)
    monkeypatch.setattr(shared_work, "work_note", fake_work_note)
    return state


def diff_model(**kwargs: Any) -> DiffModel:
    """A ``DiffModel`` of a ``FakeDiff``."""
    diff: Any = FakeDiff()
    return DiffModel(diff, **kwargs)


WORK = "mostly different groups: 1 of 3"


def test_setup_note_asks_with_both_environments_and_the_abstained_lines(notes: Notes) -> None:
    """The setup note is ``comparability.setup_note`` of the two environments, told what the
    gate's abstention already says."""
    notes.setup = "not the same setup"
    assert diff_model(abstained=("a1",)).setup_note == "not the same setup"
    assert notes.calls == ["setup_note(<before-env>, <after-env>, ('a1',))"]


def test_work_note_is_the_analysis_line(notes: Notes) -> None:
    """The work note is ``shared_work.work_note`` of the diff, kept when no abstained line
    ends with it (one that only starts with it does not count)."""
    notes.work = WORK
    assert diff_model().work_note == WORK
    assert diff_model(abstained=(f"{WORK}, and more",)).work_note == WORK
    assert notes.calls == ["work_note(<diff>)", "work_note(<diff>)"]


@pytest.mark.parametrize(
    "abstained", [(f"gate abstained: {WORK}",), ("coverage", f"gate abstained: {WORK}")]
)
def test_work_note_is_dropped_when_an_abstained_line_says_it(
    notes: Notes, abstained: tuple[str, ...]
) -> None:
    """A work note the gate's abstention already ends with (any of its lines) is not said
    twice."""
    notes.work = WORK
    assert diff_model(abstained=abstained).work_note is None


def test_work_note_none(notes: Notes) -> None:
    """No work note from the analysis: none, whatever the abstained lines."""
    assert diff_model(abstained=("a1",)).work_note is None


@pytest.mark.parametrize(
    ("setup", "work", "expected"),
    [
        ("S", WORK, ("S", WORK)),
        (None, WORK, (WORK,)),
        ("S", None, ("S",)),
        (None, None, ()),
    ],
)
def test_first_notes(
    notes: Notes, setup: str | None, work: str | None, expected: tuple[str, ...]
) -> None:
    """The notes said before the figures: the setup's, then the work's, each when there is
    one."""
    notes.setup, notes.work = setup, work
    assert diff_model().first_notes == expected


def test_diff_table_starts_with_abstained_lines_then_first_notes(notes: Notes) -> None:
    """``diff``'s table: each abstained line, then the setup and work notes, one a line, then
    the table of the diff, its broken lines and the terminal's width."""
    notes.setup, notes.work = "S", WORK
    model = diff_model(broken=("b1",), width=90, abstained=("a1", "a2"))
    assert rendered("diff", "table", model) == (
        f"a1\na2\nS\n{WORK}\n" + "diff_text.render_table(<diff>, ('b1',), 90)"
    )


def test_diff_table_alone(notes: Notes) -> None:
    """Nothing to say first: the table alone, with no width for a file."""
    assert rendered("diff", "table", diff_model()) == ("diff_text.render_table(<diff>, (), None)")


def test_diff_markdown_csv_html(notes: Notes) -> None:
    """Markdown gets the abstained lines and first notes, HTML the two notes apart, CSV only
    the diff."""
    notes.setup, notes.work = "S", WORK
    model = diff_model(broken=("b1",), width=90, abstained=("a1",))
    assert rendered("diff", "markdown", model) == (
        f"markdown.render_diff(<diff>, ('b1',), ('a1',), ('S', '{WORK}'))"
    )
    assert rendered("diff", "html", model) == (
        f"html.render_diff(<diff>, ('b1',), ('a1',), 'S', '{WORK}')"
    )
    assert rendered("diff", "csv", model) == "diff_text.render_csv(<diff>)"


def test_diff_json_unchanged_when_nothing_to_add(notes: Notes) -> None:
    """Same setup, shared work, a verdict: ``diff_text.render_json``'s text as it was (not
    parsed and written again), after asking the analyses about this diff."""
    model = diff_model(broken=("b1",))
    assert rendered("diff", "json", model) == (
        '{"call": "diff_text.render_json(<diff>, (\'b1\',))"}'
    )
    asked = [
        "differences(<before-env>, <after-env>)",
        "shared_work(<diff>)",
        "work_note(<diff>, <shared>)",
    ]
    assert notes.calls == asked * 2  # the registry's renderer, then one built now


DIFF_CALL = "diff_text.render_json(<diff>, ())"


@pytest.mark.parametrize(
    ("differ", "work", "abstained", "expected"),
    [
        pytest.param(
            [],
            None,
            ("coverage 40 % — below 90 %",),
            "{\n"
            f'  "call": "{DIFF_CALL}",\n'
            '  "abstained": [\n'
            '    "coverage 40 % — below 90 %"\n'
            "  ]\n"
            "}\n",
            id="abstained",
        ),
        pytest.param(
            ["device A → B"],
            None,
            (),
            f'{{\n  "call": "{DIFF_CALL}",\n  "setup_differs": [\n    "device A → B"\n  ]\n}}\n',
            id="setup",
        ),
        pytest.param(
            [],
            WORK,
            (),
            "{\n"
            f'  "call": "{DIFF_CALL}",\n'
            '  "sharedWork": {\n'
            '    "groups": 1,\n'
            '    "of": 3\n'
            "  },\n"
            f'  "workDiffers": "{WORK}"\n'
            "}\n",
            id="work",
        ),
        pytest.param(
            ["device A → B"],
            WORK,
            ("a1",),
            "{\n"
            f'  "call": "{DIFF_CALL}",\n'
            '  "setup_differs": [\n'
            '    "device A → B"\n'
            "  ],\n"
            '  "sharedWork": {\n'
            '    "groups": 1,\n'
            '    "of": 3\n'
            "  },\n"
            f'  "workDiffers": "{WORK}",\n'
            '  "abstained": [\n'
            '    "a1"\n'
            "  ]\n"
            "}\n",
            id="all",
        ),
    ],
)
def test_diff_json_adds_keys(
    notes: Notes, differ: list[str], work: str | None, abstained: tuple[str, ...], expected: str
) -> None:
    """Each key ``_with_abstained`` adds appears only when it has something to say, in order,
    and the document is written again indented by two, non-ASCII kept, one newline at the
    end."""
    notes.differ, notes.work = differ, work
    assert rendered("diff", "json", diff_model(abstained=abstained)) == expected


def test_diff_json_refuses_nan(notes: Notes) -> None:
    """The document written again is strict JSON: a NaN share is an error, not ``NaN``."""
    notes.work, notes.shared = WORK, SharedStub({"beforeShare": float("nan")})
    for render in (DIFF_RENDERERS["json"].render, renderers._diff_text("json")):
        with pytest.raises(ValueError, match="JSON compliant"):
            render(diff_model())


# --- history JSON -----------------------------------------------------------------------


@pytest.mark.usefixtures("views")
def test_history_json_adds_abstained() -> None:
    """``history --format json`` with an abstained gate: the document gains ``abstained``,
    written indented by two with non-ASCII kept and one newline at the end."""
    model = HistoryModel(HISTORY, abstained=("coverage 40 % — below 90 %", "a2"))
    assert rendered("history", "json", model) == (
        "{\n"
        '  "call": "history.render_json(<history>)",\n'
        '  "abstained": [\n'
        '    "coverage 40 % — below 90 %",\n'
        '    "a2"\n'
        "  ]\n"
        "}\n"
    )


def test_history_json_refuses_nan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The history document written again is strict JSON: a NaN is an error, not ``NaN``."""
    monkeypatch.setattr(history, "render_json", lambda h: '{"slope": NaN}')
    for render in (HISTORY_RENDERERS["json"].render, renderers._history("json")):
        with pytest.raises(ValueError, match="JSON compliant"):
            render(HistoryModel(HISTORY, abstained=("a1",)))


# --- store list -------------------------------------------------------------------------


class Record:
    """A store run record: only its ``to_json`` is read."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def to_json(self) -> dict[str, Any]:
        return self.document


def test_store_list_json() -> None:
    """``store list --format json``: the records' documents, indented by two, non-ASCII kept,
    one newline at the end."""
    runs = [Record({"id": "r1", "label": "café"}), Record({"id": "r2"})]
    assert rendered("store list", "json", runs) == (
        '[\n  {\n    "id": "r1",\n    "label": "café"\n  },\n  {\n    "id": "r2"\n  }\n]\n'
    )
    assert rendered("store list", "json", []) == "[]\n"


@pytest.mark.usefixtures("views")
@pytest.mark.parametrize(("terminal", "width"), [(None, 1007), (77, 77)])
def test_store_list_table(
    monkeypatch: pytest.MonkeyPatch, terminal: int | None, width: int
) -> None:
    """``store list``'s table goes to stdout: the terminal's width when stdout is one, else the
    store table's fixed width."""
    asked: list[Any] = []

    def fake_terminal_width(output: Any) -> int | None:
        asked.append(output)
        return terminal

    monkeypatch.setattr(outputs, "terminal_width", fake_terminal_width)
    runs = [token("run1"), token("run2")]
    assert rendered("store list", "table", runs) == (
        f"store_table.render_runs([<run1>, <run2>], {width})"
    )
    assert asked == [None, None]  # the registry's renderer, then one built now


# --- trace ------------------------------------------------------------------------------

_WORDS = [f"event{i}" for i in range(40)]
_RNG = random.Random(7)
CHROME_BYTES = " ".join(_RNG.choice(_WORDS) for _ in range(20000)).encode()
"""What the fake ``write_chrome`` writes: repetitive enough that deflate levels 5, 6 and 7
give different streams, so the stream pins the level."""
GZIP_HEADER = b"\x1f\x8b\x08\x00" + b"\x00\x00\x00\x00" + b"\x00\xff"
"""A gzip member with no name (flags 0), mtime 0, XFL 0 (neither level 1 nor 9), OS 255."""


@pytest.fixture()
def traces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replace both trace writers: Chrome JSON writes ``CHROME_BYTES`` in pieces after the
    timeline's name, Perfetto a line naming the timeline."""

    def fake_write_chrome(handle: Any, timeline: Any) -> None:
        handle.write(f"chrome {timeline!r}\n".encode())
        for start in range(0, len(CHROME_BYTES), 999):
            handle.write(CHROME_BYTES[start : start + 999])

    def fake_write_pftrace(handle: Any, timeline: Any) -> None:
        handle.write(f"pftrace {timeline!r}".encode())

    monkeypatch.setattr(chrome, "write_chrome", fake_write_chrome)
    monkeypatch.setattr(perfetto, "write_pftrace", fake_write_pftrace)


TIMELINE = token("timeline")
CHROME = b"chrome <timeline>\n" + CHROME_BYTES


def streamed(name: str) -> bytes:
    """What ``TRACE_RENDERERS[name].stream`` writes into an open file; a stream built now
    (``_trace_stream``, see ``rendered``) must write the same."""
    stream = TRACE_RENDERERS[name].stream
    assert stream is not None
    written = []
    for write in (stream, renderers._trace_stream(name)):
        handle = io.BytesIO()
        write(TIMELINE, handle)
        written.append(handle.getvalue())
    assert written[1] == written[0]
    return written[0]


@pytest.mark.usefixtures("traces")
def test_trace_pftrace_and_json() -> None:
    """``.pftrace`` is Perfetto's writer, ``.json`` Chrome's straight into the file; ``render``
    gives what the stream writes."""
    assert streamed("pftrace") == b"pftrace <timeline>"
    assert rendered("trace", "pftrace", TIMELINE) == b"pftrace <timeline>"
    assert streamed("json") == CHROME
    assert rendered("trace", "json", TIMELINE) == CHROME


def raw_deflate(data: bytes, level: int) -> bytes:
    """``data`` as one raw deflate stream (no zlib or gzip framing) at ``level``."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.usefixtures("traces")
def test_trace_json_gz_is_deterministic_level_6() -> None:
    """``.json.gz`` is Chrome's JSON through gzip at level 6 with mtime 0: the same trace
    gives the same bytes on every run and machine."""
    data = streamed("json.gz")
    assert gzip.decompress(data) == CHROME
    assert data[:10] == GZIP_HEADER
    levels = {level: raw_deflate(CHROME, level) for level in (5, 6, 7)}
    assert len(set(levels.values())) == 3  # the sample tells the levels apart
    assert data[10:-8] == levels[6]
    assert data[-8:] == struct.pack("<LL", zlib.crc32(CHROME), len(CHROME))
    assert rendered("trace", "json.gz", TIMELINE) == data


# --- check_destination ------------------------------------------------------------------


@pytest.mark.parametrize("output", [None, Path("-")], ids=["none", "dash"])
@pytest.mark.parametrize(
    "renderer",
    [RUNS_RENDERERS["parquet"], TRACE_RENDERERS["json.gz"]],
    ids=["parquet", "json.gz"],
)
def test_binary_format_needs_a_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, renderer: Renderer[Any], output: Path | None
) -> None:
    """A binary format is never written to the terminal: stdout (None or ``-``) is refused
    with the format's name."""
    monkeypatch.chdir(tmp_path)  # where a ``-`` let through would be written
    with pytest.raises(OptionError) as raised:
        check_destination(renderer, output)
    assert str(raised.value) == f"--format {renderer.name} needs -o FILE"


@pytest.mark.parametrize("output", [None, Path("-"), Path("out.txt")], ids=["none", "dash", "file"])
def test_text_format_goes_anywhere(output: Path | None) -> None:
    """A text format may go to stdout or a file: nothing is refused."""
    check_destination(RUNS_RENDERERS["table"], output)


def test_binary_format_with_a_file(tmp_path: Path) -> None:
    """A binary format with a real file (even one named like stdout's ``-`` inside a folder)
    is accepted."""
    check_destination(RUNS_RENDERERS["parquet"], tmp_path / "runs.parquet")
    check_destination(TRACE_RENDERERS["pftrace"], tmp_path / "-")


# --- write_rendered ---------------------------------------------------------------------


def text_renderer() -> Renderer[Any]:
    """A text format that renders its model's ``repr``."""
    return Renderer("text", ".txt", False, lambda model: f"text {model!r}\n")


def bytes_renderer() -> Renderer[Any]:
    """A binary format that renders its model's ``repr`` as bytes."""
    return Renderer("bin", ".bin", True, lambda model: f"bin {model!r}".encode())


def refuse_render(model: Any) -> bytes:
    """A streaming format's ``render``: ``write_rendered`` must stream instead."""
    raise AssertionError("a streaming format is written through its stream")


def stream_renderer() -> Renderer[Any]:
    """A streaming format that writes its model's ``repr`` into the file."""

    def stream(model: Any, handle: IO[bytes]) -> None:
        handle.write(f"streamed {model!r}".encode())

    return Renderer("streamed", ".bin", True, refuse_render, stream)


@pytest.mark.parametrize("output", [None, Path("-")], ids=["none", "dash"])
def test_write_text_to_stdout(capsys: pytest.CaptureFixture[str], output: Path | None) -> None:
    """Text with no file goes to stdout, and no file name is said."""
    write_rendered(text_renderer(), TIMELINE, output)
    assert capsys.readouterr().out == "text <timeline>\n"


def test_write_text_to_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Text with ``-o`` goes to the file, and the file is named on stdout."""
    path = tmp_path / "out.txt"
    write_rendered(text_renderer(), TIMELINE, path)
    assert path.read_text(encoding="utf-8") == "text <timeline>\n"
    assert capsys.readouterr().out == f"{path}\n"


def test_write_bytes_to_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Bytes go to the file, and the file is named on stdout."""
    path = tmp_path / "out.bin"
    write_rendered(bytes_renderer(), TIMELINE, path)
    assert path.read_bytes() == b"bin <timeline>"
    assert capsys.readouterr().out == f"{path}\n"


@pytest.mark.parametrize("output", [None, Path("-")], ids=["none", "dash"])
@pytest.mark.parametrize("make", [bytes_renderer, stream_renderer], ids=["bytes", "stream"])
def test_write_binary_without_a_file(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    make: Callable[[], Renderer[Any]],
    output: Path | None,
) -> None:
    """Bytes, rendered or streamed, with no file: refused before anything is written."""
    monkeypatch.chdir(tmp_path)
    renderer = make()
    with pytest.raises(OptionError) as raised:
        write_rendered(renderer, TIMELINE, output)
    assert str(raised.value) == f"--format {renderer.name} needs -o FILE"
    assert capsys.readouterr().out == ""
    assert list(tmp_path.iterdir()) == []


def test_write_stream_to_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A streaming format writes through its stream (never ``render``) into the file, opened
    for bytes, and the file is named on stdout."""
    path = tmp_path / "out.bin"
    write_rendered(stream_renderer(), TIMELINE, path)
    assert path.read_bytes() == b"streamed <timeline>"
    assert capsys.readouterr().out == f"{path}\n"


@pytest.mark.usefixtures("traces")
def test_write_trace_json_gz(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``trace -o x.json.gz`` end to end: the file holds the bytes ``render`` gives (no file
    name in the gzip header), and is named on stdout."""
    path = tmp_path / "x.json.gz"
    write_rendered(TRACE_RENDERERS["json.gz"], TIMELINE, path)
    assert path.read_bytes() == TRACE_RENDERERS["json.gz"].render(TIMELINE)
    assert gzip.decompress(path.read_bytes()) == CHROME
    assert capsys.readouterr().out == f"{path}\n"
