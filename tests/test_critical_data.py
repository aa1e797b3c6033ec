"""``critical``'s view model (``views.html.critical_data``) on hand-built paths: each scope's
id, title, length, bar, tables and what-if lines, held to values worked out here from the
path's own numbers (the pages' tests, ``test_critical_html.py``, read the rendered HTML)."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from tileprof.analyses.critical import CriticalPath, Edit
from tileprof.views.html.critical_data import (
    BAR_COLOURS,
    DOCS,
    class_bar,
    gpu_section,
    tile_section,
)
from tileprof.views.html.view import Table


def _sorts(table: Table, key: str) -> list[Any]:
    return [cell.sort for cell in table.column(key)]


def _texts(table: Table, key: str) -> list[str]:
    return [cell.text for cell in table.column(key)]


def _rects(svg: str) -> list[str]:
    return [part.split("</rect>")[0] for part in svg.split("<rect ")[1:]]


def test_the_bar_gives_each_part_its_share_of_600_its_colour_and_a_label_where_it_fits() -> None:
    parts = [("a", 1.0), ("empty", 0.0), ("c<", 3.0), ("less", -1.0), ("d", 0.6)]
    svg = class_bar(parts, 4.6)
    assert svg.startswith('<svg class="critical-bar" role="img" viewBox="0 0 600 22" ')
    assert 'width="600" height="22" aria-label="path by class">' in svg and svg.endswith("</svg>")
    rects = _rects(svg)
    assert len(rects) == 3  # the empty and the negative part are left out
    widths = [600 * 1.0 / 4.6, 600 * 3.0 / 4.6, 600 * 0.6 / 4.6]
    starts = [0.0, widths[0], widths[0] + widths[1]]
    colours = [BAR_COLOURS[0], BAR_COLOURS[2], BAR_COLOURS[4]]  # by the part's place
    labels = ["a: 21.74%", "c&lt;: 65.22%", "d: 13.04%"]
    for rect, x, w, colour, label in zip(rects, starts, widths, colours, labels, strict=True):
        assert rect.startswith(f'x="{x:.2f}" y="0" width="{w:.2f}" height="22" fill="{colour}">')
        assert f"<title>{label}</title>" in rect
    texts = svg.split("<text ")[1:]  # a label is written on a part wider than 90
    assert [t.split(">")[1].split("<")[0] for t in texts] == labels[:2]
    assert texts[0].startswith('x="4.00" y="15" font-size="11" fill="#fff">')
    assert texts[1].startswith(f'x="{starts[1] + 4:.2f}" y="15"')
    assert _rects(class_bar([("a", 1.0)], 0.0)) == []  # no length, no parts
    assert len(_rects(class_bar([("a", 0.25), ("b", 0.25)], 0.5))) == 2  # under 1 µs


def test_a_label_needs_more_than_90_of_the_bars_600() -> None:
    assert "<text" not in class_bar([("a", 15.0), ("b", 85.0)], 100.0).split("</rect>")[0]
    assert "<text" in class_bar([("a", 15.01), ("b", 84.99)], 100.0).split("</rect>")[1]
    assert class_bar([("a", 1.0)] * 9, 9.0).count(f'fill="{BAR_COLOURS[0]}"') == 2  # wraps


def _tile_path(what_if: bool) -> CriticalPath:
    epochs = pl.DataFrame(
        {
            "epoch": [1, 2],
            "cycles": [3_000, 1_500],
            "computeCycles": [2_000, 1_500],
            "lateStartCycles": [500, 0],
            "gapCycles": [300, 0],
            "exchangeWindowCycles": [150, 0],
            "otherWindowCycles": [50, 0],
        }
    )
    groups = pl.DataFrame(
        {
            "epoch": [1, 1, 2],
            "group": ["mm", "add", "mm"],
            "pathCycles": [2_000, 1_000, 1_500],
            "share": [2 / 3, 1 / 3, 1.0],
        }
    )
    candidates = pl.DataFrame(
        {
            "epoch": [1, 2],
            "edit": ["scale:mm=0.5", "balance"],
            "whatIfCycles": [2_000, 1_200],
            "gainCycles": [1_000, 300],
            "gainShare": [1 / 3, 0.2],
        }
    )
    retimed = pl.DataFrame(
        {
            "epoch": [1, 2],
            "measuredCycles": [3_000, 1_500],
            "whatIfCycles": [2_400, 1_500],
            "gainCycles": [600, 0],
            "gainShare": [0.2, 0.0],
            "criticalTilesChanged": [1_234, 0],
        }
    )
    return CriticalPath(
        epochs=epochs,
        groups=groups,
        what_if=retimed if what_if else None,
        candidates=candidates,
        edits=(Edit("scale", "mm", 0.8), Edit("balance", supersteps=(1, 2))),
        notes=("a note",),
        clock_hz=1_500_000_000,
        tile_count=4,
    )


def test_a_tile_scope_per_epoch_with_its_parts_groups_what_if_and_candidates() -> None:
    section = tile_section(_tile_path(what_if=True), id="cp", withheld=("why",))
    assert section.id == "cp" and section.notes == ("a note",)
    assert section.edits == ("scale:mm=0.8", "balance:1,2")
    first, second = section.scopes
    assert (first.id, first.title, second.id, second.title) == (
        "cp-epoch-1",
        "epoch 1",
        "cp-epoch-2",
        "epoch 2",
    )
    assert first.length == "3,000 cycles (2 µs)" and first.length_us == pytest.approx(2.0)
    assert second.length == "1,500 cycles (1 µs)" and first.withheld == ("why",)
    parts = first.parts
    assert parts.id == "cp-epoch-1-parts"
    assert [c.key for c in parts.columns] == ["class", "cycles", "share"]
    assert _texts(parts, "class") == [
        "compute",
        "late start",
        "gaps",
        "exchange windows",
        "other windows",
    ]
    assert _sorts(parts, "cycles") == [2_000, 500, 300, 150, 50]
    assert _sorts(parts, "share") == pytest.approx([2 / 3, 1 / 6, 0.1, 0.05, 1 / 60])
    assert _texts(parts, "share")[0] == "66.67%"
    assert first.bar.count("<rect ") == 5 and second.bar.count("<rect ") == 1
    assert first.on_path.id == "cp-epoch-1-groups"
    assert [c.key for c in first.on_path.columns] == ["group", "cycles", "share"]
    assert _texts(first.on_path, "group") == ["mm", "add"]
    assert _sorts(first.on_path, "cycles") == [2_000, 1_000]
    assert _texts(second.on_path, "group") == ["mm"]
    assert first.candidates.id == "cp-epoch-1-candidates"
    keys = ["edit", "what_if_cycles", "gain_cycles", "gain_share"]
    assert [c.key for c in first.candidates.columns] == keys
    assert [c.text for c in first.candidates.rows[0]] == [
        "scale:mm=0.5",
        "2,000",
        "1,000",
        "33.33%",
    ]
    assert _texts(second.candidates, "edit") == ["balance"]
    assert first.what_if == (
        "3,000 → 2,400 cycles, gain 600 cycles (20.00%); critical tile changed in 1,234 supersteps",
    )
    assert second.what_if[0].endswith(
        "gain 0 cycles (0.00%); critical tile changed in 0 supersteps"
    )
    assert tile_section(_tile_path(what_if=False)).scopes[0].what_if == ()


def test_the_whole_dump_is_one_scope_and_a_zero_length_path_has_no_shares() -> None:
    path = _tile_path(what_if=True)
    whole = CriticalPath(
        epochs=path.epochs.head(1).with_columns(
            pl.lit(None, pl.Int64).alias("epoch"),
            *(pl.lit(0).alias(c) for c in path.epochs.columns[1:]),
        ),
        groups=path.groups.with_columns(pl.lit(None, pl.Int64).alias("epoch")).head(1),
        what_if=None,
        candidates=path.candidates.with_columns(pl.lit(None, pl.Int64).alias("epoch")).head(1),
        edits=(),
        notes=(),
        clock_hz=path.clock_hz,
        tile_count=path.tile_count,
    )
    [scope] = tile_section(whole).scopes
    assert (scope.id, scope.title) == ("critical-epoch-all", "the whole dump")
    assert scope.length == "0 cycles (0 µs)"
    assert _sorts(scope.parts, "share") == [None] * 5
    assert _texts(scope.on_path, "group") == ["mm"]  # an epoch of None matches None
    assert _texts(scope.candidates, "edit") == ["scale:mm=0.5"]
    assert scope.bar.count("<rect ") == 0


def _gpu_step(step: int | None, path_ns: int, what_if: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "step": step,
        "pathNs": path_ns,
        "classesNs": {"cpu": path_ns // 4, "gpu_compute": path_ns - path_ns // 4},
        "onPath": [
            {"side": "gpu", "name": "gemm", "class": "gpu_compute", "pathNs": 3_000, "count": 2},
            {"side": "cpu", "name": "aten::mm", "class": "cpu", "pathNs": 1_000, "count": 1},
        ],
        "whatIf": what_if,
        "candidates": [{"edit": "no-launch", "whatIfNs": 2_500, "gainNs": 1_500}],
    }


def test_a_gpu_scope_per_trace_step_then_per_job_step_in_microseconds() -> None:
    what_if = {"whatIfNs": 3_000, "gainNs": 1_000, "notes": ["n1", "n2"]}
    document = {
        "edits": ["no-launch"],
        "traces": [
            {"trace": "a.json", "steps": [_gpu_step(None, 4_000, what_if)]},
            {
                "trace": "b.json",
                "candidatesWithheld": ["clock skew"],
                "steps": [_gpu_step(5, 8_000, None), _gpu_step(6, 2_000_000, None)],
            },
        ],
        "job": [dict(_gpu_step(5, 8_000, None), ranksOnPath=[0, 3])],
    }
    section = gpu_section(document, id="g")
    assert section.id == "g" and section.edits == ("no-launch",)
    ids = [s.id for s in section.scopes]
    assert ids == ["g-t0-s0", "g-t1-s0", "g-t1-s1", "g-job-5"]
    titles = [s.title for s in section.scopes]
    assert titles == [
        "a.json · the whole trace",
        "b.json · step 5",
        "b.json · step 6",
        "job step 5 (ranks on the path: 0, 3)",
    ]
    whole, five, six, job = section.scopes
    assert (whole.length, six.length) == ("4 µs", "2 ms")
    assert whole.length_us == pytest.approx(4.0) and six.length_us == pytest.approx(2_000.0)
    assert (whole.withheld, five.withheld, six.withheld, job.withheld) == (
        (),
        ("clock skew",),
        ("clock skew",),
        (),
    )
    assert [c.key for c in whole.parts.columns] == ["class", "path_us", "share"]
    assert _texts(whole.parts, "class") == ["cpu", "gpu_compute"]
    assert _sorts(whole.parts, "path_us") == pytest.approx([1.0, 3.0])
    assert _sorts(whole.parts, "share") == pytest.approx([0.25, 0.75])
    assert 'width="150.00"' in whole.bar and 'width="450.00"' in whole.bar
    path = whole.on_path
    assert path.id == "g-t0-s0-path"
    assert [c.key for c in path.columns] == ["side", "name", "class", "path_us", "share", "count"]
    assert _sorts(path, "path_us") == pytest.approx([3.0, 1.0])
    assert _sorts(path, "share") == pytest.approx([0.75, 0.25])
    assert _sorts(five.on_path, "share") == pytest.approx([0.375, 0.125])
    assert _sorts(path, "count") == [2, 1]
    assert _texts(path, "path_us") == ["3 µs", "1 µs"]
    candidates = whole.candidates
    assert candidates.id == "g-t0-s0-candidates"
    assert [c.key for c in candidates.columns] == ["edit", "what_if_us", "gain_us", "gain_share"]
    assert [c.text for c in candidates.rows[0]] == ["no-launch", "2.500 µs", "1.500 µs", "37.50%"]
    assert _sorts(five.candidates, "gain_share") == pytest.approx([1_500 / 8_000])
    assert whole.what_if == ("4 µs → 3 µs, gain 1 µs (25.00%)", "note: n1", "note: n2")
    assert five.what_if == ()


def test_a_gpu_step_of_no_length_divides_by_one_and_prints_no_share() -> None:
    step = _gpu_step(1, 0, {"whatIfNs": 0, "gainNs": 0})
    step["onPath"] = [{"side": "gpu", "name": "k", "class": "gpu_compute", "pathNs": 0, "count": 1}]
    [scope] = gpu_section({"traces": [{"trace": "t", "steps": [step]}]}).scopes
    assert scope.what_if == ("0 µs → 0 µs, gain 0 µs (—)",)
    assert _sorts(scope.on_path, "share") == [0.0]
    assert _sorts(scope.candidates, "gain_share") == [1_500.0]  # gainNs / 1 where the path is 0
    assert scope.bar.count("<rect ") == 0
    assert gpu_section({"traces": [{"trace": "t", "steps": [step]}], "job": None}).edits == ()


def _docs(table: Table) -> dict[str, str]:
    return {c.key: c.doc for c in table.columns if c.doc}


def test_every_share_and_gain_column_says_what_it_is_of() -> None:
    tile = tile_section(_tile_path(what_if=False)).scopes[0]
    assert _docs(tile.parts) == _docs(tile.on_path) == {"share": DOCS["share"]}
    assert _docs(tile.candidates) == {"gain_share": DOCS["gain_share"]}
    assert _texts(tile.on_path, "share") == ["66.67%", "33.33%"]
    [gpu] = gpu_section({"traces": [{"trace": "t", "steps": [_gpu_step(1, 4_000, None)]}]}).scopes
    assert _docs(gpu.parts) == _docs(gpu.on_path) == {"share": DOCS["share"]}
    assert _docs(gpu.candidates) == {k: DOCS[k] for k in ("what_if_us", "gain_us", "gain_share")}
    assert gpu.id == "critical-t0-s0"  # the default id


def test_a_kernel_on_the_path_is_shown_by_its_short_name_and_sorted_by_its_full_one() -> None:
    name = (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1>)"
    )
    step = _gpu_step(1, 4_000, None)
    step["onPath"] = [dict(step["onPath"][0], name=name)]
    [scope] = gpu_section({"traces": [{"trace": "t", "steps": [step]}]}).scopes
    [cell] = scope.on_path.column("name")
    assert cell.text == "vectorized_elementwise_kernel<…FillFunctor<float>…>"
    assert (cell.sort, cell.title) == (name.lower(), name)


def test_a_step_with_nothing_on_its_path_has_empty_tables_with_their_columns() -> None:
    step = _gpu_step(1, 4_000, None) | {"onPath": [], "candidates": []}
    [scope] = gpu_section({"traces": [{"trace": "t", "steps": [step]}]}).scopes
    keys = ["side", "name", "class", "path_us", "share", "count"]
    assert [c.key for c in scope.on_path.columns] == keys and scope.on_path.rows == ()
    assert scope.candidates.rows == ()
