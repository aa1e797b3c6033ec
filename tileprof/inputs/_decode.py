"""Turning msgspec decoder errors in run sources into one-line ``InputError``s."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from tileprof.core.errors import InputError
from tileprof.inputs._common import (
    NESTED_TOO_DEEP,
    json_error_place,
    json_error_text,
    split_validation_error,
)

T = TypeVar("T")


def check_utf8(path: str | Path, data: bytes) -> None:
    """Refuse text that is not UTF-8, naming the line and column of the first bad byte."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = json_error_place(data, f"(byte {exc.start})")
        raise InputError(
            path, where, f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8"
        ) from None


def decode_json(path: str | Path, data: bytes, type_: type[T]) -> T:
    """Decode ``data`` as ``type_``; a failure names the JSON path or the line and column."""
    check_utf8(path, data)
    try:
        return msgspec.json.decode(data, type=type_)
    except msgspec.ValidationError as exc:
        error = validation_error(path, exc)
        if error.where and "[...]" in error.where and "out of range" in error.message:
            # inside a free-form mapping msgspec cannot name the key
            error = InputError(path, _out_of_range_path(data) or error.where, error.message)
        raise error from None
    except RecursionError:
        raise InputError(path, "document", NESTED_TOO_DEEP) from None
    except msgspec.DecodeError as exc:
        text = str(exc)
        raise InputError(path, json_error_place(data, text), json_error_text(text)) from None


def _out_of_range_path(data: bytes) -> str | None:
    """The JSON path of the first number too large for a float (``1e400``), found by a slower
    decoder that reads it as infinity; None when there is none."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return None

    def walk(value: Any, at: str) -> str | None:
        if isinstance(value, float) and not math.isfinite(value):
            return at
        if isinstance(value, (dict, list)):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                found = walk(item, f"{at}.{key}" if isinstance(key, str) else f"{at}[{key}]")
                if found:
                    return found
        return None

    try:
        return walk(document, "$")
    except RecursionError:
        return None


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
