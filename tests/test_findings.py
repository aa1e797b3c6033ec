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
            "device": [0] * len(steps),
            "step": list(range(1, len(steps) + 1)),
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
    assert "(closest idle_us / total_us: 5.00%; 2 breakdown rows)" in found.text


def test_host_bound_abstains_without_a_breakdown_or_under_its_floor() -> None:
    missing = outcome(F.HOST_BOUND, {})
    assert missing.status == F.ABSTAINED and "no breakdown input" in missing.text
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
    assert no_gemm.status == F.ABSTAINED and "no ops rows where op_family = gemm" in no_gemm.text
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


def test_dispatch_bound_fires_on_a_tenstorrent_report_whose_chip_waits_between_ops() -> None:
    """The real Wormhole CLIP report: the chip runs ops for 13 ms of 15 s, the rest is
    op-to-op gap (host dispatch): tt-perf-report's advice is to run with tracing."""
    from tileprof.model.breakdown import trace_breakdown

    clip = (
        Path(__file__).resolve().parent.parent / "fixtures" / "real" / "tt_wh_clip_encoder_400.csv"
    )
    rows = trace_breakdown([clip]).breakdown.rows
    found = outcome(F.DISPATCH_BOUND, {"breakdown": F.breakdown_frame(rows)})
    chip = rows.filter(pl.col("device") == 0).row(0, named=True)
    assert found.status == F.FIRED, found.text
    assert "Tenstorrent wormhole_b0 (chip 0)" in found.text and "run with tracing" in found.text
    assert found.values == {"gap_share": pytest.approx(chip["idle_us"] / chip["total_us"])}
    assert chip["idle_us"] / chip["total_us"] > 0.99
    # the host-bound rule reads the same rows: the gaps are no host wait it can see
    assert outcome(F.HOST_BOUND, {"breakdown": F.breakdown_frame(rows)}).status == F.CLEAR


def test_dispatch_bound_clears_abstains_and_ignores_gpus() -> None:
    busy_chip = breakdown((100, 10, 0)).with_columns(
        device_name=pl.lit("Tenstorrent blackhole (chip 0)"), busy_us=pl.lit(90.0)
    )
    assert outcome(F.DISPATCH_BOUND, {"breakdown": F.breakdown_frame(busy_chip)}).status == F.CLEAR
    gpu_only = F.breakdown_frame(breakdown((100, 90, 0)).with_columns(busy_us=pl.lit(10.0)))
    assert outcome(F.DISPATCH_BOUND, {"breakdown": gpu_only}).status == F.ABSTAINED
    assert outcome(F.DISPATCH_BOUND, {}).status == F.ABSTAINED


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
    assert "- host-bound: no breakdown input" in table.stdout
    document = json.loads(runner.invoke(cli, ["findings", str(dump), "--format", "json"]).stdout)
    by_id = {f["id"]: f for f in document["findings"]}
    assert set(by_id) == {r.id for r in F.RULES}
    assert by_id["imbalance"]["status"] == "fired"
    assert by_id["imbalance"]["values"] == {"load_balance": 0.4375}
    assert by_id["imbalance"]["thresholds"]["load_balance"]["threshold"] == 0.8
    assert by_id["host-bound"]["status"] == "abstained" and "reason" in by_id["host-bound"]
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
    assert "<td>host-bound</td><td>abstained</td><td>no breakdown input;" in section
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
    assert by_id["imbalance"]["reason"].startswith("no supersteps input;")
    # The trace's GPU time breakdown reaches the host-bound rule from the same read.
    host = by_id["host-bound"]
    assert host["status"] == "fired"
    assert host["row"]["idle_us"] / host["row"]["total_us"] > 0.1
    assert host["row"]["idle_host_wait_us"] / host["row"]["idle_us"] > 0.5


def test_json_turns_a_nan_in_the_cited_row_into_null() -> None:
    frames = {"breakdown": breakdown((100, 30, 20)).with_columns(pl.lit(float("nan")).alias("x"))}
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


def test_finding_frames_take_a_breakdown_and_a_ridge_lookup() -> None:
    from tileprof.model.findings import finding_frames
    from tileprof.model.ops import load_ops

    trace = load_ops(Path("fixtures/traces/h200_train_steps.json.gz")).frame
    frames = finding_frames(
        [], [trace], breakdown=breakdown((100, 30, 20)), ridge=lambda target, dtype, family: 100.0
    )
    assert set(frames) == {"ops", "breakdown"}
    assert frames["ops"].get_column("ridge_point").unique().to_list() == [100.0]
    assert outcome(F.HOST_BOUND, frames).status == F.FIRED
