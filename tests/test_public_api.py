"""The API as a REPL shows it (issue 26): one-line reprs, only public names in ``dir``, and
``tileprof.trace``. (That every public name resolves after a plain ``import tileprof``, in a
fresh process, is tests/test_startup.py::test_every_public_name_still_resolves.)"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import tileprof
from tests.trace_decode import packets
from tileprof.core.errors import OptionError
from tileprof.model.examples import example_profile

PUBLIC = ["Filters", "Profile", "Summary", "__version__", "diff", "flops", "load", "ops"]


def test_profile_and_summary_reprs_are_one_line() -> None:
    """The dataclass reprs printed every sample and group (14,580 and 6,749 characters)."""
    profile = example_profile()
    text = repr(profile)
    assert "\n" not in text and len(text) < 200, text
    assert text == (
        "Profile(source='tileprof reference profile (seed 004)', samples=232260, tiles=1472, "
        "clock_hz=1500000000, epochs=[0, 1, 2], groups=19)"
    )
    summary = profile.summary(epoch=1)
    text = repr(summary)
    assert "\n" not in text and len(text) < 200, text
    matched = summary.matched_sample_count
    assert text == (
        f"Summary(source='tileprof reference profile (seed 004)', samples={matched} of 232260, "
        f"tiles=1472, epoch=1, groups={summary.groups.height})"
    )
    grouped = repr(profile.summary(group_by=("kind",)))
    assert "epochs=all" in grouped and grouped.endswith("group_by=('kind',))")


def test_dir_lists_only_public_names() -> None:
    assert dir(tileprof) == sorted([*PUBLIC, "sources", "trace"])


def test_trace_writes_the_file_its_name_asks_for(tmp_path: Path) -> None:
    profile = example_profile()
    out = tileprof.trace(profile, tmp_path / "t.pftrace", epoch=1, tile_range=(0, 4))
    assert out == tmp_path / "t.pftrace"
    assert packets(out), "an empty trace"
    chrome = tileprof.trace(profile, tmp_path / "t.json", epoch=1, tile_range=(0, 4))
    assert chrome.read_text().startswith("{")
    with pytest.raises(OptionError, match="unknown trace extension"):
        tileprof.trace(profile, tmp_path / "t.txt")
    assert not (tmp_path / "t.txt").exists()


def test_trace_notes_come_as_warnings(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tileprof.trace(example_profile(), tmp_path / "t.json", epoch=1, max_samples=10)
    assert any("more than --max-samples 10" in str(w.message) for w in caught)


def test_the_lazy_names_go_down_the_layers() -> None:
    """The package resolves its public names from strings; the layer check
    (tests/test_architecture.py) reads those strings as imports, and this holds them to the
    rule directly: the package (the API layer) names only modules below it."""
    from tests.test_architecture import layer_of

    targets = {**tileprof._LAZY, **tileprof._MODULES}
    above = {name for name, module in targets.items() if layer_of(module) >= layer_of("tileprof")}
    assert above == set()
    assert layer_of(targets["trace"]) < layer_of("tileprof")
