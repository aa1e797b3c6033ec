"""Findings (docs/metrics.md, "Findings"): every rule fires on a frame built to fire it and
abstains when its input is missing or the effect is under its floor; thresholds come from an
overrides file that is checked key by key; the command prints them as a table and as JSON.

Frames of the GPU rules are built by hand with the column names of the breakdown and the
roofline op rows; the tile rules read constructed dumps through the real superstep and summary
analyses, so the numbers they cite are worked out here by hand.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from tests.samples import frame, sample, write_dump
from tileprof.analyses import findings as F
from tileprof.commands.cli import cli
from tileprof.core.errors import InputError
from tileprof.model.findings import profile_frames
from tileprof.model.profile import Profile

TILES = 4


def tile_frames(samples: list[dict[str, Any]]) -> dict[str, pl.DataFrame]:
    profile = Profile(frame(samples), (), 1_500_000_000, TILES)
    return profile_frames(profile, None, "dump")


def outcome(rule: F.Rule, frames: dict[str, pl.DataFrame]) -> F.Finding:
    (finding,) = F.evaluate(frames, [rule])
    return finding


# ---------------------------------------------------------------- GPU rules, hand-built frames


def breakdown(*steps: tuple[float, float, float]) -> pl.DataFrame:
    """(total_us, idle_us, idle_host_wait_us) per step of device 0."""
    return pl.DataFrame(
        {
            "trace": ["t.json"] * len(steps),
            "device_name": ["H200"] * len(steps),
            "device_kind": ["gpu"] * len(steps),
            "device": [0] * len(steps),
            "step": list(range(1, len(steps) + 1)),
            "window": [f"step {i}" for i in range(1, len(steps) + 1)],
            "total_us": [s[0] for s in steps],
            "idle_us": [s[1] for s in steps],
            "idle_host_wait_us": [s[2] for s in steps],
        }
    )


def test_host_bound_fires_on_mostly_host_wait_idle() -> None:
    found = outcome(F.HOST_BOUND, {"breakdown": breakdown((100, 30, 20), (100, 5, 5))})
    assert found.status == F.FIRED
    assert found.text == (
        "host-bound: t.json H200 (device 0), step 1 is idle 30 µs of 100 µs (30.00%, over "
        "10.00%), 66.67% of it waiting on the host (over 50.00%); 1 of 2 steps like it"
    )


def test_breakdown_rows_count_each_stretch_of_time_once() -> None:
    rows = pl.DataFrame(
        {
            "trace": ["a", "a", "a", "a", "b"],
            "device": [0, 0, 0, None, 1],
            "step": [1, 2, None, None, None],
            "idle_us": [1.0, 2.0, 3.0, 4.0, 5.0],
        }
    )
    # Trace a: its two steps (not its whole-trace or all-devices rows); trace b: its whole trace.
    assert F.breakdown_frame(rows).get_column("idle_us").to_list() == [1.0, 2.0, 5.0]


def test_ridge_points_come_from_the_spec_lookup_once_per_device() -> None:
    asked: list[tuple[str | None, ...]] = []

    def ridge(target: str | None, dtype: str | None, family: str | None) -> float | None:
        asked.append((target, dtype, family))
        return 200.0 if target == "H200" else None

    frame = ops(("gemm", 0.2, 300, 900), ("gemm", 0.5, 300, 50)).drop("ridge_point")
    frame = frame.with_columns(pl.Series("target", ["H200", "CPU"]))
    points = F.op_frame(frame, ridge).get_column("ridge_point").to_list()
    assert points == [200.0, None]
    assert sorted(asked, key=str) == [("CPU", "bf16", "gemm"), ("H200", "bf16", "gemm")]


def test_host_bound_is_clear_when_idle_is_not_host_wait() -> None:
    found = outcome(F.HOST_BOUND, {"breakdown": breakdown((100, 30, 5), (100, 5, 4))})
    assert found.status == F.CLEAR
    # Closest on the first condition among the rows meeting the second: step 2's 5%.
    assert found.values == {"idle_share": 0.05}
    assert "(closest idle_us / total_us: 5.00%; 2 breakdown rows where device_kind = gpu)" in (
        found.text
    )


def test_a_clear_rule_with_no_row_meeting_its_other_conditions_says_so_not_a_dash() -> None:
    # The nsys export's GPUs idle 0.7%, a quarter of it host wait: no row is near a closest.
    found = outcome(F.HOST_BOUND, {"breakdown": breakdown((100, 30, 5), (100, 20, 4))})
    assert found.status == F.CLEAR and found.values == {"idle_share": None}
    assert found.text.endswith(
        "(no row has idle_host_wait_us / idle_us > 50.00%; "
        "2 breakdown rows where device_kind = gpu)"
    )
    assert "—" not in found.text


def test_host_bound_abstains_under_its_floor_and_does_not_apply_without_a_gpu() -> None:
    missing = outcome(F.HOST_BOUND, {})
    assert missing.status == F.NOT_APPLICABLE and "no breakdown input" in missing.text
    small = outcome(F.HOST_BOUND, {"breakdown": breakdown((20, 4, 3))})
    assert small.status == F.ABSTAINED
    assert "largest idle_us (4) is under the floor idle_us >= 5" in small.text
    lacking = outcome(F.HOST_BOUND, {"breakdown": breakdown((20, 4, 3)).drop("idle_host_wait_us")})
    assert lacking.status == F.ABSTAINED and "breakdown lacks idle_host_wait_us" in lacking.text


def ops(*rows: tuple[str, float, float, float]) -> pl.DataFrame:
    """(op_family, roofline_fraction, arithmetic_intensity, total_us); ridge point 200."""
    return F.op_frame(
        pl.DataFrame(
            {
                "target": ["H200"] * len(rows),
                "op": [f"aten::op{i}" for i in range(len(rows))],
                "op_family": [r[0] for r in rows],
                "gemm_mnk": ["4096x4096x4096"] * len(rows),
                "dtype": ["bf16"] * len(rows),
                "roofline_fraction": [r[1] for r in rows],
                "arithmetic_intensity": [r[2] for r in rows],
                "ridge_point": [200.0] * len(rows),
                "total_us": [r[3] for r in rows],
            }
        )
    )


def test_compute_under_used_fires_on_a_gemm_above_the_ridge() -> None:
    frames = {
        "ops": ops(("gemm", 0.2, 300, 900), ("gemm", 0.9, 300, 50), ("elementwise", 0.1, 300, 50))
    }
    found = outcome(F.COMPUTE_UNDER_USED, frames)
    assert found.status == F.FIRED
    assert found.text == (
        "compute under-used: aten::op0 (4096x4096x4096, bf16) on H200 reaches 20.00% of its "
        "roofline (under 30.00%) at 300 FLOP/byte, 1.500× the ridge point 200 (over 1×); "
        "900 µs, 90.00% of op time; 1 of 2 GEMM rows like it"
    )


def test_compute_under_used_is_clear_below_the_ridge() -> None:
    found = outcome(F.COMPUTE_UNDER_USED, {"ops": ops(("gemm", 0.2, 100, 900))})
    assert found.status == F.CLEAR  # memory-bound: a low fraction is expected there


def test_compute_under_used_abstains_without_roofline_columns_gemms_or_time() -> None:
    lacking = outcome(F.COMPUTE_UNDER_USED, {"ops": ops(("gemm", 0.2, 300, 9)).drop("ridge_point")})
    assert lacking.status == F.ABSTAINED and "ops lacks ridge_point" in lacking.text
    no_gemm = outcome(F.COMPUTE_UNDER_USED, {"ops": ops(("elementwise", 0.1, 300, 9))})
    assert no_gemm.status == F.NOT_APPLICABLE
    assert "no ops rows where op_family = gemm" in no_gemm.text
    tiny = outcome(F.COMPUTE_UNDER_USED, {"ops": ops(("gemm", 0.2, 300, 1), ("other", 1, 1, 999))})
    assert tiny.status == F.ABSTAINED and "under the floor time_share >= 1.00%" in tiny.text


# ---------------------------------------------------------------- tile rules, constructed dumps


def straggler_dump(long: int) -> list[dict[str, Any]]:
    """A balanced superstep of ``long`` cycles on every tile, then one where tile 2 runs 400
    cycles and the others 100."""
    balanced = [sample(t, 0, long) for t in range(TILES)]
    base = long + 50
    uneven = [sample(t, base, 400 if t == 2 else 100) for t in range(TILES)]
    return balanced + uneven


def test_imbalance_names_the_critical_tile() -> None:
    found = outcome(F.IMBALANCE, tile_frames(straggler_dump(100)))
    # Superstep 1: mean (3 × 100 + 400) / 4 = 175 over 400; lost 3 × 300 = 900 tile-cycles of
    # 4 tiles × the epoch's 550 cycles.
    assert found.status == F.FIRED
    assert found.text == (
        "imbalance, critical tile 2: superstep 1 of epoch 1 (dump) has load balance 43.75% "
        "(under 80.00%); 900 tile-cycles lost, 40.91% of the epoch's tile-cycles; "
        "1 of 2 supersteps like it"
    )
    assert found.row is not None and found.row["criticalTile"] == 2


def test_imbalance_abstains_under_its_floor_and_is_clear_when_balanced() -> None:
    # The same 900 tile-cycles in an epoch of 100,450 cycles: 0.22% < 0.5%.
    small = outcome(F.IMBALANCE, tile_frames(straggler_dump(100_000)))
    assert small.status == F.ABSTAINED and "under the floor imbalanceShare >= 0.50%" in small.text
    balanced = outcome(F.IMBALANCE, tile_frames([sample(t, 0, 100) for t in range(TILES)]))
    assert balanced.status == F.CLEAR


def skew_dump(late: int, length: int) -> list[dict[str, Any]]:
    """Tiles 0-2 compute [0, length); tile 3 starts ``late`` cycles after them."""
    return [sample(t, 0, length) for t in range(3)] + [sample(3, late, length - late)]


def test_start_skew_fires_and_abstains_under_its_floor() -> None:
    found = outcome(F.START_SKEW, tile_frames(skew_dump(200, 400)))
    assert found.status == F.FIRED
    assert "the last tile starts 200 cycles after the first, 50.00% of the superstep" in found.text
    small = outcome(F.START_SKEW, tile_frames(skew_dump(50, 100)))  # 50% but 50 < 100 cycles
    assert small.status == F.ABSTAINED and "under the floor startSkewCycles >= 100" in small.text


def exchange_dump(scale: int) -> list[dict[str, Any]]:
    """Tile 0 computes 10 × scale cycles, the others 2 × scale, then every tile exchanges
    10 × scale cycles: the epoch spans 20 × scale."""
    compute = [sample(t, 0, (10 if t == 0 else 2) * scale) for t in range(TILES)]
    exchange = [
        sample(t, 10 * scale, 10 * scale, None, kind="exchange", phase=1) for t in range(TILES)
    ]
    return compute + exchange


@pytest.mark.parametrize(
    ("rule", "cited"),
    [
        # Σ max busy 10,000 over 20,000 cycles.
        (F.COMMUNICATION, "communication efficiency 50.00% (under 80.00%) over its 20,000 cycles"),
        # 4 × 10,000 exchange tile-cycles of 4 × 20,000.
        (F.EXCHANGE_HEAVY, "exchange takes 50.00% of epoch 1's tile-cycles"),
        # Tiles 1-3 wait 8,000 each: 24,000 of 80,000 tile-cycles.
        (F.SYNC_WAIT, "tiles wait at the sync for 30.00% of epoch 1's tile-cycles"),
    ],
)
def test_epoch_rules_fire_and_abstain_on_a_short_epoch(rule: F.Rule, cited: str) -> None:
    found = outcome(rule, tile_frames(exchange_dump(1000)))
    assert found.status == F.FIRED and cited in found.text
    short = outcome(rule, tile_frames(exchange_dump(100)))  # the same shares over 2,000 cycles
    assert short.status == F.ABSTAINED and "under the floor cycles >= 10,000" in short.text


def two_ops(gap: int, length: int = 1000) -> list[dict[str, Any]]:
    """Two op calls (supersteps) on every tile, [0, length) and ``gap`` cycles after it."""
    return [sample(t, start, length) for t in range(TILES) for start in (0, length + gap)]


def chip_frames(samples: list[dict[str, Any]]) -> dict[str, pl.DataFrame]:
    """``tile_frames`` of a tt-metal device log: a Tenstorrent chip's dump."""
    profile = Profile(frame(samples), (), 1_000_000_000, TILES, device="Tenstorrent wormhole_b0")
    return profile_frames(profile, None, "log")


