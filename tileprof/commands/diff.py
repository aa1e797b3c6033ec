"""``tileprof diff``: what changed between two profiles, as a report and as a CI gate."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.analyses.diff import COUNTED, DEFAULT_TOP, SIGNIFICANT_FIELDS, Diff
from tileprof.analyses.filters import Filters
from tileprof.analyses.significance import CHANGED, MIN_CALLS, TOO_FEW
from tileprof.analyses.thresholds import Breach, ThresholdError, evaluate, parse_thresholds
from tileprof.commands._notes import say
from tileprof.commands._options import (
    Output,
    allow_different_option,
    checks_option,
    confidence_option,
    fail_on_option,
    filter_options,
    group_by_option,
    option,
    output_options,
    read_options,
    share_top_option,
    spec_option,
    stacked,
    top_option,
)
from tileprof.core import numbers
from tileprof.core.errors import EXIT_ABSTAINED, OptionError
from tileprof.core.outputs import terminal_width
from tileprof.model.diff_inputs import ReadOptions, compare_files
from tileprof.views.renderers import DIFF_RENDERERS, DiffModel, write_rendered

if TYPE_CHECKING:
    from tileprof.analyses.integrity import CheckRules
    from tileprof.model.reading import DumpReading

EXIT_BROKEN = 1
"""A --fail-on threshold was broken (2 stays for bad input and options)."""


UNDECIDED_WHY = f"under {MIN_CALLS} calls or samples on a side, or no positive time per call"
"""Why a group's per-call verdict is ``not enough calls`` (``significance.verdict``)."""


@dataclass(frozen=True)
class GateOutcome:
    """What ``--fail-on`` found: the broken lines (exit 1), and the breaches it could not
    judge (too few calls or samples a side to tell the change from noise: exit 3 when none
    stands)."""

    broken: list[str]
    undecided: list[Breach]

    def abstention(self) -> list[str]:
        """The one abstention line when no breach stands but some could not be judged."""
        if self.broken or not self.undecided:
            return []
        largest = max(self.undecided, key=lambda b: abs(b.change or 0.0))
        return [
            f"abstained, no verdict: {len(self.undecided):,} "
            f"{'breach is' if len(self.undecided) == 1 else 'breaches are'} of groups "
            f"with {TOO_FEW} ({UNDECIDED_WHY}) to tell a change from noise (capture more "
            f"steps); the largest: {largest}"
        ]


def threshold_breaches(
    diff: Diff, sentences: tuple[str, ...]
) -> tuple[list[Breach], dict[str, tuple[int, int]]]:
    """Every breach of the ``--fail-on`` sentences, with the groups whose before totals were
    scaled to equal calls (``Diff.gate_values``). Read before the gate decides whether to
    judge, so that a bad sentence is an OptionError (exit 2), abstained or not."""
    before, after, scaled = diff.gate_values()
    try:
        return evaluate(sentences, before, after, fields=diff.fields), scaled
    except ThresholdError as exc:
        raise OptionError(f"--fail-on: {exc}") from None


def broken_thresholds(
    diff: Diff, breaches: list[Breach], scaled: dict[str, tuple[int, int]]
) -> GateOutcome:
    """One line per broken ``--fail-on`` threshold (``threshold_breaches``), and the breaches
    too few calls leave undecided. A GPU group whose calls differ has its total_us judged at
    equal calls (``scaled``), and its line says so."""
    unit = "calls" if diff.count_field == "calls" else "samples"
    totals = COUNTED.get(diff.count_field or "", ())
    breaches, within, undecided = significant_breaches(diff, breaches)
    for line in within:
        say(f"tileprof: note: {line}", err=True)
    lines = []
    for b in breaches:
        counts = scaled.get(b.group) if b.field in totals else None
        note = (
            ""
            if counts is None
            else (
                f" (at equal {unit}: before's {b.field} scaled from its {counts[0]:,} {unit} to "
                f"the after side's {counts[1]:,})"
            )
        )
        lines.append(f"broken: {b}{note}")
    return GateOutcome(lines, undecided)


