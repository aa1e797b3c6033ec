"""Options and helpers shared by the subcommands: dump input, filters, grouping, outputs."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from tileprof.analyses.filters import Filters, parse_window
from tileprof.analyses.stats import GROUP_DIMENSIONS, check_dimensions
from tileprof.core.errors import OptionError, OutputError
from tileprof.core.outputs import is_special
from tileprof.inputs import DUMP_FORMATS

if TYPE_CHECKING:
    from tileprof.model.profile import Profile

F = TypeVar("F", bound=Callable[..., Any])


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


def _finite(_ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise OptionError(
            f"--{(param.name or '').replace('_', '-')}: {value} is not a finite number"
        )
    return value


def _jobs(ctx: click.Context, _param: click.Parameter, value: int | None) -> int | None:
    """Set the decoding threads for this command (default: the usable cores); the API's
    setting is restored when the command ends."""
    from tileprof.inputs import threads

    previous = threads.setting()
    threads.configure(value)
    ctx.call_on_close(lambda: threads.configure(previous))
    return value


def device_input_options(tile_count_flag: str = "--tiles") -> Callable[[F], F]:
    """``--format-in``, ``--clock-hz`` and the tile-count override, named ``tile_count_flag``
    (``supersteps`` keeps ``--tiles`` for its per-tile rows and takes ``--tile-count``)."""
    return _stack(
        click.option(
            "--format-in",
            type=click.Choice(sorted(DUMP_FORMATS)),
            default=None,
            help="Dump format, when detection from content and extension is not wanted.",
        ),
        click.option(
            "--clock-hz",
            type=click.FloatRange(min=0, min_open=True),
            default=None,
            callback=_finite,
            help="Device clock; overrides the dump (default 1.5e9).",
        ),
        click.option(
            tile_count_flag,
            "tile_count",
            type=click.IntRange(min=1),
            default=None,
            help="Device tile count; overrides the dump (default 1472).",
        ),
        click.option(
            "--jobs",
            type=click.IntRange(min=1),
            default=None,
            expose_value=False,
            callback=_jobs,
            help="Threads decoding JSON/NDJSON dumps (default: the usable cores).",
        ),
    )


dump_input_options = device_input_options()

filter_options = _stack(
    click.option("--epoch", type=int, default=None, help="Only samples of this epoch."),
    click.option(
        "--at",
        type=click.IntRange(min=0),
        default=None,
        help="Only samples active at this cycle (offset ≤ CYCLE < offset+duration).",
    ),
    click.option(
        "--window", default=None, metavar="START:END", help="Only samples overlapping [START, END)."
    ),
    click.option(
        "--kernel",
        "kernels",
        multiple=True,
        metavar="GLOB",
        help="Only groups whose name matches GLOB; repeatable.",
    ),
    click.option("--kind", default=None, help="Only samples of this kind (compute, exchange, …)."),
)

group_by_option = click.option(
    "--group-by",
    "group_by",
    multiple=True,
    metavar="DIM[,DIM]",
    help=f"Extra grouping dimensions: {', '.join(GROUP_DIMENSIONS)}.",
)

speed_options = _stack(
    click.option(
        "--cache",
        is_flag=True,
        help="Read through the automatic columnar cache (keyed by path, size, mtime, version; "
        "in $TILEPROF_CACHE_DIR or ~/.cache/tileprof).",
    ),
    click.option(
        "-q", "--quiet", is_flag=True, help="No progress bar, even for large inputs on a terminal."
    ),
)

output_options = _stack(
    click.option(
        "-o",
        "--output",
        type=click.Path(path_type=Path),
        default=None,
        help="Write to this file instead of stdout.",
    ),
    click.option("--force", is_flag=True, help="Overwrite an existing output file."),
)


def filters_from_options(
    epoch: int | None,
    at: int | None,
    window: str | None,
    kernels: tuple[str, ...],
    kind: str | None,
) -> Filters:
    """The ``Filters`` that the filter options describe."""
    return Filters(
        epoch=epoch,
        at=at,
        window=None if window is None else parse_window(window),
        kernels=tuple(kernels),
        kind=kind,
    )


def dimensions_from_option(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--group-by epoch,kind --group-by tile`` as a checked tuple of dimensions."""
    return check_dimensions([d.strip() for value in values for d in value.split(",") if d.strip()])


