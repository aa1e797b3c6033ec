"""The first hour with tileprof (issue 11, section 3; issue 34): what a filtered summary says,
and the command line as a newcomer meets it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hostile import ROOT, assert_one_line_error, invoke
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


# ---------------------------------------------------------------- the command line (issue 34)


def test_a_bare_group_prints_its_help_and_exits_0() -> None:
    """Bare ``tileprof`` and bare ``tileprof store`` print their help on stdout, exit 0
    (they exited 2 with the usage folded into one error line with literal backslash-ns)."""
    for args, commands in (((), ("summary", "trace", "store")), (("store",), ("add", "list"))):
        code, out, err, exception = invoke(*args)
        assert exception is None and code == 0 and err == "", (args, code, err)
        first = out.splitlines()[0]
        assert first.startswith("Usage: ") and first.endswith(" [OPTIONS] COMMAND [ARGS]..."), out
        assert first.split()[1:-3] == [*first.split()[1:2], *args], first
        listed = out.split("Commands:\n", 1)[1]
        assert all(f"\n  {c} " in f"\n{listed}" for c in commands), listed
        assert "\\n" not in out


@pytest.mark.parametrize(
    ("args", "closest"), [(("sumary",), "summary"), (("store", "lst"), "list")]
)
def test_an_unknown_command_names_the_closest(args: tuple[str, ...], closest: str) -> None:
    message = assert_one_line_error(*args)
    assert f"Did you mean {closest!r}?" in message, message
    assert "Did you mean" not in assert_one_line_error("xyzzy")  # nothing close: no guess


def test_breakdown_names_what_breakdown_reads(tmp_path: Path) -> None:
    """An unknown file given to ``breakdown`` is told what ``breakdown`` reads, not every kind
    ``runs`` reads (latency benchmarks, energy reports, … are no timelines)."""
    picture = tmp_path / "shot.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    for path in (picture, write_json(tmp_path / "other.json", {"a": 1})):
        message = assert_one_line_error("breakdown", path)
        assert "PyTorch profiler trace or an nsys SQLite export" in message, message
        assert "energy report" not in message and "latency" not in message, message


@pytest.mark.parametrize("command", ["summary", "runs", "findings", "report", "supersteps"])
def test_a_missing_epoch_is_exit_2_in_every_command(command: str, tmp_path: Path) -> None:
    """``--epoch 7`` on the example (epochs 0, 1, 2) is exit 2 everywhere (``report``,
    ``runs`` and ``findings`` exited 0 with an empty tile section)."""
    extra = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    message = assert_one_line_error(command, "--example", "--epoch", "7", *extra)
    assert message == "--epoch 7: no samples in that epoch (epochs: 0, 1, 2)"
    assert not (tmp_path / "r.html").exists()


def test_html_to_a_terminal_is_refused_the_same_way_everywhere() -> None:
    """``--format html`` without ``-o`` is one refusal in every command that offers html
    (``breakdown`` and ``history`` wrote the page onto the terminal; ``diff`` refused)."""
    trace = ROOT / "fixtures" / "tracelens" / "h100_gaunernst_bert-small-uncased__1016001.json.gz"
    wanted = "--format html writes a page: give -o FILE (or -o - for stdout)"
    for args in (
        ("breakdown", trace, "--format", "html"),
        ("diff", trace, trace, "--format", "html"),
        ("history", "--store", "nowhere", "--format", "html"),
    ):
        assert assert_one_line_error(*args) == wanted, args
    code, out, err, _ = invoke("breakdown", trace, "--format", "html", "-o", "-")
    assert code == 0 and out.startswith("<!DOCTYPE html>"), err


def write_json(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document))
    return path


# ---------------------------------------------------------------- trace of any timeline


FIXTURES = ROOT / "fixtures"
KINETO = FIXTURES / "traces" / "h200_train_steps.json.gz"
NSYS_EXPORT = FIXTURES / "real" / "h100_2gpu_1s.sqlite"
ROCPROF = FIXTURES / "real" / "kernel_trace.csv"


def _gpu_event_count(path: Path) -> int:
    """How many slices a GPU file holds, from the input readers (not the trace writer)."""
    return sum(_gpu_events_and_ranges(path))


def _gpu_events_and_ranges(path: Path) -> tuple[int, int]:
    """(GPU events, NVTX ranges) a GPU file holds, from the input readers."""
    from tileprof.inputs._common import read_bytes
    from tileprof.inputs.gpu import kineto, nsys_sqlite, rocprof

    data = read_bytes(path)
    if path == KINETO:
        return kineto.gpu_events(path, data).events.height, 0
    if path == NSYS_EXPORT:
        export = nsys_sqlite.read_export(path, data)
        return export.events.height, export.nvtx.height
    return rocprof.read_dispatches(path, data).height, 0


@pytest.mark.parametrize(
    "files",
    [(KINETO,), (NSYS_EXPORT,), (ROCPROF,), (ROCPROF, KINETO)],
    ids=lambda files: "+".join(f.name.split(".")[0] for f in files),
)
def test_trace_draws_gpu_files_without_a_tile_dump(files: tuple[Path, ...], tmp_path: Path) -> None:
    """``trace`` of GPU files alone (it said "not a tile dump; use tileprof runs"): every
    GPU event once, one process per device, no tile device process."""
    from tests.trace_decode import decode

    out = tmp_path / "t.pftrace"
    code, stdout, err, exception = invoke("trace", *files, "-o", out)
    assert exception is None and code == 0, err
    counts = [_gpu_events_and_ranges(f) for f in files]
    events, ranges = sum(c[0] for c in counts), sum(c[1] for c in counts)
    expected = events + ranges
    devices = sum({KINETO: 1, NSYS_EXPORT: 2, ROCPROF: 1}[f] for f in files)
    line = f"{events:,} GPU events on {devices} device{'s' if devices > 1 else ''}"
    line += f", {ranges:,} NVTX ranges on 1 track group" if ranges else ""
    assert stdout.endswith(f": {line}\n") and "tile tracks" not in stdout, stdout
    decoded = decode(out)
    assert len(decoded.slices) == expected
    processes = {decoded.process_of(s.track).process.process_name for s in decoded.slices}
    assert not any(p.startswith("tile device") for p in processes)
    assert all(any(f.name in p for p in processes) for f in files), processes
    if NSYS_EXPORT in files:
        return  # its 21,000 events in Chrome JSON: the small files show that writer
    chrome = tmp_path / "t.json"
    assert invoke("trace", *files, "-o", chrome)[0] == 0
    events = json.loads(chrome.read_text())["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) == expected
    assert {e["pid"] for e in events} == set(range(2, 2 + len(processes)))


def test_trace_draws_a_dump_with_a_kineto_and_a_rocprof_trace(tmp_path: Path) -> None:
    from tests.trace_decode import decode

    dump = write_dump(tmp_path / "d.json", SAMPLES, tileCount=4)
    out = tmp_path / "t.pftrace"
    code, stdout, err, _ = invoke("trace", dump, KINETO, ROCPROF, "-o", out)
    assert code == 0, err
    gpu = _gpu_event_count(KINETO) + _gpu_event_count(ROCPROF)
    assert stdout.endswith(
        f"3 samples on 4 tile tracks (0 overlapping, on overlap tracks), "
        f"{gpu:,} GPU events on 2 devices\n"
    ), stdout
    assert len(decode(out).slices) == len(SAMPLES) + gpu


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        (FIXTURES / "real" / "tt_wh_clip_encoder_400.csv", "Tenstorrent ops report"),
        (FIXTURES / "real" / "cublaslt_gemm_b200_ncu.log", "Nsight Compute CSV"),
        (FIXTURES / "seeds" / "003_2d9153cb18ea7de3.txt", "energy report"),
    ],
)
def test_a_file_without_a_timeline_is_told_what_trace_draws(
    path: Path, kind: str, tmp_path: Path
) -> None:
    message = assert_one_line_error("trace", path, "-o", tmp_path / "t.pftrace")
    assert message == (
        f"{path}: no timeline in a file of this kind ({kind}); `trace` draws tile dumps, "
        "PyTorch profiler (Kineto) traces, nsys SQLite exports and rocprofv3 kernel traces"
    )
    assert not (tmp_path / "t.pftrace").exists()


def test_the_python_trace_draws_gpu_files_alone(tmp_path: Path) -> None:
    import tileprof

    out = tileprof.trace(None, tmp_path / "api.json", gpu_traces=[ROCPROF])
    events = json.loads(out.read_text())["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) == _gpu_event_count(ROCPROF)


# ---------------------------------------------------------------- figures


def test_charts_leave_no_matplotlib_figure_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chart's figure is never left open: not after its SVG is written, not when drawing
    fails, not when a test keeps the figure instead of its SVG (the suite warned "More than
    20 figures have been opened" on every run)."""
    from matplotlib import pyplot as plt

    from tests.report_samples import generated_profile
    from tileprof.views.html import charts
    from tileprof.views.html.data import tile_section

    plt.close("all")
    section = tile_section(generated_profile(samples=2_000, tiles=16))
    assert len(charts.with_tile_charts(section).charts) == 5
    with monkeypatch.context() as patched:
        patched.setattr(charts, "fit", lambda *_, **__: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            charts.with_tile_charts(section)
    kept = []
    monkeypatch.setattr(charts, "to_svg", lambda figure, *_, **__: kept.append(figure) or "")
    charts.with_tile_charts(section)
    assert len(kept) == 5 and plt.get_fignums() == []


# ---------------------------------------------------------------- bundled example inputs


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("trace", "PyTorch trace"),
        ("nsys", "nsys kernel summary"),
        ("latency", "latency benchmarks"),
        ("energy", "energy report"),
    ],
)
def test_convert_writes_each_bundled_example_input(name: str, kind: str, tmp_path: Path) -> None:
    """``convert --example-file NAME`` writes the bundled input as it is, so that a reader in
    an empty folder has every file the README's commands read."""
    from tileprof.inputs.sources import read_input
    from tileprof.model.examples import EXAMPLE_FILES, example_file

    out = tmp_path / f"{name}.out"
    code, stdout, err, _ = invoke("convert", "--example-file", name, "-o", out)
    assert code == 0 and stdout == f"{out}\n", err
    assert out.read_bytes() == example_file(name) and read_input(out).kind == kind
    assert f"{name}: {EXAMPLE_FILES[name][1]}" in " ".join(invoke("convert", "--help")[1].split())
    again = tmp_path / "again.out"
    message = assert_one_line_error("convert", "--example", "--example-file", name, "-o", again)
    assert "--example-file writes a bundled file as it is" in message
