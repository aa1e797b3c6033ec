"""tileprof's pytest plugin, registered through the ``pytest11`` entry point.

Installing tileprof is enough: kernel authors' suites get the fixtures without a conftest.

- ``tile_dump``: a ``TileDumpFactory`` (spec → ``Profile``, or ``.path(spec, name)`` → file).
- ``reference_aggregates(name)``: the ``GoldenFile`` ``<fixtures>/<name>/aggregates.json``,
  for ``tileprof.testing.assert_aggregates_match``.
- ``--tileprof-regen``: rewrite golden files from the current dumps instead of comparing.
- ini ``tileprof_fixtures``: the fixtures folder (relative to the ini file); by default the
  ``fixtures`` folder beside each test module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tileprof.testing.factory import TileDumpFactory
from tileprof.testing.golden import GOLDEN_NAME, GoldenFile, RegenLog, shown

_REGEN_LOG = pytest.StashKey[RegenLog]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tileprof", "tileprof golden aggregates")
    group.addoption(
        "--tileprof-regen",
        action="store_true",
        default=False,
        help="rewrite tileprof golden aggregates from the current dumps instead of comparing",
    )
    parser.addini(
        "tileprof_fixtures",
        "folder of tileprof fixtures (<name>/aggregates.json, <name>/spec.json), relative to "
        "the ini file; default: 'fixtures' beside each test module",
        default="",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("tileprof_regen"):
        config.stash[_REGEN_LOG] = RegenLog()


def pytest_report_header(config: pytest.Config) -> str | None:
    if _REGEN_LOG in config.stash:
        return "tileprof: --tileprof-regen: golden aggregates are rewritten, not compared"
    return None


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """List what regeneration did, so the author knows which files to review and commit."""
    log = config.stash.get(_REGEN_LOG, None)
    if log is None:
        return
    terminalreporter.section("tileprof golden aggregates")
    for path in log.created:
        terminalreporter.write_line(f"created: {shown(path, config.rootpath)}")
    for path in log.written:
        terminalreporter.write_line(f"rewritten: {shown(path, config.rootpath)}")
    for path, why in log.skipped:
        terminalreporter.write_line(f"not touched: {shown(path, config.rootpath)} ({why})")
    terminalreporter.write_line(
        f"{len(log.created)} created, {len(log.written)} rewritten, "
        f"{len(log.unchanged)} unchanged, {len(log.skipped)} not touched"
    )


def fixtures_dir(request: pytest.FixtureRequest) -> Path:
    """The fixtures folder for the requesting test (ini option, else beside the module)."""
    configured = str(request.config.getini("tileprof_fixtures") or "")
    if configured:
        base = request.config.inipath.parent if request.config.inipath else request.config.rootpath
        return (base / configured).resolve()
    return Path(request.path).parent / "fixtures"


@pytest.fixture
def tileprof_regen(request: pytest.FixtureRequest) -> bool:
    """True when the session runs with ``--tileprof-regen``."""
    return _REGEN_LOG in request.config.stash


@pytest.fixture
def tile_dump(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> TileDumpFactory:
    """Deterministic dumps from compact specs: ``tile_dump(spec)`` → Profile.

    ``spec`` is a mapping, a ``DumpSpec``, a spec file, or a fixture name whose
    ``<fixtures>/<name>/spec.json`` holds it. ``tile_dump.path(spec, "dump.ndjson.gz")``
    writes the dump to a temporary folder instead.
    """
    log = request.config.stash.get(_REGEN_LOG, None)

    def spec_missing(spec: Path) -> None:
        # Under --tileprof-regen the fixture's golden is not touched: say so in the summary.
        if log is not None:
            log.skip(spec.with_name(GOLDEN_NAME), f"spec {spec.name} is missing")

    return TileDumpFactory(
        fixtures_dir(request), tmp_path_factory.mktemp("tile_dump"), on_missing=spec_missing
    )


@pytest.fixture
def reference_aggregates(request: pytest.FixtureRequest) -> Callable[[str], GoldenFile]:
    """``reference_aggregates(name)``: the golden file ``<fixtures>/<name>/aggregates.json``.

    Pass it to ``assert_aggregates_match``; under ``--tileprof-regen`` that call rewrites it.
    """
    folder = fixtures_dir(request)
    log = request.config.stash.get(_REGEN_LOG, None)

    def golden(name: str) -> GoldenFile:
        return GoldenFile(folder / name / GOLDEN_NAME, log)

    return golden
