"""One number format across the terminal, the verdict lines, HTML and the plugin (issue 26).

Times carry their unit everywhere, µ is one character (U+00B5), speedups carry ``×``, a tiny
change never reads as ``+0.00%``, and the exact values of verdict lines have separators.
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl

from tests.hostile import ROOT
from tileprof.core import numbers

GREEK_MU = "\u03bc"


def test_times_speedups_and_tiny_changes() -> None:
    assert numbers.duration_us(57_945.0) == "57.95 ms"
    assert numbers.duration_us(15.5) == "15.50 µs"
    assert numbers.duration_us(7.8e8) == "780 s"
    assert numbers.duration_us(None) == numbers.MISSING
    assert numbers.speedup(2.5) == "2.500×"
    assert numbers.speedup(None) == numbers.MISSING
    assert numbers.percent(1.2e-5, signed=True) == "+0.0012%"
    assert numbers.percent(-3e-7, signed=True) == "-3e-05%"
    assert numbers.percent(0.0, signed=True) == "+0.00%"
    assert numbers.percent(0.125, signed=True) == "+12.50%"
    assert numbers.exact(12345) == "12,345"
    assert numbers.exact(0.46872549019607845) == "0.4687254902"
    assert numbers.exact(1234567.125) == "1,234,567.125"
    assert numbers.exact(None) == "null"
    assert numbers.MICRO == "\u00b5"


def test_the_plugin_prints_changes_as_the_terminal_does() -> None:
    from tileprof.testing import format_change

    for change in (None, math.inf, -math.inf, -0.0231, 0.0, -3e-7, 0.5):
        assert format_change(change) == numbers.percent(change, signed=True)
    assert format_change(None) == "—" and format_change(math.inf) == "+∞%"


def test_verdict_lines_use_separators() -> None:
    from tileprof.analyses.thresholds import Breach, Threshold

    threshold = Threshold.parse("phaseCycles may not rise by more than 5%")
    line = str(Breach(threshold, "gemm", "phaseCycles", 12_000, 14_500))
    assert line.startswith("phaseCycles of gemm: 12,000 → 14,500 (+20.83%) breaks ")


def test_html_time_columns_carry_their_unit() -> None:
    from tileprof.views.html.data import table_from_frame

    frame = pl.DataFrame(
        {"time_us": [57_945.0, 12.5], "speedup": [2.5, None], "phaseMs": [0.06307, None]}
    )
    table = table_from_frame("t", frame, ("time_us", "speedup", "phaseMs"))
    texts = [[cell.text for cell in row] for row in table.rows]
    assert texts == [["57.95 ms", "2.500×", "0.06307"], ["12.50 µs", "—", "—"]]
    assert texts[0][0] != "57,945"  # the run table's time had no unit (issue 26)


def test_the_superstep_table_spells_micro_once() -> None:
    from tileprof.views.html.data import table_from_frame

    table = table_from_frame("s", pl.DataFrame({"us": [1.5]}), ("us",))
    assert [c.label for c in table.columns] == ["µs"]
    assert table.rows[0][0].text == "1.500 µs"


def test_the_terminal_run_table_marks_speedups() -> None:
    from tileprof.views import runs_table

    assert runs_table.RUN_COLUMNS[-1][0] == "speedup"
    make = runs_table.RUN_COLUMNS[-1][2]
    assert make({"speedup": 3.0}, 0) == "3×"
    assert make({"speedup": None}, 0) == "—"


def test_no_greek_mu_in_the_package_or_the_docs() -> None:
    paths = [*Path(ROOT, "tileprof").rglob("*.py"), *Path(ROOT, "tileprof").rglob("*.j2")]
    paths += [*Path(ROOT, "docs").glob("*.md"), Path(ROOT, "README.md")]
    offenders = [str(p) for p in paths if GREEK_MU in p.read_text(encoding="utf-8")]
    assert not offenders


def test_the_tile_end_caption_says_a_tie() -> None:
    from tileprof.views.html.supersteps_charts import straggler_text

    assert straggler_text(0) == "ending with another tile (a tie: no single straggler)."
    assert "0 cycles after" not in straggler_text(0)
    assert straggler_text(1500) == "ending 1,500 cycles after the next tile to end."
    assert straggler_text(None) == "the only active tile."


def test_numbers_at_the_edges_of_the_policy() -> None:
    """By hand: booleans as words, infinities as signs, 1e-4 itself to 4 figures (only
    below it is scientific), trailing zeros kept, 999.96 rounded up to a whole 1,000."""
    import numpy as np

    assert numbers.number(True) == "True"
    assert numbers.number(np.True_) == "True"  # a numpy bool is no Integral: not "1"
    # numpy 1.x (pyproject allows numpy>=1.24) names its bool type bool_, not bool
    numpy1_bool = type("bool_", (), {"__float__": lambda self: 1.0, "__str__": lambda self: "True"})
    assert numbers.number(numpy1_bool()) == "True"
    assert numbers.number(math.inf) == "∞"
    assert numbers.number(-math.inf) == "−∞"  # U+2212 MINUS SIGN
    assert numbers.number(1e-4) == "0.0001000"
    assert numbers.number(0.25) == "0.2500"
    assert numbers.number(999.96) == "1,000"
    # fewer digits: 150.5 to 2 figures is 150 and 123.4 to 3 is 123, whole, never "1.5e+02"
    # or "123."
    assert numbers.number(150.5, 2) == "150"
    assert numbers.number(123.4, 3) == "123"
    assert numbers.exact(True) == "True"
    assert numbers.exact("gemm") == "gemm"


def test_percentages_at_the_edges_of_the_policy() -> None:
    """By hand: 0.00451% and 0.00498% are below half a hundredth, so 2 significant figures
    (0.0045%, and 0.0050% written 0.005%); 0.005% and 0.012% round to 0.01% at two decimals,
    which is not 0.00%; infinities keep their sign, and "+" only when signed."""
    assert numbers.percent(4.51e-5, signed=True) == "+0.0045%"
    assert numbers.percent(4.98e-5, signed=True) == "+0.005%"  # 0.00498%: not +0.00%
    assert numbers.percent(5e-5, signed=True) == "+0.01%"
    assert numbers.percent(1.2e-4, signed=True) == "+0.01%"
    assert numbers.percent(math.inf) == "∞%"
    assert numbers.percent(-math.inf) == "−∞%"
    assert numbers.percent(math.inf, signed=True) == "+∞%"
    assert numbers.percent(-math.inf, signed=True) == "−∞%"


def test_units_and_ticks_at_their_thresholds() -> None:
    """A time of exactly 1,000 µs is 1 ms and of 10⁶ µs is 1 s (the largest unit that keeps
    the value at 1 or more); 1.5 × 10⁶ cycles at 1.5 GHz are 1,000 µs, 3 at 1 MHz 3 µs."""
    assert numbers.duration_us(1e3) == "1 ms"
    assert numbers.duration_us(1e6) == "1 s"
    assert numbers.cycles_to_us(1_500_000, 1.5e9) == 1000.0
    assert numbers.cycles_to_us(3, 1e6) == 3.0
    assert numbers.tick(0.0) == "0"
    assert numbers.tick(1.0) == "1"
    assert numbers.number_value(math.inf) == math.inf
    assert numbers.number_value(1000.7, 6) == 1001.0  # whole from 1,000 up, at any digits
