"""``critical``'s text, JSON and CSV (``tileprof.views.critical_table``), whole and by hand
(issue 38: the mutants of the module that the commands' substring checks let through).

The tile dump is ``test_critical.py``'s ``HAND_MADE``, whose path that file works out by hand
(70 cycles: compute 45, late start 0, gaps 5, exchange 10, other 10; groups a 30 and b 15;
no-exchange 70 → 60, balance 70 → 65); the edge cases and the GPU documents are built here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from tests.test_critical import HAND_MADE, analysed
from tileprof.analyses.critical import CriticalPath, Edit
from tileprof.commands.cli import cli
from tileprof.views.critical_table import (
    gpu_critical_csv,
    gpu_critical_text,
    render_csv,
    render_json,
    render_table,
)

# shares of the 70-cycle epoch: 45/70 = 64.29%, 5/70 = 7.14%, 10/70 = 14.29%, 30/70 = 42.86%,
# 15/70 = 21.43%; 70 cycles at 1 GHz are 0.07 µs (four significant figures: 0.07000)
HAND_TABLE = """\
device   hand [dev]

epoch 1: 70 cycles (0.07000 µs), 1 supersteps
  compute                    45 cycles   64.29%
  late start                  0 cycles    0.00%
  gaps                        5 cycles    7.14%
  exchange windows           10 cycles   14.29%
  other windows              10 cycles   14.29%

what-if  no-exchange, scale:zz=2
  note: scale:zz=2: no group matches 'zz'; nothing changed
  epoch 1: 70 → 60 cycles, gain 10 (14.29%); critical tile changed in 0 supersteps

