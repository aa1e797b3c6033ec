"""Turning msgspec decoder errors in run sources into one-line ``InputError``s."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from tileprof.errors import InputError

T = TypeVar("T")

_AT_PATH = re.compile(r"^(?P<msg>.*?) - at `(?P<path>[^`]*)`$")
_AT_BYTE = re.compile(r"\(byte (?P<byte>\d+)\)")


def line_col(data: bytes, offset: int) -> str:
    """``line L, column C`` (1-based) of byte ``offset`` in ``data``."""
    offset = max(0, min(offset, len(data)))
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {col}"


def decode_json(path: str | Path, data: bytes, type_: type[T]) -> T:
    """Decode ``data`` as ``type_``; a failure names the JSON path or the line and column."""
    try:
        return msgspec.json.decode(data, type=type_)
    except msgspec.ValidationError as exc:
        raise validation_error(path, exc) from None
    except msgspec.DecodeError as exc:
        text = str(exc)
        m = _AT_BYTE.search(text)
        where = line_col(data, int(m.group("byte"))) if m else None
        message = _AT_BYTE.sub("", text).strip().rstrip(":").replace("JSON is", "JSON is")
        raise InputError(path, where, message[0].lower() + message[1:]) from None


def convert(path: str | Path, obj: Any, type_: type[T], where: str) -> T:
    """``msgspec.convert`` of a decoded value found at JSON path ``where``."""
    try:
        return msgspec.convert(obj, type=type_)
    except msgspec.ValidationError as exc:
        raise validation_error(path, exc, prefix=where) from None


def validation_error(
    path: str | Path, exc: msgspec.ValidationError, prefix: str = "$"
) -> InputError:
    """An ``InputError`` whose place is the JSON path msgspec reports."""
    text = str(exc)
    m = _AT_PATH.match(text)
    if m:
        message, where = m.group("msg"), prefix + m.group("path")[1:]
    else:
        message, where = text, prefix
    return InputError(path, where, message[0].lower() + message[1:])
