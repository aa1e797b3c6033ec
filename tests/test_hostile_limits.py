"""Hostile input that must not hurt (issue 32): names that would hang a backtracking regular
expression, gzip bombs and claims of size, raw terminal escapes, and a full disk under the store.

Each test fails on the code before it: the names hung `runs` (hours), the bomb decompressed
whole, the escapes reached the terminal raw, the full disk was a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile import ROOT, assert_one_line_error
from tileprof.core import patterns, specs
from tileprof.core.errors import OptionError

ESC_TITLE = "\x1b]0;pwned\x07"
ESC_CLEAR = "\x1b[2J"

# --- time: names that made backtracking patterns hang -------------------------------------


def test_every_spec_pattern_is_linear_time() -> None:
    """The registry's match and exclude patterns are RE2's (no backtracking)."""
    for spec in specs.registry():
        for rx in (*spec.match, *spec.exclude):
            assert isinstance(rx, patterns.Pattern), (spec.path, rx)


def test_spec_matching_reads_only_the_names_head() -> None:
    """A device name of 200 KB (``"h100 " × 40,000``: seconds per 10 KB before, hours for
    this one) is matched by its first NAME_PATTERN_LIMIT characters."""
    assert specs.spec_for("h100 " * 40_000) is None
    long = "NVIDIA H100 80GB HBM3 " + "x" * 200_000
    found = specs.spec_for(long)
    assert found is not None and found.name == "NVIDIA H100 SXM"
    late = "x" * patterns.NAME_PATTERN_LIMIT + " NVIDIA H100 80GB HBM3"
    assert specs.spec_for(late) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM 40 GB"),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM 80 GB"),
        ("NVIDIA A100-PCIE-40GB", None),
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
        ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
        ("NVIDIA H100 NVL", None),
        ("NVIDIA H100 80GB HBM3e", None),
        ("NVIDIA H200", "NVIDIA H200"),
        ("NVIDIA H200 NVL", None),
        ("NVIDIA GH200 480GB", None),
        ("AMD Instinct MI300X VF", "AMD Instinct MI300X"),
    ],
)
def test_rewritten_patterns_match_as_the_look_arounds_did(name: str, expected: str | None) -> None:
    found = specs.spec_for(name)
    assert (found.name if found else None) == expected


def test_a_user_spec_with_a_look_around_is_one_line(tmp_path: Path) -> None:
    bundled = (ROOT / "tileprof/data/specs/b200.toml").read_text()
    spec = tmp_path / "mine.toml"
    spec.write_text(bundled.replace("match = ['(?:^|[^a-z])b200']", "match = ['(?<![a-z])b200']"))
    runs = tmp_path / "runs.csv"
    runs.write_text("target,workload,kernel,time_us\nB200,w,gemm,1\n")
    message = assert_one_line_error("runs", runs, "--spec", spec, contains="mine.toml: match")
    assert "look-around" in message


def test_runs_on_a_200_kb_device_name_finishes(tmp_path: Path) -> None:
    """The issue's reproducer, in a process of its own: before, it never finished."""
    path = tmp_path / "runs.csv"
    path.write_text(f"target,workload,kernel,time_us\n{'h100 ' * 40_000},w,gemm_k,1\nB,w,k,2\n")
    done = subprocess.run(
        [sys.executable, "-m", "tileprof", "runs", str(path), "--format", "json"],
        capture_output=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["runs"]) == 2


def test_kernel_names_that_backtracked_display_quickly() -> None:
    """``kernel_display_name`` on template names that took seconds per 10 KB (``f<aaa…``)."""
    from tileprof.core.text import kernel_display_name

    assert kernel_display_name("f<" + "a" * 200_000).startswith("f<")
    assert kernel_display_name("f<" + "a(" * 100_000).startswith("f<")


def test_normalize_and_match_run_in_re2(capfd: pytest.CaptureFixture[str]) -> None:
    """``--normalize`` and ``--match`` patterns meet kernel names through RE2: a look-around is
    refused in one line, and a pattern that backtracks in Python finishes on a long name."""
    from tileprof.analyses.diff import Rename, compile_normalize

    with pytest.raises(OptionError, match="--normalize"):
        compile_normalize("(?<=a)b")
    assert capfd.readouterr().err == ""
    rx = compile_normalize("(a*)*b")
    assert rx is not None and rx.sub("", "a" * 100_000) == "a" * 100_000
    assert Rename.parse("*a*a*a*b=*x*y*z*w").apply("a" * 10_000) is None
