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
) -> tuple[ArrowColumns, list[bytes], int | None, bytes | None]: ...
def decode_ndjson_bytes(
    data: bytes, jobs: int, window: int = ...
) -> tuple[ArrowColumns, list[bytes], int | None, bytes | None]: ...
def _panic_in_decoder(jobs: int) -> None: ...
def _validate_json_file(path: str) -> None: ...
