"""``tileprof history``: per-run trends of stored group statistics, and their regressions."""

from __future__ import annotations

from pathlib import Path

import click

from tileprof.commands._options import check_output, output_options
from tileprof.commands.store import label_option, store_option
from tileprof.core.errors import OptionError, TileprofError
from tileprof.core.outputs import write_text


class ThresholdFailed(TileprofError):
    """A ``--fail-on`` threshold broken by the newest run; the report is still written."""

    exit_code = 1


@click.command("history", short_help="Trend of figures per run and group from a store.")
@store_option
@click.option("--kernel", "kernels", multiple=True, metavar="GLOB", help="Only these groups.")
@click.option("--field", "fields", multiple=True, metavar="F", help="A group statistic to trend.")
@label_option
@click.option(
    "--order",
    default="time",
    show_default=True,
    metavar="time|LABEL",
    help="Run order: the time each was added, or a label's value (e.g. date).",
)
@click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    metavar="SENTENCE",
    help="e.g. 'usefulUtilization of gemm_* may not drop by more than 2%' (newest run vs band).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json", "csv", "html"]),
    default="table",
    show_default=True,
)
@output_options
def command(
    store_uri: str,
    kernels: tuple[str, ...],
    fields: tuple[str, ...],
    labels: tuple[str, ...],
    order: str,
    fail_on: tuple[str, ...],
    output_format: str,
    output: Path | None,
    force: bool,
) -> None:
    """Trend FIELDs per run and group from the stored statistics; flag runs outside their band."""
    from tileprof.analyses.thresholds import ThresholdError, parse_thresholds
    from tileprof.model.store.history import build_history
    from tileprof.model.store.tables import open_store, parse_labels, read_runs, select_runs
    from tileprof.views import history as views

    check_output(output, force)
    try:
        thresholds = parse_thresholds(fail_on)
    except (ThresholdError, ValueError) as exc:
        raise OptionError(f"--fail-on: {exc}") from None
    generated_at = None
    if output_format == "html":
        from tileprof.views.html.data import generation_time

        generated_at = generation_time()  # first: a malformed SOURCE_DATE_EPOCH fails early
    store = open_store(store_uri)
    runs = select_runs(read_runs(store), labels=parse_labels(labels))
    history = build_history(
        store, runs, fields=fields, kernels=kernels, order=order, thresholds=thresholds
    )
    if output_format == "json":
        text = views.render_json(history)
    elif output_format == "csv":
        text = views.render_csv(history)
    elif output_format == "html":
        from tileprof.views import history_html

        assert generated_at is not None
        text = history_html.render(history, generated_at)
    else:
        text = views.render_table(history)
    write_text(output, text)
    if history.failures:
        first = history.failures[0]
        raise ThresholdFailed(
            f"{len(history.failures)} --fail-on threshold(s) broken by run {first.run}, "
            f"e.g. {first.threshold} ({first.group})"
        )
