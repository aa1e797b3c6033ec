"""Every command-line option of tileprof, declared once, and the groups that hand them over.

A group (``read_options``, ``filter_options``, ``output_options``, …) adds its options to a
command and gives the command one object instead of one parameter per option: ``read`` (a
``tileprof.model.gather.DumpReading``: format, device overrides, cache, progress), ``filters``
(a ``Filters``), ``group_by`` (checked dimensions), ``out`` (an ``Output``: path, force,
format). A flag is declared in this module only (tests/test_architecture.py fails on a flag
declared in two modules), so one spelling has one meaning; an old spelling kept for a while is
a hidden alias that prints a one-line note on stderr (``_deprecated``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from tileprof.commands._notes import note
from tileprof.core.errors import OptionError, OutputError
from tileprof.core.outputs import is_special

if TYPE_CHECKING:
    from tileprof.analyses.filters import Filters

# The analyses and the input registry (polars) are imported where an option needs them, not
# here: a command that reads a trace starts decoding it before polars is imported
# (``core.ahead``), and every command module imports this one.

F = TypeVar("F", bound=Callable[..., Any])


def _group(
    dest: str | None, options: Sequence[click.Option], build: Callable[..., Any] | None = None
) -> Callable[[F], F]:
    """A decorator adding ``options`` to a command; with ``dest``, their values reach the
    command as one argument ``dest=build(**values)`` instead of one argument each."""
    names = [o.name for o in options if o.expose_value and o.name]

    def decorate(function: F) -> F:
        target: Any = function
        if dest is not None:

            @functools.wraps(function)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                values = {name: kwargs.pop(name) for name in names}
                kwargs[dest] = build(**values) if build is not None else values
                return function(*args, **kwargs)

            target = wrapper
        params = target.__dict__.setdefault("__click_params__", [])
        params.extend(reversed(options))  # click lists decorator-added params in reverse
        return target

    return decorate


def _note_deprecated(old: str, new: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(_ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        if value not in (None, False, ()):
            note(f"note: {old} is deprecated; use {new}")
        return value

    return callback


def _deprecated(old: str, dest: str, new: str, **attrs: Any) -> click.Option:
    """A hidden old spelling of ``new``, into its own ``dest``; it prints a one-line note."""
    return click.Option([old, dest], hidden=True, callback=_note_deprecated(old, new), **attrs)


def _either(value: Any, alias: Any) -> Any:
    """The new spelling's value, else the deprecated alias's."""
    return alias if value is None or value is False else value


def _finite(_ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise OptionError(
            f"--{(param.name or '').replace('_', '-')}: {value} is not a finite number"
        )
    return value


def _jobs(ctx: click.Context, _param: click.Parameter, value: int | None) -> int | None:
    """Set the decoding threads for this command (default: the usable cores); the setting
    ends with the command, and the API's setting is restored then."""
    from tileprof.inputs import decoding_jobs

    restore = decoding_jobs(value)
    ctx.call_on_close(restore)
    return value


# ---------------------------------------------------------------- reading tile dumps


def read_options(*, cache: bool = True, quiet: bool = True, tiles_alias: bool = True) -> Any:
    """``--format-in``, ``--clock-hz``, ``--tile-count``, ``--jobs``, and where the command has
    them ``--cache`` and ``-q``: the command receives ``read`` (a ``DumpReading``).

    ``--tiles N`` is the old spelling of ``--tile-count`` (``supersteps --tiles`` is its
    per-tile rows' old flag instead, so there it is no alias)."""
    from tileprof.inputs import DUMP_FORMATS

    options = [
        click.Option(
            ["--format-in"],
            type=click.Choice(sorted(DUMP_FORMATS)),
            default=None,
            help="Dump format, when detection from content and extension is not wanted.",
        ),
        click.Option(
            ["--clock-hz"],
            type=click.FloatRange(min=0, min_open=True),
            default=None,
            callback=_finite,
            help="Device clock; overrides the dump (default 1.5e9).",
        ),
        click.Option(
            ["--tile-count"],
            type=click.IntRange(min=1),
            default=None,
            help="Device tile count; overrides the dump (default 1472).",
        ),
        click.Option(
            ["--jobs"],
            type=click.IntRange(min=1),
            default=None,
            expose_value=False,
            callback=_jobs,
            help="Threads decoding dumps and PyTorch traces (default: the usable cores).",
        ),
    ]
    if tiles_alias:
        options.append(
            _deprecated("--tiles", "tiles_alias", "--tile-count", type=click.IntRange(min=1))
        )
    if cache:
        options.append(
            click.Option(
                ["--cache"],
                is_flag=True,
                help="Read through the automatic columnar cache (keyed by path, size, mtime, "
                "version; in $TILEPROF_CACHE_DIR or ~/.cache/tileprof).",
            )
        )
    if quiet:
        options.append(quiet_option())

    def build(**values: Any) -> Any:
        from tileprof.model.reading import DumpReading

        alias = values.pop("tiles_alias", None)
        values["tile_count"] = _either(values["tile_count"], alias)
        values["quiet"] = values.get("quiet", True)
        return DumpReading(**values)

    return _group("read", options, build)


