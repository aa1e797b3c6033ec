"""Helpers for the hostile-input tests: run a command and check the bad-input promise.

The promise (docs/reliability.md): bad input ends in ONE line ``tileprof: error: …`` on stderr,
exit code 2, and no traceback.
"""

from __future__ import annotations

import contextlib
import json
import math
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tileprof.commands.cli import cli

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Fail the block if it runs longer than ``seconds`` (a hang, or a quadratic blow-up)."""

    def expire(*_: object) -> None:
        raise TimeoutError(f"ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def invoke(*args: str | Path, input: bytes | None = None) -> tuple[int, str, str, Any]:
    """(exit code, stdout, stderr, exception other than SystemExit or None)."""
    result = CliRunner().invoke(cli, [str(a) for a in args], input=input)
    exception = result.exception
    if isinstance(exception, SystemExit):
        exception = None
    return result.exit_code, result.stdout, result.stderr, exception


def assert_one_line_error(*args: str | Path, contains: str = "", input: bytes | None = None) -> str:
    """Run ``tileprof ARGS``; assert the promise and return the message after the prefix."""
    code, _, err, exception = invoke(*args, input=input)
    assert exception is None, f"{type(exception).__name__}: {exception}"
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("tileprof: error: "), err
    assert code == 2, (code, err)
    message = lines[0].removeprefix("tileprof: error: ")
    assert contains in message, message
    return message


def strict_json(text: str) -> Any:
    """Parse ``text`` as strict JSON (no NaN, no Infinity); fail naming the token otherwise."""

    def refuse(token: str) -> None:
        raise AssertionError(f"non-strict JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def finite_everywhere(value: Any) -> bool:
    """Whether every float in a decoded JSON value is finite."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite_everywhere(v) for v in value.values())
    if isinstance(value, list):
        return all(finite_everywhere(v) for v in value)
    return True


def varint(value: int) -> bytes:
    """``value`` as a Thrift compact (ULEB128) varint: seven bits a byte, low first."""
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def zigzag(value: int) -> int:
    """``value`` as Thrift compact writes a signed integer before its varint."""
    return value * 2 if value >= 0 else -value * 2 - 1


def with_negative_chunk_size(parquet: bytes) -> bytes:
    """``parquet`` with its last column chunk's ``total_compressed_size`` negated in the
    footer (Thrift compact: field 6 of ColumnMetaData, header byte 0x16, a zigzag varint):
    pyarrow still reads the footer, and polars' reader panics on it."""
    import struct

    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = pq.read_metadata(pa.BufferReader(parquet))
    group = meta.row_group(meta.num_row_groups - 1)
    size = group.column(group.num_columns - 1).total_compressed_size
    old, new = (b"\x16" + varint(zigzag(v)) for v in (size, -size))
    assert len(old) == len(new), "pick a size whose negation encodes in as many bytes"
    footer_start = len(parquet) - 8 - struct.unpack("<I", parquet[-8:-4])[0]
    at = parquet.rindex(old, footer_start)
    bad = parquet[:at] + new + parquet[at + len(old) :]
    chunk = pq.read_metadata(pa.BufferReader(bad)).row_group(meta.num_row_groups - 1)
    assert chunk.column(group.num_columns - 1).total_compressed_size == -size
    return bad


_UNDER_LIMIT = """
import resource, sys
import numpy, polars, pyarrow, msgspec
import tileprof.commands.cli as cli
import tileprof.commands.summary, tileprof.commands.runs, tileprof.inputs.sources
import tileprof.inputs.tile.json_dump, tileprof.model.profile
from tileprof.inputs import _common
_common.GZIP_FLOOR_BYTES = int(sys.argv[2])
status = open("/proc/self/status").read().split("VmSize:")[1]
size = int(status.split()[0]) * 1024 + int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (size, size))
sys.argv = ["tileprof", *sys.argv[3:]]
cli.main()
"""


def run_under_memory_limit(
    *args: str | Path, headroom: int = 256 << 20, gzip_floor: int = 64 << 20
) -> tuple[int, str]:
    """``tileprof ARGS`` in a process of its own whose address space may grow ``headroom``
    bytes past what its imports took (``resource.setrlimit(RLIMIT_AS)``), with
    the gzip floor at ``gzip_floor``: (exit code, stderr). A crash is a negative exit code."""
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _UNDER_LIMIT, str(headroom), str(gzip_floor), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "POLARS_MAX_THREADS": "1"},
    )
    return done.returncode, done.stderr
