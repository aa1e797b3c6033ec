"""Byte pins for refactors: outputs must stay byte-identical while the code moves around.

Each sha256 below was recorded from ``main`` at e0985d2 (before issue 9's restructuring), by
running the same command by hand; a refactor that changes any output byte fails here. A
deliberate output change (or a dependency upgrade that changes matplotlib's SVG) re-records
the digest in the same commit, saying why. A Parquet output is pinned by what it holds, not by
its bytes, which carry the writing library's version (``_parquet_content``).

The report runs under a fixed ``SOURCE_DATE_EPOCH`` with paths relative to the repository root,
because the page's header lists every input as given; the packaged seed files that
``--example`` adds are listed by absolute path, so the package folder is replaced by
``<tileprof>`` before hashing (the digests hold for any checkout location).
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import tileprof
from tileprof.commands.cli import cli
from tileprof.inputs.synthetic.reference import build_reference_dump

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = str(Path(tileprof.__file__).resolve().parent).encode()
EPOCH = "1700000000"
GPU_INPUTS = (
    "fixtures/traces/kineto_small.json",
    "fixtures/seeds/000_55f6fcd9cea2f10a.txt",
    "fixtures/seeds/003_2d9153cb18ea7de3.txt",
    "fixtures/runs/nsys_kern_sum.csv",
    "fixtures/runs/generic_runs.csv",
)
LINKS = ("--links", "fixtures/runs/links.toml")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _parquet_content(data: bytes) -> bytes:
    """What a Parquet output says, as bytes that do not name the library that wrote it.

    The file's own bytes carry its writer's version and build (``created_by: Polars (python)
    version 2.2.0 (build …)``), so every polars release would move a byte pin that tileprof
    cannot hold; the columns' names, types (an enum's categories included) and values are
    tileprof's, and those are pinned. Floats are written by ``repr``, which round-trips.
    """
    frame = pl.read_parquet(io.BytesIO(data))
    schema = [(name, repr(dtype)) for name, dtype in frame.schema.items()]
    return json.dumps({"schema": schema, "rows": frame.rows()}, default=repr).encode()


def _output(args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """The bytes ``tileprof ARGS -o FILE`` writes, run from the repository root."""
    monkeypatch.chdir(ROOT)
    target = tmp_path / "out"
    result = CliRunner().invoke(cli, [*args, "-o", str(target)], env={"SOURCE_DATE_EPOCH": EPOCH})
    assert result.exit_code == 0, result.output
    return target.read_bytes().replace(PACKAGE, b"<tileprof>")


# Re-recorded on branch xtarget (issue 10): the bundled example lists seeds 000 and 003, so both
# reports' across-targets section changes (same-work sets first, work and efficiency columns,
# efficiency bars for unlike work).
@pytest.mark.parametrize(
    ("args", "digest"),
    [
        (
            ["report", "--example"],
            # Re-recorded for issue 16: the page gained its Supersteps section and that
            # section's table-of-contents link. Cut those two out and the bytes hash to the
            # digests main recorded (da821a22… and d28f28b0…): nothing else changed.
            # Re-recorded on branch html11 (issue 11): tables reordered, sticky and ditto'd,
            # top-15 kernel tables, one number policy ("12.34%"), axes with separators and µs.
            # Re-recorded on branch fit26 (issue 26): the header records the command; times in
            # the run, speedup and linked tables carry their unit (µs/ms/s) and speedups "×";
            # the superstep column "us" is titled µs; exchange is drawn as exchange in the
            # phase chart; the tile-balance axis starts at the data and says so; the GEMM
            # axis leaves room for its labels; the tile-end caption says a tie is a tie.
            # Re-recorded on branch roof23 (issue 23): the run and linked tables gain % of roofline
            # and bound, the page a roofline chart and table, trace op rows join the run table.
            # Re-recorded on branch pop24 (issue 24): the page opens with a Findings section
            # (and its contents link); the Supersteps section gains POP's columns, each epoch's
            # load balance × communication efficiency and the tile × superstep heat map.
            # Re-recorded at the merge of the round's branches (issues 31, 32, 34, 35, 36): the
            # page opens with its Capture checks section; the Supersteps section ends with the
            # critical path and its candidate edits; chart labels name their units ("GB/s
            # (10⁹ B/s)"); the run table's GPU rows name their device apart from the target.
            # Re-recorded on branch findings (issue 34, item 5): the Findings section lists
            # only the rules that apply to the inputs (the GPU rules of a tile dump are
            # counted in a footer instead), and the capture checks' "undermines" column names
            # the new findings sources (kernels, ranks). Nothing outside those two changed.
            # Re-recorded on branch pages (issue 34, item 4): each section opens with a lead
            # sentence; columns with no value are named under their table instead of shown;
            # long tables show 25 rows and a "show all" box; linked sets past the third fold
            # into <details>; the capture-check and quality tables scroll in a wrapper; GEMM
            # bars are labelled by dtype and shape, its energy panel drawn only with energy.
            # Re-recorded at the merge of both branches: both changes together.
            # Re-recorded on branch crit2 (issue 36): the findings gain critical-gain ("largest
            # gain first": no-exchange on epoch 1), and the capture checks that undermine the
            # critical path's figures name the new findings source "candidates".
            # Re-recorded on main (3 December): the capture-check section names the inputs no
            # check read (the example's two seed files: "every checked input", "2 inputs not
            # checked" and a line naming them), and the timeline legends' shared entry is
            # "other (9 groups)", not "other". Nothing else changed (diffed against 057d7145…).
            # Re-recorded on main (4 December): the capture checks' source line says a failed
            # check leaves its input out of the findings it undermines and each section says
            # so (it said they abstain); nothing else changed (diffed against 45dca66c…).
            # Then: the findings count a 17th rule, host-gaps, among those that do not apply
            # (diffed against d393683b…). Re-recorded on main (4 December, fifteenth session):
            # an 18th rule, op-gaps (a device log's time between op calls); nothing else
            # changed (diffed against 2477d253…). Re-recorded on main (6 December, nineteenth
            # session): a rule that read one row leaves out its closing count ("1 of 1 epochs
            # like it", twice); nothing else changed (diffed against f147cf81…).
            "8e260cca04003a60f89cbb812db9144e3516d2bdf1de42d7e9bad794daf9b307",
        ),
        (
            ["report", "--example", *GPU_INPUTS, *LINKS],
            # Re-recorded on branch html11 (issue 11), as above.
            # Re-recorded on branch fit26 (issue 26), as above; the --links file is listed
            # among the inputs with its size and sha256.
            # Re-recorded on branch roof23 (issue 23), as above.
            # Re-recorded on branch time24 (issue 24): the page gained its GPU time breakdown
            # section (kineto_small.json) and that section's table-of-contents link. Without
            # them the bytes hash to 09888c2c… as recorded on branch html11: nothing else
            # changed.
            # Re-recorded on branch pop24 (issue 24), as above.
            # Re-recorded at the merge of the round's branches, as above; the kernel tables
            # are per device, and the op rows carry the causal marker and the kernels apart.
            # Re-recorded on branch findings (issue 34, item 5), as above; the findings also
            # gain the GPU rules' rows (small-kernels fires on nsys_kern_sum.csv; launch-bound
            # and the exposed rules abstain on kineto_small.json's failed capture check).
            # Re-recorded on branch pages (issue 34, item 4), as above.
            # Re-recorded at the merge of both branches: both changes together.
            # Re-recorded on branch crit2 (issue 36), as above (critical-gain abstains here on
            # kineto_small.json's failed kernel-without-launch check); the page gains its
            # "Critical path" section for kineto_small.json (its step folded) and that
            # section's contents link.
            # Re-recorded on main (3 December), as above: six inputs not checked (the links
            # file, an input but no capture, is not named). Nothing else changed.
            # Re-recorded on main (3 December, later): kineto_small.json's failed
            # trace-ends-in-step check also undermines "candidates" (its capture-check row
            # reads "breakdown, candidates"); nothing else changed (diffed against ef7f8be3…).
            # Re-recorded on main (3 December, later still): kineto_small.json's failed check
            # leaves it out of the rules it undermines instead of silencing them for every
            # input, so critical-gain fires over the example's candidates and names the trace
            # it left out ("6 of 16 rules fired"); nothing else changed (against 42cac9cc…).
            # Re-recorded on main (3 December, last): the capture checks' lead and line say the
            # figures they undermine "are not given for their inputs", and the critical-path
            # lead names the largest part on the path with its class; nothing else changed
            # (diffed against a8c372c0…). Then: a linked set of unlike work with no peak
            # reads "2 runs of different work, none with a known peak: no comparison."
            # Re-recorded on main (4 December): kineto_small.json fails kernel-without-launch,
            # which undermines the ranked edits, so its critical path shows "Not given" and
            # why in place of the candidates table, and the lead says so; nothing else changed
            # (diffed against 213a4495…). Then: the checks' lead and lines say the findings
            # leave those inputs out and each section says so; the GPU runs name the check
            # under their lead; the breakdown's lead abstains (its one trace failed the check);
            # nothing else changed (diffed against b631bba5…). Then: the findings count a 17th
            # rule, host-gaps, among those that do not apply (diffed against 99b55d8e…).
            # Re-recorded on main (4 December, fifteenth session): "6 of 18 rules fired" and
            # op-gaps among those that do not apply; nothing else changed (diffed against
            # 5b3b0fbb…). Then: the small-kernels advice names "a CUDA or HIP graph" (the rule
            # reads AMD traces too); nothing else changed (diffed against f023c863…).
            # Re-recorded on main (6 December, nineteenth session), as above; nothing else
            # changed (diffed against 4a0b0496…).
            "59b31953c7dc0327927debe64dd2582b02001cb874b887bc1f142a476a3a3ced",
        ),
    ],
    ids=["example", "example+gpu"],
)
def test_report_bytes_are_pinned(
    args: list[str], digest: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _sha(_output(args, tmp_path, monkeypatch)) == digest


SUMMARY_PINS = {
    # Re-recorded on branch html11 (issue 11): phase ms and avg tiles to 4 significant figures,
    # as the HTML report prints them (tileprof.core.numbers).
    "table": "145e034570e0f3fb5336fb0bb0fd7b8cb18e81bd4d72b4c8c367f37c583966ac",
    "json": "10e301c50a960c78929ee8db1e85023062598044dca7780382c3b9bc8fa83460",
    "csv": "c9157568c0d54b5d6a003c09a815893d7215ebd41572f7bce1a643efdbbdb367",
}
# Re-recorded on branch xtarget (issue 10): tile rows are "per active", carry usefulCycles;
# kernels launched by several ops list each; linked sets gain work/compare/speedup columns;
# tile rows state kernelSpec and outputElements.
# Re-recorded on main (issue 11): the run and op tables and the linked-set texts print numbers
# by the one policy (tileprof.core.numbers): 4 significant figures, percentages with 2 decimals.
# Re-recorded on branch fmt25 (issue 25): the full run table (json, csv, parquet) gains the
# nullable columns cores and start_skew_us (null on every row of these inputs); the table and
# the linked sets print neither, so their digests stand.
# Re-recorded on branch fit26 (issue 26): the run table's speedup column carries "×"
# ("1.495×"); nothing else in it changed, and the other formats stand.
# Re-recorded on branch roof23 (issue 23): roofline columns (bytes, arithmetic_intensity,
# roofline_us, bound, roofline_fraction) on every run, the table's roofline column at 250
# columns, op rows of traces in the run table, tile GEMM groups with FLOPs (peak_fraction is
# tflops / peak only), specs from the registry, linked sets with % of roofline.
# Re-recorded at the merge of roof23 and fit26 into main: both branches' changes together (the
# roofline columns and op rows of roof23, the "×" on speedups of fit26); each branch's own
# digests, above, held only its half.
# Re-recorded at the merge of the round's branches (issue 31): a GPU row's target no longer
# names its device ("GPU 1" is target "GPU", device "GPU 1"), and the full run table (json,
# csv, parquet) gains the device column and the per-device spread columns; op rows gain the
# causal marker and the kernels counted apart (aux_kernels, aux_us) in their metadata.
# Re-recorded on main (7 December, thirty-first session): the Parquet pins hash the file's
# columns, types and rows (_parquet_content), not its bytes, which name polars' version; the
# files whose bytes hashed to c58c7c82… and 977511ed… (polars 2.1.0) give these digests under
# polars 2.0.0, 2.1.0 and 2.2.0 alike.
RUNS_PINS = {
    "table": "af753760a6ee94c99e9327e14a68aa8f4449bb9b5296cde1f24bffcb509bec92",
    "table-linked": "465f3ebe9b05268ed89dadca51d1f6ae8c5cfc3348c00e61161ffedf070e3178",
    "json": "f518490ddf738ec09f37d3ad6352aa2a488cbda8a9a5769663cbc4e7ea3bc237",
    "json-linked": "c9348d52ef7cffc8fe2b01ca88b61b2c958564897e63019d06c769a8e4efe68a",
    "csv": "e5f6837dbb8e5fcdb50d8e618e41e0b6de573ef1384a2deb5a09afc5116a970a",
    "csv-linked": "8943ff2eb76d00b8f65e8b9a925f4cdf98299c1a93533d62eb2749e5b3e4ef61",
    "parquet": "75b9c3494b2a3f933526f953d0b9257d3356d3186722e247d978b26d8087cda5",
    "parquet-linked": "3f44b97abf924522f68ba2fa834486b4dea8f33b3cd6fa27c6cd349d20b4c83b",
}


@pytest.mark.parametrize("fmt", sorted(SUMMARY_PINS))
def test_summary_bytes_are_pinned(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["summary", "--example", "--epoch", "1", "--format", fmt]
    assert _sha(_output(args, tmp_path, monkeypatch)) == SUMMARY_PINS[fmt]


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "parquet"])
@pytest.mark.parametrize("linked", [False, True], ids=["all", "linked"])
def test_runs_bytes_are_pinned(
    fmt: str, linked: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["runs", "--example", *GPU_INPUTS, *LINKS, "--format", fmt]
    if linked:
        args.append("--linked")
    key = f"{fmt}-linked" if linked else fmt
    written = _output(args, tmp_path, monkeypatch)
    assert _sha(_parquet_content(written) if fmt == "parquet" else written) == RUNS_PINS[key]


def test_reference_dump_bytes_are_pinned(tmp_path: Path) -> None:
    written = build_reference_dump().write_json(tmp_path / "reference.json")
    assert _sha(written.read_bytes()) == (
        "60db1febc54a5cabc72ce8d8b8a7542616578de0f22b273390ffebe35bf12d8a"
    )
