"""Test-wide settings: the pytester fixture, the Hypothesis profiles (docs/testing.md), and
the scratch folders of dask and torch inside pytest's temporary folder.

``ci`` (the default) is derandomized: every run tries the same examples, so a property test
that passes once passes every time, and a failure reproduces on any machine. ``release``
(``HYPOTHESIS_PROFILE=release``) draws twenty times as many random examples, for the checks
before a release. Neither has a deadline or the too-slow health check: the suite runs on loaded
shared machines, and no test asserts on time.
"""

from __future__ import annotations

import builtins
import io
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile(
    "ci", derandomize=True, database=None, max_examples=100, print_blob=True, **_COMMON
)
settings.register_profile("release", max_examples=2000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True, scope="session")
def _tool_scratch_in_tmp_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point the scratch folders tools make in ``/tmp`` and keep for ever at pytest's temporary
    folder: dask's ``temporary-directory`` (workers' spill space and lock files, else
    ``/tmp/dask-scratch-space``) and torch's inductor cache (``/tmp/torchinductor_$USER``, made
    by ``import torch``), for this process and the ``tileprof`` subprocesses it starts."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DASK_TEMPORARY_DIRECTORY", str(tmp_path_factory.mktemp("dask-scratch")))
        patch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path_factory.mktemp("torchinductor")))
        if "dask" in sys.modules:  # already read its configuration: read it again
            sys.modules["dask"].config.refresh()
        yield


NO_CHROMIUM = "no Chromium found"
"""The start of the browser tests' skip reason (tests/test_report_browser.py)."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say at the end of the run, not only in a skip reason that ``-rs`` shows, that the
    browser tests did not run: a green run without them has not looked at any page."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report.longrepr, tuple) and NO_CHROMIUM in str(report.longrepr[2])
    ]
    if skipped:
        reason = str(skipped[0].longrepr[2]).removeprefix("Skipped: ")
        terminalreporter.write_sep("=", "browser tests skipped", yellow=True)
        terminalreporter.write_line(
            f"{len(skipped)} browser test{'s' if len(skipped) > 1 else ''} skipped: {reason}; "
            "the report, diff and history pages were not checked in Chromium"
        )


@pytest.fixture()
def opens(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[Path]]:
    """How often Python opened each file, by resolved path (the compiled decoder's own
    handle is not counted): the probe of the read-once tests."""
    counted: Counter[Path] = Counter()
    real_open, real_os_open = builtins.open, os.open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, os.PathLike)):
            counted[Path(file).resolve()] += 1
        return real_open(file, *args, **kwargs)

    def counting_os_open(file: Any, *args: Any, **kwargs: Any) -> int:
        counted[Path(file).resolve()] += 1
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(io, "open", counting_open)  # pathlib opens through io.open
    monkeypatch.setattr(os, "open", counting_os_open)
    yield counted


@pytest.fixture()
def table_lookups(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Each ``DeltaTable.is_deltatable`` call as (table URI, storage options), answered as
    deltalake answers it: how the store tests see that a store hands its storage options to
    every table it looks for (an object store refuses a lookup without its credentials)."""
    import deltalake

    asked: list[tuple[str, Any]] = []
    found = deltalake.DeltaTable.is_deltatable

    def is_deltatable(table_uri: str, storage_options: Any = None) -> bool:
        asked.append((table_uri, storage_options))
        return found(table_uri, storage_options)

    monkeypatch.setattr(deltalake.DeltaTable, "is_deltatable", is_deltatable)
    return asked


@pytest.fixture()
def parquet_scans(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The storage options of each ``pl.scan_parquet`` call, the scan done as polars does it:
    the twin of ``table_lookups`` for the store's reads of its Parquet files."""
    import polars as pl

    scanned: list[Any] = []
    scan = pl.scan_parquet

    def scan_parquet(*args: Any, storage_options: Any = None, **kwargs: Any) -> pl.LazyFrame:
        scanned.append(storage_options)
        return scan(*args, **kwargs)

    monkeypatch.setattr(pl, "scan_parquet", scan_parquet)
    return scanned


@pytest.fixture()
def figures(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The matplotlib figures the report's charts draw, by chart id, drawn (tick labels
    laid out) instead of written as SVG: what the chart tests read marks and labels from."""
    from tileprof.views.html import charts

    drawn: dict[str, Any] = {}

    def keep(figure: Any, prefix: str, *, tight: bool = True) -> str:
        figure.canvas.draw()
        drawn[prefix] = figure
        return "<svg></svg>"

    monkeypatch.setattr(charts, "to_svg", keep)
    return drawn
