"""Capture checks of GPU traces, jobs of several ranks, nsys exports and Tenstorrent reports.

Pure functions over the frames the readers give: a Kineto trace's inventory of complete events
(``INVENTORY_SCHEMA`` of ``tileprof.inputs.gpu.kineto_inventory``: index, cat, name, ts, dur,
pid, device, stream, correlation, external_id, collective, process_group, seq), an nsys
export's facts and a Tenstorrent report's op table. Each returns rows of
``tileprof.analyses.integrity.CHECK_SCHEMA``. Definitions: docs/metrics.md, "Capture checks".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tileprof.analyses.integrity import CheckRules, result
from tileprof.core.gpu_events import COMM_NAME, launched_between
from tileprof.core.kineto import as_text, texts_matching

GPU_CATEGORIES: tuple[str, ...] = ("kernel", "gpu_memcpy", "gpu_memset")
"""Kineto's categories of GPU events (as ``tileprof.inputs.gpu.kineto`` reads them)."""
LAUNCH_CATEGORIES: tuple[str, ...] = ("cuda_runtime", "cuda_driver")
"""Kineto's categories of runtime calls (HIP's too: ROCm traces write ``cuda_runtime``)."""
STEP_PATTERN = r"^ProfilerStep#(\d+)$"

Row = dict[str, Any]


def _where(index: pl.Series) -> list[str]:
    return [f"$.traceEvents[{i}]" for i in index.to_list()]


def _matches(events: pl.DataFrame, column: str, pattern: str) -> pl.Expr:
    """Whether the text of ``events``' ``column`` (Categorical, ``INVENTORY_SCHEMA``) matches
    ``pattern`` (``texts_matching``)."""
    return pl.col(column).is_in(texts_matching(events.get_column(column), pattern).to_list())


def trace_checks(events: pl.DataFrame, source: str, rules: CheckRules) -> list[Row]:
    """Every check of one Kineto trace's inventory."""
    gpu = events.filter(pl.col("cat").is_in(GPU_CATEGORIES))
    calls = events.filter(
        pl.col("cat").is_in(LAUNCH_CATEGORIES), pl.col("correlation").is_not_null()
    )
    steps = step_annotations(events)
    return [
        _unlaunched(gpu, calls, source, rules),
        _unfinished_launches(gpu, calls, source, rules),
        _overlaps(gpu, source, rules),
        _nonpositive(gpu, steps, source, rules),
        _missing_steps(steps, source, rules),
        _truncated_steps(gpu, calls, steps, source, rules),
        _ends_in_step(events, steps, source, rules),
    ]


def step_annotations(events: pl.DataFrame) -> pl.DataFrame:
    """The ``ProfilerStep#N`` annotations: CPU (``user_annotation``) and GPU-side
    (``gpu_user_annotation``), with ``step``, ``side``, ``start`` and ``end``."""
    return events.filter(
        pl.col("cat").is_in(["user_annotation", "gpu_user_annotation"]),
        _matches(events, "name", STEP_PATTERN),
    ).select(
        "index",
        "pid",
        step=as_text("name").str.extract(STEP_PATTERN, 1).cast(pl.Int64),
        side=pl.when(pl.col("cat") == "user_annotation")
        .then(pl.lit("cpu"))
        .otherwise(pl.lit("gpu")),
        start=pl.col("ts"),
        end=pl.col("ts") + pl.col("dur"),
        dur=pl.col("dur"),
    )


def _unlaunched(gpu: pl.DataFrame, calls: pl.DataFrame, source: str, rules: CheckRules) -> Row:
    alone = gpu.join(calls.select("correlation").unique(), on="correlation", how="anti")
    detail = (
        f"{alone.height:,} of {gpu.height:,} GPU events have no runtime call of their correlation"
    )
    return result(
        rules, "kernel-without-launch", source, alone.height, _where(alone["index"]), detail
    )


def _unfinished_launches(
    gpu: pl.DataFrame, calls: pl.DataFrame, source: str, rules: CheckRules
) -> Row:
    pattern = str(rules["launch-without-kernel"].param("launch_pattern"))
    launches = calls.filter(_matches(calls, "name", pattern))
    alone = launches.join(
        gpu.select("correlation").drop_nulls().unique(), on="correlation", how="anti"
    )
    names = ", ".join(sorted(set(alone["name"].drop_nulls().to_list()))[:3])
    detail = (
        f"{alone.height:,} of {launches.height:,} launch calls (name ~ /{pattern}/) have no GPU "
        "event of their correlation" + (f" ({names})" if names else "")
    )
    return result(
        rules, "launch-without-kernel", source, alone.height, _where(alone["index"]), detail
    )


