"""Findings: what a reader should look at first, from rules kept as data over computed metrics.

Each rule (``RULES``) names the frame it reads (``SOURCES``), the conditions a row must meet
(``column`` or ``column / column`` against a threshold), a floor under which the effect is too
small to report, which row to cite and a message template. ``evaluate`` runs every rule over
the frames it is given: a rule **fires** when some row meets all its conditions and clears its
floor (the message cites the worst such row's numbers and every threshold), is **clear** when
no row meets the conditions, and **abstains** when its frame or a column is missing or every
row that meets the conditions is under the floor; the reason says which. Thresholds can be
overridden from a TOML file (``load_overrides``). Definitions: docs/metrics.md, "Findings".

Rows are tested with polars expressions; Python touches only the cited row.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from tileprof.core.errors import InputError
from tileprof.core.numbers import number, percent

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Condition:
    """``metric comparison threshold``; ``key`` names the threshold in an overrides file."""

    key: str
    metric: str
    """A column, or ``numerator / denominator`` (two columns)."""
    comparison: str
    threshold: float
    share: bool = False
    """The metric is a fraction: printed as a percentage."""

    def expression(self) -> pl.Expr:
        """The metric as a polars expression (a division by zero gives null, never true)."""
        top, _, bottom = (part.strip() for part in self.metric.partition("/"))
        value = pl.col(top).cast(pl.Float64)
        if bottom:
            below = pl.col(bottom).cast(pl.Float64)
            value = pl.when(below != 0).then(value / below)
        return value

    def columns(self) -> tuple[str, ...]:
        return tuple(part.strip() for part in self.metric.split("/"))

    def holds(self) -> pl.Expr:
        return COMPARISONS[self.comparison](self.expression(), self.threshold).fill_null(False)

    def text(self, value: float | None) -> str:
        return percent(value) if self.share else number(value)


@dataclass(frozen=True)
class Rule:
    """One row of the rule table."""

    id: str
    source: str
    """The frame it reads: a key of ``SOURCES``."""
    conditions: tuple[Condition, ...]
    floor: Condition
    """The effect's size; a row under it cannot fire the rule."""
    rank: str
    """The column whose largest value (``Condition`` metric form) picks the row to cite."""
    message: str
    """``str.format`` template over the cited row: ``{column}`` its value, ``{key}`` each
    condition's value, ``{key_threshold}`` its threshold, ``{count}`` and ``{rows}``."""
    where: tuple[tuple[str, str], ...] = ()
    """Rows considered: (column, value) pairs that must all be equal."""
    needs: str = ""
    """Where the source comes from, for an abstention that lacks it."""