def significant_breaches(
    diff: Diff, breaches: list[Breach]
) -> tuple[list[Breach], list[str], list[Breach]]:
    """The breaches that stand: a breach of a per-call figure (``SIGNIFICANT_FIELDS``) of a
    group with a per-call verdict stands only when the verdict is changed; the others, one
    line each saying why they do not count; and of those, the ones whose group has too few
    calls to judge (not a pass: the gate abstains on them when nothing else breaks)."""
    verdicts = diff.significance()
    fields = SIGNIFICANT_FIELDS.get(diff.count_field or "", ())
    level = f"{(diff.confidence or 0) * 100:g}%"
    kept, within, undecided = [], [], []
    for b in breaches:
        found = verdicts.get(b.group) if b.field in fields else None
        if found is None or found[0] == CHANGED:
            kept.append(b)
            continue
        verdict, _, low, high = found
        if verdict == TOO_FEW:
            undecided.append(b)
            within.append(f"not judged, {TOO_FEW} ({UNDECIDED_WHY}): {b}")
            continue
        shown = (
            f"{level} interval {numbers.percent(low, signed=True)} to "
            f"{numbers.percent(high, signed=True)}"
        )
        within.append(f"not a breach, {verdict} per call ({shown}): {b}")
    return kept, within, undecided


pairing_options = stacked(
    option(
        "--match",
        "match",
        multiple=True,
        metavar="OLD=NEW",
        help="Pair a renamed group: OLD names the before side, NEW the after side (globs, "
        "wildcards carried over in order); repeatable.",
    ),
    option(
        "--normalize",
        default=None,
        metavar="REGEX",
        help="Strip what REGEX matches from every name before pairing (e.g. '_c\\d+(_r\\d+)*$').",
    ),
)
"""How groups of the two sides pair: renamed groups, and names stripped of a pattern."""
source_options = stacked(
    option(
        "--per-op",
        is_flag=True,
        help="GPU sources: compare op rows (PyTorch traces, as `runs --ops`) or kernels grouped "
        "by launching op (other sources) instead of kernels.",
    ),
    spec_option(),
    option(
        "--breakdown",
        is_flag=True,
        help="PyTorch traces or nsys exports (or `breakdown --format json` documents): compare "
        "their GPU time breakdowns figure by figure, per device and window, instead of kernels.",
    ),
)
"""What a GPU side compares: kernels, op rows or GPU time breakdowns, and the specs."""