def quiet_option() -> click.Option:
    return click.Option(
        ["-q", "--quiet"],
        is_flag=True,
        help="No progress bar, even for large inputs on a terminal.",
    )


def example_option() -> Any:
    """``--example``: one meaning in every command (epoch 1 of the bundled profile, see
    ``tileprof.model.reading.example_epoch_filters``)."""
    return _group(
        None,
        [
            click.Option(
                ["--example"],
                is_flag=True,
                help="Use the bundled reference profile: epoch 1, as seed 004 was summarized, "
                "unless --epoch N or --epoch all (convert writes every epoch).",
            )
        ],
    )


# ---------------------------------------------------------------- filters and grouping


class EpochType(click.ParamType):
    """An epoch number, or ``all`` (every epoch, the default for a dump)."""

    name = "N|all"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int) or value == ALL_EPOCHS:
            return value
        try:
            return int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is neither an epoch number nor 'all'", param, ctx)


ALL_EPOCHS = "all"
FILTER_NAMES = ("epoch", "at", "window", "kernels", "kind")


def _filter_option(name: str, help: str | None) -> click.Option:
    if name == "epoch":
        return click.Option(
            ["--epoch"],
            type=EpochType(),
            default=None,
            metavar="N|all",
            help=help or "Only samples of this epoch (all: every epoch, as without it).",
        )
    if name == "at":
        return click.Option(
            ["--at"],
            type=click.IntRange(min=0),
            default=None,
            help=help or "Only samples active at this cycle (offset ≤ CYCLE < offset+duration).",
        )
    if name == "window":
        return click.Option(
            ["--window"],
            default=None,
            metavar="START:END",
            help=help or "Only samples overlapping [START, END).",
        )
    if name == "kernels":
        return click.Option(
            ["--kernel", "kernels"],
            multiple=True,
            metavar="GLOB",
            help=help or "Only groups whose name matches GLOB; repeatable.",
        )
    return click.Option(
        ["--kind"], default=None, help=help or "Only samples of this kind (compute, exchange, …)."
    )


def filter_options(names: Iterable[str] = FILTER_NAMES, **helps: str) -> Any:
    """The filter options ``names`` (default all): the command receives ``filters``."""
    chosen = tuple(names)
    options = [_filter_option(name, helps.get(name)) for name in chosen]

    def build(**values: Any) -> Filters:
        return filters_from_options(**{name: values.get(name) for name in FILTER_NAMES})

    return _group("filters", options, build)


def filters_from_options(
    epoch: int | str | None = None,
    at: int | None = None,
    window: str | None = None,
    kernels: tuple[str, ...] | None = (),
    kind: str | None = None,
) -> Filters:
    """The ``Filters`` the filter options describe (``--epoch all`` is no epoch filter, said
    explicitly: it keeps ``--example`` from choosing epoch 1)."""
    from tileprof.analyses.filters import Filters, parse_window

    if epoch == ALL_EPOCHS:
        context = click.get_current_context(silent=True)
        if context is not None:
            context.meta[ALL_EPOCHS_ASKED] = True
    return Filters(
        epoch=None if epoch == ALL_EPOCHS else epoch,  # type: ignore[arg-type]
        at=at,
        window=None if window is None else parse_window(window),
        kernels=tuple(kernels or ()),
        kind=kind,
    )


ALL_EPOCHS_ASKED = "tileprof.all_epochs"
"""Set in the click context's ``meta`` by ``--epoch all``, so ``--example`` keeps every epoch."""