HOST_BOUND = Rule(
    id="host-bound",
    source="breakdown",
    where=(("device_kind", "gpu"),),
    conditions=(
        Condition("idle_share", "idle_us / total_us", ">", 0.10, share=True),
        Condition("host_wait_share", "idle_host_wait_us / idle_us", ">", 0.5, share=True),
    ),
    floor=Condition("floor", "idle_us", ">=", 5.0),
    rank="idle_us",
    message=(
        "host-bound: {trace} {device_name} (device {device}), {window} is idle {idle_us} "
        "µs of {total_us} µs "
        "({idle_share}, over {idle_share_threshold}), {host_wait_share} of it waiting on the "
        "host (over {host_wait_share_threshold}); {count} of {rows} steps like it"
    ),
    needs="a GPU time breakdown per device and step (tileprof breakdown of a PyTorch trace)",
)
DISPATCH_BOUND = Rule(
    id="dispatch-bound",
    source="breakdown",
    where=(("device_kind", "tenstorrent"),),
    conditions=(Condition("gap_share", "dispatch_gap_us / total_us", ">", 0.5, share=True),),
    floor=Condition("floor", "dispatch_gap_us", ">=", 5.0),
    rank="dispatch_gap_us",
    message=(
        "dispatch-bound: {device_name} of {trace} runs ops for {busy_us} µs of {total_us} µs; "
        "{gap_share} of its time (over {gap_share_threshold}) is gaps under 1 ms between ops "
        "(OP TO OP LATENCY: the host dispatching the next op). As tt-perf-report advises, run "
        "with tracing (capture the ops in a metal trace and replay it) to take dispatch off "
        "the device's path; {count} of {rows} chips like it"
    ),
    needs="a Tenstorrent ops report (its op-to-op gaps, through the time breakdown)",
)
HOST_GAPS = Rule(
    id="host-gaps",
    source="breakdown",
    where=(("device_kind", "tenstorrent"),),
    conditions=(Condition("long_share", "long_gap_us / total_us", ">", 0.5, share=True),),
    floor=Condition("floor", "long_gap_us", ">=", 5.0),
    rank="long_gap_us",
    message=(
        "host gaps: {device_name} of {trace} runs ops for {busy_us} µs of {total_us} µs; "
        "{long_share} of its time (over {long_share_threshold}) is {long_gaps} gaps of 1 ms "
        "or more between ops, far longer than dispatching an op takes: the host was doing "
        "other work (a first run compiling each op's program, Python, I/O), which tracing "
        "alone does not remove. Profile a warm run (after a warm-up, marked by a signpost) "
        "before reading the gaps as dispatch; {count} of {rows} chips like it"
    ),
    needs="a Tenstorrent ops report (its op-to-op gaps, through the time breakdown)",
)
LAUNCH_BOUND = Rule(
    id="launch-bound",
    source="breakdown",
    where=(("device_kind", "gpu"),),
    conditions=(
        Condition("short_share", "shorter_than_launch / launched", ">", 0.5, share=True),
        Condition("queue_us", "launch_delay_us_p50", "<", 50.0),
    ),
    floor=Condition("floor", "launched", ">=", 100.0),
    rank="shorter_than_launch",
    message=(
        "launch-bound: {trace} {device_name} (device {device}), {window}: "
        "{shorter_than_launch} of the {launched} kernels launched run for less time than the "
        "call that launched them ({short_share}, over {short_share_threshold}; the median "
        "call takes {launch_us_p50} µs), and the median kernel starts {queue_us} µs after its "
        "call (under {queue_us_threshold} µs: no queue of work ahead of the GPU). The host "
        "cannot issue kernels as fast as the GPU finishes them: capture them in a CUDA or HIP "
        "graph or fuse the small ones; {count} of {rows} steps like it"
    ),
    needs="a GPU trace whose kernels carry their launch calls (a PyTorch trace, an nsys "
    "export), through the time breakdown's launch figures",
)
EXPOSED_COMMUNICATION = Rule(
    id="exposed-communication",
    source="breakdown",
    where=(("device_kind", "gpu"),),
    conditions=(Condition("exposed_share", "exposed_comm_us / total_us", ">", 0.10, share=True),),
    floor=Condition("floor", "exposed_comm_us", ">=", 50.0),
    rank="exposed_comm_us",
    message=(
        "exposed communication: {trace} {device_name} (device {device}), {window} spends "
        "{exposed_comm_us} µs of {total_us} µs ({exposed_share}, over "
        "{exposed_share_threshold}) in communication that no computation overlaps, of "
        "{total_comm_us} µs of communication in all: overlap it with compute (bucketed or "
        "prefetched collectives on their own stream); {count} of {rows} steps like it"
    ),
    needs="a GPU trace with communication kernels (NCCL, RCCL), through the time breakdown",
)
EXPOSED_COPIES = Rule(
    id="exposed-copies",
    source="breakdown",
    where=(("device_kind", "gpu"),),
    conditions=(Condition("exposed_share", "exposed_memcpy_us / total_us", ">", 0.10, share=True),),
    floor=Condition("floor", "exposed_memcpy_us", ">=", 50.0),
    rank="exposed_memcpy_us",
    message=(
        "exposed copies: {trace} {device_name} (device {device}), {window} spends "
        "{exposed_memcpy_us} µs of {total_us} µs ({exposed_share}, over "
        "{exposed_share_threshold}) in memory copies that neither computation nor "
        "communication overlaps, of {total_memcpy_us} µs of copies in all: copy from pinned "
        "memory asynchronously (cudaMemcpyAsync, hipMemcpyAsync; in PyTorch, non_blocking=True) "
        "on a side stream, or keep the data on the device; {count} of {rows} steps like it"
    ),
    needs="a GPU trace with memory copies, through the time breakdown",
)
SMALL_KERNELS = Rule(
    id="small-kernels",
    source="kernels",
    conditions=(
        Condition("kernel_us", "time_us", "<", 10.0),
        Condition("call_share", "callShare", ">=", 0.10, share=True),
    ),
    floor=Condition("floor", "calls", ">=", 100.0),
    rank="calls",
    message=(
        "small kernels: {kernel} ({source}) runs {calls} times at {kernel_us} µs a "
        "call (under {kernel_us_threshold} µs), {call_share} of the input's kernel launches "
        "(at least {call_share_threshold}): at this length a launch's few µs of overhead "
        "rival the work. Fuse it with its neighbours (torch.compile) or capture it in a CUDA or "
        "HIP graph; {count} of {rows} kernels like it"
    ),
    needs="a GPU timeline's kernel rows (a PyTorch trace, an nsys export or kernel summary, "
    "a rocprofv3 trace)",
)
STRAGGLER = Rule(
    id="straggler",
    source="ranks",
    conditions=(Condition("straggler_share", "straggled / matched", ">", 0.75, share=True),),
    floor=Condition("floor", "late_us", ">=", 100.0),
    rank="late_us",
    message=(
        "straggler: rank {rank} of the {job} job ({trace}) is the last to start {straggled} of "
        "the {matched} collectives matched across the ranks given ({straggler_share}, over "
        "{straggler_share_threshold}); the other ranks wait {late_us} µs for it in all (the "
        "start skew of those collectives). Look at what it does before them (data loading, "
        "uneven work, a slower device); {count} of {rows} ranks like it"
    ),
    needs="the traces of two or more ranks of one job (distributedInfo), their collectives matched",
)
LOW_OCCUPANCY = Rule(
    id="low-occupancy",
    source="ncu",
    conditions=(
        Condition(
            "of_theoretical", "achieved_occupancy / theoretical_occupancy", "<", 0.8, share=True
        ),
        Condition("occupancy", "achieved_occupancy", "<", 0.5, share=True),
    ),
    floor=Condition("floor", "time_us", ">=", 5.0),
    rank="time_us",
    message=(
        "low achieved occupancy: {kernel} on {target} ({input}) keeps {occupancy} of the "
        "warp slots busy (under {occupancy_threshold}), {of_theoretical} of the "
        "{theoretical_occupancy} its launch allows (under {of_theoretical_threshold}) over "
        "{time_us} µs: warps are lost to scheduling overhead or to imbalance within and "
        "across blocks (Nsight Compute's Achieved Occupancy), not to the launch's limits; "
        "{count} of {rows} profiled kernels like it"
    ),
    needs="an Nsight Compute CSV with achieved and theoretical occupancy",
)
COMPUTE_UNDER_USED = Rule(
    id="compute-under-used",
    source="ops",
    where=(("op_family", "gemm"),),
    conditions=(
        Condition("roofline", "roofline_fraction", "<", 0.30, share=True),
        Condition("intensity", "arithmetic_intensity / ridge_point", ">", 1.0),
    ),
    floor=Condition("floor", "time_share", ">=", 0.01, share=True),
    rank="total_us",
    message=(
        "compute under-used: {op} ({gemm_mnk}, {dtype}) on {target} reaches {roofline} of its "
        "roofline (under {roofline_threshold}) at {arithmetic_intensity} FLOP/byte, "
        "{intensity}× the ridge point {ridge_point} (over {intensity_threshold}×); "
        "{total_us} µs, {time_share} of op time; {count} of {rows} GEMM rows like it"
    ),
    needs="a PyTorch trace's op rows with roofline_fraction, arithmetic_intensity and the "
    "device's ridge_point (the roofline spec registry)",
)
IMBALANCE = Rule(
    id="imbalance",
    source="supersteps",
    conditions=(Condition("load_balance", "loadBalanceEfficiency", "<", 0.8, share=True),),
    floor=Condition("floor", "imbalanceShare", ">=", 0.005, share=True),
    rank="imbalanceCycles",
    message=(
        "imbalance, critical tile {criticalTile}: superstep {index} of epoch {epoch} "
        "({source}) has load balance {load_balance} (under {load_balance_threshold}); "
        "{imbalanceCycles} tile-cycles lost, {imbalanceShare} of the epoch's tile-cycles; "
        "{count} of {rows} supersteps like it"
    ),
    needs="a tile dump",
)
START_SKEW = Rule(
    id="start-skew",
    source="supersteps",
    conditions=(Condition("skew_share", "startSkewCycles / cycles", ">", 0.2, share=True),),
    floor=Condition("floor", "startSkewCycles", ">=", 100.0),
    rank="startSkewCycles",
    message=(
        "start skew: in superstep {index} of epoch {epoch} ({source}) the last tile starts "
        "{startSkewCycles} cycles after the first, {skew_share} of the superstep (over "
        "{skew_share_threshold}); {count} of {rows} supersteps like it"
    ),
    needs="a tile dump",
)
COMMUNICATION = Rule(
    id="communication",
    source="epochs",
    where=(("device_kind", "tile"),),
    conditions=(Condition("communication", "communicationEfficiency", "<", 0.8, share=True),),
    floor=Condition("floor", "cycles", ">=", 10_000.0),
    rank="lostCycles",
    message=(
        "communication-bound: epoch {epoch} ({source}) has communication efficiency "
        "{communication} (under {communication_threshold}) over its {cycles} cycles, "
        "{lostCycles} cycles outside the busiest tiles' compute; sync wait is {syncWaitShare} "
        "and exchange {exchangeShare} of its tile-cycles; {count} of {rows} epochs like it"
    ),
    needs="a tile dump",
)
OP_GAPS = Rule(
    id="op-gaps",
    source="epochs",
    where=(("device_kind", "tenstorrent"),),
    conditions=(Condition("gap_share", "betweenShare", ">", 0.5, share=True),),
    floor=Condition("floor", "betweenCycles", ">=", 10_000.0),
    rank="betweenCycles",
    message=(
        "op-to-op gaps: chip {epoch} ({source}) has no core running a kernel for "
        "{betweenCycles} of its {cycles} cycles ({gap_share}, over {gap_share_threshold}), "
        "between one op call and the next: the host dispatching the next op or doing other "
        "work, not communication on the chip. The ops report beside the log tells dispatch "
        "(gaps under 1 ms: run with tracing) from other host work (profile a warm run); "
        "{count} of {rows} chips like it"
    ),
    needs="a tt-metal device log (its op calls, as supersteps)",
)
EXCHANGE_HEAVY = Rule(
    id="exchange-heavy",
    source="epochs",
    conditions=(Condition("exchange_share", "exchangeShare", ">", 0.25, share=True),),
    floor=Condition("floor", "cycles", ">=", 10_000.0),
    rank="exchangeCycles",
    message=(
        "exchange-heavy: exchange takes {exchange_share} of epoch {epoch}'s tile-cycles "
        "({source}; over {exchange_share_threshold}): {exchangeCycles} tile-cycles; "
        "{count} of {rows} epochs like it"
    ),
    needs="a tile dump",
)
SYNC_WAIT = Rule(
    id="sync-wait",
    source="epochs",
    conditions=(Condition("sync_wait", "syncWaitShare", ">", 0.2, share=True),),
    floor=Condition("floor", "cycles", ">=", 10_000.0),
    rank="syncWaitCycles",
    message=(
        "sync wait: tiles wait at the sync for {sync_wait} of epoch {epoch}'s tile-cycles "
        "({source}; over {sync_wait_threshold}): {syncWaitCycles} tile-cycles; "
        "{count} of {rows} epochs like it"
    ),
    needs="a tile dump",
)
LOW_UTILIZATION = Rule(
    id="low-utilization",
    source="groups",
    conditions=(
        Condition("utilization", "deviceUsefulUtilization", "<", 0.25, share=True),
        Condition("phase_share", "phaseShare", ">=", 0.10, share=True),
    ),
    floor=Condition("floor", "phaseCycles", ">=", 10_000.0),
    rank="phaseCycles",
    message=(
        "low utilization: group {name} ({source}) takes {phase_share} of the phase cycles "
        "(at least {phase_share_threshold}) at device useful utilization {utilization} (under "
        "{utilization_threshold}); {count} of {rows} groups like it"
    ),
    needs="a tile dump whose samples carry usefulCycles",
)
CRITICAL_GAIN = Rule(
    id="critical-gain",
    source="candidates",
    conditions=(Condition("gain_share", "gainShare", ">=", 0.05, share=True),),
    floor=Condition("floor", "gainUs", ">=", 1.0),
    rank="gainUs",
    message=(
        "largest gain first: {edit} would shorten the critical path of {scope} of {source} "
        "by {gainUs} µs, {gain_share} of its {pathUs} µs (at least {gain_share_threshold}); "
        "{count} of {rows} candidate edits like it"
    ),
    needs="a tile dump or a PyTorch trace with host events (tileprof critical's candidates)",
)

