"""``tileprof breakdown``: where each GPU's time goes, per device and per profiler step
(definitions: docs/metrics.md, "Time breakdown")."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.commands._options import Output, file_engine_options, option, output_options
from tileprof.core.outputs import terminal_width
from tileprof.views.renderers import BREAKDOWN_RENDERERS, BreakdownModel, write_rendered

if TYPE_CHECKING:
    from tileprof.model.engines import Engine


@click.command(
    "breakdown", short_help="GPU time per device and step: busy, idle causes, launches, ranks."
)
@click.argument("traces", nargs=-1, required=True, type=click.Path(path_type=Path))
@option(
    "--kernel-wait-us",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    metavar="US",
    help="Idle gaps shorter than this are kernel wait (HTA's consecutive_kernel_delay, "
    "as HTA applies it: to gaps in µs).",
)
@output_options(list(BREAKDOWN_RENDERERS), default="table")
@file_engine_options()
def command(traces: tuple[Path, ...], kernel_wait_us: float, out: Output, engine: Engine) -> None:
    """Break each GPU's time in PyTorch traces or nsys SQLite exports down as TraceLens does
    (computation, exposed communication and memcpy, busy, idle), split idle by cause as HTA
    does, and give launch figures; traces whose distributedInfo names ranks of one job also
    get their collectives matched across ranks (bandwidth, skew, straggler). A Tenstorrent ops
    report gives each chip's device-busy time against its op-to-op gaps. The traces of a
    job's ranks are read on threads, or each on a dask worker (``--engine dask``)."""
    out.check()
    if engine.name == "threads":  # on dask, each worker reads its own
        _decode_ahead(traces[0])
    from tileprof.model.breakdown import trace_breakdown

    found = trace_breakdown(traces, kernel_wait_us, engine)
    model = BreakdownModel(found.breakdown, found.job, terminal_width(out.path))
    write_rendered(BREAKDOWN_RENDERERS[out.format], model, out.path)


def _decode_ahead(trace: Path) -> None:
    """Start decoding the first trace as its reader will ask (``core.ahead``: the events a
    GPU timeline reads, on the usable cores) before polars, numpy and the analyses are
    imported: the decoder needs none of them, and the imports leave a core idle."""
    from tileprof.core.ahead import start_kineto_decode
    from tileprof.core.cpus import usable_cores

    start_kineto_decode(str(trace), usable_cores(), timeline=True)