def test_op_gaps_fire_on_a_device_log_where_communication_would() -> None:
    """Two op calls of 1,000 cycles with 20,000 cycles between them: the chip runs no kernel
    for 20,000 of 22,000 cycles (90.91%). On a tile device that time is the sync between
    supersteps, so communication fires (2,000 of 22,000 cycles computing: 9.09%); on a
    Tenstorrent chip it is the host's, between op calls, so op-gaps fires and communication
    does not apply (tt-metal's real log: "communication efficiency 0.01%" for four ops 0.5 s
    apart)."""
    found = outcome(F.OP_GAPS, chip_frames(two_ops(20_000)))
    assert found.status == F.FIRED
    assert found.text == (
        "op-to-op gaps: chip 1 (log) has no core running a kernel for 20,000 of its 22,000 "
        "cycles (90.91%, over 50.00%), between one op call and the next: the host dispatching "
        "the next op or doing other work, not communication on the chip. The ops report beside "
        "the log tells dispatch (gaps under 1 ms: run with tracing) from other host work "
        "(profile a warm run)"
    )
    assert outcome(F.COMMUNICATION, chip_frames(two_ops(20_000))).status == F.NOT_APPLICABLE
    tile = tile_frames(two_ops(20_000))
    assert outcome(F.OP_GAPS, tile).status == F.NOT_APPLICABLE
    communication = outcome(F.COMMUNICATION, tile)
    assert communication.status == F.FIRED and "efficiency 9.09%" in communication.text


def test_op_gaps_are_clear_when_short_and_abstain_under_their_floor() -> None:
    """20,000 cycles between ops of 20,000 each: 33.33% of 60,000, clear; 9,000 cycles between
    ops of 1,000: 81.82%, but under the floor of 10,000 cycles."""
    clear = outcome(F.OP_GAPS, chip_frames(two_ops(20_000, length=20_000)))
    assert clear.status == F.CLEAR and clear.values == {"gap_share": pytest.approx(1 / 3)}
    small = outcome(F.OP_GAPS, chip_frames(two_ops(9_000)))
    assert small.status == F.ABSTAINED and "under the floor betweenCycles >= 10,000" in small.text


def test_the_real_device_log_is_op_gaps_not_communication() -> None:
    """tt-metal's own log of four ops on one core: 490,497,528 of its 490,528,703 cycles lie
    between the ops (the supersteps' syncAfter: 480,782,043 + 9,597,348 + 118,137)."""
    log = Path(__file__).resolve().parent.parent / "fixtures" / "real" / "tt-device-log"
    result = CliRunner().invoke(
        cli, ["findings", str(log / "profile_log_device.csv"), "--format", "json"]
    )
    document = json.loads(result.stdout)
    by_rule = {f["id"]: f for f in document["findings"]}
    assert by_rule["op-gaps"]["status"] == "fired" and "communication" not in by_rule
    assert "490,497,528 of its 490,528,703 cycles (99.99%" in by_rule["op-gaps"]["message"]
    assert 480_782_043 + 9_597_348 + 118_137 == 490_497_528


