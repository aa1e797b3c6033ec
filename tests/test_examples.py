"""The bundled examples (``tileprof.model.examples``): the reference profile behind
``--example`` and the example inputs ``convert --example-file`` writes, each the kind of input
its description says, read from the package's data."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.inputs.links_file import load_links
from tileprof.inputs.sources import detect_file_kind
from tileprof.model import examples

KINDS = {
    "trace": "PyTorch trace",
    "nsys": "nsys kernel summary",
    "latency": "latency benchmarks",
    "energy": "energy report",
}


def test_the_reference_profile_is_seed_004s_run_built_once() -> None:
    """Seed 004 summarizes 232,260 samples of a 1,472-tile device at 1.5 GHz."""
    profile = examples.example_profile()
    assert profile is examples.example_profile()
    assert (profile.samples.height, profile.clock_hz, profile.tile_count) == (
        232_260,
        1_500_000_000,
        1_472,
    )
    assert (profile.source, profile.format) == (
        "tileprof reference profile (seed 004)",
        "generated",
    )
    assert examples.EXAMPLE_EPOCH == 1
    assert examples.EXAMPLE_EPOCH in profile.samples["epoch"].unique().to_list()


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_example_file_is_the_input_it_names(name: str, tmp_path: Path) -> None:
    path, _ = examples.EXAMPLE_FILES[name]
    data = examples.example_file(name)
    assert data == (resources.files("tileprof") / "data" / path).read_bytes()
    written = tmp_path / Path(path).name
    written.write_bytes(data)
    assert detect_file_kind(written)[0] == KINDS[name]


def test_the_links_example_is_a_links_file(tmp_path: Path) -> None:
    written = tmp_path / "links.toml"
    written.write_bytes(examples.example_file("links"))
    links = load_links(written)
    assert [link.name for link in links.links] == ["layer 3 GEMM"]


def test_every_example_file_is_listed_with_what_it_is() -> None:
    assert set(examples.EXAMPLE_FILES) == {*KINDS, "links"}
    result = CliRunner().invoke(cli, ["convert", "--help"], terminal_width=400)
    help_text = " ".join(result.output.split())
    for name, (_, what) in examples.EXAMPLE_FILES.items():
        assert f"{name}: {what}" in help_text