def example_filters(filters: Filters) -> Filters:
    """The reference profile's filters: epoch 1 unless ``--epoch`` chose (``all`` included)."""
    from tileprof.model.reading import example_epoch_filters

    context = click.get_current_context(silent=True)
    asked = context is not None and context.meta.get(ALL_EPOCHS_ASKED, False)
    return filters if asked else example_epoch_filters(filters, note=note)


def group_by_option(*, checked: bool = True) -> Any:
    """``--group-by``: the command receives ``group_by``, the checked dimensions (unchecked,
    as given, where ``summary --store`` adds its own ``run`` dimension)."""
    from tileprof.analyses.stats import GROUP_DIMENSIONS

    option = click.Option(
        ["--group-by", "group_by"],
        multiple=True,
        metavar="DIM[,DIM]",
        help=f"Extra grouping dimensions: {', '.join(GROUP_DIMENSIONS)}.",
    )
    return _group(
        "group_by",
        [option],
        (lambda group_by: dimensions_from_option(group_by))
        if checked
        else lambda group_by: group_by,
    )


def dimensions_from_option(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--group-by epoch,kind --group-by tile`` as a checked tuple of dimensions."""
    from tileprof.analyses.stats import check_dimensions

    return check_dimensions([d.strip() for value in values for d in value.split(",") if d.strip()])


# ---------------------------------------------------------------- outputs


@dataclasses.dataclass(frozen=True)
class Output:
    """Where and how a command writes: ``-o`` (None: stdout), ``--force``, ``--format``."""

    path: Path | None
    force: bool
    format: str = ""

    def check(self) -> None:
        """The output may be written: not an existing file without ``--force``, and not a
        page on the terminal (``--format html`` wants ``-o FILE``; ``-o -`` is stdout on
        purpose), the same refusal in every command."""
        if self.format == "html" and self.path is None:
            raise OptionError("--format html writes a page: give -o FILE (or -o - for stdout)")
        check_output(self.path, self.force)

    @property
    def to_stdout(self) -> bool:
        return self.path is None or str(self.path) == "-"


def output_options(
    formats: Sequence[str] = (),
    *,
    default: str | None = None,
    required: bool = False,
    output_help: str = "Write to this file instead of stdout.",
    force_help: str = "Overwrite an existing output file.",
) -> Any:
    """``-o/--output``, ``--force`` and (given ``formats``) ``--format``: the command receives
    ``out`` (an ``Output``)."""
    options = [
        click.Option(
            ["-o", "--output"],
            type=click.Path(path_type=Path),
            required=required,  # no default=None: click 8.3+ counts it as given
            help=output_help,
        ),
        click.Option(["--force"], is_flag=True, help=force_help),
    ]
    if formats:
        options.insert(0, format_option(formats, default))

    def build(output: Path | None, force: bool, output_format: str = "") -> Output:
        return Output(output, force, output_format)

    return _group("out", options, build)


def format_option(formats: Sequence[str], default: str | None = None) -> click.Option:
    """``--format``, one of ``formats`` (the command's renderers), default the first."""
    return click.Option(
        ["--format", "output_format"],
        type=click.Choice(list(formats)),
        default=default or formats[0],
        show_default=True,
        help="Output format.",
    )


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
    return default.resolve()  # printed once written: where the page is, whatever the folder


# ---------------------------------------------------------------- single options


def links_option(help: str = "TOML file of links to add and classifications to override.") -> Any:
    option = click.Option(
        ["--links", "links_path"], type=click.Path(path_type=Path), default=None, help=help
    )
    return _group(None, [option])


def fail_on_option(help: str) -> Any:
    option = click.Option(["--fail-on", "fail_on"], multiple=True, metavar="SENTENCE", help=help)
    return _group(None, [option])


def top_option(help: str, *, default: int | None = None, minimum: int | None = None) -> Any:
    """``--top N``: how many rows (the N largest, largest first). Without ``minimum`` the
    value is checked where it is used (click describes a range of no bounds as "x<=None")."""
    option = click.Option(
        ["--top"],
        type=click.INT if minimum is None else click.IntRange(min=minimum),
        default=default,
        metavar="N",
        show_default=default is not None,
        help=help,
    )
    return _group(None, [option])


def stacked(*decorators: Any) -> Any:
    """Several option decorators as one, applied as if stacked in this order above a
    function: a command's own related options named once as a group."""

    def apply(function: Any) -> Any:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


def option(*declarations: str, **attrs: Any) -> Any:
    """One command's own option (a flag only that command has), declared here like the rest."""
    return _group(None, [click.Option(list(declarations), **attrs)])


def rules_option() -> Any:
    """``--rules FILE``: the findings' thresholds overridden from TOML (``findings``,
    ``report``); the command receives ``rules``, the rule table to run."""
    option = click.Option(
        ["--rules", "rules_file"],
        type=click.Path(path_type=Path),
        default=None,
        metavar="FILE",
        help="TOML file overriding the findings' thresholds: [RULE] KEY = NUMBER.",
    )

    def build(rules_file: Path | None) -> Any:
        from tileprof.analyses.findings import RULES, load_overrides

        return RULES if rules_file is None else load_overrides(rules_file)

    return _group("rules", [option], build)


def min_sync_gap_option() -> Any:
    """``--min-sync-gap CYCLES``: how supersteps are cut (``supersteps``, ``critical``)."""
    return option(
        "--min-sync-gap",
        type=int,
        default=0,
        show_default=True,
        metavar="CYCLES",
        help="Merge supersteps separated by a compute-free gap shorter than this.",
    )


def what_if_options() -> Any:
    """``--what-if EDIT`` (repeatable) and ``--edits FILE`` (TOML ``[[edit]]`` tables): the
    command receives ``edits``, the parsed edits, the file's first."""
    flag = click.Option(
        ["--what-if", "what_if"],
        multiple=True,
        metavar="EDIT",
        help="Re-time with an edit: scale:GLOB=FACTOR, roofline:GLOB, balance[:K,…], "
        "no-exchange, no-launch, no-host-gaps, on-time:RANK (repeatable).",
    )
    file = click.Option(
        ["--edits", "edits_file"],
        type=click.Path(path_type=Path),
        default=None,
        metavar="FILE",
        help="TOML file of [[edit]] tables (kind, match, factor, supersteps, rank).",
    )

    def build(what_if: tuple[str, ...], edits_file: Path | None) -> Any:
        from tileprof.analyses.critical import load_edits, parse_edit

        edits = load_edits(edits_file) if edits_file is not None else []
        return [*edits, *(parse_edit(text) for text in what_if)]

    return _group("edits", [flag, file], build)


def per_tile_option() -> Any:
    """``supersteps --per-tile`` (once ``--tiles``, which elsewhere meant the tile count)."""
    return flag_with_alias("--per-tile", "per_tile", "--tiles", "Add one row per active tile.")


def share_top_option(default: int) -> Any:
    """``diff --share-top N`` (once ``--top``, which now limits diff's rows, as it does
    elsewhere)."""
    return option(
        "--share-top",
        "share_top",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help=f"How many top groups the header's explained share covers (default: the rows "
        f"--top shows, else {default}).",
    )


def flag_with_alias(new: str, dest: str, old: str, help: str) -> Any:
    """A flag ``new`` whose old spelling ``old`` still works, with a note; ``dest`` gets
    either."""
    options = [
        click.Option([new, dest], is_flag=True, help=help),
        _deprecated(old, dest + "_alias", new, is_flag=True),
    ]

    def build(**values: Any) -> bool:
        return bool(values[dest] or values[dest + "_alias"])

    return _group(dest, options, build)


# ---------------------------------------------------------------- the profile store


def store_uri_option(*, required: bool = True, help: str | None = None) -> Any:
    option = click.Option(
        ["--store", "store_uri"],
        required=required,  # no default=None: click 8.3+ counts it as given
        metavar="URI",
        help=help or "The store: a folder, or an object-store URI (s3://bucket/path).",
    )
    return _group(None, [option])


def label_option(help: str = "A run label (commit, date, model, …); repeatable.") -> Any:
    option = click.Option(["--label", "labels"], multiple=True, metavar="KEY=VALUE", help=help)
    return _group(None, [option])


def run_option(*, multiple: bool, required: bool = False, help: str) -> Any:
    option = click.Option(
        ["--run", "runs" if multiple else "run"],
        multiple=multiple,
        required=required,  # no default=None: click 8.3+ counts it as given
        metavar="GLOB" if multiple else "ID",
        help=help,
    )
    return _group(None, [option])


def example_inputs(example: bool, filters: Filters, read: Any) -> tuple[Any, Filters | None]:
    """The reference profile and its filters for ``runs --example`` and ``report --example``
    (None, None without ``--example``)."""
    if not example:
        return None, None
    from tileprof.model.reading import example_with_device

    return example_with_device(read.clock_hz, read.tile_count), example_filters(filters)


def format_only(formats: Sequence[str], default: str | None = None) -> Any:
    """``--format`` alone, for a command that always prints (``store list``)."""
    return _group(None, [format_option(formats, default)])


def _specs(
    _ctx: click.Context, _param: click.Parameter, value: tuple[Path, ...]
) -> tuple[Path, ...]:
    """Load the ``--spec`` files now, before any input is read, so every peak and roofline of
    the command uses them (checked on load: one line naming the file and key)."""
    from tileprof.core.specs import use_specs

    use_specs(value)
    return value


def spec_option() -> Any:
    """``--spec FILE`` (or folder, repeatable): the user's own device specs
    (``tileprof.core.specs``), loaded by the option itself; the command gets no argument."""
    option = click.Option(
        ["--spec", "spec"],
        multiple=True,
        type=click.Path(exists=True, path_type=Path),
        callback=_specs,
        is_eager=True,
        expose_value=False,
        metavar="SPEC",
        help="Device spec TOML file or folder of them (peaks, bandwidth, latency floor; "
        "docs/runs.md, 'Spec registry'), matched before the bundled ones. Repeatable.",
    )
    return _group(None, [option])


def checks_option() -> Any:
    """``--checks FILE``: the capture checks' thresholds overridden from TOML (``check``,
    ``findings``, ``report``, ``diff``, ``history``); the command receives ``checks``, the
    check rules (``tileprof.analyses.integrity.CheckRules``)."""
    option = click.Option(
        ["--checks", "checks_file"],
        type=click.Path(path_type=Path),
        default=None,
        metavar="FILE",
        help="TOML file overriding the capture checks' thresholds: [CHECK] KEY = VALUE "
        "(docs/metrics.md, 'Capture checks').",
    )

    def build(checks_file: Path | None) -> Any:
        from tileprof.analyses.integrity import load_checks

        return load_checks(checks_file)

    return _group("checks", [option], build)


def _engine_flags(choices: Sequence[str], default: str, help: str) -> list[click.Option]:
    """``--engine``, ``--scheduler`` and ``--workers``: where the work runs (docs/scale.md)."""
    return [
        click.Option(
            ["--engine"],
            type=click.Choice(list(choices)),
            default=default,
            show_default=True,
            help=help,
        ),
        click.Option(
            ["--scheduler"],
            default=None,
            metavar="ADDRESS",
            help="dask scheduler (tcp://host:8786); default: a local cluster.",
        ),
        click.Option(
            ["--workers"],
            type=click.IntRange(min=1),
            default=2,
            show_default=True,
            help="Worker processes of the local dask cluster.",
        ),
    ]


def store_engine_options(choices: Sequence[str]) -> Any:
    """The store's engines (``summary --store``): values reach the command one by one."""
    help = "--store: task by task in this process, or on a dask.distributed cluster."
    return _group(None, _engine_flags(choices, "polars", help))


def file_engine_options() -> Any:
    """The engines that read input files (``breakdown``, ``runs``, ``report``); the command
    receives ``engine``, a checked ``model.engines.Engine``."""
    help = "Read the files on threads here, or each on a dask.distributed worker."

    def build(engine: str, scheduler: str | None, workers: int) -> Any:
        from tileprof.model.engines import Engine

        return Engine(engine, scheduler, workers).check()

    return _group("engine", _engine_flags(("threads", "dask"), "threads", help), build)


def confidence_option() -> Any:
    """``--confidence PERCENT``: the level of ``diff``'s per-call intervals, as a fraction."""
    option = click.Option(
        ["--confidence", "confidence"],
        type=click.FloatRange(min=50.0, max=99.9),
        default=95.0,
        show_default=True,
        metavar="PERCENT",
        callback=lambda _ctx, _param, value: value / 100.0,
        help="Level of each group's interval of the change per call (bootstrap over the calls "
        "or samples); --fail-on fails only on changes significant at this level.",
    )
    return _group(None, [option])


def allow_different_option() -> Any:
    """``--allow-different``: a verdict across runs whose comparability fields differ."""
    option = click.Option(
        ["--allow-different", "allow_different"],
        is_flag=True,
        help="Give a --fail-on verdict although the runs differ in device, clock, tiles or "
        "software versions, or (diff) mostly run different groups (said on stderr); without it "
        "the gate abstains (exit 3).",
    )
    return _group(None, [option])
