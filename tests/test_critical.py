"""The critical path of a tile dump and its what-if re-timing (issue 36; docs/metrics.md,
"Critical path and what-if").

Expected epoch times come from ``replay``, a plain re-computation from the samples (interval
merging and water-filling in Python, one superstep at a time), never from the code under test;
the windows' exchange comes from the supersteps tests' own oracle.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.samples import frame, sample, write_dump
from tests.test_supersteps import window_oracle
from tileprof.analyses.critical import (
    Edit,
    critical_path,
    group_factors,
    load_edits,
    parse_edit,
)
from tileprof.commands.cli import cli
from tileprof.core.errors import InputError, OptionError
from tileprof.model.critical import roofline_fractions
from tileprof.model.examples import example_profile

Raw = tuple[int, int, int, "str | None", int, str]
"""tile, offset, duration, kind, epoch, group"""


def _pieces(computes: list[Raw]) -> list[tuple[int, int, list[Raw]]]:
    """Maximal connected pieces of the compute intervals (touching ones merge)."""
    pieces: list[tuple[int, int, list[Raw]]] = []
    for s in sorted(computes, key=lambda s: s[1]):
        if pieces and s[1] <= pieces[-1][1]:
            start, end, members = pieces[-1]
            pieces[-1] = (start, max(end, s[1] + s[2]), [*members, s])
        else:
            pieces.append((s[1], s[1] + s[2], [s]))
    return pieces


def _union(intervals: list[tuple[int, int]]) -> int:
    total, reached = 0, None
    for a, b in sorted(intervals):
        if reached is None or a >= reached:
            total += b - a
            reached = b
        elif b > reached:
            total += b - reached
            reached = b
    return total


def _water_fill(work: int, offsets: list[int]) -> int:
    """The earliest common finish when ``work`` is spread over tiles that start at offsets."""
    if work == 0:
        return 0
    ordered = sorted(offsets)
    level = float(work + ordered[0])
    for j in range(1, len(ordered) + 1):
        candidate = (work + sum(ordered[:j])) / j
        if candidate < ordered[j - 1]:
            break
        level = candidate
    return math.ceil(level)


def replay(
    raw: list[Raw],
    factors: dict[str, float] | None = None,
    balance: bool = False,
    no_exchange: bool = False,
) -> dict[int, int]:
    """Per epoch: its cycles after the edits, computed from the samples alone."""
    factors = factors or {}
    result = {}
    for epoch in sorted({s[4] for s in raw}):
        mine = [s for s in raw if s[4] == epoch]
        first, last = min(s[1] for s in mine), max(s[1] + s[2] for s in mine)
        pieces = _pieces([s for s in mine if s[3] == "compute" and s[2] > 0])
        steps = []
        for start, _end, members in pieces:
            per_tile: dict[int, list[Raw]] = defaultdict(list)
            for s in members:
                per_tile[s[0]].append(s)
            offsets, busies = [], []
            for samples in per_tile.values():
                busy = _union([(s[1], s[1] + s[2]) for s in samples])
                old = float(sum(s[2] for s in samples))
                new = sum(float(s[2]) * factors.get(s[5], 1.0) for s in samples)
                span = max(s[1] + s[2] for s in samples) - min(s[1] for s in samples)
                offsets.append(min(s[1] for s in samples) - start + span - busy)
                busies.append(math.ceil(float(busy) * new / old))
            if balance:
                steps.append(_water_fill(sum(busies), offsets))
            else:
                finishes = [o + b for o, b in zip(offsets, busies, strict=True) if b > 0]
                steps.append(max(finishes, default=0))
        starts = [p[0] for p in pieces] + [last]
        windows = [(-1, (starts[0] if pieces else last) - first)]
        windows += [(k, starts[k + 1] - p[1]) for k, p in enumerate(pieces)]
        held = window_oracle([s[:5] for s in mine], {epoch: [(a, b, {}) for a, b, _ in pieces]})[
            epoch
        ]
        kept = [c for k, c in windows if not (no_exchange and held[k][0] > 0)]
        result[epoch] = sum(steps) + sum(kept)
    return result


def timed(result: Any) -> dict[int, int]:
    frame_ = result.what_if if result.what_if is not None else result.epochs
    column = "whatIfCycles" if result.what_if is not None else "cycles"
    return {r["epoch"]: r[column] for r in frame_.to_dicts()}


def analysed(raw: list[Raw], edits: list[Edit], tile_count: int = 6) -> Any:
    samples = [sample(t, o, d, g, kind=k or "other", epoch=e) for t, o, d, k, e, g in raw]
    return critical_path(frame(samples), tile_count=tile_count, clock_hz=1e9, edits=edits)


SAMPLE = st.tuples(
    st.integers(0, 5),  # tile
    st.integers(0, 300),  # offset
    st.integers(0, 60),  # duration
    st.sampled_from(["compute", "compute", "compute", "exchange", None]),
    st.sampled_from([0, 1]),
    st.sampled_from(["a", "b", "c"]),
)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.lists(SAMPLE, min_size=1, max_size=25), st.sampled_from([0.0, 0.25, 0.5, 1.0, 3.0]))
def test_what_if_equals_a_plain_replay_on_random_dumps(raw: list[Raw], factor: float) -> None:
    raw = [(t, o, d, k, e, g) for t, o, d, k, e, g in raw]
    edits_of = {
        "scale": ([Edit("scale", match="a", factor=factor)], {"a": factor}, False, False),
        "balance": ([Edit("balance")], {}, True, False),
        "both": (
            [Edit("scale", match="[bc]", factor=factor), Edit("balance"), Edit("no-exchange")],
            {"b": factor, "c": factor},
            True,
            True,
        ),
    }
    for edits, factors, balance, no_exchange in edits_of.values():
        expected = replay(raw, factors, balance, no_exchange)
        assert timed(analysed(raw, edits)) == expected


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.lists(SAMPLE, min_size=1, max_size=25), st.floats(0.0, 0.99))
def test_invariants_on_random_dumps(raw: list[Raw], factor: float) -> None:
    base = analysed(raw, [])
    for row in base.epochs.to_dicts():
        parts = (
            row["computeCycles"],
            row["lateStartCycles"],
            row["gapCycles"],
            row["exchangeWindowCycles"],
            row["otherWindowCycles"],
        )
        assert sum(parts) == row["cycles"] and min(parts) >= 0
        # no shorter than any tile's own busy time, no longer than the epoch's span
        spans = [s for s in raw if s[4] == row["epoch"]]
        span = max(s[1] + s[2] for s in spans) - min(s[1] for s in spans)
        assert row["cycles"] == span
        for tile in {s[0] for s in spans}:
            mine = [s for s in spans if s[0] == tile and s[3] == "compute" and s[2] > 0]
            assert _union([(s[1], s[1] + s[2]) for s in mine]) <= row["cycles"]
    # a what-if that scales nothing changes nothing
    for edits in ([Edit("scale", match="*", factor=1.0)], [Edit("scale", match="zz", factor=0)]):
        nothing = analysed(raw, edits).what_if
        assert nothing["gainCycles"].to_list() == [0] * nothing.height
        assert nothing["criticalTilesChanged"].to_list() == [0] * nothing.height
    # a group on no critical tile, scaled by any factor below 1, gains nothing
    off_path = [
        (t, o, d, k, e, "off" if t == 5 and (k == "compute") else g) for t, o, d, k, e, g in raw
    ]
    result = analysed(off_path, [])
    if "off" not in set(result.groups["group"].to_list()):
        scaled = analysed(off_path, [Edit("scale", match="off", factor=factor)]).what_if
        assert scaled["gainCycles"].to_list() == [0] * scaled.height


def test_balancing_tiles_with_equal_late_starts_gives_the_mean() -> None:
    # superstep 0 [0, 100): tile 0 busy 100, tile 1 busy 20, tile 2 busy 30 (all start at 0)
    raw: list[Raw] = [
        (0, 0, 100, "compute", 1, "a"),
        (1, 0, 20, "compute", 1, "b"),
        (2, 0, 30, "compute", 1, "b"),
    ]
    result = analysed(raw, [Edit("balance")])
    assert timed(result) == {1: 50}  # ceil(150 / 3)
    # tile 2 starts 60 cycles late: it takes only 10 cycles of the work, and all three
    # finish at ceil((150 + 0 + 0 + 60) / 3) = 70
    late = [*raw[:2], (2, 60, 30, "compute", 1, "b")]
    assert timed(analysed(late, [Edit("balance")])) == {1: 70}


HAND_MADE: list[Raw] = [
    (0, 0, 10, "exchange", 1, "x"),
    (0, 10, 30, "compute", 1, "a"),
    (0, 45, 15, "compute", 1, "b"),
    (1, 20, 30, "compute", 1, "a"),
    (1, 60, 10, None, 1, "y"),
]
"""The dump ``test_path_parts_and_groups_by_hand`` works out by hand."""


def test_path_parts_and_groups_by_hand() -> None:
    # [0, 10) exchange (leading window); superstep 0 [10, 60): tile 0 runs a [10, 40) and
    # b [45, 60) (critical: late start 0, busy 45, gap 5), tile 1 runs a [20, 50) (late
    # start 10, busy 30); the tail window [60, 70) holds another kind of sample
    raw = HAND_MADE
    result = analysed(raw, [])
    row = result.epochs.to_dicts()[0]
    parts = ("cycles", "computeCycles", "lateStartCycles", "gapCycles")
    assert tuple(row[p] for p in parts) == (70, 45, 0, 5)
    assert (row["exchangeWindowCycles"], row["otherWindowCycles"]) == (10, 10)
    groups = {r["group"]: r["pathCycles"] for r in result.groups.to_dicts()}
    assert groups == {"a": 30, "b": 15}
    # b halved: tile 0 busy ceil(45 × 37.5 / 45) = 38, finishing at 43; tile 1 at 40
    halved = analysed(raw, [Edit("scale", match="b", factor=0.5)])
    assert timed(halved) == {1: 10 + 43 + 10}
    # balance: o = 5 and 10, Σ busy 75: both take work, finish at (75 + 15) / 2 = 45
    candidates = result.candidates.to_dicts()
    assert [(c["edit"], c["gainCycles"]) for c in candidates] == [
        ("no-exchange", 10),
        ("balance", 5),
    ]


def _example_raw(epoch: int) -> list[Raw]:
    samples = example_profile().samples.filter(epoch=epoch)
    return [
        (r["tile"], r["offset"], r["duration"], r["kind"], r["epoch"], r["kernel"] or r["kind"])
        for r in samples.select("tile", "offset", "duration", "kind", "epoch", "kernel").to_dicts()
    ]


def test_example_balance_and_f16_gemm_at_roofline_equal_a_plain_replay() -> None:
    profile = example_profile()
    raw = _example_raw(1)
    fractions = roofline_fractions(profile, 1)
    f16 = {g: min(f, 1.0) for g, f in fractions.items() if g.startswith("gemm_f16_")}
    assert len(f16) == 4  # the reference profile's four f16 GEMM groups have a roofline

    def run(edits: list[Edit]) -> dict[int, int]:
        return timed(
            critical_path(
                profile.samples,
                tile_count=profile.tile_count,
                clock_hz=profile.clock_hz,
                epoch=1,
                edits=edits,
                roofline=fractions,
            )
        )

    assert run([]) == replay(raw) == {1: 161_580}
    assert run([Edit("balance")]) == replay(raw, balance=True)
    assert run([Edit("roofline", match="gemm_f16_*")]) == replay(raw, f16)
    both = [Edit("balance"), Edit("roofline", match="gemm_f16_*")]
    assert run(both) == replay(raw, f16, balance=True)
    assert run(both)[1] < run([Edit("balance")])[1] < 161_580


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("scale:gemm_*=0.5", Edit("scale", match="gemm_*", factor=0.5)),
        ("scale:a=b=2", Edit("scale", match="a=b", factor=2.0)),
        ("roofline:gemm_f16_*", Edit("roofline", match="gemm_f16_*")),
        ("balance", Edit("balance")),
        ("balance:all", Edit("balance")),
        ("balance:2,3", Edit("balance", supersteps=(2, 3))),
        ("no-exchange", Edit("no-exchange")),
    ],
)
def test_edits_parse(text: str, expected: Edit) -> None:
    assert parse_edit(text) == expected
    assert parse_edit(expected.describe()) == expected


@pytest.mark.parametrize(
    "text", ["scale:a", "scale:a=-1", "scale:a=nan", "balance:x", "roofline:", "faster", ""]
)
def test_bad_edits_are_option_errors(text: str) -> None:
    with pytest.raises(OptionError, match="--what-if"):
        parse_edit(text)


def test_edits_file(tmp_path: Path) -> None:
    path = tmp_path / "edits.toml"
    path.write_text(
        '[[edit]]\nkind = "scale"\nmatch = "a*"\nfactor = 0.5\n'
        '[[edit]]\nkind = "balance"\nsupersteps = [1]\n[[edit]]\nkind = "no-exchange"\n'
    )
    assert load_edits(path) == [
        Edit("scale", match="a*", factor=0.5),
        Edit("balance", supersteps=(1,)),
        Edit("no-exchange"),
    ]
    path.write_text('[[edit]]\nkind = "scale"\nmatch = "a"\n')
    with pytest.raises(InputError, match="edit 0"):
        load_edits(path)
    path.write_text("[[edit]\n")
    with pytest.raises(InputError, match=r"edits\.toml"):
        load_edits(path)


def test_balancing_one_superstep_only() -> None:
    raw: list[Raw] = [
        (0, 0, 100, "compute", 1, "a"),
        (1, 0, 20, "compute", 1, "a"),
        (0, 200, 100, "compute", 1, "a"),
        (1, 200, 20, "compute", 1, "a"),
    ]
    # 100 + 100 window + 100 → balancing superstep 1 only: 100 + 100 + 60
    assert timed(analysed(raw, [Edit("balance", supersteps=(1,))])) == {1: 260}


def test_command_table_json_csv(tmp_path: Path) -> None:
    dump = write_dump(
        tmp_path / "d.json",
        [
            sample(0, 0, 100, "a"),
            sample(1, 0, 20, "b"),
            sample(0, 100, 10, None, kind="exchange"),
            sample(0, 110, 50, "a"),
        ],
        tileCount=2,
    )
    runner = CliRunner()
    table = runner.invoke(cli, ["critical", str(dump), "--what-if", "balance"])
    assert table.exit_code == 0, table.output
    assert "what-if  balance" in table.output and "gain 40 (25.00%)" in table.output
    document = json.loads(
        runner.invoke(
            cli, ["critical", str(dump), "--format", "json", "--what-if", "no-exchange"]
        ).stdout
    )
    assert document["whatIf"][0]["gainCycles"] == 10
    assert document["epochs"][0]["cycles"] == 160
    csv = runner.invoke(cli, ["critical", str(dump), "--format", "csv"]).stdout
    assert csv.splitlines()[0].startswith("epoch,cycles,supersteps,computeCycles")
    bad = runner.invoke(cli, ["critical", str(dump), "--what-if", "faster"])
    assert bad.exit_code == 2 and "--what-if 'faster'" in bad.output
    missing = runner.invoke(cli, ["critical", str(dump), "--epoch", "7"])
    assert missing.exit_code == 2


def test_command_on_the_example_ranks_candidates() -> None:
    result = CliRunner().invoke(cli, ["critical", "--example", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    gains = [c["gainCycles"] for c in document["candidates"]]
    assert gains == sorted(gains, reverse=True) and gains[0] > 0
    assert {c["edit"] for c in document["candidates"]} >= {"balance", "no-exchange"}


def test_report_shows_the_path_and_the_candidates(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", "--example", "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    path = critical_path(
        example_profile().samples, tile_count=1472, clock_hz=1.5e9, epoch=1
    ).epochs.row(0, named=True)
    assert f"Epoch 1: the critical path is {path['cycles']:,} cycles: compute " in page
    assert 'id="tile-0-supersteps-candidates"' in page
    assert "roofline:cast_f16_f8" in page


def test_edits_file_refusals_name_the_file_the_edit_and_the_field(tmp_path: Path) -> None:
    """Each refusal of an edits file names the file, the edit's index and what is wrong; the
    fields an edit does not take are ignored, and a file without tables is no edits."""
    path = tmp_path / "edits.toml"
    kinds = "scale, roofline, balance, no-exchange, no-launch, no-host-gaps, on-time"
    refused = {
        'edit = "x"\n': "edit: expected [[edit]] tables",
        "edit = [1]\n": f"edit 0: 'kind' must be one of {kinds}",
        '[[edit]]\nkind = "balance"\n[[edit]]\nkind = "faster"\n': (
            f"edit 1: 'kind' must be one of {kinds}"
        ),
        '[[edit]]\nkind = "roofline"\n': "edit 0: roofline needs 'match', a glob of group names",
        '[[edit]]\nkind = "scale"\nmatch = 3\nfactor = 1\n': (
            "edit 0: scale needs 'match', a glob of group names"
        ),
        '[[edit]]\nkind = "scale"\nmatch = "a"\nfactor = -1\n': (
            "edit 0: factor: the factor must be a finite number ≥ 0, not -1"
        ),
        '[[edit]]\nkind = "scale"\nmatch = "a"\nfactor = "x"\n': (
            "edit 0: factor: the factor 'x' is not a number"
        ),
        '[[edit]]\nkind = "on-time"\n': "edit 0: on-time needs 'rank', a rank number",
        '[[edit]]\nkind = "on-time"\nrank = -1\n': "edit 0: on-time needs 'rank', a rank number",
        '[[edit]]\nkind = "on-time"\nrank = true\n': "edit 0: on-time needs 'rank', a rank number",
        '[[edit]]\nkind = "balance"\nsupersteps = 2\n': (
            "edit 0: 'supersteps' must be a list of superstep indices"
        ),
        '[[edit]]\nkind = "balance"\nsupersteps = [1, true]\n': (
            "edit 0: 'supersteps' must be a list of superstep indices"
        ),
    }
    for text, message in refused.items():
        path.write_text(text)
        with pytest.raises(InputError) as caught:
            load_edits(path)
        assert str(caught.value) == f"{path}: {message}", text
    path.write_bytes(b'[[edit]]\nkind = "\xff"\n')
    with pytest.raises(InputError) as caught:
        load_edits(path)
    assert str(caught.value) == f"{path}: byte 17: not UTF-8 text"
    with pytest.raises(InputError) as caught:
        load_edits(tmp_path / "none.toml")
    assert str(caught.value) == f"{tmp_path / 'none.toml'}: No such file or directory"
    path.write_text(
        '[[edit]]\nkind = "roofline"\nmatch = "g*"\nfactor = 2\n'
        '[[edit]]\nkind = "no-launch"\nmatch = "x"\n'
        '[[edit]]\nkind = "on-time"\nrank = 3\n'
        '[[edit]]\nkind = "balance"\nsupersteps = []\n'
        '[[edit]]\nkind = "no-host-gaps"\n'
    )
    assert load_edits(path) == [
        Edit("roofline", match="g*"),
        Edit("no-launch"),
        Edit("on-time", match="3"),
        Edit("balance", supersteps=()),
        Edit("no-host-gaps"),
    ]
    path.write_text("# no edits\n")
    assert load_edits(path) == []


def test_document_of_the_hand_made_dump() -> None:
    """``to_document`` of ``test_path_parts_and_groups_by_hand``'s dump with no-exchange: the
    10-cycle leading exchange window removed (70 → 60), a 10 / 70 gain; balance would gain 5
    (both tiles finish at (75 + 5 + 10) / 2 = 45); groups a and b on the path, 30 and 15 of 70."""
    raw = HAND_MADE
    parts = {
        "computeCycles": 45,
        "lateStartCycles": 0,
        "gapCycles": 5,
        "exchangeWindowCycles": 10,
        "otherWindowCycles": 10,
    }
    assert analysed(raw, [Edit("no-exchange")], tile_count=2).to_document() == {
        "clockHz": 1e9,
        "tileCount": 2,
        "edits": ["no-exchange"],
        "epochs": [{"epoch": 1, "cycles": 70, "supersteps": 1, **parts}],
        "groups": [
            {"epoch": 1, "group": "a", "pathCycles": 30, "share": 30 / 70},
            {"epoch": 1, "group": "b", "pathCycles": 15, "share": 15 / 70},
        ],
        "whatIf": [
            {
                "epoch": 1,
                "measuredCycles": 70,
                "whatIfCycles": 60,
                "gainCycles": 10,
                "gainShare": 10 / 70,
                "criticalTilesChanged": 0,
                **parts,
                "exchangeWindowCycles": 0,
            }
        ],
        "candidates": [
            {
                "epoch": 1,
                "edit": "no-exchange",
                "whatIfCycles": 60,
                "gainCycles": 10,
                "gainShare": 10 / 70,
            },
            {
                "epoch": 1,
                "edit": "balance",
                "whatIfCycles": 65,
                "gainCycles": 5,
                "gainShare": 5 / 70,
            },
        ],
        "notes": [],
    }
    assert analysed(raw, []).to_document()["whatIf"] is None


def test_group_factors_multiply_and_notes_name_what_changed_nothing() -> None:
    """a1 is halved (a*), tripled (a1) and set to its roofline 0.5: 0.75; a2 halved and left
    as it is by the roofline edit (none known); b's roofline 1.5 counts as 1; a glob that
    matches nothing and the GPU steps' edits are notes; balance is no factor and no note."""
    edits = [
        Edit("scale", match="a*", factor=0.5),
        Edit("scale", match="a1", factor=3.0),
        Edit("roofline", match="*"),
        Edit("scale", match="zz", factor=2.0),
        Edit("on-time", match="1"),
        Edit("no-launch"),
        Edit("no-host-gaps"),
        Edit("balance"),
    ]
    factors, notes = group_factors(["a1", "a2", "b"], edits, {"a1": 0.5, "b": 1.5})
    assert factors == {"a1": 0.75, "a2": 0.5, "b": 1.0}
    gpu_only = "applies to GPU steps, not to a tile dump; nothing changed"
    assert notes == [
        "roofline:*: a2 has no roofline; left as it is",
        "scale:zz=2: no group matches 'zz'; nothing changed",
        f"on-time: {gpu_only}",
        f"no-launch: {gpu_only}",
        f"no-host-gaps: {gpu_only}",
    ]


def test_candidates_are_listed_by_epoch_then_by_gain() -> None:
    """Two epochs of the hand-made dump, the second 100 cycles later: each epoch's candidates
    together, the first epoch's first, each by gain (as the hand-made test ranks them)."""
    later = [(t, o + 100, d, k, 2, g) for t, o, d, k, _, g in HAND_MADE]
    candidates = analysed([*HAND_MADE, *later], []).candidates
    rows = [(c["epoch"], c["edit"], c["gainCycles"]) for c in candidates.to_dicts()]
    assert rows == [
        (1, "no-exchange", 10),
        (1, "balance", 5),
        (2, "no-exchange", 10),
        (2, "balance", 5),
    ]


def test_groups_of_equal_path_time_are_listed_by_name() -> None:
    """Tile 0 runs b [10, 40) then a [40, 70): both 30 cycles of the path, a listed first."""
    result = analysed([(0, 10, 30, "compute", 1, "b"), (0, 40, 30, "compute", 1, "a")], [])
    assert [(g["group"], g["pathCycles"]) for g in result.groups.to_dicts()] == [
        ("a", 30),
        ("b", 30),
    ]
