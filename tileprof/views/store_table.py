"""``store list`` in the terminal: one row per run (rich)."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.table import Table

from tileprof.model.store.tables import RunRecord, device_name
from tileprof.views.fit import plain_console

TABLE_WIDTH = 200


def render_runs(runs: Sequence[RunRecord], width: int = TABLE_WIDTH) -> str:
    """Run id, labels, source, samples, device, added time, sha256 prefix."""
    if not runs:
        return "no runs\n"
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    for title in ("run", "labels", "source", "samples", "device", "added (UTC)", "sha256"):
        table.add_column(title, justify="right" if title == "samples" else "left")
    for run in runs:
        labels = " ".join(f"{k}={v}" for k, v in sorted(run.labels.items())) or "—"
        table.add_row(
            run.run,
            labels,
            run.source,
            f"{run.sample_count:,}",
            device_name(run),
            run.added_at.strftime("%Y-%m-%d %H:%M:%S"),
            run.sha256[:12],
        )
    buffer = io.StringIO()
    plain_console(buffer, width).print(table)
    return buffer.getvalue()
