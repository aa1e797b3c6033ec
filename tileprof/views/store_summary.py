"""``summary --store``'s outputs: one stored run as ``summary`` prints a dump, several as one
document, CSV or table per run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tileprof.views.strict_json import dumps


def render_store_summary(
    results: Sequence[tuple[Any, Any]],
    output_format: str,
    *,
    by_run: bool,
    width: int | None = None,
) -> str:
    """One run and no ``--group-by run``: exactly what ``summary`` prints for its source dump.
    Otherwise one summary per run: JSON ``{"runs": [{"run", "labels", …document}]}``, CSV rows
    with a leading ``run`` column, one table per run. ``width``: the terminal's, when the
    tables go to one (None: the fixed width of files)."""
    if len(results) == 1 and not by_run:
        return _render_one(results[0][1], results[0][0], output_format, width)
    return _render_runs(results, output_format, width)


def _render_one(summary: Any, record: Any, output_format: str, width: int | None = None) -> str:
    """As ``summary`` renders a dump's summary (the same renderer, the same device line)."""
    from tileprof.model.store.tables import device_name
    from tileprof.views.renderers import SUMMARY_RENDERERS, SummaryModel

    model = SummaryModel(summary, device_name(record), width=width)
    text = SUMMARY_RENDERERS[output_format].render(model)
    assert isinstance(text, str)  # summary's formats are all text
    return text


def _render_runs(
    results: Sequence[tuple[Any, Any]], output_format: str, width: int | None = None
) -> str:
    import polars as pl

    if output_format == "json":
        runs = [
            {"run": record.run, "labels": record.labels, **summary.to_document()}
            for record, summary in results
        ]
        return dumps({"runs": runs}, indent=2, ensure_ascii=False) + "\n"
    if output_format == "csv":
        frames = [
            summary.groups.select(pl.lit(record.run).alias("run"), pl.all())
            for record, summary in results
        ]
        return str(pl.concat(frames, how="vertical_relaxed").write_csv(float_precision=None))
    return "\n".join(
        f"run {record.run}\n{_render_one(summary, record, 'table', width)}"
        for record, summary in results
    )
