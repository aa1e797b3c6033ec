"""The first hour with tileprof (issue 11, section 3): what a filtered summary says."""

from __future__ import annotations

from pathlib import Path

from tests.hostile import invoke
from tests.samples import sample, write_dump

SAMPLES = [
    sample(0, 0, 100, "gemm", epoch=1),
    sample(1, 10, 100, "gemm", epoch=1),
    sample(2, 500, 10, "copy", epoch=2),
]


def test_filtered_summary_shows_the_matched_span(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.json", SAMPLES, clockHz=1_000_000)
    code, out, err, _ = invoke("summary", dump, "--epoch", "2")
    assert code == 0, err
    # the whole profile spans 0..510; epoch 2 spans 500..510: 10 cycles at 1 MHz = 0.01 ms
    assert "span     510 cycles (0.51 ms)" in out
    assert "matched  10 cycles (0.01 ms), cycles 500 to 510" in out
    code, out, _, _ = invoke("summary", dump)
    assert "\nmatched " not in out  # no filter, no second span


def test_a_filter_matching_nothing_lists_what_exists(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.json", SAMPLES)
    code, out, err, _ = invoke("summary", dump, "--kind", "nothing")
    assert code == 0, err
    assert "no samples matched\nepochs present: 1, 2\ngroups present: copy, gemm\n" in out
    code, out, err, _ = invoke("summary", dump, "--epoch", "9")  # an epoch not there: exit 2
    assert (
        code == 2 and err == "tileprof: error: --epoch 9: no samples in that epoch (epochs: 1, 2)\n"
    )


def test_summary_table_follows_the_terminal_width() -> None:
    from tileprof.model.examples import example_profile
    from tileprof.views import summary_table

    profile = example_profile()
    summary = profile.summary(epoch=1)
    wide = summary_table.render(summary, profile.target)
    narrow = summary_table.render(summary, profile.target, 80)
    assert "lanes" in wide and "p50" in wide
    assert max(len(line) for line in narrow.splitlines()) <= 80
    header = next(line for line in narrow.splitlines() if line.startswith("group"))
    # the figures people came for stay; low-priority columns went first
    for kept in ("phase ms", "useful", "device"):
        assert kept in header
    for dropped in ("lanes", "phases", "p50"):
        assert dropped not in header
    # names keep their distinguishing end, and no line ends in padding
    assert "_r121_r122" in narrow
    assert all(line == line.rstrip() for line in narrow.splitlines())


def test_linked_set_lines_have_no_trailing_padding() -> None:
    code, out, err, _ = invoke("runs", "--example", "--linked")
    assert code == 0, err
    assert "linked sets" in out
    assert all(line == line.rstrip() for line in out.splitlines())