RULES: tuple[Rule, ...] = (
    HOST_BOUND,
    LAUNCH_BOUND,
    EXPOSED_COMMUNICATION,
    EXPOSED_COPIES,
    SMALL_KERNELS,
    STRAGGLER,
    LOW_OCCUPANCY,
    DISPATCH_BOUND,
    HOST_GAPS,
    COMPUTE_UNDER_USED,
    IMBALANCE,
    START_SKEW,
    COMMUNICATION,
    OP_GAPS,
    EXCHANGE_HEAVY,
    SYNC_WAIT,
    LOW_UTILIZATION,
    CRITICAL_GAIN,
)
"""The rule table, in the order findings are listed (fired ones first)."""

SOURCES: tuple[str, ...] = (
    "breakdown",
    "kernels",
    "ranks",
    "ncu",
    "ops",
    "supersteps",
    "epochs",
    "groups",
    "candidates",
)
"""The frames rules read (docs/metrics.md, "Findings": where each comes from)."""

FIRED, CLEAR, ABSTAINED = "fired", "clear", "abstained"
NOT_APPLICABLE = "not applicable"
"""A rule whose kind of input none of the inputs is (no frame of its source, or no row of its
``where`` choice): not listed among the findings, only counted."""
STATUS_ORDER: dict[str, int] = {FIRED: 0, CLEAR: 1, ABSTAINED: 2, NOT_APPLICABLE: 3}