def groups(*rows: tuple[str, int, float | None]) -> pl.DataFrame:
    return F.group_frame(
        pl.DataFrame(
            {
                "name": [r[0] for r in rows],
                "phaseCycles": [r[1] for r in rows],
                "deviceUsefulUtilization": [r[2] for r in rows],
            },
            schema_overrides={"deviceUsefulUtilization": pl.Float64},
        ),
        "dump",
    )


def test_low_utilization_fires_on_a_big_group() -> None:
    found = outcome(
        F.LOW_UTILIZATION, {"groups": groups(("gemm", 90_000, 0.1), ("x", 10_000, 0.9))}
    )
    assert found.status == F.FIRED
    assert found.text == (
        "low utilization: group gemm (dump) takes 90.00% of the phase cycles (at least 10.00%) "
        "at device useful utilization 10.00% (under 25.00%); 1 of 2 groups like it"
    )
    small_group = outcome(
        F.LOW_UTILIZATION, {"groups": groups(("g", 5_000, 0.1), ("x", 95_000, 1))}
    )
    assert small_group.status == F.CLEAR  # 5% of the phase cycles is not a big group
    assert small_group.values == {"utilization": 1.0}  # closest among the big groups


def test_low_utilization_abstains_without_useful_cycles_or_under_its_floor() -> None:
    unknown = outcome(F.LOW_UTILIZATION, {"groups": groups(("g", 90_000, None))})
    assert unknown.status == F.ABSTAINED
    assert "deviceUsefulUtilization is null in every groups row" in unknown.text
    small = outcome(F.LOW_UTILIZATION, {"groups": groups(("g", 9_000, 0.1))})
    assert small.status == F.ABSTAINED and "under the floor phaseCycles >= 10,000" in small.text


def test_every_rule_has_a_fire_and_an_abstain_test() -> None:
    source = Path(__file__).read_text()
    for rule in F.RULES:
        assert f"F.{rule.id.upper().replace('-', '_')}" in source, rule.id


def test_a_tenstorrent_reports_gaps_are_host_work_not_dispatch() -> None:
    """The real Wormhole CLIP report: the chip runs ops for 13 ms of 15 s, but its median
    op-to-op gap is 0.66 µs; 99.98% of the gap time is in 19 gaps of 1 ms or more (the first
    run's host work between ops). So host-gaps fires and dispatch-bound does not: advising
    tracing for dispatch would be advice for 0.03% of the time."""
    from tileprof.analyses.gpu_breakdown import long_gaps
    from tileprof.inputs.timelines import load_timeline
    from tileprof.model.breakdown import trace_breakdown

    clip = (
        Path(__file__).resolve().parent.parent / "fixtures" / "real" / "tt_wh_clip_encoder_400.csv"
    )
    rows = trace_breakdown([clip]).breakdown.rows
    gaps = long_gaps([load_timeline(clip)])
    frame = F.breakdown_frame(rows, gaps=gaps)
    chip = frame.filter(pl.col("device") == 0).row(0, named=True)
    assert chip["long_gaps"] == 19
    assert chip["long_gap_us"] + chip["dispatch_gap_us"] == pytest.approx(chip["idle_us"])
    host = outcome(F.HOST_GAPS, {"breakdown": frame})
    assert host.status == F.FIRED, host.text
    assert "Tenstorrent wormhole_b0 (chip 0)" in host.text and " is 19 gaps of 1 ms" in host.text
    assert host.values == {"long_share": pytest.approx(chip["long_gap_us"] / chip["total_us"])}
    assert chip["long_gap_us"] / chip["total_us"] > 0.99
    dispatch = outcome(F.DISPATCH_BOUND, {"breakdown": frame})
    assert dispatch.status == F.CLEAR, dispatch.text
    share = chip["dispatch_gap_us"] / chip["total_us"]
    assert dispatch.values["gap_share"] == pytest.approx(share) and share < 0.001
    # without the gaps the chip rules lack their figure: no verdict either way
    for rule in (F.HOST_GAPS, F.DISPATCH_BOUND):
        lacking = outcome(rule, {"breakdown": F.breakdown_frame(rows)})
        assert lacking.status == F.ABSTAINED and "breakdown lacks" in lacking.text
    # no GPU rows: the host-bound rule (launch calls the chip's report does not record) does
    # not apply
    assert outcome(F.HOST_BOUND, {"breakdown": frame}).status == F.NOT_APPLICABLE


def _chip(total: float, busy: float, long_gap: float, long_gaps: int = 1) -> pl.DataFrame:
    """One Tenstorrent chip's whole-report breakdown row, its idle split by the gaps."""
    rows = breakdown((total, total - busy, 0)).with_columns(
        device_name=pl.lit("Tenstorrent blackhole (chip 0)"),
        busy_us=pl.lit(busy),
        step=pl.lit(None, pl.Int64),
    )
    gaps = pl.DataFrame(
        {"trace": ["t.json"], "device": [0], "long_gap_us": [long_gap], "long_gaps": [long_gaps]}
    )
    return F.breakdown_frame(rows, gaps=gaps)


def test_dispatch_bound_and_host_gaps_split_the_chips_idle_time() -> None:
    """60 µs of 100 idle: in gaps under 1 ms, dispatch-bound fires (tracing helps); in gaps
    of 1 ms or more, host-gaps fires; a busy chip clears both."""
    short = _chip(100.0, 40.0, long_gap=0.0, long_gaps=0)
    found = outcome(F.DISPATCH_BOUND, {"breakdown": short})
    assert found.status == F.FIRED and found.values == {"gap_share": pytest.approx(0.6)}
    assert "run with tracing" in found.text
    assert outcome(F.HOST_GAPS, {"breakdown": short}).status == F.CLEAR
    long = _chip(100.0, 40.0, long_gap=60.0, long_gaps=3)
    found = outcome(F.HOST_GAPS, {"breakdown": long})
    assert found.status == F.FIRED and " is 3 gaps of 1 ms or more" in found.text
    assert outcome(F.DISPATCH_BOUND, {"breakdown": long}).status == F.CLEAR
    busy = _chip(100.0, 90.0, long_gap=5.0)
    for rule in (F.DISPATCH_BOUND, F.HOST_GAPS):
        assert outcome(rule, {"breakdown": busy}).status == F.CLEAR


def test_dispatch_bound_clears_abstains_and_ignores_gpus() -> None:
    busy_chip = _chip(100.0, 90.0, long_gap=0.0)
    assert outcome(F.DISPATCH_BOUND, {"breakdown": busy_chip}).status == F.CLEAR
    gpu_only = F.breakdown_frame(breakdown((100, 90, 0)).with_columns(busy_us=pl.lit(10.0)))
    for rule in (F.DISPATCH_BOUND, F.HOST_GAPS):
        assert outcome(rule, {"breakdown": gpu_only}).status == F.NOT_APPLICABLE
        assert outcome(rule, {}).status == F.NOT_APPLICABLE
    # 60 µs of idle, in short gaps, then in long ones: under a floor of 100 µs, no verdict
    for rule, long_gap, column in ((F.DISPATCH_BOUND, 0.0, "dispatch_gap_us"),
                                   (F.HOST_GAPS, 60.0, "long_gap_us")):  # fmt: skip
        raised = dataclasses.replace(rule, floor=dataclasses.replace(rule.floor, threshold=100.0))
        small = outcome(raised, {"breakdown": _chip(100.0, 40.0, long_gap=long_gap)})
        assert small.status == F.ABSTAINED and f"under the floor {column} >= 100" in small.text


