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
            "b5d217773e143c5c9e252241f9fec1d9dbdc3497aa028e5fa55fd85bc978c21f",
        ),
        (
            ["report", "--example", *GPU_INPUTS, *LINKS],
            "a386b352891195373c5c7a1d39cc03b002889d75cb1a6a3c9f5a1dfe9cb8a85b",
        ),
    ],
    ids=["example", "example+gpu"],
)
def test_report_bytes_are_pinned(
    args: list[str], digest: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _sha(_output(args, tmp_path, monkeypatch)) == digest


SUMMARY_PINS = {
    "table": "8b5ecb3a57372a7e911ab5e8db0b796bc1c0cde5c31d47870d00540f33ab02bc",
    "json": "10e301c50a960c78929ee8db1e85023062598044dca7780382c3b9bc8fa83460",
    "csv": "c9157568c0d54b5d6a003c09a815893d7215ebd41572f7bce1a643efdbbdb367",
}
RUNS_PINS = {
    "table": "03c7b0e9c64fe981035ffc4f9768dc80e6cf3259079a40ca8aed4be0d0f84072",
    "table-linked": "af000875393d09ca1d38e478d260713cd52f6b2e35303b1b0bf770a83a3b6b67",
    "json": "d569ee5f0ada6f4cd977de91ad60423845137bafa72d1e0378c364c60b783cbe",
    "json-linked": "f474965a54eaf724c25901a1efe807739be648f565841e3680076da6bae4af59",
    "csv": "edbdd3f71ff4e091a1533c3d7459ba2386c094b8ee890e06420afe5aea8e09c7",
    "csv-linked": "9698a82993927af5f60c4779f6316e0aacf6b87e6275f6f29eda4a16193cc130",
    "parquet": "f4c92875be09640fe30299bb7748e6943a48a8deb80333cca07bd03b97a7a2d4",
    "parquet-linked": "5dc6bb0d55e18fc2cf4432a35d7121c094a351e4b74b8648b2bb1e150a9af3cd",
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
