"""The store's terminal and file views over run records built here, no Delta table needed:
``views/store_table.py`` (``store list``) and ``views/store_summary.py`` (``summary --store``).
The store itself, end to end, is ``tests/test_store.py``."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest

from tests.samples import profile, sample
from tileprof.analyses.summary import Summary, summarize
from tileprof.model.store.tables import RunRecord
from tileprof.views import summary_csv, summary_json
from tileprof.views.store_summary import render_store_summary
from tileprof.views.store_table import TABLE_WIDTH, render_runs

ADDED = datetime(2026, 12, 5, 9, 30, 7, tzinfo=timezone.utc)


def _record(run: str, **changes: object) -> RunRecord:
    fields: dict[str, object] = {
        "run": run,
        "labels": {"model": "bert", "commit": "abc"},
        "source": f"/data/{run}.json",
        "sha256": "0123456789abcdef" * 4,
        "format": "json",
        "clock_hz": 1_500_000_000,
        "tile_count": 1_472,
        "sample_count": 1_234_567,
        "profile_span_cycles": 100,
        "version": "0.4",
        "added_at": ADDED,
    }
    fields.update(changes)
    return RunRecord(**fields)  # type: ignore[arg-type]


def test_no_runs_is_said() -> None:
    assert render_runs([]) == "no runs\n"


def test_a_run_row_holds_every_column_at_full_width() -> None:
    text = render_runs([_record("r1")])
    header, rule, row = text.splitlines()[:3]
    for title in ("run", "labels", "source", "samples", "device", "added (UTC)", "sha256"):
        assert title in header
    assert header.index("run") < header.index("labels") < header.index("source")
    assert header.index("samples") < header.index("device") < header.index("sha256")
    assert "commit=abc model=bert" in row  # labels sorted by key
    assert "/data/r1.json" in row
    assert "1,234,567" in row
    assert "tile device (1472 tiles @ 1.5 GHz)" in row
    assert "2026-12-05 09:30:07" in row
    assert "0123456789ab" in row and "0123456789abc" not in row
    assert set(rule) <= {"━", "╇"}


def test_the_table_exactly() -> None:
    """Left-aligned words, right-aligned counts, no padding at the edges, a run without
    labels shown as a dash."""
    runs = [_record("r1"), _record("r2-long", labels={}, sample_count=5, source="/x.json")]
    lines = render_runs(runs).splitlines()
    assert lines[0] == (
        "run     ┃ labels                ┃ source        ┃   samples ┃ device"
        "                             ┃ added (UTC)         ┃ sha256      "
    )
    assert lines[2] == (
        "r1      │ commit=abc model=bert │ /data/r1.json │ 1,234,567 │ tile device (1472 tiles"
        " @ 1.5 GHz) │ 2026-12-05 09:30:07 │ 0123456789ab"
    )
    assert lines[3] == (
        "r2-long │ —                     │ /x.json       │         5 │ tile device (1472 tiles"
        " @ 1.5 GHz) │ 2026-12-05 09:30:07 │ 0123456789ab"
    )
    assert len(lines) == 4


def test_the_sample_count_is_right_aligned() -> None:
    text = render_runs([_record("r1", sample_count=5), _record("r2", sample_count=12_345)])
    rows = text.splitlines()[2:4]
    assert rows[0].index("5 ") == rows[1].index("12,345 ") + len("12,34")


def test_a_run_without_labels_has_an_empty_cell() -> None:
    text = render_runs([_record("r1", labels={})])
    assert "=" not in text.splitlines()[2]


def test_a_narrow_terminal_drops_the_digest_then_the_device_and_keeps_the_run() -> None:
    runs = [_record("run-with-a-name")]
    assert "sha256" in render_runs(runs, TABLE_WIDTH)
    narrow = render_runs(runs, 60)
    header = narrow.splitlines()[0]
    assert "sha256" not in header and "device" not in header and "run" in header
    assert "run-with-a-name" in narrow
    assert "--format json" in narrow  # the line that says where the dropped columns are
    assert max(len(line) for line in narrow.splitlines()) <= 60


@pytest.fixture
def summaries(tmp_path: Path) -> list[Summary]:
    made = []
    for index, duration in enumerate((10, 30)):
        folder = tmp_path / str(index)
        folder.mkdir()
        loaded = profile(folder, [sample(0, 0, duration, "gemm", useful=3)])
        made.append(summarize(loaded.samples, loaded.metadata, clock_hz=1_000, tile_count=2))
    return made


@pytest.mark.parametrize("output_format", ["json", "csv"])
def test_one_run_renders_as_summary_renders_its_dump(
    summaries: list[Summary], output_format: str
) -> None:
    record = _record("r1", clock_hz=1_000, tile_count=2)
    text = render_store_summary([(record, summaries[0])], output_format, by_run=False)
    renderer = summary_json if output_format == "json" else summary_csv
    assert text == renderer.render(summaries[0])


def test_one_run_as_a_table_names_its_device(summaries: list[Summary]) -> None:
    record = _record("r1", clock_hz=1_000, tile_count=2)
    text = render_store_summary([(record, summaries[0])], "table", by_run=False, width=120)
    assert text.splitlines()[0] == "device   tile device (2 tiles @ 1 kHz)"
    assert "gemm" in text


def test_several_runs_as_json_are_one_document_with_each_runs_labels(
    summaries: list[Summary],
) -> None:
    records = [_record("r1"), _record("r2", labels={"x": "é"})]
    text = render_store_summary(list(zip(records, summaries, strict=True)), "json", by_run=False)
    document = json.loads(text)
    assert [run["run"] for run in document["runs"]] == ["r1", "r2"]
    assert document["runs"][1]["labels"] == {"x": "é"}
    assert document["runs"][0]["groups"] == summaries[0].to_document()["groups"]
    assert '"é"' in text and text.endswith("}\n") and text.startswith('{\n  "runs"')


def test_one_run_by_run_is_still_the_runs_document(summaries: list[Summary]) -> None:
    text = render_store_summary([(_record("r1"), summaries[0])], "json", by_run=True)
    assert list(json.loads(text)) == ["runs"]


def test_several_runs_as_csv_lead_with_the_run(summaries: list[Summary]) -> None:
    records = [_record("r1"), _record("r2")]
    text = render_store_summary(list(zip(records, summaries, strict=True)), "csv", by_run=True)
    frame = pl.read_csv(text.encode())
    assert frame.columns[0] == "run"
    assert frame["run"].to_list() == ["r1", "r2"]
    expected = pl.concat([s.groups for s in summaries])
    for column in expected.columns:
        assert frame[column].to_list() == expected[column].to_list()


def test_several_runs_as_tables_are_headed_by_their_runs(summaries: list[Summary]) -> None:
    records = [_record("r1", clock_hz=1_000, tile_count=2), _record("r2")]
    text = render_store_summary(
        list(zip(records, summaries, strict=True)), "table", by_run=False, width=100
    )
    assert text.startswith("run r1\n")
    assert "\nrun r2\n" in text
    assert "2 tiles" in text and "1472 tiles" in text


def test_the_terminal_width_reaches_every_table(summaries: list[Summary]) -> None:
    """At 50 columns the summary table drops columns a file's fixed width keeps."""
    record = _record("r1", clock_hz=1_000, tile_count=2)
    one = [(record, summaries[0])]
    narrow = render_store_summary(one, "table", by_run=False, width=50)
    wide = render_store_summary(one, "table", by_run=False)
    assert narrow != wide
    assert max(len(line) for line in narrow.splitlines()) <= 50
    several = list(zip([record, _record("r2")], summaries, strict=True))
    narrow_runs = render_store_summary(several, "table", by_run=True, width=50)
    assert narrow_runs != render_store_summary(several, "table", by_run=True)
    assert max(len(line) for line in narrow_runs.splitlines()) <= 50


def test_several_runs_as_json_write_a_figure_json_cannot_hold_as_null_with_a_note(
    summaries: list[Summary],
) -> None:
    broken = dataclasses.replace(
        summaries[1], groups=summaries[1].groups.with_columns(usefulUtilization=float("nan"))
    )
    records = [_record("r1"), _record("r2")]
    text = render_store_summary(
        list(zip(records, [summaries[0], broken], strict=True)), "json", by_run=True
    )
    assert "NaN" not in text
    document = json.loads(text)
    assert document["runs"][1]["groups"][0]["usefulUtilization"] is None
    assert document["notes"] == [
        "$.runs[1].groups[0].usefulUtilization is nan (not finite); written as null"
    ]
