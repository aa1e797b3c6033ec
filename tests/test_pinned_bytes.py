"""Byte pins for refactors: outputs must stay byte-identical while the code moves around.

Each sha256 below was recorded from ``main`` at e0985d2 (before issue 9's restructuring), by
running the same command by hand; a refactor that changes any output byte fails here. A
deliberate output change (or a dependency upgrade that changes matplotlib's SVG or polars'
Parquet bytes) re-records the digest in the same commit, saying why.

The report runs under a fixed ``SOURCE_DATE_EPOCH`` with paths relative to the repository root,
because the page's header lists every input as given; the packaged seed files that
``--example`` adds are listed by absolute path, so the package folder is replaced by
``<tileprof>`` before hashing (the digests hold for any checkout location).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

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
            "919fa5144d7a8ac10598de47cfb057b91c1eb14f45fb3de8f53704294d68ba35",
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
            "087ffa7327cea29095c7166fa738ee3e2f86ce5b5562656614045e84a1f1f64c",
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
RUNS_PINS = {
    "table": "0b6055376b90b9f62f339cec3e74808fd816e433a28071abfdef5cb0c877020c",
    "table-linked": "6d866056bb9e2db942eec649e9b53bfa0a64746780bbefe61aeee30df61d6240",
    "json": "496b5595f4077d6f572a206c8754028fd353e8815daa1b6abfccd8623683b898",
    "json-linked": "5f635e676334f99bbadc03e4da13d66e49e67566f7808e089861dfec41d189b5",
    "csv": "d0edaf8d9e5edec80ffa89bac7e9c64501906d083bc4e8a95959da688008b056",
    "csv-linked": "3bf3202adf5406ff52f749206ce9dcefee4480c2173b21041898a92d53e4b003",
    "parquet": "f372bd39fdc85d9b0ec77bd3600a7f76d4248912e7b8b948157b162f6cfb2ceb",
    "parquet-linked": "2a94c51118eb5d6c521c42a7ff0f082d870bb1c0cfae05f5e77e33485d91ad04",
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
    assert _sha(_output(args, tmp_path, monkeypatch)) == RUNS_PINS[key]


def test_reference_dump_bytes_are_pinned(tmp_path: Path) -> None:
    written = build_reference_dump().write_json(tmp_path / "reference.json")
    assert _sha(written.read_bytes()) == (
        "60db1febc54a5cabc72ce8d8b8a7542616578de0f22b273390ffebe35bf12d8a"
    )
