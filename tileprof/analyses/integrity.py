"""Capture checks: whether a capture can support the figures drawn from it.

Every check counts one kind of defect in one input (or in two captures compared) and lists the
first places it saw (an event index, a row, a sample index). Its thresholds, severity and the
figures it undermines are data: ``tileprof/data/checks.toml``, overridable from a TOML file of
the same shape (``load_checks``). A check **fails** when its count is over ``allowed`` and its
severity is ``warn``; then every figure it ``undermines`` abstains and says why
(``reasons``, ``abstained_findings``). Definitions: docs/metrics.md, "Capture checks".

The checks of each input kind are pure functions over the frames its reader gives:
``tileprof.analyses.integrity_gpu`` (Kineto traces, jobs of several ranks, nsys exports,
Tenstorrent reports) and ``tileprof.analyses.quality`` (tile dumps).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from tileprof.core.errors import InputError
from tileprof.core.run_schema import known_sum

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SEVERITIES: tuple[str, ...] = ("info", "warn")
OK, INFO, WARN = "ok", "info", "warn"

CHECK_SCHEMA: dict[str, pl.DataType] = {
    "input": pl.String(),
    "check": pl.String(),
    "status": pl.String(),
    "count": pl.Int64(),
    "places": pl.List(pl.String()),
    "detail": pl.String(),
    "undermines": pl.List(pl.String()),
}
"""One row per check and input: ``status`` is ``ok``, ``info`` or ``warn`` (failed)."""

_COMMON_KEYS = ("severity", "allowed", "undermines")


@dataclass(frozen=True)
class CheckRule:
    """One check's table of ``checks.toml``: severity, allowed count, what it undermines and
    its own thresholds (``params``)."""

    id: str
    severity: str
    allowed: int
    undermines: tuple[str, ...]
    params: Mapping[str, Any]

    def param(self, key: str) -> Any:
        return self.params[key]


@dataclass(frozen=True)
class CheckRules:
    """Every check's rule, and how many places a check lists."""

    rules: Mapping[str, CheckRule]
    places: int = 5

    def __getitem__(self, check: str) -> CheckRule:
        return self.rules[check]


def default_document() -> dict[str, Any]:
    """``tileprof/data/checks.toml`` as a mapping."""
    text = (resources.files("tileprof") / "data" / "checks.toml").read_text("utf-8")
    return tomllib.loads(text)