@click.command("diff", short_help="Compare two dumps or summaries, group by group.")
@click.argument("before", type=click.Path(path_type=Path))
@click.argument("after", type=click.Path(path_type=Path))
@output_options(list(DIFF_RENDERERS), default="table")
@pairing_options
@fail_on_option(
    "Exit 1 when broken, e.g. 'phaseCycles of * may not rise by more than 5%'; repeatable. "
    "Exit 3, no verdict, when the two captures' coverage differs (tileprof check), or "
    "when every breach is of a group with too few calls to judge."
)
@confidence_option()
@allow_different_option()
@checks_option()
@source_options
@share_top_option(DEFAULT_TOP)
@top_option(
    "Show only the N largest changes (in every format; --fail-on still checks every group); "
    "the header's share then covers them, unless --share-top says otherwise.",
    minimum=1,
)
@read_options()
@filter_options()
@group_by_option()
@click.pass_context
def command(
    ctx: click.Context,
    before: Path,
    after: Path,
    out: Output,
    match: tuple[str, ...],
    normalize: str | None,
    fail_on: tuple[str, ...],
    confidence: float,
    allow_different: bool,
    checks: CheckRules,
    per_op: bool,
    share_top: int | None,
    top: int | None,
    breakdown: bool,
    read: DumpReading,
    filters: Filters,
    group_by: tuple[str, ...],
) -> None:
    """Compare BEFORE with AFTER: every group added, removed, changed or unchanged.

    Both are tile dumps (or caches, or `summary --format json` documents), or both GPU run
    sources (traces, nsys CSV, run tables). The same filters apply to both sides. Rows are
    sorted by the change in phase cycles (total µs for GPU sources), largest first.
    """
    out.check()
    if breakdown:
        diff_breakdowns(before, after, out)
        return
    options = ReadOptions(filters=filters, group_by=group_by, per_op=per_op, **read.options)
    html = out.format == "html"
    diff = compare_files(
        before, after, options, match=match, normalize=normalize, digests=html,
        confidence=confidence,
    ).limited(top, share_top)  # fmt: skip
    breaches, scaled = threshold_breaches(diff, fail_on) if fail_on else ([], {})
    abstained = gate_abstention(diff, checks, allow_different, fail_on) if fail_on else []
    gate = GateOutcome([], []) if abstained else broken_thresholds(diff, breaches, scaled)
    broken, abstained = gate.broken, [*abstained, *gate.abstention()]
    model = DiffModel(diff, tuple(broken), terminal_width(out.path), tuple(abstained))
    if out.format != "table" or not out.to_stdout:
        for line in [*abstained, *broken]:  # the terminal table lists them first itself
            say(f"tileprof: {line}", err=True)
        if model.setup_note is not None and not (fail_on and allow_different):
            say(f"tileprof: note: {model.setup_note}", err=True)  # CSV has no place for it
        if model.work_note is not None and not (fail_on and allow_different):
            say(f"tileprof: note: {model.work_note}", err=True)
    write_rendered(DIFF_RENDERERS[out.format], model, out.path)
    if abstained or broken:
        ctx.exit(EXIT_ABSTAINED if abstained else EXIT_BROKEN)


def gate_abstention(
    diff: Diff, checks: CheckRules, allow_different: bool = False, sentences: tuple[str, ...] = ()
) -> list[str]:
    """Why ``--fail-on`` gives no verdict: one line per failed coverage check of the two
    captures, one when the two sides differ in what the figures depend on (device, clock,
    tiles, software: ``analyses.comparability``) and one when they mostly run different groups
    and a sentence covers a group on one side only (``analyses.shared_work``: the gate judges
    only groups both sides have, so its pass would speak for less than half a side), unless
    ``allow_different``, which notes them on stderr (none: the gate judges)."""
    from tileprof.analyses.comparability import setup_difference
    from tileprof.analyses.integrity import diff_coverage, reasons
    from tileprof.analyses.shared_work import work_note

    found = list(reasons(diff_coverage(diff, checks), "diff"))
    work = work_note(diff) if _covers_one_side(diff, sentences) else None
    for line in (setup_difference(diff.before.environment, diff.after.environment), work):
        if line is None:
            continue
        if allow_different:
            say(f"tileprof: note: judged under --allow-different: {line}", err=True)
        else:
            found.append(line)
    return [f"abstained, no verdict: {why}" for why in found]


def _covers_one_side(diff: Diff, sentences: tuple[str, ...]) -> bool:
    """Whether a sentence covers a group that one side lacks, which it cannot judge."""
    import polars as pl

    rules = parse_thresholds(sentences, diff.fields)
    one_side = pl.col("beforeName").is_null() | pl.col("afterName").is_null()
    groups = diff.rows.filter(one_side).get_column("group").to_list()
    return any(rule.matches(str(g), rule.field) for rule in rules for g in groups)


def diff_breakdowns(before: Path, after: Path, out: Output) -> None:
    """``diff --breakdown``: the two sides' GPU time breakdowns compared (table, JSON or CSV)."""
    from tileprof.analyses.breakdown_diff import compare_breakdowns
    from tileprof.model.breakdown import compared_breakdowns
    from tileprof.views.renderers import BREAKDOWN_DIFF_RENDERERS

    if out.format not in BREAKDOWN_DIFF_RENDERERS:
        raise OptionError(f"--breakdown: --format {out.format} is not offered (table, json, csv)")
    sides = compared_breakdowns(before, after)
    write_rendered(BREAKDOWN_DIFF_RENDERERS[out.format], compare_breakdowns(*sides), out.path)
