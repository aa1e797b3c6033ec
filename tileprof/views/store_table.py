"""``store list`` in the terminal: one row per run (rich), fitted to the terminal's width."""

from __future__ import annotations

import io
from collections.abc import Sequence
from functools import partial

from rich.table import Table

from tileprof.core.text import DISPLAY_NAME_LIMIT
from tileprof.model.store.tables import RunRecord, device_name
from tileprof.views.fit import Fit, Name, fit_table, plain_console, print_fitted, resolve_names

TABLE_WIDTH = 200

TITLES = ("run", "labels", "source", "samples", "device", "added (UTC)", "sha256")
STORE_FIT = Fit(
    titles=TITLES,
    drop_first=("sha256", "device", "samples", "added (UTC)", "source", "labels"),
    full_width=TABLE_WIDTH,
    full_limit=DISPLAY_NAME_LIMIT,
    keep=("run",),
    see_all="--format json",
)
"""The run id (what ``--run`` and ``history`` name a run by) is never dropped; the digest and
the device go first."""


def _cells(run: RunRecord) -> dict[str, object]:
    labels = " ".join(f"{k}={v}" for k, v in sorted(run.labels.items())) or None
    return {
        "run": Name(run.run),
        "labels": Name(labels),
        "source": Name(run.source),
        "samples": f"{run.sample_count:,}",
        "device": device_name(run),
        "added (UTC)": run.added_at.strftime("%Y-%m-%d %H:%M:%S"),
        "sha256": run.sha256[:12],
    }


def _table(runs: Sequence[RunRecord], shown: Sequence[str], name_limit: int) -> Table:
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    kept = [t for t in TITLES if t in shown]
    for title in kept:
        table.add_column(title, justify="right" if title == "samples" else "left")
    rows = [[_cells(run)[t] for t in kept] for run in runs]
    for row in resolve_names(rows, name_limit):
        table.add_row(*row)  # type: ignore[arg-type]
    return table


def render_runs(runs: Sequence[RunRecord], width: int = TABLE_WIDTH) -> str:
    """Run id, labels, source, samples, device, added time, sha256 prefix; on a narrow
    terminal names lose their middle, then columns go (``STORE_FIT``)."""
    if not runs:
        return "no runs\n"
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    print_fitted(console, fit_table(partial(_table, runs), STORE_FIT, console, width), STORE_FIT)
    return buffer.getvalue()