def load_profile(
    path: Path | None,
    example: bool,
    format_in: str | None,
    clock_hz: float | None,
    tile_count: int | None,
    *,
    cache: bool = False,
    quiet: bool = True,
) -> Profile:
    """The dump named on the command line, or the bundled reference profile with ``--example``.

    ``cache`` reads through the automatic columnar cache (``tileprof.model.cache``); ``quiet=False``
    allows the progress bar for large inputs.
    """
    if example and path is not None:
        raise OptionError("give a DUMP or --example, not both")
    if path is None and not example:
        raise OptionError("give a DUMP file (or --example for the bundled reference profile)")
    if path is not None:
        from tileprof.model.profile import load

        if cache:
            from tileprof.model.cache import load_cached

            return load_cached(
                path, format=format_in, clock_hz=clock_hz, tile_count=tile_count, quiet=quiet
            )
        return load(path, format=format_in, clock_hz=clock_hz, tile_count=tile_count, quiet=quiet)
    if cache or format_in is not None:
        raise OptionError("--example takes no --cache or --format-in: it is built in memory")
    from tileprof.model.examples import example_profile

    profile = example_profile()
    if clock_hz is None and tile_count is None:
        return profile
    # The same checks as a dump read with these options: positive device, tiles in range.
    from tileprof.inputs._common import DeviceHeader, resolve_device, validate_samples
    from tileprof.inputs.tile.json_dump import sample_place

    source = Path(profile.source or "example")
    header = DeviceHeader(profile.clock_hz, profile.tile_count)
    clock, tiles = resolve_device(source, header, clock_hz, tile_count)
    validate_samples(profile.samples, source, tiles, sample_place)
    return dataclasses.replace(profile, clock_hz=clock, tile_count=tiles)


def example_filters(filters: Filters) -> Filters:
    """Filters for the reference profile in ``runs`` and ``report``: epoch 1, as seed 004 was
    summarized, unless ``--epoch`` chose another."""
    from tileprof.model.examples import EXAMPLE_EPOCH

    if filters.epoch is not None:
        return filters
    # said on stderr, so that `summary --example` (every epoch) and these never silently differ
    click.echo(
        f"tileprof: --example: epoch {EXAMPLE_EPOCH} of the reference profile, as seed 004 was "
        "summarized (--epoch N for another)",
        err=True,
    )
    return dataclasses.replace(filters, epoch=EXAMPLE_EPOCH)


def check_output(path: Path | None, force: bool) -> None:
    """Refuse to replace an existing file unless ``--force`` was given, or a folder at all.

    A device or FIFO (``/dev/stdout``, ``/dev/null``) is written into, not replaced, so it needs
    no ``--force`` (``tileprof.core.outputs.atomic_writer``)."""
    if path is None or str(path) == "-":
        return
    if path.is_dir():
        raise OutputError(f"{path} is a folder, not a file")
    if path.exists() and not force and not is_special(path):
        raise OutputError(f"{path} already exists (use --force to overwrite it)")


def example_inputs(
    example: bool, filters: Filters, clock_hz: float | None, tile_count: int | None
) -> tuple[Profile | None, Filters | None]:
    """The reference profile and its filters for ``runs --example`` and ``report --example``
    (None, None without ``--example``)."""
    if not example:
        return None, None
    return load_profile(None, True, None, clock_hz, tile_count), example_filters(filters)


GENERATOR_MARK = b'<meta name="generator" content="tileprof report">'
"""The mark a page written by ``tileprof report`` carries near its start."""


def is_tileprof_report(path: Path) -> bool:
    """Whether ``path`` starts like a page ``tileprof report`` wrote."""
    try:
        with open(path, "rb") as handle:
            return GENERATOR_MARK in handle.read(1024)
    except OSError:
        return False


def check_report_output(output: Path | None, default: Path, force: bool) -> Path:
    """Where ``report`` writes, checked before any input is read.

    An explicit ``-o FILE`` that exists is only replaced with ``--force``, as for every
    command. The default output is regenerated often, so it is replaced freely when it is a
    tileprof report; any other file of that name is kept unless ``--force`` is given.
    """
    if output is not None:
        check_output(output, force)
        return output
    if default.exists() and not force and not is_tileprof_report(default):
        raise OutputError(
            f"{default} already exists and is not a tileprof report (use -o or --force)"
        )
    return default