# ---------------------------------------------------------------- rules of GPU inputs

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def launch_steps(*steps: tuple[int, int, float]) -> pl.DataFrame:
    """(launched, shorter_than_launch, launch_delay_us_p50) per step of device 0, joined onto
    the step rows by ``breakdown_frame`` as the time breakdown's launch figures are."""
    rows = breakdown(*[(1000.0, 100.0, 50.0)] * len(steps)).drop("device_kind")
    launches = pl.DataFrame(
        {
            "trace": ["t.json"] * len(steps),
            "device_name": ["H200"] * len(steps),
            "device": [0] * len(steps),
            "step": list(range(1, len(steps) + 1)),
            "launched": [s[0] for s in steps],
            "shorter_than_launch": [s[1] for s in steps],
            "launch_delay_us_p50": [s[2] for s in steps],
            "launch_us_p50": [4.0] * len(steps),
        }
    )
    return F.breakdown_frame(rows, launches)


def test_launch_bound_fires_when_kernels_are_shorter_than_their_launch_and_nothing_queues() -> None:
    found = outcome(F.LAUNCH_BOUND, {"breakdown": launch_steps((200, 150, 8.0), (200, 20, 8.0))})
    assert found.status == F.FIRED, found.text
    assert found.text.startswith(
        "launch-bound: t.json H200 (device 0), step 1: 150 of the 200 kernels launched run for "
        "less time than the call that launched them (75.00%, over 50.00%; the median call takes "
        "4 µs), and the median kernel starts 8 µs after its call (under 50 µs"
    )
    assert found.text.endswith("; 1 of 2 steps like it")
    # a deep queue ahead of the GPU hides the launch cost: clear
    queued = outcome(F.LAUNCH_BOUND, {"breakdown": launch_steps((200, 150, 400_000.0))})
    assert queued.status == F.CLEAR
    few = outcome(F.LAUNCH_BOUND, {"breakdown": launch_steps((60, 50, 8.0))})
    assert few.status == F.ABSTAINED and "under the floor launched >= 100" in few.text
    no_launches = launch_steps((0, 0, 8.0)).with_columns(
        pl.lit(None, pl.Float64).alias("launch_delay_us_p50")
    )
    unknown = outcome(F.LAUNCH_BOUND, {"breakdown": no_launches})
    assert unknown.status == F.ABSTAINED and "is null in every breakdown row" in unknown.text


def test_launch_bound_fires_on_a_recorded_h200_training_trace() -> None:
    """The recorded H200 trace: 11 of its 12 kernels of each step are shorter than their
    cudaLaunchKernel, and each starts within µs of its launch (the GPU waits on the host)."""
    from tileprof.model.breakdown import trace_breakdown

    found = trace_breakdown([FIXTURES / "traces" / "h200_train_steps.json.gz"]).breakdown
    frame = F.breakdown_frame(found.rows, found.launches)
    fired = outcome(
        dataclasses.replace(F.LAUNCH_BOUND, floor=F.LAUNCH_BOUND.floor), frame_of(frame)
    )
    row = fired.row or {}
    assert fired.status == F.FIRED, fired.text
    assert row["shorter_than_launch"] / row["launched"] > 0.5
    assert row["launch_delay_us_p50"] < 50
    # an nsys export whose kernels queue 0.4 s behind a copy: the launches are hidden
    nsys = trace_breakdown([FIXTURES / "real" / "h100_2gpu_1s.sqlite"]).breakdown
    queued = outcome(F.LAUNCH_BOUND, frame_of(F.breakdown_frame(nsys.rows, nsys.launches)))
    assert queued.status == F.CLEAR


def frame_of(breakdown_rows: pl.DataFrame) -> dict[str, pl.DataFrame]:
    return {"breakdown": breakdown_rows}


def exposed(*steps: tuple[float, float, float, float, float]) -> pl.DataFrame:
    """(total_us, total_comm_us, exposed_comm_us, total_memcpy_us, exposed_memcpy_us) per step."""
    rows = breakdown(*[(s[0], 0.0, 0.0) for s in steps]).with_columns(
        pl.Series("total_comm_us", [s[1] for s in steps]),
        pl.Series("exposed_comm_us", [s[2] for s in steps]),
        pl.Series("total_memcpy_us", [s[3] for s in steps]),
        pl.Series("exposed_memcpy_us", [s[4] for s in steps]),
    )
    return F.breakdown_frame(rows)


def test_exposed_communication_fires_abstains_and_clears() -> None:
    frames = frame_of(exposed((1000, 400, 300, 0, 0), (1000, 400, 20, 0, 0)))
    found = outcome(F.EXPOSED_COMMUNICATION, frames)
    assert found.status == F.FIRED
    assert found.text.startswith(
        "exposed communication: t.json H200 (device 0), step 1 spends 300 µs of 1,000 µs "
        "(30.00%, over 10.00%) in communication that no computation overlaps, of 400 µs of "
        "communication in all"
    )
    assert found.text.endswith("; 1 of 2 steps like it")
    hidden = outcome(F.EXPOSED_COMMUNICATION, frame_of(exposed((1000, 400, 50, 0, 0))))
    assert hidden.status == F.CLEAR and "(closest exposed_comm_us / total_us: 5.00%" in hidden.text
    short = outcome(F.EXPOSED_COMMUNICATION, frame_of(exposed((100, 40, 30, 0, 0))))
    assert short.status == F.ABSTAINED and "under the floor exposed_comm_us >= 50" in short.text


def test_exposed_communication_fires_on_a_rank_of_a_real_nccl_job() -> None:
    from tileprof.model.breakdown import trace_breakdown

    found = trace_breakdown([FIXTURES / "hta" / "sampled_rank-0.json.gz"]).breakdown
    fired = outcome(F.EXPOSED_COMMUNICATION, frame_of(F.breakdown_frame(found.rows)))
    assert fired.status == F.FIRED, fired.text
    row = fired.row or {}
    assert row["exposed_comm_us"] / row["total_us"] > 0.1
    assert fired.values == {
        "exposed_share": pytest.approx(row["exposed_comm_us"] / row["total_us"])
    }


def test_exposed_copies_fires_abstains_and_clears() -> None:
    found = outcome(F.EXPOSED_COPIES, frame_of(exposed((1000, 0, 0, 500, 400))))
    assert found.status == F.FIRED
    assert "spends 400 µs of 1,000 µs (40.00%, over 10.00%) in memory copies that neither" in (
        found.text
    )
    assert "of 500 µs of copies in all" in found.text
    hidden = outcome(F.EXPOSED_COPIES, frame_of(exposed((1000, 0, 0, 500, 10))))
    assert hidden.status == F.CLEAR
    short = outcome(F.EXPOSED_COPIES, frame_of(exposed((100, 0, 0, 40, 40))))
    assert short.status == F.ABSTAINED and "under the floor exposed_memcpy_us >= 50" in short.text


def test_exposed_copies_fires_on_a_real_nsys_export() -> None:
    """The H100 nsys export: its GPUs spend 97% of the capture in host-to-device copies that
    no kernel overlaps."""
    from tileprof.model.breakdown import trace_breakdown

    found = trace_breakdown([FIXTURES / "real" / "h100_2gpu_1s.sqlite"]).breakdown
    fired = outcome(F.EXPOSED_COPIES, frame_of(F.breakdown_frame(found.rows)))
    assert fired.status == F.FIRED, fired.text
    row = fired.row or {}
    assert row["exposed_memcpy_us"] / row["total_us"] > 0.9
    assert "h100_2gpu_1s.sqlite GPU" in fired.text and "the whole trace spends" in fired.text


