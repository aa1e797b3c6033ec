"""TOML links files (docs/runs.md, "Links"): read, decoded and checked into ``Links``.

Errors name the line (bad TOML) or the key path (``$.link[0].match[0].kernel``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tileprof.core.classify import DTYPES, OP_FAMILIES
from tileprof.core.errors import InputError
from tileprof.core.links import MATCH_COLUMNS, SETTABLE_COLUMNS, Links, LinksFile
from tileprof.inputs._common import read_bytes
from tileprof.inputs._decode import convert

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def load_links(path: str | Path) -> Links:
    """Parse and check a TOML links file; errors name the line or the key path."""
    data = read_bytes(Path(path))
    try:
        raw: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(path, f"byte {exc.start}", "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        text = str(exc)
        where = None
        if "(at " in text:
            text, _, rest = text.partition(" (at ")
            where = rest.rstrip(")")
        raise InputError(path, where, f"bad TOML: {text}") from None
    doc = convert(path, raw, LinksFile, "$")
    for i, link in enumerate(doc.link):
        if not link.match:
            raise InputError(path, f"$.link[{i}].match", "empty list: the link would select no run")
        for j, m in enumerate(link.match):
            _check_match(path, m, f"$.link[{i}].match[{j}]")
    for i, ov in enumerate(doc.override):
        _check_match(path, ov.match, f"$.override[{i}].match")
        for key, value in ov.set.items():
            where = f"$.override[{i}].set.{key}"
            _check_string(path, value, where)
            if key not in SETTABLE_COLUMNS:
                raise InputError(
                    path, where, f"cannot set {key!r}; settable: " + ", ".join(SETTABLE_COLUMNS)
                )
            allowed = {"op_family": OP_FAMILIES, "dtype": DTYPES}.get(key)
            if allowed and value not in allowed:
                raise InputError(path, where, f"{value!r} is not one of {', '.join(allowed)}")
    return Links(tuple(doc.link), tuple(doc.override))


def _check_match(path: str | Path, match: dict[str, Any], where: str) -> None:
    if not match:
        raise InputError(path, where, "empty match: it would match every run")
    for key, value in match.items():
        if key not in MATCH_COLUMNS:
            raise InputError(
                path, f"{where}.{key}", f"unknown column; use one of {', '.join(MATCH_COLUMNS)}"
            )
        _check_string(path, value, f"{where}.{key}")


def _check_string(path: str | Path, value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise InputError(path, where, f"expected a string, got {type(value).__name__} {value!r}")
