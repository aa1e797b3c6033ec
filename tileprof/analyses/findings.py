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
    conditions=(
        Condition("idle_share", "idle_us / total_us", ">", 0.10, share=True),
        Condition("host_wait_share", "idle_host_wait_us / idle_us", ">", 0.5, share=True),
    ),
    floor=Condition("floor", "idle_us", ">=", 5.0),
    rank="idle_us",
    message=(
        "host-bound: {trace} {device_name} (device {device}), step {step} is idle {idle_us} "
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
    conditions=(Condition("gap_share", "idle_us / total_us", ">", 0.5, share=True),),
    floor=Condition("floor", "idle_us", ">=", 5.0),
    rank="idle_us",
    message=(
        "dispatch-bound: {device_name} of {trace} runs ops for {busy_us} µs of {total_us} µs; "
        "{gap_share} of its time (over {gap_share_threshold}) is the gap between ops (OP TO OP "
        "LATENCY: the host dispatching the next op). As tt-perf-report advises, run with "
        "tracing (capture the ops in a metal trace and replay it) to take dispatch off the "
        "device's path; {count} of {rows} chips like it"
    ),
    needs="a Tenstorrent ops report (its op-to-op gaps, through the time breakdown)",
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

RULES: tuple[Rule, ...] = (
    HOST_BOUND,
    DISPATCH_BOUND,
    COMPUTE_UNDER_USED,
    IMBALANCE,
    START_SKEW,
    COMMUNICATION,
    EXCHANGE_HEAVY,
    SYNC_WAIT,
    LOW_UTILIZATION,
)
"""The rule table, in the order findings are listed (fired ones first)."""

SOURCES: tuple[str, ...] = ("breakdown", "ops", "supersteps", "epochs", "groups")
"""The frames rules read (docs/metrics.md, "Findings": where each comes from)."""

FIRED, CLEAR, ABSTAINED = "fired", "clear", "abstained"


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


SHARE_SUFFIXES = ("Share", "_share", "Efficiency", "_fraction", "Utilization")
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
    order = {FIRED: 0, CLEAR: 1, ABSTAINED: 2}
    return sorted(outcomes, key=lambda f: order[f.status])


def _where_text(rule: Rule) -> str:
    return " where " + ", ".join(f"{c} = {v}" for c, v in rule.where) if rule.where else ""


def _considered(rule: Rule, frame: pl.DataFrame | None) -> pl.DataFrame | Finding:
    """The rows the rule reads, or its abstention: no frame, a column missing, no row chosen,
    or a metric null in every row (an input that does not carry it)."""
    if frame is None:
        return Finding(rule, ABSTAINED, f"no {rule.source} input; the rule needs {rule.needs}")
    conditions = (*rule.conditions, rule.floor)
    needed = {c for cond in conditions for c in cond.columns()} | {rule.rank}
    needed |= {column for column, _ in rule.where}
    missing = sorted(needed - set(frame.columns))
    if missing:
        return Finding(
            rule,
            ABSTAINED,
            f"{rule.source} lacks {', '.join(missing)}; the rule needs {rule.needs}",
        )
    considered = frame
    for column, value in rule.where:
        considered = considered.filter(pl.col(column).cast(pl.String) == value)
    chosen = _where_text(rule)
    if not considered.height:
        return Finding(rule, ABSTAINED, f"no {rule.source} rows{chosen}")
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
        return Finding(
            rule,
            CLEAR,
            f"no row has {tested} (closest {first.metric}: {first.text(closest)}; "
            f"{considered.height:,} {rule.source} rows{chosen})",
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
    return Finding(
        rule,
        FIRED,
        rule.message.format_map(_template_values(rule, row, values, above.height, considered)),
        row=row,
        values=values,
        count=above.height,
        rows=considered.height,
    )


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
    supersteps: pl.DataFrame, epochs: pl.DataFrame, tile_count: int, source: str
) -> dict[str, pl.DataFrame]:
    """The ``supersteps`` and ``epochs`` frames of one dump's superstep analysis, with the
    derived columns the rules read (docs/metrics.md, "Findings")."""
    tiles = pl.lit(tile_count, pl.Float64)
    exchange = supersteps.group_by("epoch").agg(_steps=pl.col("exchangeCycles").sum())
    epoch_rows = (
        epochs.join(exchange, on="epoch", how="left", nulls_equal=True)
        .with_columns(
            source=pl.lit(source),
            exchangeCycles=pl.col("_steps").fill_null(0) + pl.col("leadingExchangeCycles"),
        )
        .with_columns(
            exchangeShare=pl.when(pl.col("cycles") > 0).then(
                pl.col("exchangeCycles") / (tiles * pl.col("cycles"))
            ),
            lostCycles=pl.col("cycles") * (1 - pl.col("communicationEfficiency")),
        )
        .drop("_steps")
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


def breakdown_frame(rows: pl.DataFrame) -> pl.DataFrame:
    """The GPU time breakdown's rows the host-bound rule reads: per trace and device, its
    profiler steps when it has any, else its whole-trace row; all-devices rows (``device``
    null) only where no per-device row exists. So no stretch of time is counted twice.
    ``device_kind`` says whose timeline a row is: ``tenstorrent`` (a chip of an ops report,
    named ``Tenstorrent …``) or ``gpu``."""
    if "step" in rows.columns:
        keys = [c for c in ("trace", "rank", "device") if c in rows.columns]
        stepped = pl.col("step").is_not_null()
        has_steps = stepped.any().over(keys) if keys else stepped.any()
        rows = rows.filter(stepped | ~has_steps)
    if "device" in rows.columns and rows.get_column("device").is_not_null().any():
        rows = rows.filter(pl.col("device").is_not_null())
    if "device_name" in rows.columns:  # a Tenstorrent chip's timeline is its ops report's
        tenstorrent = pl.col("device_name").str.starts_with("Tenstorrent ").fill_null(False)
        kind = pl.when(tenstorrent).then(pl.lit("tenstorrent")).otherwise(pl.lit("gpu"))
        rows = rows.with_columns(kind.alias("device_kind"))
    return rows


def combined(parts: Sequence[Mapping[str, pl.DataFrame]]) -> dict[str, pl.DataFrame]:
    """Frames of several inputs, source by source, stacked (columns a part lacks are null)."""
    out: dict[str, pl.DataFrame] = {}
    for name in SOURCES:
        frames = [part[name] for part in parts if name in part]
        if frames:
            out[name] = pl.concat(frames, how="diagonal_relaxed")
    return out
