"""Turning msgspec decoder errors in run sources into one-line ``InputError``s."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from tileprof.errors import InputError
from tileprof.parsers._common import json_error_place, split_validation_error

T = TypeVar("T")

_AT_BYTE = re.compile(r"\(byte (?P<byte>\d+)\)")


def decode_json(path: str | Path, data: bytes, type_: type[T]) -> T:
    """Decode ``data`` as ``type_``; a failure names the JSON path or the line and column."""
    try:
        return msgspec.json.decode(data, type=type_)
    except msgspec.ValidationError as exc:
        raise validation_error(path, exc) from None
    except msgspec.DecodeError as exc:
        text = str(exc)
        message = _AT_BYTE.sub("", text).strip().rstrip(":")
        where = json_error_place(data, text)
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
    at, message = split_validation_error(str(exc))
    return InputError(path, prefix + at[1:], message)