def _overlaps(gpu: pl.DataFrame, source: str, rules: CheckRules) -> Row:
    tolerance = float(rules["overlapping-kernels"].param("tolerance_us"))
    timed = gpu.filter(pl.col("ts").is_not_null(), pl.col("dur").is_not_null())
    flagged = (
        timed.sort("device", "stream", "ts", "index", nulls_last=True)
        .with_columns(
            prev=(pl.col("ts") + pl.col("dur")).cum_max().shift(1).over(["device", "stream"])
        )
        .filter(pl.col("ts") < pl.col("prev") - tolerance)
        .sort("index")
    )
    streams = flagged.select("device", "stream").unique().height
    detail = (
        f"{flagged.height:,} GPU events start before the previous one on their stream ends "
        f"({streams:,} streams; tolerance {tolerance:g} µs)"
    )
    return result(
        rules, "overlapping-kernels", source, flagged.height, _where(flagged["index"]), detail
    )


def _nonpositive(gpu: pl.DataFrame, steps: pl.DataFrame, source: str, rules: CheckRules) -> Row:
    bad = (
        pl.concat([gpu.select("index", "dur"), steps.select("index", "dur")])
        .filter(pl.col("dur").is_null() | (pl.col("dur") <= 0))
        .sort("index")
    )
    negative = bad.filter(pl.col("dur") < 0).height
    missing = bad["dur"].null_count()
    detail = (
        f"{bad.height:,} GPU events and step annotations have a duration ≤ 0 or none "
        f"({negative:,} negative, {missing:,} without dur)"
    )
    return result(rules, "nonpositive-duration", source, bad.height, _where(bad["index"]), detail)


def _missing_steps(steps: pl.DataFrame, source: str, rules: CheckRules) -> Row:
    """Step numbers absent between the first and last, and CPU steps without a GPU-side
    annotation in a trace that annotates other steps on the GPU."""
    numbers = set(steps["step"].to_list())
    gaps = sorted(set(range(min(numbers), max(numbers) + 1)) - numbers) if numbers else []
    cpu = set(steps.filter(pl.col("side") == "cpu")["step"].to_list())
    gpu = set(steps.filter(pl.col("side") == "gpu")["step"].to_list())
    unannotated = sorted(cpu - gpu) if gpu else []
    places = [f"ProfilerStep#{n} (no annotation)" for n in gaps]
    places += [f"ProfilerStep#{n} (no GPU annotation)" for n in unannotated]
    detail = (
        f"{len(gaps):,} step numbers missing between the first and last step; "
        f"{len(unannotated):,} CPU steps without the GPU-side annotation other steps have"
    )
    return result(rules, "step-missing", source, len(places), places, detail)


def _truncated_steps(
    gpu: pl.DataFrame, calls: pl.DataFrame, steps: pl.DataFrame, source: str, rules: CheckRules
) -> Row:
    """GPU-side step annotations that leave out GPU events their CPU step launched."""
    tolerance = float(rules["step-truncated"].param("tolerance_us"))
    counts = _launched_by_step(gpu, calls, steps).with_columns(
        outside=(pl.col("ts") < pl.col("start") - tolerance)
        | (pl.col("ts") + pl.col("dur") > pl.col("end") + tolerance)
    )
    truncated = (
        counts.group_by("annotation", "step", "index")
        .agg(pl.len().alias("inside"), pl.col("outside").sum())
        .filter(pl.col("outside") > 0)
        .sort("annotation")
    )
    places, detail_parts = [], []
    for step, index, inside, outside in truncated.select(
        "step", "index", "inside", "outside"
    ).iter_rows():
        places.append(f"ProfilerStep#{step} at $.traceEvents[{index}]")
        detail_parts.append(
            f"step {step} covers {inside - outside:,} of the "
            f"{inside:,} GPU events its CPU step launched"
        )
    detail = (
        "; ".join(detail_parts) or "every GPU-side step covers the GPU events its CPU step launched"
    )
    return result(rules, "step-truncated", source, len(places), places, detail)