def kernel_runs(*rows: tuple[str, float, int, str]) -> pl.DataFrame:
    """(kernel, time_us, calls, op_family) rows of a GPU run table."""
    return F.kernel_frame(
        pl.DataFrame(
            {
                "target_kind": ["gpu"] * len(rows),
                "source": [f"t.json: device 0 {r[0]}" for r in rows],
                "kernel": [r[0] for r in rows],
                "time_us": [r[1] for r in rows],
                "calls": [r[2] for r in rows],
                "op_family": [r[3] for r in rows],
            }
        ),
        "t.json",
    )


def test_small_kernels_fires_abstains_and_leaves_copies_out() -> None:
    frames = {"kernels": kernel_runs(("add", 3.0, 600, "elementwise"), ("gemm", 90.0, 400, "gemm"))}
    found = outcome(F.SMALL_KERNELS, frames)
    assert found.status == F.FIRED
    assert found.text.startswith(
        "small kernels: add (t.json: device 0 add) runs 600 times at 3 µs a call (under 10 µs), "
        "60.00% of the input's kernel launches (at least 10.00%)"
    )
    assert found.text.endswith("; 1 of 2 kernels like it")
    long = outcome(F.SMALL_KERNELS, {"kernels": kernel_runs(("gemm", 90.0, 900, "gemm"))})
    assert long.status == F.CLEAR
    few = outcome(F.SMALL_KERNELS, {"kernels": kernel_runs(("add", 3.0, 60, "elementwise"))})
    assert few.status == F.ABSTAINED and "under the floor calls >= 100" in few.text
    copies = kernel_runs(("Memcpy HtoD", 2.0, 900, "copy"), ("gemm", 90.0, 100, "gemm"))
    assert copies.get_column("kernel").to_list() == ["gemm"]  # a copy is no kernel launch
    assert copies.get_column("callShare").to_list() == [1.0]


def test_small_kernels_fires_on_an_nsys_kernel_summary() -> None:
    runner = CliRunner()
    done = runner.invoke(cli, ["findings", "fixtures/runs/nsys_kern_sum.csv", "--format", "json"])
    assert done.exit_code == 0, done.output
    by_id = {f["id"]: f for f in json.loads(done.stdout)["findings"]}
    fired = by_id["small-kernels"]
    assert fired["status"] == "fired"
    assert fired["row"]["time_us"] == 5.0 and fired["row"]["calls"] == 100
    assert fired["values"]["call_share"] == pytest.approx(100 / 160)


def ranks_frame(starts: dict[int, list[int]]) -> pl.DataFrame:
    """The ranks frame of a job whose ranks start each collective at ``starts[rank][i]`` µs."""
    seqs = len(next(iter(starts.values())))
    rows = []
    for seq in range(seqs):
        by_rank = {rank: times[seq] for rank, times in starts.items()}
        late = max(by_rank, key=lambda r: by_rank[r])
        skew = max(by_rank.values()) - min(by_rank.values())
        rows.append(
            {
                "job": "nccl×2",
                "ranks": len(starts),
                "start_skew_us": float(skew),
                "straggler_rank": late,
            }
        )
    ranks = pl.DataFrame(
        {"job": ["nccl×2"] * len(starts), "rank": list(starts), "trace": [f"r{r}" for r in starts]}
    )
    return F.rank_frame(pl.DataFrame(rows), ranks)


def test_straggler_fires_on_a_rank_that_starts_most_collectives_last() -> None:
    three_of_four = ranks_frame({0: [0, 0, 0, 0], 1: [500, 300, 200, 0]})
    assert outcome(F.STRAGGLER, {"ranks": three_of_four}).status == F.CLEAR  # 75%: not over
    five = ranks_frame({0: [0] * 5, 1: [500, 300, 200, 100, 0]})
    found = outcome(F.STRAGGLER, {"ranks": five})
    assert found.status == F.FIRED, found.text
    assert found.text.startswith(
        "straggler: rank 1 of the nccl×2 job (r1) is the last to start 4 of the 5 collectives "
        "matched across the ranks given (80.00%, over 75.00%); the other ranks wait 1,100 µs"
    )
    even = ranks_frame({0: [9, 0, 9, 0], 1: [0, 9, 0, 9]})
    assert outcome(F.STRAGGLER, {"ranks": even}).status == F.CLEAR
    close = ranks_frame({0: [0] * 5, 1: [20, 20, 20, 20, 0]})
    small = outcome(F.STRAGGLER, {"ranks": close})
    assert small.status == F.ABSTAINED and "under the floor late_us >= 100" in small.text


def test_straggler_fires_on_two_ranks_of_a_real_job_and_needs_two() -> None:
    from tileprof.model.breakdown import named_timeline
    from tileprof.model.findings import timeline_frames

    paths = [FIXTURES / "hta" / f"sampled_rank-{r}.json.gz" for r in (0, 1)]
    timelines = [named_timeline(p, p.name) for p in paths]
    both = timeline_frames([], timelines)
    assert set(both) == {"ranks"}  # no trace asked for its breakdown
    fired = outcome(F.STRAGGLER, both)
    assert fired.status == F.FIRED, fired.text
    assert fired.text.startswith("straggler: rank 1 of the nccl×128 job (sampled_rank-1.json.gz)")
    assert fired.values == {"straggler_share": 0.8}
    # one rank: no collective to match; the breakdown is of its trace alone
    alone = timeline_frames(timelines[:1], timelines[:1])
    assert outcome(F.STRAGGLER, alone).status == F.NOT_APPLICABLE
    assert alone["breakdown"].get_column("trace").unique().to_list() == ["sampled_rank-0.json.gz"]


def ncu_runs(*rows: tuple[str, float, float, float]) -> pl.DataFrame:
    """(kernel, achieved %, theoretical %, time_us) rows as the ncu reader gives them."""
    return F.ncu_frame(
        pl.DataFrame(
            {
                "target": ["B200"] * len(rows),
                "kernel": [r[0] for r in rows],
                "time_us": [r[3] for r in rows],
                "metadata": [
                    json.dumps(
                        {"achieved_occupancy_percent": r[1], "theoretical_occupancy_percent": r[2]}
                    )
                    for r in rows
                ],
            }
        ),
        "k.ncu.csv",
    )


def test_low_occupancy_fires_when_achieved_is_far_under_theoretical() -> None:
    frames = {"ncu": ncu_runs(("k1", 20.0, 100.0, 50.0), ("k2", 60.0, 100.0, 50.0))}
    found = outcome(F.LOW_OCCUPANCY, frames)
    assert found.status == F.FIRED
    assert found.text.startswith(
        "low achieved occupancy: k1 on B200 (k.ncu.csv) keeps 20.00% of the warp slots busy "
        "(under 50.00%), 20.00% of the 100.00% its launch allows (under 80.00%) over 50 µs"
    )
    # low by design (registers or shared memory cap the launch): clear
    capped = outcome(F.LOW_OCCUPANCY, {"ncu": ncu_runs(("k", 15.53, 18.75, 400.0))})
    assert capped.status == F.CLEAR
    short = outcome(F.LOW_OCCUPANCY, {"ncu": ncu_runs(("k", 20.0, 100.0, 2.0))})
    assert short.status == F.ABSTAINED and "under the floor time_us >= 5" in short.text
    unknown = F.ncu_frame(ncu_runs(("k", 1, 1, 9)).with_columns(metadata=pl.lit("{}")), "k.csv")
    lacking = outcome(F.LOW_OCCUPANCY, {"ncu": unknown})
    assert lacking.status == F.ABSTAINED and "achieved_occupancy is null" in lacking.text