@dataclass(frozen=True)
class Finding:
    """One rule's outcome: its status, the message (fired) or the reason (clear, abstained)."""

    rule: Rule
    status: str
    text: str
    row: dict[str, Any] | None = None
    values: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Each condition's metric on the cited row, by key."""
    count: int = 0
    rows: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON entry: id, status, message or reason, the cited row and the thresholds."""
        return {
            "id": self.rule.id,
            "status": self.status,
            ("message" if self.status == FIRED else "reason"): self.text,
            "source": self.rule.source,
            "thresholds": {
                c.key: {"metric": c.metric, "comparison": c.comparison, "threshold": c.threshold}
                for c in (*self.rule.conditions, self.rule.floor)
            },
            "values": {k: _finite(v) for k, v in self.values.items()},
            "count": self.count,
            "rows": self.rows,
            "row": None if self.row is None else {k: _finite(v) for k, v in self.row.items()},
        }


def _finite(value: Any) -> Any:
    """A JSON-safe value: NaN and ±∞ (a 0 / 0 in an input's column) become null."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


SHARE_SUFFIXES = ("Share", "_share", "Efficiency", "_fraction", "Utilization", "_occupancy")
"""Row columns whose names end so are fractions, cited as percentages."""


class _Values(dict[str, str]):
    """A template's values; a placeholder the row lacks reads as a dash."""

    def __missing__(self, key: str) -> str:
        return "—"


def _cell(name: str, value: Any) -> str:
    if isinstance(value, float) and name.endswith(SHARE_SUFFIXES):
        return percent(value)
    return "—" if value is None else number(value) if not isinstance(value, str) else value


def evaluate(
    frames: Mapping[str, pl.DataFrame | None], rules: Sequence[Rule] = RULES
) -> list[Finding]:
    """Every enabled rule over ``frames`` (keys of ``SOURCES``; a missing key is a missing
    input): fired findings first, then clear, then abstained, each in rule order."""
    outcomes = [evaluate_rule(rule, frames.get(rule.source)) for rule in rules]
    return sorted(outcomes, key=lambda f: STATUS_ORDER[f.status])


def _where_text(rule: Rule) -> str:
    return " where " + ", ".join(f"{c} = {v}" for c, v in rule.where) if rule.where else ""


def rows_read(rule: Rule, frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``frame`` that ``rule`` reads: those its ``where`` chooses (every row when
    the frame lacks a ``where`` column, as ``_considered`` reads it)."""
    if not {column for column, _ in rule.where} <= set(frame.columns):
        return frame
    for column, value in rule.where:
        frame = frame.filter(pl.col(column).cast(pl.String) == value)
    return frame


def _considered(rule: Rule, frame: pl.DataFrame | None) -> pl.DataFrame | Finding:
    """The rows the rule reads, or why it has no verdict: not applicable when no input is of
    its kind (no frame, or no row of its ``where`` choice); abstained when a column is missing
    or a metric is null in every row (an input of its kind that does not carry the figure)."""
    if frame is None:
        return Finding(rule, NOT_APPLICABLE, f"no {rule.source} input; the rule needs {rule.needs}")
    if not frame.height:
        return Finding(rule, NOT_APPLICABLE, f"no {rule.source} rows; the rule needs {rule.needs}")
    conditions = (*rule.conditions, rule.floor)
    considered = rows_read(rule, frame)
    if not considered.height:  # only a where can leave none: the frame has rows
        return Finding(
            rule,
            NOT_APPLICABLE,
            f"no {rule.source} rows{_where_text(rule)}; the rule needs {rule.needs}",
        )
    needed = {c for cond in conditions for c in cond.columns()} | {rule.rank}
    needed |= {column for column, _ in rule.where}
    missing = sorted(needed - set(frame.columns))
    if missing:
        return Finding(
            rule,
            ABSTAINED,
            f"{rule.source} lacks {', '.join(missing)}; the rule needs {rule.needs}",
        )
    chosen = _where_text(rule)
    empty = [
        c.metric for c in conditions if considered.select(c.expression().is_null().all()).item()
    ]
    if empty:
        return Finding(
            rule, ABSTAINED, f"{', '.join(empty)} is null in every {rule.source} row{chosen}"
        )
    return considered


def evaluate_rule(rule: Rule, frame: pl.DataFrame | None) -> Finding:
    """One rule over its frame (None: the input is missing)."""
    considered = _considered(rule, frame)
    if isinstance(considered, Finding):
        return considered
    chosen = _where_text(rule)
    met = considered.filter(pl.all_horizontal(c.holds() for c in rule.conditions))
    tested = " and ".join(_condition_text(c) for c in rule.conditions)
    if not met.height:
        # The closest value of the first condition among the rows meeting the others.
        first, others = rule.conditions[0], rule.conditions[1:]
        pool = (
            considered.filter(pl.all_horizontal(c.holds() for c in others))
            if others
            else considered
        )
        expression = first.expression()
        closest = pool.select(
            expression.max() if first.comparison.startswith(">") else expression.min()
        ).item()
        # With no row meeting the others there is no closest value: say why, not a dash.
        nearest = (
            f"closest {first.metric}: {first.text(closest)}"
            if pool.height
            else f"no row has {' and '.join(_condition_text(c) for c in others)}"
        )
        return Finding(
            rule,
            CLEAR,
            f"no row has {tested} ({nearest}; {considered.height:,} {rule.source} rows{chosen})",
            values={first.key: closest},
            rows=considered.height,
        )
    above = met.filter(rule.floor.holds())
    if not above.height:
        largest = met.select(rule.floor.expression().max()).item()
        return Finding(
            rule,
            ABSTAINED,
            f"{met.height:,} {rule.source} rows have {tested}, but the largest "
            f"{rule.floor.metric} ({rule.floor.text(largest)}) is under the floor "
            f"{_condition_text(rule.floor)}",
            count=0,
            rows=considered.height,
        )
    cited = above.sort(rule.rank, descending=True, nulls_last=True).head(1)
    values = cited.select(c.expression().alias(c.key) for c in rule.conditions).row(0, named=True)
    row = cited.row(0, named=True)
    message = rule.message.format_map(_template_values(rule, row, values, above.height, considered))
    return Finding(
        rule,
        FIRED,
        _ONE_ROW_COUNT.sub("", message) if considered.height == 1 else message,
        row=row,
        values=values,
        count=above.height,
        rows=considered.height,
    )


_ONE_ROW_COUNT = re.compile(r"; 1 of 1 [^;]+ like it$")
"""A message's closing count when the rule read one row ("1 of 1 chips like it"): it says
nothing the message has not, so it is left out."""


def _condition_text(condition: Condition) -> str:
    return f"{condition.metric} {condition.comparison} {condition.text(condition.threshold)}"


def _template_values(
    rule: Rule, row: dict[str, Any], values: dict[str, Any], count: int, considered: pl.DataFrame
) -> _Values:
    filled = _Values({name: _cell(name, value) for name, value in row.items()})
    for condition in (*rule.conditions, rule.floor):
        filled[f"{condition.key}_threshold"] = condition.text(condition.threshold)
    for condition in rule.conditions:
        filled[condition.key] = condition.text(values[condition.key])
    filled["count"] = f"{count:,}"
    filled["rows"] = f"{considered.height:,}"
    return filled


def load_overrides(path: Path, rules: Sequence[Rule] = RULES) -> tuple[Rule, ...]:
    """``rules`` with the thresholds a TOML file sets: one table per rule id, one number per
    threshold key (its conditions' keys and ``floor``); an unknown rule or key is an error
    naming the file and the key."""
    try:
        raw = tomllib.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(path, f"byte {exc.start}", "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"bad TOML: {exc}") from None
    by_id = {rule.id: rule for rule in rules}
    for rule_id, table in raw.items():
        if rule_id not in by_id:
            raise InputError(path, rule_id, f"unknown rule (rules: {', '.join(by_id)})")
        if not isinstance(table, dict):
            raise InputError(path, rule_id, "expected a table of thresholds")
        by_id[rule_id] = _overridden(path, by_id[rule_id], table)
    return tuple(by_id.values())


def _overridden(path: Path, rule: Rule, table: dict[str, Any]) -> Rule:
    keys = {c.key: c for c in (*rule.conditions, rule.floor)}
    for key, value in table.items():
        if key not in keys:
            raise InputError(path, f"{rule.id}.{key}", f"unknown key (keys: {', '.join(keys)})")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(path, f"{rule.id}.{key}", f"expected a number, not {value!r}")
        keys[key] = dataclasses.replace(keys[key], threshold=float(value))
    return dataclasses.replace(
        rule,
        conditions=tuple(keys[c.key] for c in rule.conditions),
        floor=keys[rule.floor.key],
    )


def superstep_frames(
    supersteps: pl.DataFrame,
    epochs: pl.DataFrame,
    tile_count: int,
    source: str,
    device_kind: str = "tile",
) -> dict[str, pl.DataFrame]:
    """The ``supersteps`` and ``epochs`` frames of one dump's superstep analysis, with the
    derived columns the rules read (docs/metrics.md, "Findings"); ``device_kind`` says what
    the time between supersteps is: ``tile`` (a bulk-synchronous device's sync) or
    ``tenstorrent`` (a tt-metal device log, whose supersteps are op calls: the host's)."""
    tiles = pl.lit(tile_count, pl.Float64)
    per_epoch = supersteps.group_by("epoch").agg(
        _steps=pl.col("exchangeCycles").sum(), _between=pl.col("syncAfter").sum()
    )
    cycles = pl.col("cycles")
    epoch_rows = (
        epochs.join(per_epoch, on="epoch", how="left", nulls_equal=True)
        .with_columns(
            source=pl.lit(source),
            device_kind=pl.lit(device_kind),
            exchangeCycles=pl.col("_steps").fill_null(0) + pl.col("leadingExchangeCycles"),
            betweenCycles=pl.col("_between").fill_null(0),
        )
        .with_columns(
            exchangeShare=pl.when(cycles > 0).then(pl.col("exchangeCycles") / (tiles * cycles)),
            betweenShare=pl.when(cycles > 0).then(pl.col("betweenCycles") / cycles),
            lostCycles=cycles * (1 - pl.col("communicationEfficiency")),
        )
        .drop("_steps", "_between")
    )
    step_rows = supersteps.join(
        epochs.select("epoch", _epochCycles="cycles"), on="epoch", how="left", nulls_equal=True
    ).with_columns(
        source=pl.lit(source),
        imbalanceShare=pl.col("imbalanceCycles") / (tiles * pl.col("_epochCycles")),
    )
    return {"supersteps": step_rows.drop("_epochCycles"), "epochs": epoch_rows}


def group_frame(groups: pl.DataFrame, source: str) -> pl.DataFrame:
    """A summary's group rows with ``phaseShare`` = phaseCycles / Σ phaseCycles."""
    total = pl.col("phaseCycles").sum()
    return groups.with_columns(
        source=pl.lit(source),
        phaseShare=pl.when(total > 0).then(pl.col("phaseCycles") / total),
    )


RidgePoint = Callable[[str | None, str | None, str | None], float | None]
"""(target, dtype, op family) → the device's ridge point in FLOP per byte, or None."""


def op_frame(ops: pl.DataFrame, ridge: RidgePoint | None = None) -> pl.DataFrame:
    """Op rows with ``time_share`` = total_us / Σ total_us over the rows, and, given
    ``ridge`` (the spec registry's ridge point) and no ``ridge_point`` column yet, the
    ``ridge_point`` of each row's target, dtype and family (looked up once per distinct
    triple, not per row)."""
    if "total_us" in ops.columns:
        total = pl.col("total_us").sum()
        ops = ops.with_columns(time_share=pl.when(total > 0).then(pl.col("total_us") / total))
    keys = ["target", "dtype", "op_family"]
    if ridge is None or "ridge_point" in ops.columns or not set(keys) <= set(ops.columns):
        return ops
    triples = ops.select(pl.col(keys).cast(pl.String)).unique()
    points = triples.with_columns(
        ridge_point=pl.Series([ridge(*t) for t in triples.iter_rows()], dtype=pl.Float64)
    )
    return ops.with_columns(pl.col(keys).cast(pl.String)).join(
        points, on=keys, how="left", nulls_equal=True
    )


def breakdown_frame(
    rows: pl.DataFrame, launches: pl.DataFrame | None = None, gaps: pl.DataFrame | None = None
) -> pl.DataFrame:
    """The GPU time breakdown's rows the breakdown rules read: per trace and device, its
    profiler steps when it has any, else its whole-trace row; all-devices rows (``device``
    null) only where no per-device row exists. So no stretch of time is counted twice.
    ``launches`` (the breakdown's launch figures, keyed as its rows) join on their window.
    ``device_kind`` says whose timeline a row is: ``tenstorrent`` (a chip of an ops report,
    named ``Tenstorrent …``) or ``gpu``. ``gaps`` (``gpu_breakdown.long_gaps`` of the chips'
    timelines) splits a chip's idle time: ``long_gap_us`` in gaps of a millisecond or more,
    ``dispatch_gap_us`` in the shorter ones (without it the chip rules lack both and
    abstain)."""
    if launches is not None:
        keys = [c for c in _BREAKDOWN_KEYS if c in rows.columns and c in launches.columns]
        extra = [c for c in launches.columns if c not in rows.columns]
        rows = rows.join(launches.select(*keys, *extra), on=keys, how="left", nulls_equal=True)
    if "step" in rows.columns:
        keys = [c for c in ("trace", "rank", "device") if c in rows.columns]
        stepped = pl.col("step").is_not_null()
        has_steps = stepped.any().over(keys) if keys else stepped.any()
        rows = rows.filter(stepped | ~has_steps)
    if "device" in rows.columns and rows.get_column("device").is_not_null().any():
        rows = rows.filter(pl.col("device").is_not_null())
    if "step" in rows.columns:  # the window a message names
        step = pl.format("step {}", pl.col("step"))
        whole = pl.lit("the whole trace")
        rows = rows.with_columns(
            window=pl.when(pl.col("step").is_null()).then(whole).otherwise(step)
        )
    if "device_name" in rows.columns:  # a Tenstorrent chip's timeline is its ops report's
        tenstorrent = pl.col("device_name").str.starts_with(TENSTORRENT_NAME).fill_null(False)
        kind = pl.when(tenstorrent).then(pl.lit("tenstorrent")).otherwise(pl.lit("gpu"))
        rows = rows.with_columns(kind.alias("device_kind"))
        if gaps is not None:
            chip = (pl.col("device_kind") == "tenstorrent") & pl.col("step").is_null()
            rows = rows.join(gaps, on=["trace", "device"], how="left", nulls_equal=True)
            rows = rows.with_columns(
                pl.when(chip).then(pl.col("long_gap_us")).alias("long_gap_us"),
                pl.when(chip).then(pl.col("long_gaps")).alias("long_gaps"),
                pl.when(chip)
                .then(pl.col("idle_us") - pl.col("long_gap_us"))
                .alias("dispatch_gap_us"),
            )
    return rows


TENSTORRENT_NAME = "Tenstorrent "
"""How a Tenstorrent chip's timeline names its device (``Tenstorrent wormhole_b0 (chip 0)``)."""


def is_tenstorrent(device_name: str) -> bool:
    """Whether a timeline's device is a Tenstorrent chip (its ops report's timeline)."""
    return device_name.startswith(TENSTORRENT_NAME)


_BREAKDOWN_KEYS = ("trace", "rank", "device", "device_name", "step")
"""The columns that key a breakdown row and its launch figures (one window of one device)."""


def kernel_frame(runs: pl.DataFrame, input_name: str) -> pl.DataFrame:
    """One GPU timeline input's kernel rows of the run table (memory copies left out: they
    are no kernel launch), with ``input`` and ``callShare`` = calls / Σ calls over them."""
    kernels = runs.filter(
        pl.col("target_kind").cast(pl.String) == "gpu",
        pl.col("op_family").cast(pl.String).fill_null("") != "copy",
    )
    total = pl.col("calls").sum()
    return kernels.with_columns(
        input=pl.lit(input_name),
        callShare=pl.when(total > 0).then(pl.col("calls") / total),
    )


def ncu_frame(runs: pl.DataFrame, input_name: str) -> pl.DataFrame:
    """An Nsight Compute CSV's kernel rows with ``achieved_occupancy`` and
    ``theoretical_occupancy`` as fractions (ncu states them in %; its reader keeps them in
    each row's metadata)."""
    figures = pl.col("metadata").str.json_decode(
        pl.Struct(
            {
                "achieved_occupancy_percent": pl.Float64,
                "theoretical_occupancy_percent": pl.Float64,
            }
        )
    )
    return runs.with_columns(
        input=pl.lit(input_name),
        achieved_occupancy=figures.struct.field("achieved_occupancy_percent") / 100,
        theoretical_occupancy=figures.struct.field("theoretical_occupancy_percent") / 100,
    )


def rank_frame(collectives: pl.DataFrame, ranks: pl.DataFrame) -> pl.DataFrame:
    """One row per rank of a job (``tileprof.analyses.collectives``): ``matched``, the job's
    collectives seen on two or more of the ranks given; ``straggled``, how many of them this
    rank started last (their ``straggler_rank``); ``late_us``, the start skew of those."""
    matched = collectives.filter(pl.col("ranks") >= 2)
    counts = matched.group_by("job").agg(matched=pl.len().cast(pl.Int64))
    late = matched.group_by("job", pl.col("straggler_rank").alias("rank")).agg(
        straggled=pl.len().cast(pl.Int64), late_us=pl.col("start_skew_us").sum()
    )
    return (
        ranks.select("job", "rank", "trace")
        .join(counts, on="job", how="inner")
        .join(late, on=["job", "rank"], how="left")
        .with_columns(pl.col("straggled").fill_null(0), pl.col("late_us").fill_null(0.0))
    )


CANDIDATE_SCHEMA = pl.Schema(
    {
        "source": pl.String,
        "scope": pl.String,
        "edit": pl.String,
        "gainUs": pl.Float64,
        "gainShare": pl.Float64,
        "pathUs": pl.Float64,
    }
)
"""The ``candidates`` frame: each single edit ``critical`` tried, per epoch or step."""


def tile_candidate_frame(
    candidates: pl.DataFrame, epochs: pl.DataFrame, clock_hz: float, source: str
) -> pl.DataFrame:
    """A tile dump's candidate edits (``CriticalPath.candidates``) per epoch, their gain in
    µs (cycles / clockHz) and share of the epoch's critical path."""
    us = 1e6 / clock_hz
    return (
        candidates.join(epochs.select("epoch", "cycles"), on="epoch", how="left", nulls_equal=True)
        .select(
            source=pl.lit(source),
            scope=pl.format("epoch {}", pl.col("epoch").cast(pl.String).fill_null("all")),
            edit=pl.col("edit"),
            gainUs=pl.col("gainCycles") * us,
            gainShare=pl.col("gainShare"),
            pathUs=pl.col("cycles") * us,
        )
        .cast(CANDIDATE_SCHEMA)
    )


def gpu_candidate_frame(document: Mapping[str, Any]) -> pl.DataFrame:
    """A trace's candidate edits per step (``critical``'s document on traces), their gain in
    µs and share of the step's critical path."""
    rows = [
        {
            "source": trace["trace"],
            "scope": "the whole trace" if step["step"] is None else f"step {step['step']}",
            "edit": row["edit"],
            "gainUs": row["gainNs"] / 1e3,
            "gainShare": row["gainNs"] / step["pathNs"] if step["pathNs"] else None,
            "pathUs": step["pathNs"] / 1e3,
        }
        for trace in document["traces"]
        for step in trace["steps"]
        for row in step["candidates"]
    ]
    return pl.DataFrame(rows, schema=CANDIDATE_SCHEMA)


def combined(parts: Sequence[Mapping[str, pl.DataFrame]]) -> dict[str, pl.DataFrame]:
    """Frames of several inputs, source by source, stacked (columns a part lacks are null)."""
    out: dict[str, pl.DataFrame] = {}
    for name in SOURCES:
        frames = [part[name] for part in parts if name in part]
        if frames:
            out[name] = pl.concat(frames, how="diagonal_relaxed")
    return out
