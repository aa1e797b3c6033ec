"""A tt-metal NoC event trace is refused by name, by every command: it is a JSON array, as a
run table is, and was read as one until its first event was refused for a field a run table
lacks ("object contains unknown field `proc`"), or named "a run table" by the tile commands.

The two files are tt-npe's own (``fixtures/real/README.md``): the older layout (one op, kernel
zones with a begin only) and the newer (a T3K all-gather with ``op_name`` and ``run_host_id``).
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
NOC_FILES = ("DRAM_TO_8x8_HEIGHT.json", "all_gather_combined.json")
COMMANDS = (
    "summary",
    "runs",
    "report",
    "check",
    "findings",
    "trace",
    "breakdown",
    "critical",
    "supersteps",
)


def _noc_copies(tmp_path: Path, name: str) -> list[Path]:
    plain = tmp_path / name
    shutil.copyfile(REAL / name, plain)
    zipped = tmp_path / f"{name}.gz"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    return [plain, zipped]


def _refused(args: list[str], path: Path) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, (args, result.output)
    (line,) = result.output.splitlines()
    assert line.startswith(f"tileprof: error: {path}: $[0]: a tt-metal NoC event trace ("), line
    assert "which tileprof does not read: tt-npe reads NoC traces" in line


@pytest.mark.parametrize("name", NOC_FILES)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_a_noc_trace_by_name(tmp_path: Path, name: str, command: str) -> None:
    for path in _noc_copies(tmp_path, name):
        out = tmp_path / f"{command}.{path.name}.out.json"
        _refused([command, str(path), "-o", str(out)], path)
        assert not out.exists()


def test_diff_refuses_a_noc_trace_on_either_side(tmp_path: Path) -> None:
    noc = _noc_copies(tmp_path, NOC_FILES[1])[0]
    runs = tmp_path / "runs.json"
    runs.write_text('[{"target": "H100", "workload": "w", "kernel": "k", "time_us": 1.5}]')
    _refused(["diff", str(noc), str(runs)], noc)
    _refused(["diff", str(runs), str(noc)], noc)


def test_a_run_table_as_a_json_array_is_still_read(tmp_path: Path) -> None:
    runs = tmp_path / "runs.json"
    runs.write_text('[{"target": "H100", "workload": "w", "kernel": "k", "time_us": 1.5}]')
    result = CliRunner().invoke(cli, ["runs", str(runs), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"time_us": 1.5' in result.output