def test_low_occupancy_reads_a_real_ncu_csv() -> None:
    """cuBLASLt's FP8 GEMM on a B200: 15.5% achieved of 18.75% theoretical (83%): its
    occupancy is low by its launch's registers, not lost to scheduling: clear."""
    runner = CliRunner()
    args = ["findings", "fixtures/real/cublaslt_gemm_b200_ncu.log", "--format", "json"]
    done = runner.invoke(cli, args)
    assert done.exit_code == 0, done.output
    document = json.loads(done.stdout)
    (found,) = document["findings"]
    assert found["id"] == "low-occupancy" and found["status"] == "clear"
    assert found["values"] == {"of_theoretical": pytest.approx(15.53 / 18.75)}
    assert len(document["not_applicable"]) == len(F.RULES) - 1


def test_a_tenstorrent_report_lists_its_gap_rules_only() -> None:
    """Of the rules, only dispatch-bound and host-gaps read a Tenstorrent chip: they are the
    rows; no GPU rule (host-bound included) or tile rule is listed as clear or abstained."""
    args = ["findings", "fixtures/real/tt_wh_clip_encoder_400.csv", "--format", "json"]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    document = json.loads(done.stdout)
    assert [(f["id"], f["status"]) for f in document["findings"]] == [
        ("host-gaps", "fired"),
        ("dispatch-bound", "clear"),
    ]
    assert {r["id"] for r in document["not_applicable"]} == {r.id for r in F.RULES} - {
        "dispatch-bound",
        "host-gaps",
    }


# ---------------------------------------------------------------- rules that do not apply


def test_rules_that_do_not_apply_are_counted_not_listed() -> None:
    from tileprof.views.findings_table import render

    findings = F.evaluate({"breakdown": breakdown((100, 30, 20))})
    text = render(findings)
    table = text.split("\n\n")[0]
    assert "host-bound" in table and "imbalance" not in table and "dispatch-bound" not in table
    inapplicable = [f.rule.id for f in findings if f.status == F.NOT_APPLICABLE]
    assert "imbalance" in inapplicable and "small-kernels" in inapplicable
    footer = text.split("\n\n")[-1].replace("\n", " ").strip()
    assert footer == (
        f"{len(inapplicable)} rules do not apply to these inputs: {', '.join(inapplicable)}"
    )
    document = json.loads(as_json(findings))
    assert [r["id"] for r in document["not_applicable"]] == inapplicable
    assert {f["id"] for f in document["findings"]}.isdisjoint(inapplicable)


def test_a_failed_capture_check_leaves_a_rule_that_does_not_apply_alone() -> None:
    from tileprof.analyses.integrity import abstained_findings, check_frame

    checks = check_frame(
        [
            {
                "input": "t.json",
                "check": "step-missing",
                "status": "warn",
                "count": 1,
                "places": ["step 2"],
                "detail": "no GPU annotation",
                "undermines": ["breakdown"],
            }
        ]
    )
    findings = F.evaluate({"breakdown": breakdown((100, 30, 20))}, [F.HOST_BOUND, F.DISPATCH_BOUND])
    out = {f.rule.id: f.status for f in abstained_findings(findings, checks)}
    assert out == {"host-bound": F.ABSTAINED, "dispatch-bound": F.NOT_APPLICABLE}


def test_the_report_of_a_gpu_trace_counts_the_tile_rules_in_a_footer(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    trace = "fixtures/traces/h200_train_steps.json.gz"
    done = CliRunner().invoke(cli, ["report", trace, "-o", str(out)])
    assert done.exit_code == 0, done.output
    html = out.read_text()
    start = html.index('<section id="findings">')
    section = html[start : html.index("</section>", start)]
    assert "launch-bound: h200_train_steps.json.gz" in section
    assert "<td>imbalance</td>" not in section
    assert "rules do not apply to these inputs: " in section and "imbalance" in section


# ---------------------------------------------------------------- overrides and the command


def test_overrides_change_thresholds(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text("[imbalance]\nload_balance = 0.4\nfloor = 0\n")
    rules = {r.id: r for r in F.load_overrides(path)}
    assert rules["imbalance"].conditions[0].threshold == 0.4
    assert rules["imbalance"].floor.threshold == 0.0
    assert rules["host-bound"] == F.HOST_BOUND
    found = outcome(rules["imbalance"], tile_frames(straggler_dump(100)))
    assert found.status == F.CLEAR  # 43.75% is not under 40%


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[imbalance]\nlb = 0.5\n", "imbalance.lb: unknown key (keys: load_balance, floor)"),
        ("[imbalanse]\n", "imbalanse: unknown rule (rules: host-bound,"),
        ("[imbalance]\nfloor = 'x'\n", "imbalance.floor: expected a number, not 'x'"),
        ("imbalance = 1\n", "imbalance: expected a table of thresholds"),
        ("[imbalance\n", "bad TOML"),
    ],
)
def test_bad_overrides_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        F.load_overrides(path)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_command_table_json_and_bad_rules(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "dump.json", straggler_dump(100), clockHz=1.5e9, tileCount=TILES)
    runner = CliRunner()
    table = runner.invoke(cli, ["findings", str(dump)])
    assert table.exit_code == 0, table.output
    first = table.stdout.splitlines()[2]
    assert first.split()[:3] == ["fired", "│", "imbalance"]
    assert "imbalance, critical tile 2: superstep 1 of epoch 1" in table.stdout
    assert "host-bound" not in table.stdout.split("\n\n")[0]  # no row: it does not apply
    assert table.stdout.endswith(
        "\n\n11 rules do not apply to these inputs: host-bound, launch-bound, "
        "exposed-communication, exposed-copies, small-kernels, straggler, low-occupancy, "
        "dispatch-bound, host-gaps, compute-under-used, op-gaps\n"
    )
    document = json.loads(runner.invoke(cli, ["findings", str(dump), "--format", "json"]).stdout)
    by_id = {f["id"]: f for f in document["findings"]}
    tile_rules = {"imbalance", "start-skew", "communication", "exchange-heavy", "sync-wait"}
    tile_rules |= {"critical-gain"}  # the candidate edits of the dump's critical path
    assert set(by_id) == tile_rules | {"low-utilization"}
    left_out = {r["id"] for r in document["not_applicable"]}
    assert left_out == {r.id for r in F.RULES} - set(by_id)
    assert "compute-under-used" in left_out and "host-bound" in left_out
    assert by_id["imbalance"]["status"] == "fired"
    assert by_id["imbalance"]["values"] == {"load_balance": 0.4375}
    assert by_id["imbalance"]["thresholds"]["load_balance"]["threshold"] == 0.8

    rules = tmp_path / "rules.toml"
    rules.write_text("[start-skew]\nskew = 1\n")
    bad = runner.invoke(cli, ["findings", str(dump), "--rules", str(rules)])
    assert bad.exit_code == 2
    assert bad.stderr == (
        f"tileprof: error: {rules}: start-skew.skew: unknown key (keys: skew_share, floor)\n"
    )


def test_overridden_rule_keeps_its_message() -> None:
    relaxed = dataclasses.replace(
        F.IMBALANCE, floor=dataclasses.replace(F.IMBALANCE.floor, threshold=0.0)
    )
    found = outcome(relaxed, tile_frames(straggler_dump(100_000)))
    assert found.status == F.FIRED and "critical tile 2" in found.text