def load_checks(path: Path | None = None) -> CheckRules:
    """The packaged checks, with the keys a TOML file at ``path`` overrides (an unknown check
    or key, or a value of the wrong type, is an error naming the file and the key)."""
    document = default_document()
    if path is not None:
        try:
            raw = tomllib.loads(path.read_bytes().decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(path, f"byte {exc.start}", "not UTF-8 text") from None
        except tomllib.TOMLDecodeError as exc:
            raise InputError(path, None, f"bad TOML: {exc}") from None
        _merge(path, document, raw)
    defaults = document.pop("defaults", {})
    rules = {
        name: CheckRule(
            name,
            table["severity"],
            int(table["allowed"]),
            tuple(table["undermines"]),
            {k: v for k, v in table.items() if k not in _COMMON_KEYS},
        )
        for name, table in document.items()
    }
    return CheckRules(rules, int(defaults.get("places", 5)))


def _merge(path: Path, document: dict[str, Any], raw: Mapping[str, Any]) -> None:
    for name, table in raw.items():
        if name not in document:
            known = ", ".join(k for k in document if k != "defaults")
            raise InputError(path, name, f"unknown check (checks: {known})")
        if not isinstance(table, dict):
            raise InputError(path, name, "expected a table of keys")
        for key, value in table.items():
            if key not in document[name]:
                keys = ", ".join(document[name])
                raise InputError(path, f"{name}.{key}", f"unknown key (keys: {keys})")
            _check_value(path, f"{name}.{key}", document[name][key], value)
            document[name][key] = value


def _check_value(path: Path, where: str, default: Any, value: Any) -> None:
    if isinstance(default, list):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    elif isinstance(default, str):
        ok = isinstance(value, str) and (not where.endswith(".severity") or value in SEVERITIES)
    else:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    if not ok:
        expected = (
            f"one of {', '.join(SEVERITIES)}"
            if where.endswith(".severity")
            else f"a value like {default!r}"
        )
        raise InputError(path, where, f"expected {expected}, not {value!r}")


def result(
    rules: CheckRules, check: str, source: str, count: int, places: Iterable[str], detail: str
) -> dict[str, Any]:
    """One check's row: its status from the count and the rule, the first places (``places``
    may be a generator: only the first few are drawn, so a check over what a dump claims,
    2²⁰ tiles, costs what the samples hold)."""
    rule = rules[check]
    status = OK if count <= rule.allowed else rule.severity
    return {
        "input": source,
        "check": check,
        "status": status,
        "count": count,
        "places": [str(p) for p in itertools.islice(places, rules.places)],
        "detail": detail,
        "undermines": list(rule.undermines),
    }


def check_frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """The rows as one frame of ``CHECK_SCHEMA``."""
    return pl.DataFrame(list(rows), schema=CHECK_SCHEMA, orient="row")


def failed(checks: pl.DataFrame) -> pl.DataFrame:
    """The checks that failed (status ``warn``)."""
    return checks.filter(pl.col("status") == WARN)


def reasons(checks: pl.DataFrame | None, figure: str) -> list[str]:
    """Why a figure abstains: one line per failed check that undermines it (none: it holds)."""
    if checks is None or checks.height == 0:
        return []
    bad = failed(checks).filter(pl.col("undermines").list.contains(figure))
    return [reason_text(row) for row in bad.iter_rows(named=True)]


def reason_text(row: Mapping[str, Any]) -> str:
    """``INPUT: check CHECK failed (COUNT; first at PLACE): DETAIL``."""
    first = f"; first at {row['places'][0]}" if row["places"] else ""
    return f"{row['input']}: check {row['check']} failed ({row['count']:,}{first}): {row['detail']}"


def abstained_findings(findings: Sequence[Any], checks: pl.DataFrame | None) -> list[Any]:
    """The findings, each whose source a failed check undermines turned into an abstention
    that names the check (fired, clear and abstained alike: no verdict either way; a rule
    that does not apply to the inputs stays so)."""
    from tileprof.analyses.findings import ABSTAINED, NOT_APPLICABLE, STATUS_ORDER, Finding

    out = []
    for finding in findings:
        why = [] if finding.status == NOT_APPLICABLE else reasons(checks, finding.rule.source)
        if why:
            text = "capture check failed, no verdict: " + "; ".join(why)
            finding = Finding(finding.rule, ABSTAINED, text, rows=finding.rows)
        out.append(finding)
    return sorted(out, key=lambda f: STATUS_ORDER[f.status])


def undermined(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Per figure, why one input's failed checks (``rows``) undermine it (``reason_text``)."""
    found: dict[str, list[str]] = {}
    for row in rows:
        if row["status"] == WARN:
            for figure in row["undermines"]:
                found.setdefault(figure, []).append(reason_text(row))
    return found


def with_left_out(
    findings: Sequence[Any], kept: Mapping[str, Any], left_out: Mapping[str, Sequence[str]]
) -> list[Any]:
    """The findings with the inputs whose own failed checks undermine a rule's source left
    out: each such rule judged again over ``kept`` (the frames without them) and naming
    them, or abstaining when no other input of its kind is left (a rule that applies to no
    input stays so)."""
    from tileprof.analyses.findings import (
        ABSTAINED,
        NOT_APPLICABLE,
        STATUS_ORDER,
        Finding,
        evaluate_rule,
    )

    out = []
    for finding in findings:
        why = left_out.get(finding.rule.source)
        if why and finding.status != NOT_APPLICABLE:
            again = evaluate_rule(finding.rule, kept.get(finding.rule.source))
            if again.status == NOT_APPLICABLE:
                text = "capture check failed, no verdict: " + "; ".join(why)
                finding = Finding(finding.rule, ABSTAINED, text, rows=finding.rows)
            else:
                text = f"{again.text}; left out by a failed capture check: {'; '.join(why)}"
                finding = dataclasses.replace(again, text=text)
        out.append(finding)
    return sorted(out, key=lambda f: STATUS_ORDER[f.status])


@dataclass(frozen=True)
class Coverage:
    """What one capture covers: its number of calls (GPU rows) or samples (tile dumps)."""

    label: str
    calls: float | None
    calls_word: str = "calls"


def coverage_checks(
    before: Coverage, after: Coverage, rules: CheckRules, source: str
) -> pl.DataFrame:
    """``coverage-calls``: the two captures' calls differ by more than ``max_change`` of the
    first's (a count absent on either side is not judged)."""
    a, b = before.calls, after.calls
    limit = float(rules["coverage-calls"].param("max_change"))
    change = None if a is None or b is None or a == 0 else (b - a) / a
    over = change is not None and abs(change) > limit
    detail = f"{before.calls_word} {_num(a)} in {before.label}, {_num(b)} in {after.label}"
    if change is None:
        detail += " (not compared)"
    elif over:
        detail += f" ({change:+.2%}; over ±{limit:.0%}): the captures cover different work"
    places = [f"{before.label}: {_num(a)}", f"{after.label}: {_num(b)}"] if over else []
    return check_frame([result(rules, "coverage-calls", source, int(over), places, detail)])


def _num(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.6g}"


def diff_coverage(diff: Any, rules: CheckRules) -> pl.DataFrame:
    """The coverage check of a diff's two sides (``tileprof.analyses.diff.Diff``): a tile
    diff compares the matched samples, a GPU diff the calls of every row (not compared when a
    row's calls are not given: the sum of the others would read as a smaller capture)."""
    sides = []
    for side, label in (("before", diff.before.label), ("after", diff.after.label)):
        if "matchedSampleCount" in diff.header:
            sides.append(Coverage(label, diff.header["matchedSampleCount"][side], "samples"))
        else:
            groups = getattr(diff, side).groups
            known = "calls" in groups.columns
            total = groups.select(known_sum("calls")).item() if known else None
            sides.append(Coverage(label, total))
    name = f"{diff.before.label} → {diff.after.label}"
    return coverage_checks(sides[0], sides[1], rules, name)


def band_coverage(
    newest: str, count: float | None, previous: Sequence[float], rules: CheckRules
) -> pl.DataFrame:
    """The coverage check of the newest stored run against the runs before it (``history
    --fail-on``): its samples against the median of theirs."""
    ordered = sorted(float(v) for v in previous)
    middle = len(ordered) // 2
    median = (ordered[(len(ordered) - 1) // 2] + ordered[middle]) / 2 if ordered else None
    band = f"the median of the {len(ordered)} runs before it"
    return coverage_checks(
        Coverage(band, median, "samples"), Coverage(f"run {newest}", count), rules, f"run {newest}"
    )