def _launched_by_step(gpu: pl.DataFrame, calls: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """One row per (GPU-side annotation, GPU event whose runtime call began inside the first
    CPU step of the annotation's number): ``annotation`` (its place among the annotations
    by step, in file order among equal steps), the annotation's ``step``, ``index``,
    ``start`` and ``end``, the event's ``ts`` and ``dur``. The events sorted by launch once,
    each CPU step's are a range of them (two binary searches), not a filter of every event
    per step."""
    launched = (
        gpu.join(
            calls.select("correlation", launch=pl.col("ts")).unique("correlation"),
            on="correlation",
        )
        .filter(pl.col("launch").is_not_null())
        .select("launch", "ts", "dur")
        .sort("launch")
    )
    cpu = steps.filter(pl.col("side") == "cpu").unique("step", keep="first", maintain_order=True)
    annotations = (
        steps.filter(pl.col("side") == "gpu")
        .sort("step", maintain_order=True)
        .with_row_index("annotation")
        .join(
            cpu.select("step", cpu_start="start", cpu_end="end"),
            on="step",
            maintain_order="left",
        )
        .drop_nulls(["start", "end", "cpu_start", "cpu_end"])
    )
    at = launched_between(
        launched.get_column("launch"),
        annotations.get_column("cpu_start"),
        annotations.get_column("cpu_end"),
    )
    ranges = (
        annotations.select("annotation", "step", "index", "start", "end")
        .with_columns(at)
        .explode("at")
        .drop_nulls("at")
    )
    events = launched.select("ts", "dur")[ranges.get_column("at")]
    return pl.concat([ranges.drop("at"), events], how="horizontal")


def _ends_in_step(events: pl.DataFrame, steps: pl.DataFrame, source: str, rules: CheckRules) -> Row:
    """Step annotations that end after every other event of the trace has ended."""
    tolerance = float(rules["trace-ends-in-step"].param("tolerance_us"))
    others = events.join(steps.select("index"), on="index", how="anti")
    end = others.select((pl.col("ts") + pl.col("dur")).max()).item()
    late = (
        steps.filter(pl.col("end") > end + tolerance).sort("index")
        if end is not None
        else steps.clear()
    )
    detail = (
        f"{late.height:,} step annotations end after the trace's last other event "
        f"(at {end if end is not None else '—'} µs; tolerance {tolerance:g} µs)"
    )
    places = [
        f"ProfilerStep#{s} at $.traceEvents[{i}]"
        for s, i in late.select("step", "index").iter_rows()
    ]
    return result(rules, "trace-ends-in-step", source, late.height, places, detail)


# ---------------------------------------------------------------- ranks of one job


@dataclass(frozen=True)
class RankCapture:
    """What the checks across a job's ranks read of one rank's trace (``rank_capture``): its
    CPU-side step count, its clock range (µs, None when it holds no event) and its collectives
    (``collective_keys``). A trace's inventory is checked and let go; this is what is kept of it
    until every rank has been read (the whole inventory of the 626 MB trace held 366 MB)."""

    steps: int
    span: tuple[float, float] | None
    """From the first ``ts`` to the last ``ts + dur``; None when no event has both."""
    collectives: pl.DataFrame


def rank_capture(events: pl.DataFrame) -> RankCapture:
    """The ``RankCapture`` of one trace's inventory."""
    steps = step_annotations(events).filter(pl.col("side") == "cpu")["step"].n_unique()
    ends = (pl.col("ts").min().alias("start"), (pl.col("ts") + pl.col("dur")).max().alias("end"))
    start, end = events.select(ends).row(0)
    span = None if start is None or end is None else (float(start), float(end))
    return RankCapture(steps, span, collective_keys(events))


def job_checks(
    ranks: Mapping[int, tuple[str, RankCapture]], job: str, rules: CheckRules
) -> list[Row]:
    """The checks across the traces of one job, by rank (name, what was kept of it): step
    counts, clock ranges and collectives seen on some ranks only."""
    return [
        _rank_steps(ranks, job, rules),
        _rank_clocks(ranks, job, rules),
        _partial_collectives(ranks, job, rules),
    ]


def _rank_steps(ranks: Mapping[int, tuple[str, RankCapture]], job: str, rules: CheckRules) -> Row:
    counts = {rank: capture.steps for rank, (_, capture) in ranks.items()}
    values = list(counts.values())
    usual = max(set(values), key=lambda v: (values.count(v), v))
    odd = sorted(r for r, n in counts.items() if n != usual)
    places = [f"rank {r} ({ranks[r][0]}): {counts[r]} steps" for r in odd]
    detail = f"{len(odd)} of {len(ranks)} ranks hold another number of steps than {usual}"
    return result(rules, "rank-step-counts", job, len(odd), places, detail)


def _rank_clocks(ranks: Mapping[int, tuple[str, RankCapture]], job: str, rules: CheckRules) -> Row:
    share = float(rules["rank-clock-ranges"].param("min_overlap"))
    spans = {rank: c.span for rank, (_, c) in ranks.items() if c.span is not None}
    # a rank without a timed event has no range to cover, and narrows no other's
    length = min(e for _, e in spans.values()) - max(s for s, _ in spans.values()) if spans else 0.0
    odd = sorted(r for r, (s, e) in spans.items() if e > s and length < share * (e - s))
    places = [f"rank {r} ({ranks[r][0]}): {spans[r][0]:.0f}–{spans[r][1]:.0f} µs" for r in odd]
    detail = (
        f"{len(odd)} of {len(ranks)} ranks: the job's common clock range "
        f"({max(length, 0.0):,.0f} µs) covers under {share:.0%} of their own"
    )
    return result(rules, "rank-clock-ranges", job, len(odd), places, detail)


def collective_keys(events: pl.DataFrame) -> pl.DataFrame:
    """Each communication kernel's (process group, seq): its own args, else those of the
    ``record_param_comms`` op its launch call names (External id); without a seq, the
    collective's (or kernel's) name and its occurrence number."""
    comms = events.filter(pl.col("cat") == "kernel", _matches(events, "name", COMM_NAME.pattern))
    calls = (
        events.filter(pl.col("cat").is_in(LAUNCH_CATEGORIES))
        .select("correlation", launch_ext="external_id")
        .drop_nulls("correlation")
        .unique("correlation")
    )
    params = (
        events.filter(pl.col("cat") == "cpu_op", pl.col("name") == "record_param_comms")
        .select(launch_ext="external_id", op_pg="process_group", op_seq="seq", op_coll="collective")
        .drop_nulls("launch_ext")
        .unique("launch_ext")
    )
    joined = comms.join(calls, on="correlation", how="left").join(
        params, on="launch_ext", how="left"
    )
    keyed = joined.select(
        "index",
        group=pl.coalesce(as_text("process_group"), as_text("op_pg")).fill_null(""),
        seq=pl.coalesce("seq", "op_seq"),
        what=pl.coalesce(as_text("collective"), as_text("op_coll"), as_text("name")),
    )
    return keyed.with_columns(
        key=pl.when(pl.col("seq").is_not_null())
        .then(pl.format("group {} seq {}", "group", "seq"))
        .otherwise(pl.format("{} #{}", "what", pl.int_range(pl.len()).over("group", "what")))
    )


def _partial_collectives(
    ranks: Mapping[int, tuple[str, RankCapture]], job: str, rules: CheckRules
) -> Row:
    """Collectives of a process group seen on some of the ranks that show that group, within
    the seq range every one of them covers (the edges are the capture windows' skew)."""
    keys = pl.concat(
        [
            capture.collectives.with_columns(rank=pl.lit(r, pl.Int64))
            for r, (_, capture) in ranks.items()
        ]
    )
    members = keys.group_by("group").agg(pl.col("rank").n_unique().alias("members"))
    bounds = keys.group_by("group", "rank").agg(lo=pl.col("seq").min(), hi=pl.col("seq").max())
    window = bounds.group_by("group").agg(lo=pl.col("lo").max(), hi=pl.col("hi").min())
    inside = keys.join(window, on="group").filter(
        pl.col("seq").is_null() | pl.col("seq").is_between(pl.col("lo"), pl.col("hi"))
    )
    seen = inside.group_by("group", "key").agg(pl.col("rank").unique().sort().alias("ranks"))
    partial = seen.join(members, on="group").filter(pl.col("ranks").list.len() < pl.col("members"))
    partial = partial.sort("group", "key")
    places = [
        f"{k} on ranks {', '.join(map(str, rs))} only"
        for k, rs in partial.select("key", "ranks").iter_rows()
    ]
    detail = (
        f"{partial.height:,} of {seen.height:,} collectives are missing on some of the "
        f"{len(ranks)} ranks that show their process group"
    )
    return result(rules, "partial-collectives", job, partial.height, places, detail)


# ---------------------------------------------------------------- nsys exports


def export_checks(
    events: pl.DataFrame,
    capture: tuple[float, float] | None,
    missing_strings: pl.DataFrame,
    named: Sequence[int],
    source: str,
    rules: CheckRules,
) -> list[Row]:
    """An nsys export's checks over its GPU events (``table``, ``row``, ``device``,
    ``start_ns``, ``end_ns``), its capture range in ns (``ANALYSIS_DETAILS``; None when the
    export has none), the rows whose string ids ``StringIds`` lacks (``table``, ``row``,
    ``column``, ``id``) and the devices ``TARGET_INFO_GPU`` names."""
    if capture is None:
        outside = events.clear()
        range_text = "no capture range in the export (ANALYSIS_DETAILS): nothing compared"
    else:
        outside = events.filter((pl.col("start_ns") < capture[0]) | (pl.col("end_ns") > capture[1]))
        range_text = (
            f"{outside.height:,} of {events.height:,} GPU events lie outside the capture range "
            f"{capture[0]:,.0f}–{capture[1]:,.0f} ns"
        )
    used = sorted(events["device"].drop_nulls().unique().to_list())
    unnamed = [d for d in used if d not in set(named)]
    rows = [
        _export_nonpositive(events, source, rules),
        result(rules, "kernel-outside-capture", source, outside.height, _rows(outside), range_text),
        result(
            rules,
            "missing-string-id",
            source,
            missing_strings.height,
            [f"{t} row {r} {c} = {i}" for t, r, c, i in missing_strings.iter_rows()],
            f"{missing_strings.height:,} names point at ids StringIds does not hold",
        ),
        result(
            rules,
            "unnamed-device",
            source,
            len(unnamed),
            [f"device {d}" for d in unnamed],
            f"{len(unnamed)} of {len(used)} devices have no name (no TARGET_INFO_GPU row); "
            "they are named GPU N",
        ),
    ]
    return rows


def _export_nonpositive(events: pl.DataFrame, source: str, rules: CheckRules) -> Row:
    """An export's GPU events that end at or before their start, or lack either (the
    readers refuse one that ends before it starts: this names every one, and where)."""
    start, end = pl.col("start_ns"), pl.col("end_ns")
    bad = events.filter(start.is_null() | end.is_null() | (end <= start))
    negative = bad.filter(end < start).height
    missing = bad.filter(start.is_null() | end.is_null()).height
    detail = (
        f"{bad.height:,} of {events.height:,} GPU events have a duration ≤ 0 or none "
        f"({negative:,} negative, {missing:,} without start or end)"
    )
    return result(rules, "nonpositive-duration", source, bad.height, _rows(bad), detail)


def _rows(frame: pl.DataFrame) -> list[str]:
    return [f"{t} row {r}" for t, r in frame.select("table", "row").iter_rows()]


# ---------------------------------------------------------------- Tenstorrent reports


def ops_report_checks(table: pl.DataFrame, source: str, rules: CheckRules) -> list[Row]:
    """A Tenstorrent ops report's checks over its rows (``line``, ``op``, ``op_type``,
    ``device``, ``duration_us``, ``host_start_ns``): device ops without device kernel time
    (the device profiler's buffer was full), and signposts with no op before the next one."""
    marks = table.filter(pl.col("op_type") == "signpost")
    ops = table.filter((pl.col("op_type") != "signpost") | pl.col("op_type").is_null())
    untimed = ops.filter(pl.col("device").is_not_null(), pl.col("duration_us").is_null())
    timed_ops = ops.filter(pl.col("device").is_not_null())
    rule = rules["signpost-without-ops"]
    empty = _empty_signposts(
        marks, ops, str(rule.param("opening_pattern")), str(rule.param("closing_pattern"))
    )
    return [
        result(
            rules,
            "op-without-device-time",
            source,
            untimed.height,
            [f"line {n}" for n in untimed["line"].to_list()],
            f"{untimed.height:,} of {timed_ops.height:,} device op calls have no DEVICE KERNEL "
            "DURATION (the device profiler's buffer was full, or the op was not profiled)",
        ),
        result(
            rules,
            "signpost-without-ops",
            source,
            empty.height,
            [f"line {n} ({name})" for n, name in empty.select("line", "op").iter_rows()],
            f"{empty.height:,} of {marks.height:,} signposts frame no op call (an opening "
            "one before its closing one, another before the next signpost)",
        ),
    ]


def _empty_signposts(
    marks: pl.DataFrame, ops: pl.DataFrame, opening: str, closing: str
) -> pl.DataFrame:
    """Signposts that frame no op row (file order): an opening one (``NAME started``) with no
    op before its closing one (the next ``NAME finished``, else the end), a plain one with no
    op before the next signpost; closing ones frame nothing of their own."""
    if marks.height == 0:
        return marks
    op_lines = sorted(ops["line"].to_list())
    rows = marks.sort("line").select("line", "op").rows()
    empty = []
    for k, (line, name) in enumerate(rows):
        text = name or ""
        if re.search(closing, text):
            continue
        if re.search(opening, text):
            base = re.sub(opening, "", text)
            ends = [ln for ln, nm in rows[k + 1 :] if re.sub(closing, "", nm or "") == base
                    and re.search(closing, nm or "")]  # fmt: skip
        else:
            ends = [ln for ln, _ in rows[k + 1 :]]
        stop = ends[0] if ends else None
        if not any(n > line and (stop is None or n < stop) for n in op_lines):
            empty.append(line)
    return marks.filter(pl.col("line").is_in(empty)).sort("line")
