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
from tileprof.cli import cli
from tileprof.reference import build_reference_dump

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


@pytest.mark.parametrize(
    ("args", "digest"),
    [
        (
            ["report", "--example"],
            "91514ed266bfb11bf406ee75826ebd1f4107a038358149a9b3bd717017f003c1",
        ),
        (
            ["report", "--example", *GPU_INPUTS, *LINKS],
            "09bee7a90b44da14fc11d84a38af65e8662ff5cafad986a9c193141923f79513",
        ),
    ],
    ids=["example", "example+gpu"],
)
def test_report_bytes_are_pinned(
    args: list[str], digest: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _sha(_output(args, tmp_path, monkeypatch)) == digest


SUMMARY_PINS = {
    "table": "78ae1d200bcd9bfd00800d71f07a12b61cbe4a42b6b7c161f210b6cd8f76f62b",
    "json": "10e301c50a960c78929ee8db1e85023062598044dca7780382c3b9bc8fa83460",
    "csv": "c9157568c0d54b5d6a003c09a815893d7215ebd41572f7bce1a643efdbbdb367",
}
RUNS_PINS = {
    "table": "5aa3fa58d00bac4cc25aed674f1692dadee36e1d28701147f88afe05a083f0f3",
    "table-linked": "ec104a498e9e313a7ee96fe4adfe4bdb8d5159b2bc60cc81bec9d8687ce548c6",
    "json": "f68e676e91a36f32f35385b827a77e2f5ea13fac05513e27d25ce6a885e19328",
    "json-linked": "4c2c0c12c2f124ba9bb8fb4d717c2958ad7e1c177f6b95b554e0d29b829be253",
    "csv": "edbdd3f71ff4e091a1533c3d7459ba2386c094b8ee890e06420afe5aea8e09c7",
    "csv-linked": "28e41c2c00427661b0abfe0a6ccf9c78d772635d7c6b4116c5a8c5c1c28968de",
    "parquet": "f4c92875be09640fe30299bb7748e6943a48a8deb80333cca07bd03b97a7a2d4",
    "parquet-linked": "94140536ff73ed774d7d1a121d4b1c02692e779756f1279d4fd5618128aeb74e",
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
