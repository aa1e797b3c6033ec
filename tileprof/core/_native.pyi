"""Type stub of the compiled decoder (crates/tileprof-native, built by maturin)."""

from collections.abc import Callable
from typing import Any

class DecodeError(Exception):
    """``args``: (kind, place, message, text). kind is "json" (place: the sample index or
    None), "line" (place: the NDJSON line number; text: the line), "gzip", "io" or "panic"."""

class ArrowColumns:
    """The decoded columns as one Arrow struct array (the Arrow PyCapsule interface)."""

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[Any, Any]: ...
    def __len__(self) -> int: ...
    def columns(self) -> list[tuple[str, ArrowColumn]]:
        """Each column by name, handed out once (a second call raises DecodeError)."""

class ArrowColumn:
    """One decoded column as an Arrow array of its own (the Arrow PyCapsule interface)."""

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[Any, Any]: ...
    def __len__(self) -> int: ...

def decode_json_file(
    path: str,
    jobs: int,
    block: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> tuple[tuple[ArrowColumns, list[bytes], str | None, str | None], bool]: ...
def decode_json_bytes(
    data: bytes, jobs: int, block: int | None = None
) -> tuple[ArrowColumns, list[bytes], str | None, str | None]: ...
def decode_ndjson_file(
    path: str, jobs: int, window: int = ..., progress: Callable[[int], object] | None = None
) -> tuple[ArrowColumns, list[bytes], int | None, bytes | None, ArrowColumns]: ...
def decode_ndjson_bytes(
    data: bytes, jobs: int, window: int = ...
) -> tuple[ArrowColumns, list[bytes], int | None, bytes | None, ArrowColumns]: ...
def gather_by_id(
    ids: ArrowColumn, tables: list[list[float | None]], jobs: int
) -> list[ArrowColumn]: ...
def decode_kineto_bytes(
    data: bytes,
    jobs: int = 1,
    part: int | None = None,
    timeline: bool = False,
) -> tuple[
    tuple[ArrowColumns, tuple[int, int] | None, tuple[int, int] | None, tuple[int, int] | None]
    | None,
    str | None,
]: ...
def decode_kineto_inventory(
    data: bytes,
) -> tuple[tuple[ArrowColumns, tuple[int, int] | None] | None, str | None]: ...
def decode_kineto_file(
    path: str,
    jobs: int = 1,
    part: int | None = None,
    window: int | None = None,
    timeline: bool = False,
) -> tuple[
    tuple[ArrowColumns, bytes | None, bytes | None, bytes, list[str], bytes | None] | None,
    str | None,
]: ...
def decode_kineto_inventory_file(
    path: str, window: int | None = None
) -> tuple[tuple[ArrowColumns, bytes | None, list[str]] | None, str | None]: ...
def _panic_in_decoder(jobs: int) -> None: ...
def _validate_json_file(path: str) -> None: ...

# The .pftrace encoder and overlap lanes (crates/tileprof-pftrace, bindings in
# crates/tileprof-native/src/trace.rs), used by tileprof.views.trace.perfetto and
# tileprof.model.trace.

class EncodeError(Exception):
    """``args``: (kind, message); kind is "columns" (a column the encoder cannot take) or
    "panic"."""

def encode_slices(
    frame: object,
    *,
    sequence: int,
    ints: list[tuple[int, str]],
    doubles: list[tuple[int, str]],
    strings: list[tuple[int, str]],
    lists: list[list[tuple[int, int]]],
    list_column: str | None,
    batch: int,
    level: int,
    jobs: int,
) -> list[bytes]: ...
def encode_tracks(
    frame: object, names: list[str], *, sequence: int, batch: int, level: int, jobs: int
) -> list[bytes]: ...
def assign_lanes(frame: object, *, jobs: int) -> ArrowColumns: ...
def binned_counters(frame: object, *, start: int, width: int, count: int) -> ArrowColumns: ...
def _panic_in_encoder(jobs: int) -> None: ...

# The group table's statistics (crates/tileprof-groups, bindings in
# crates/tileprof-native/src/groups.rs), used by tileprof.analyses.stats.

class GroupsError(Exception):
    """``args``: (kind, message); kind is "columns" (a column the statistics cannot take) or
    "panic"."""

def group_statistics(
    samples: object, rows: object, *, percents: list[int], jobs: int
) -> ArrowColumns: ...
def _panic_in_groups(jobs: int) -> None: ...
def top_level_keys(data: bytes) -> list[str] | None: ...
def op_nesting(ops: object) -> ArrowColumns: ...