groups on the critical path (Σ duration of the critical tiles' samples)
epoch  group  cycles on path  share of epoch
─────  ─────  ──────────────  ──────────────
    1  a                  30          42.86%
    1  b                  15          21.43%

what would it gain? single edits, largest gain first
epoch  edit         what-if cycles  gain cycles    gain
─────  ───────────  ──────────────  ───────────  ──────
    1  no-exchange              60           10  14.29%
    1  balance                  65            5   7.14%
"""

# at 40 columns: lines longer than 40 fold at a space with a four-space indent, the epoch
# column goes from both tables and the candidates' what-if cycles too, each table saying so
HAND_NARROW = """\
device   hand

epoch 1: 70 cycles (0.07000 µs), 1
    supersteps
  compute                    45 cycles
    64.29%
  late start                  0 cycles
    0.00%
  gaps                        5 cycles
    7.14%
  exchange windows           10 cycles
    14.29%
  other windows              10 cycles
    14.29%

what-if  no-exchange, scale:zz=2
  note: scale:zz=2: no group matches
    'zz'; nothing changed
  epoch 1: 70 → 60 cycles, gain 10
    (14.29%); critical tile changed in 0
    supersteps

groups on the critical path (Σ duration
    of the critical tiles' samples)
group  cycles on path  share of epoch
─────  ──────────────  ──────────────
a                  30          42.86%
b                  15          21.43%
not shown: epoch (a wider terminal or
--format csv shows them)

what would it gain? single edits,
    largest gain first
edit         gain cycles    gain
───────────  ───────────  ──────
no-exchange           10  14.29%
balance                5   7.14%
not shown: epoch, what-if cycles (a
wider terminal or --format csv shows
them)
"""


def _hand(edits: list[Edit]) -> CriticalPath:
    result: CriticalPath = analysed(HAND_MADE, edits, tile_count=2)
    return result


def test_the_hand_made_dumps_table_whole_at_the_fixed_width_and_at_40_columns() -> None:
    edits = [Edit("no-exchange"), Edit("scale", match="zz", factor=2.0)]
    assert render_table(_hand(edits), "hand [dev]") == HAND_TABLE
    assert render_table(_hand(edits), "hand", 40) == HAND_NARROW
    # a width as wide as the fixed one folds nothing and drops nothing
    assert render_table(_hand(edits), "hand [dev]", 200) == HAND_TABLE


def test_without_edits_the_table_has_no_what_if() -> None:
    lines = HAND_TABLE.splitlines()
    start = lines.index("what-if  no-exchange, scale:zz=2")
    expected = lines[:start] + lines[start + 4 :]
    assert render_table(_hand([]), "hand [dev]") == "\n".join(expected) + "\n"


def test_the_hand_made_dumps_csv_and_json_whole() -> None:
    head = (
        "epoch,cycles,supersteps,computeCycles,lateStartCycles,gapCycles,"
        "exchangeWindowCycles,otherWindowCycles"
    )
    assert render_csv(_hand([])) == f"{head}\n1,70,1,45,0,5,10,10\n"
    edited = render_csv(_hand([Edit("no-exchange")]))
    # the what-if's columns joined on: 60 cycles, gain 10, 10/70 written in full
    assert edited == (
        f"{head},whatIfCycles,gainCycles,gainShare,criticalTilesChanged\n"
        f"1,70,1,45,0,5,10,10,60,10,{10 / 70!r},0\n"
    )
    result = _hand([Edit("no-exchange")])
    text = render_json(result)
    document = {**result.to_document(), "candidatesWithheld": []}
    assert text == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert text.startswith('{\n  "clockHz": 1000000000.0,\n  "tileCount": 2,\n')
    assert json.loads(text)["whatIf"][0]["whatIfCycles"] == 60


def _edge_case(notes: tuple[str, ...] = ("a\x1b[31mred → µs",)) -> CriticalPath:
    """Two epochs: one with no number and no cycles (its shares and gain share have no
    value), epoch 2 of 3,000 cycles at 2 MHz (1,500 µs) with 1,234 supersteps changed; no
    group and no candidate."""
    epoch = {"epoch": pl.Int64}
    epochs = pl.DataFrame(
        {
            "epoch": [None, 2],
            "cycles": [0, 3000],
            "supersteps": [1234, 2],
            "computeCycles": [0, 1500],
            "lateStartCycles": [0, 0],
            "gapCycles": [0, 1500],
            "exchangeWindowCycles": [0, 0],
            "otherWindowCycles": [0, 0],
        },
        schema_overrides=epoch,
    )
    what_if = pl.DataFrame(
        {
            "epoch": [None, 2],
            "measuredCycles": [0, 3000],
            "whatIfCycles": [0, 2500],
            "gainCycles": [0, 500],
            "gainShare": [None, 500 / 3000],
            "criticalTilesChanged": [0, 1234],
        },
        schema_overrides=epoch,
    )
    groups = pl.DataFrame(
        schema={"epoch": pl.Int64, "group": pl.String, "pathCycles": pl.Int64, "share": pl.Float64}
    )
    candidates = pl.DataFrame(
        schema={
            "epoch": pl.Int64,
            "edit": pl.String,
            "whatIfCycles": pl.Int64,
            "gainCycles": pl.Int64,
            "gainShare": pl.Float64,
        }
    )
    return CriticalPath(epochs, groups, what_if, candidates, (Edit("balance"),), notes, 2e6, 4)


def test_an_epoch_without_number_or_cycles_and_thousands() -> None:
    """The "—" for the missing epoch and for the shares of an empty epoch; separators in the
    supersteps and tiles changed; a note's control character escaped; no candidates: no
    section; no groups: the header alone."""
    assert render_table(_edge_case(), "dev") == (
        "device   dev\n"
        "\n"
        "epoch —: 0 cycles (0 µs), 1,234 supersteps\n"
        "  compute                     0 cycles        —\n"
        "  late start                  0 cycles        —\n"
        "  gaps                        0 cycles        —\n"
        "  exchange windows            0 cycles        —\n"
        "  other windows               0 cycles        —\n"
        "epoch 2: 3,000 cycles (1,500 µs), 2 supersteps\n"
        "  compute                 1,500 cycles   50.00%\n"
        "  late start                  0 cycles    0.00%\n"
        "  gaps                    1,500 cycles   50.00%\n"
        "  exchange windows            0 cycles    0.00%\n"
        "  other windows               0 cycles    0.00%\n"
        "\n"
        "what-if  balance\n"
        "  note: a\\x1b[31mred → µs\n"
        "  epoch —: 0 → 0 cycles, gain 0 (—); critical tile changed in 0 supersteps\n"
        "  epoch 2: 3,000 → 2,500 cycles, gain 500 (16.67%); critical tile changed in "
        "1,234 supersteps\n"
        "\n"
        "groups on the critical path (Σ duration of the critical tiles' samples)\n"
        "epoch  group  cycles on path  share of epoch\n"
        "─────  ─────  ──────────────  ──────────────\n"
    )


def test_the_edge_cases_csv_joins_the_epoch_without_number_and_json_keeps_text() -> None:
    assert render_csv(_edge_case()) == (
        "epoch,cycles,supersteps,computeCycles,lateStartCycles,gapCycles,exchangeWindowCycles,"
        "otherWindowCycles,whatIfCycles,gainCycles,gainShare,criticalTilesChanged\n"
        ",0,1234,0,0,0,0,0,0,0,,0\n"
        f"2,3000,2,1500,0,1500,0,0,2500,500,{500 / 3000!r},1234\n"
    )
    text = render_json(_edge_case())
    # not ASCII-escaped: → and µ as they are; the control character as JSON writes it
    assert '"a\\u001b[31mred → µs"' in text
    assert '"epoch": null,\n      "cycles": 0,\n      "supersteps": 1234,' in text


def test_json_refuses_a_value_that_is_not_a_number() -> None:
    result = _edge_case()
    nan = result.what_if.with_columns(gainShare=pl.lit(float("nan")))  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="not JSON compliant"):
        render_json(CriticalPath(**{**result.__dict__, "what_if": nan}))


LONG = "scale:" + "k" * 100 + "=0.5"

GPU_DOCUMENT: dict[str, Any] = {
    "edits": ["no-launch", "scale:gemm=0.5"],
    "traces": [
        {
            "trace": "a.json",
            "rank": 0,
            "steps": [
                {
                    "step": 6,
                    "pathNs": 4000,
                    "classesNs": {"cpu": 1000, "launch": 3000},
                    "whatIf": {"whatIfNs": 2500, "gainNs": 1500, "notes": ["roofline: none"]},
                    "candidates": [
                        {"edit": LONG, "gainNs": 1_234_567},
                        {"edit": "no-launch", "gainNs": 50},
                    ],
                }
            ],
        },
        {
            "trace": "b.sqlite pid 7",
            "rank": None,
            "steps": [
                {
                    "step": None,
                    "pathNs": 0,
                    "classesNs": {"cpu": 0, "launch": 0},
                    "whatIf": None,
                    "candidates": [],
                }
            ],
        },
    ],
    "job": [
        {
            "step": 6,
            "pathNs": 1_234_500,
            "classesNs": {"cpu": 246_900, "launch": 987_600},
            "ranksOnPath": [0, 1],
            "collectives": 3,
            "whatIf": {"whatIfNs": 1_234_500, "gainNs": 0, "notes": []},
        }
    ],
}

# µs to one decimal with separators; a class's share of its path to one decimal (0.0 on an
# empty path); a candidate's edit cut to 90 characters; the job's ranks on the path
GPU_TEXT = f"""\
Critical path of a.json
step 6: path 4.0 µs
  cpu                   1.0 µs  25.0%
  launch                3.0 µs  75.0%
  what-if no-launch + scale:gemm=0.5: 2.5 µs, gain 1.5 µs
  note: roofline: none
  largest gain first:
       1,234.6 µs  {LONG[:90]}
           0.1 µs  no-launch
Critical path of b.sqlite pid 7
the whole trace: path 0.0 µs
  cpu                   0.0 µs   0.0%
  launch                0.0 µs   0.0%
  largest gain first:
job step 6 (3 collectives; ranks on path: 0, 1): path 1,234.5 µs
  cpu                 246.9 µs  20.0%
  launch              987.6 µs  80.0%
  what-if no-launch + scale:gemm=0.5: 1,234.5 µs, gain 0.0 µs
"""


def test_the_gpu_text_whole() -> None:
    assert gpu_critical_text(GPU_DOCUMENT) == GPU_TEXT
    no_job = GPU_TEXT.split("job step")[0]
    assert gpu_critical_text({**GPU_DOCUMENT, "job": None}) == no_job


def test_a_trace_s_withheld_candidates_are_withheld_at_each_of_its_steps() -> None:
    """Every step of a trace whose failed checks undermine its candidates says why in their
    place, each reason once, and the trace's other steps and the next trace still follow."""
    (first, second) = GPU_DOCUMENT["traces"]
    step = first["steps"][0]
    again = {**step, "step": 7, "whatIf": None, "candidates": []}
    reasons = ["a.json: check x failed", "job: check y failed"]
    withheld = {**first, "steps": [step, again], "candidatesWithheld": reasons}
    text = gpu_critical_text({**GPU_DOCUMENT, "traces": [withheld, second], "job": None})
    not_given = (
        "  largest gain first: not given: a.json: check x failed\n    also: job: check y failed\n"
    )
    assert text == (
        "Critical path of a.json\n"
        "step 6: path 4.0 µs\n"
        "  cpu                   1.0 µs  25.0%\n"
        "  launch                3.0 µs  75.0%\n"
        "  what-if no-launch + scale:gemm=0.5: 2.5 µs, gain 1.5 µs\n"
        "  note: roofline: none\n"
        f"{not_given}"
        "step 7: path 4.0 µs\n"
        "  cpu                   1.0 µs  25.0%\n"
        "  launch                3.0 µs  75.0%\n"
        f"{not_given}"
        "Critical path of b.sqlite pid 7\n"
        "the whole trace: path 0.0 µs\n"
        "  cpu                   0.0 µs   0.0%\n"
        "  launch                0.0 µs   0.0%\n"
        "  largest gain first:\n"
    )


def test_the_gpu_csv_whole() -> None:
    head = "trace,rank,step,pathNs,cpuNs,launchNs,whatIfNs,gainNs\n"
    rows = "a.json,0,6,4000,1000,3000,2500,1500\nb.sqlite pid 7,,,0,0,0,,\n"
    assert gpu_critical_csv({**GPU_DOCUMENT, "job": None}) == head + rows
    job = "job,,6,1234500,246900,987600,1234500,0\n"
    assert gpu_critical_csv(GPU_DOCUMENT) == head + rows + job


def test_names_from_a_trace_reach_the_terminal_escaped(tmp_path: Path) -> None:
    """A kernel named with ESC and BEL (a candidate's edit, a roofline note) and a trace file
    named with ESC: written as escapes, as the other tables write names from an input."""
    from tests.test_model_gpu_critical import _trace

    trace = _trace(tmp_path, "t\x1b[2J.json", [("gemm\x1b[31m\x07", 30), ("b", 10)])
    # the step ends after the trace's last event: trace-ends-in-step withholds the ranked
    # edits, and says why with the file's name escaped; as information only, they are shown
    withheld = CliRunner().invoke(cli, ["critical", str(trace)])
    assert "\x1b" not in withheld.output
    assert "  largest gain first: not given: " in withheld.output
    assert "t\\x1b[2J.json: check trace-ends-in-step failed" in withheld.output
    info = tmp_path / "checks.toml"
    info.write_text('[trace-ends-in-step]\nseverity = "info"\n')
    args = ["critical", str(trace), "--what-if", "roofline:gemm*", "--checks", str(info)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    lines = result.output.splitlines()
    assert lines[0] == "Critical path of t\\x1b[2J.json"
    # 1 + 98 + 40 + 1 = 140 µs: halving the 30 µs kernel gains 15
    assert "          15.0 µs  scale:gemm\\x1b[31m\\x07=0.5" in lines
    assert (
        "  note: roofline:gemm*: 1 of 1 matching kernels have no roofline, left as they are "
        "(gemm\\x1b[31m\\x07)"
    ) in lines


def test_a_dump_whose_capture_check_fails_gets_no_ranked_edits(tmp_path: Path) -> None:
    """Epochs 1 and 3 without 2 (check epoch-gap, which undermines the candidates): the
    paths are printed, the ranked edits are not, and each format says why; severity "info"
    in a --checks file gives them back."""
    from tests.samples import sample, write_dump

    samples = [
        sample(tile, 1000 * epoch + 200 * phase, 100 + 20 * tile, "gemm", epoch=epoch, phase=phase)
        for epoch in (1, 3)
        for phase in (0, 1)
        for tile in range(4)
    ]
    dump = write_dump(tmp_path / "gap.json", samples, clockHz=1_000_000, tileCount=4)
    why = (
        f"{dump}: check epoch-gap failed (1; first at epoch 2): 1 epoch numbers missing "
        "between epoch 1 and 3"
    )
    runner = CliRunner()
    text = runner.invoke(cli, ["critical", str(dump)])
    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[-1] == f"what would it gain? not given: {why}"
    assert "epoch 3: " in text.output
    document = json.loads(runner.invoke(cli, ["critical", str(dump), "--format", "json"]).output)
    assert document["candidatesWithheld"] == [why]
    assert document["candidates"]  # kept as data, beside the reason
    page = tmp_path / "critical.html"
    written = runner.invoke(cli, ["critical", str(dump), "--format", "html", "-o", str(page)])
    assert written.exit_code == 0, written.output
    assert "its single-edit gains are not given" in page.read_text()
    info = tmp_path / "checks.toml"
    info.write_text('[epoch-gap]\nseverity = "info"\n')
    kept = runner.invoke(cli, ["critical", str(dump), "--checks", str(info)])
    assert "what would it gain? single edits, largest gain first" in kept.output
    assert "not given" not in kept.output