def test_report_opens_with_the_findings(tmp_path: Path) -> None:
    from tileprof.views.html import build_report, render

    profile = Profile(frame(straggler_dump(100)), (), 1_500_000_000, TILES, source="dump.json")
    html = render(build_report([profile], charts=False))
    start = html.index('<section id="findings">')
    assert start < html.index('<section id="tile-0"')
    section = html[start : html.index("</section>", start)]
    assert "imbalance, critical tile 2: superstep 1 of epoch 1 (dump.json)" in section
    assert "<td>host-bound</td>" not in section  # a GPU rule: it does not apply to a dump
    assert "rules do not apply to these inputs: host-bound, launch-bound," in section
    assert '<a href="#findings">Findings</a>' in html


def test_report_takes_the_rules_file(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "dump.json", straggler_dump(100), clockHz=1.5e9, tileCount=TILES)
    rules = tmp_path / "rules.toml"
    rules.write_text("[imbalance]\nload_balance = 0.4\n")
    out = tmp_path / "r.html"
    runner = CliRunner()
    done = runner.invoke(cli, ["report", str(dump), "--rules", str(rules), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert "<td>imbalance</td><td>clear</td>" in out.read_text()
    rules.write_text("[imbalance]\nload = 0.4\n")
    bad = runner.invoke(
        cli, ["report", str(dump), "--rules", str(rules), "-o", str(out), "--force"]
    )
    assert bad.exit_code == 2
    assert bad.stderr.endswith("imbalance.load: unknown key (keys: load_balance, floor)\n")


def test_a_trace_fires_the_roofline_rule_with_the_spec_registrys_ridge() -> None:
    from tileprof.core.specs import ridge_intensity

    runner = CliRunner()
    args = ["findings", "fixtures/traces/h200_train_steps.json.gz", "--format", "json"]
    done = runner.invoke(cli, args)
    assert done.exit_code == 0, done.output
    by_id = {f["id"]: f for f in json.loads(done.stdout)["findings"]}
    found = by_id["compute-under-used"]
    assert found["status"] == "fired"
    row = found["row"]
    # The cited GEMM: under 30% of its roofline, above the registry's ridge for its device.
    assert row["op_family"] == "gemm" and row["roofline_fraction"] < 0.3
    assert row["ridge_point"] == ridge_intensity(row["target"], row["dtype"], row["op_family"])
    assert row["arithmetic_intensity"] > row["ridge_point"]
    assert "imbalance" not in by_id
    inapplicable = {r["id"]: r["reason"] for r in json.loads(done.stdout)["not_applicable"]}
    assert inapplicable["imbalance"].startswith("no supersteps input;")
    # The trace's GPU time breakdown reaches the host-bound rule from the same read.
    host = by_id["host-bound"]
    assert host["status"] == "fired"
    assert host["row"]["idle_us"] / host["row"]["total_us"] > 0.1
    assert host["row"]["idle_host_wait_us"] / host["row"]["idle_us"] > 0.5


def test_json_turns_a_nan_in_the_cited_row_into_null() -> None:
    frames = {"breakdown": breakdown((100, 30, 20)).with_columns(pl.lit(float("nan")).alias("x"))}
    assert F.evaluate(frames, [F.HOST_BOUND])[0].status == F.FIRED
    document = json.loads(as_json(F.evaluate(frames, [F.HOST_BOUND])))
    assert document["findings"][0]["row"]["x"] is None


def as_json(findings: list[F.Finding]) -> str:
    from tileprof.views.findings_table import render_json

    return render_json(findings)


def test_the_rule_table_is_well_formed() -> None:
    import string

    assert len({r.id for r in F.RULES}) == len(F.RULES)
    for rule in F.RULES:
        assert rule.source in F.SOURCES, rule.id
        conditions = (*rule.conditions, rule.floor)
        keys = [c.key for c in conditions]
        assert len(set(keys)) == len(keys) and rule.floor.key == "floor", rule.id
        assert all(c.comparison in F.COMPARISONS for c in conditions), rule.id
        fields = {f for _, f, _, _ in string.Formatter().parse(rule.message) if f}
        # Every condition's value and threshold are cited.
        for condition in rule.conditions:
            assert {condition.key, f"{condition.key}_threshold"} <= fields, rule.id
        assert {"count", "rows"} <= fields, rule.id


def test_op_frames_take_the_ridge_lookup() -> None:
    from tileprof.model.ops import load_ops

    trace = load_ops(Path("fixtures/traces/h200_train_steps.json.gz")).frame
    frames = {
        "ops": F.op_frame(trace, lambda target, dtype, family: 100.0),
        "breakdown": breakdown((100, 30, 20)),
    }
    assert frames["ops"].get_column("ridge_point").unique().to_list() == [100.0]
    assert outcome(F.HOST_BOUND, frames).status == F.FIRED


# ---------------------------------------------------------------- largest gain first


def test_critical_gain_fires_on_the_edit_that_saves_most_of_an_epoch() -> None:
    # At 100 MHz, balancing superstep 2 (tile 2 at 400 cycles, the others at 100) sets it to
    # the mean 175: the epoch's 550 cycles lose 225 (2.25 µs, 40.91%), the largest gain.
    profile = Profile(frame(straggler_dump(100)), (), 100_000_000, TILES)
    found = outcome(F.CRITICAL_GAIN, profile_frames(profile, None, "dump"))
    assert found.status == F.FIRED
    assert found.text.startswith(
        "largest gain first: balance would shorten the critical path of epoch 1 of dump by "
        "2.250 µs, 40.91% of its 5.500 µs (at least 5.00%)"
    )
    # The same 225 cycles at 1.5 GHz are 0.15 µs: under the floor.
    small = outcome(F.CRITICAL_GAIN, tile_frames(straggler_dump(100)))
    assert small.status == F.ABSTAINED and "under the floor gainUs >= 1" in small.text
    balanced = [sample(t, 0, 100_000) for t in range(TILES)]
    even = Profile(frame(balanced), (), 100_000_000, TILES)
    assert outcome(F.CRITICAL_GAIN, profile_frames(even, None, "dump")).status == F.CLEAR
    assert outcome(F.CRITICAL_GAIN, {"breakdown": breakdown((100, 30, 20))}).status == (
        F.NOT_APPLICABLE
    )


def test_critical_gain_on_a_trace_cites_the_largest_candidate_of_its_steps() -> None:
    trace = "fixtures/tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz"
    runner = CliRunner()
    found = json.loads(runner.invoke(cli, ["findings", trace, "--format", "json"]).stdout)
    (gain,) = [f for f in found["findings"] if f["id"] == "critical-gain"]
    document = json.loads(runner.invoke(cli, ["critical", trace, "--format", "json"]).stdout)
    rows = [
        (c["gainNs"], c["edit"], s["step"], s["pathNs"])
        for s in document["traces"][0]["steps"]
        for c in s["candidates"]
    ]
    ns, edit, step, path = max(rows)
    assert gain["status"] == F.FIRED
    assert gain["row"]["edit"] == edit and gain["row"]["scope"] == f"step {step}"
    assert gain["row"]["gainUs"] == ns / 1e3 and gain["values"]["gain_share"] == ns / path
    assert gain["rows"] == len(rows)


# ---------------------------------------------------------------- issue 38: mutation survivors

TWO = F.Rule(
    id="two",
    source="ops",
    conditions=(F.Condition("big", "x", ">", 5.0), F.Condition("small", "y", "<", 2.0)),
    floor=F.Condition("floor", "z", ">=", 1.0),
    rank="z",
    message="{count} of {rows}: x {big}, z {z}",
    needs="a test frame",
)
"""A rule of two conditions: x > 5 and y < 2, z ≥ 1, the row of largest z cited."""


def test_a_rule_of_two_conditions_by_hand() -> None:
    rows = pl.DataFrame({"x": [9.0, 7.0, 3.0], "y": [1.0, 0.0, 1.0], "z": [2.0, 4.0, 8.0]})
    fired = F.evaluate_rule(TWO, rows)
    assert (fired.status, fired.text) == (F.FIRED, "2 of 3: x 7, z 4")  # z 4 beats z 2
    assert fired.to_dict()["message"] == "2 of 3: x 7, z 4" and "reason" not in fired.to_dict()
    clear = F.evaluate_rule(TWO, rows.with_columns(x=pl.Series([5.0, 4.0, 3.0])))
    assert clear.status == F.CLEAR
    assert clear.text == "no row has x > 5 and y < 2 (closest x: 5; 3 ops rows)"  # max of 5, 4, 3
    assert clear.to_dict()["reason"] == clear.text and "message" not in clear.to_dict()
    both_null = rows.with_columns(x=pl.lit(None, pl.Float64), y=pl.lit(None, pl.Float64))
    assert F.evaluate_rule(TWO, both_null).text == "x, y is null in every ops row"
    empty = F.evaluate_rule(TWO, rows.clear())
    assert (empty.rule.id, empty.status) == ("two", F.NOT_APPLICABLE)
    assert empty.to_dict()["reason"] == "no ops rows; the rule needs a test frame"


def test_breakdown_frame_keeps_each_devices_steps_or_whole_trace() -> None:
    """Device 0 has steps, device 1 only its whole-trace row: both devices stay, once; a
    frame with no key columns keeps its steps; rows that name no device are all kept."""
    rows = pl.DataFrame(
        {"trace": ["t"] * 4, "device": [0, 0, 1, None], "step": [None, 1, None, None]}
    )
    kept = F.breakdown_frame(rows).select("device", "step").rows()
    assert kept == [(0, 1), (1, None)]
    assert F.breakdown_frame(pl.DataFrame({"step": [None, 2]})).get_column("step").to_list() == [2]
    nameless = pl.DataFrame({"trace": ["t"], "device": [None], "step": [None]}, strict=False)
    assert F.breakdown_frame(nameless).height == 1


def test_combined_stacks_parts_with_other_columns() -> None:
    a = pl.DataFrame({"calls": [1]})
    b = pl.DataFrame({"calls": [2.5], "input": ["b"]})
    out = F.combined([{"kernels": a}, {"kernels": b}])
    assert out["kernels"].rows() == [(1.0, None), (2.5, "b")]


def test_candidate_frames_by_hand() -> None:
    document = {
        "traces": [
            {
                "trace": "t.json",
                "steps": [
                    {"step": None, "pathNs": 4000, "candidates": [{"edit": "e", "gainNs": 1000}]},
                    {"step": 3, "pathNs": 0, "candidates": [{"edit": "f", "gainNs": 500}]},
                ],
            }
        ]
    }
    assert F.gpu_candidate_frame(document).rows() == [
        ("t.json", "the whole trace", "e", 1.0, 0.25, 4.0),
        ("t.json", "step 3", "f", 0.5, None, 0.0),
    ]
    candidates = pl.DataFrame(
        {"epoch": [0, None], "edit": ["g", "h"], "gainCycles": [150, 300], "gainShare": [0.5, 0.1]}
    )
    epochs = pl.DataFrame({"epoch": [0], "cycles": [300]})
    rows = F.tile_candidate_frame(candidates, epochs, 1.5e9, "d").rows()
    assert rows == [
        ("d", "epoch 0", "g", pytest.approx(0.1), 0.5, pytest.approx(0.2)),  # 150, 300 / 1.5 GHz
        ("d", "epoch all", "h", pytest.approx(0.2), 0.1, None),
    ]


def test_group_kernel_and_rank_frames_by_hand() -> None:
    groups = F.group_frame(pl.DataFrame({"phaseCycles": [1, 0]}), "d")
    assert groups.select("source", "phaseShare").rows() == [("d", 1.0), ("d", 0.0)]
    runs = pl.DataFrame(
        {
            "target_kind": ["gpu", "gpu", "tile"],
            "op_family": ["gemm", "copy", None],
            "calls": [3, 1, 9],
        }
    )
    assert F.kernel_frame(runs, "x.json").select("input", "callShare").rows() == [("x.json", 1.0)]
    collectives = pl.DataFrame(
        {"job": ["j", "j", "j"], "ranks": [2, 2, 1], "straggler_rank": [0, 0, 1],
         "start_skew_us": [3.0, 4.0, 9.0]}
    )  # fmt: skip
    ranks = pl.DataFrame({"job": ["j", "j"], "rank": [0, 1], "trace": ["r0", "r1"]})
    assert F.rank_frame(collectives, ranks).rows() == [
        ("j", 0, "r0", 2, 2, 7.0),
        ("j", 1, "r1", 2, 0, 0.0),  # its one collective was seen on one rank only
    ]


def test_op_frame_without_the_key_columns_or_with_categorical_keys() -> None:
    looked: list[tuple[Any, ...]] = []

    def ridge(*key: str | None) -> float:
        looked.append(key)
        return 10.0

    no_dtype = pl.DataFrame({"target": ["a"], "op_family": ["gemm"], "total_us": [4.0]})
    assert F.op_frame(no_dtype, ridge).columns == ["target", "op_family", "total_us", "time_share"]
    ops = pl.DataFrame({"target": ["a"], "dtype": ["bf16"], "op_family": ["gemm"]})
    categorical = ops.cast(pl.Categorical)
    assert F.op_frame(categorical, ridge).get_column("ridge_point").to_list() == [10.0]
    assert looked == [("a", "bf16", "gemm")]


def test_an_overrides_file_not_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "o.toml"
    path.write_bytes(b"[host-bound]\n\xff")
    with pytest.raises(InputError) as raised:
        F.load_overrides(path)
    assert str(raised.value) == f"{path}: byte 13: not UTF-8 text"


def test_superstep_frames_by_hand() -> None:
    """Epoch 1 has supersteps (exchange 10 + 20) and 5 leading exchange cycles; epoch 2 has
    none. 2 tiles; lost cycles = cycles × (1 − efficiency)."""
    supersteps = pl.DataFrame(
        {"epoch": [1, 1], "exchangeCycles": [10, 20], "imbalanceCycles": [40, 0],
         "syncAfter": [30, None]}
    )  # fmt: skip
    epochs = pl.DataFrame(
        {"epoch": [1, 2], "cycles": [100, 50], "leadingExchangeCycles": [5, 7],
         "communicationEfficiency": [0.75, 1.0]}
    )  # fmt: skip
    out = F.superstep_frames(supersteps, epochs, 2, "d")
    assert out["epochs"].select(
        "epoch", "source", "exchangeCycles", "exchangeShare", "lostCycles", "device_kind",
        "betweenCycles", "betweenShare",
    ).rows() == [
        (1, "d", 35, 0.175, 25.0, "tile", 30, 0.3),
        (2, "d", 7, 0.07, 0.0, "tile", 0, 0.0),
    ]  # fmt: skip
    chip = F.superstep_frames(supersteps, epochs, 2, "d", device_kind="tenstorrent")
    assert set(chip["epochs"].get_column("device_kind")) == {"tenstorrent"}
    assert out["supersteps"].select("source", "imbalanceShare").rows() == [("d", 0.2), ("d", 0.0)]


def test_every_message_closes_with_its_count_left_out_for_one_row() -> None:
    """Each template ends with how many of the rows read are like the cited one; where the
    rule read one row, "1 of 1 chips like it" says nothing and is left out (above)."""
    for rule in F.RULES:
        assert re.search(r"; \{count\} of \{rows\} [^;{}]+ like it$", rule.message), rule.id
