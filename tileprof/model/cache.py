"""The automatic columnar cache behind ``--cache``.

A dump is parsed once; its typed frame and metadata table are saved in the cache layout
(``Profile.save``, Parquet) and later runs load that instead, which skips all JSON decoding.
The key covers everything that could change the parsed profile: the dump's resolved path,
size and modification time, the tileprof version (a new parser may read differently), and the
input options (format, clock and tile overrides). Entries are written atomically, so a crash
or a concurrent run never leaves a half-written file that a later run would trust.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tileprof._version import __version__
from tileprof.core.errors import InputError, TileprofError
from tileprof.core.text import escape_control

if TYPE_CHECKING:
    from tileprof.analyses.filters import Filters
    from tileprof.analyses.summary import Summary
    from tileprof.model.profile import Profile

CACHE_ENV = "TILEPROF_CACHE_DIR"


def cache_dir() -> Path:
    """``$TILEPROF_CACHE_DIR``, else ``$XDG_CACHE_HOME/tileprof``, else ``~/.cache/tileprof``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "tileprof"


def cache_key(
    path: str | Path,
    *,
    format: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
) -> str:
    """A hex digest naming the cache entry of this dump, as it is now, read with these options."""
    source = Path(path).resolve()
    try:
        stat = source.stat()
    except OSError:
        raise InputError(path, None, "no such file") from None
    parts = (
        str(source),
        str(stat.st_size),
        str(stat.st_mtime_ns),
        __version__,
        repr(format),
        repr(clock_hz),
        repr(tile_count),
    )
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def cache_path(
    path: str | Path,
    *,
    format: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
) -> Path:
    """Where the cache entry of ``path`` lives (it may not exist yet)."""
    key = cache_key(path, format=format, clock_hz=clock_hz, tile_count=tile_count)
    return cache_dir() / f"{Path(path).name}.{key}.parquet"


def load_cached(
    path: str | Path,
    *,
    format: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
    quiet: bool = True,
) -> Profile:
    """``tileprof.load`` through the cache: read the entry when it is there, else parse and save.

    A cache that cannot be written (read-only home, full disk) costs a warning, not the run; an
    entry that cannot be read is ignored and rewritten.
    """
    from tileprof.model.profile import load

    entry = cache_path(path, format=format, clock_hz=clock_hz, tile_count=tile_count)
    if entry.is_file():
        try:
            cached = load(entry, format="parquet")
        except TileprofError:
            cached = None
        if cached is not None:
            return dataclasses.replace(cached, source=str(path))
    profile = load(path, format=format, clock_hz=clock_hz, tile_count=tile_count, quiet=quiet)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        profile.save(entry)
    except (OSError, TileprofError) as exc:
        warning = escape_control(f"cannot write cache {entry}: {exc}")
        print(f"tileprof: warning: {warning}", file=sys.stderr)
    return profile


def summary_cache_path(
    path: str | Path,
    filters: Filters,
    group_by: Sequence[str],
    *,
    format: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
) -> Path:
    """Where the summary document of ``path`` with these filters and grouping is cached.

    Keyed by the dump's own cache key (path, size, mtime, version, input options) plus the
    filters and dimensions, so any change to the dump or the question misses.
    """
    key = cache_key(path, format=format, clock_hz=clock_hz, tile_count=tile_count)
    question = repr((dataclasses.astuple(filters), tuple(group_by)))
    detail = hashlib.sha256(question.encode()).hexdigest()[:16]
    return cache_dir() / f"{Path(path).name}.{key}.summary-{detail}.json"


def load_cached_summary(
    path: str | Path,
    filters: Filters,
    group_by: Sequence[str] = (),
    *,
    format: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
    quiet: bool = True,
) -> Summary:
    """``load_cached(path).summary(filters, group_by=...)``, itself cached as its document.

    A repeat ``diff --cache`` then reads two small JSON documents instead of two profiles. The
    document holds the summary's numbers exactly (floats round-trip through JSON), so the
    groups read back are the ones ``summary`` printed.
    """
    from tileprof.analyses.summary import summary_from_document
    from tileprof.core.outputs import atomic_writer

    options: dict[str, Any] = {"format": format, "clock_hz": clock_hz, "tile_count": tile_count}
    entry = summary_cache_path(path, filters, group_by, **options)
    if entry.is_file():
        try:
            document = json.loads(entry.read_bytes())
            cached = summary_from_document(document, str(path))
            return dataclasses.replace(cached, filters=filters, group_by=tuple(group_by))
        except (OSError, ValueError, TileprofError):
            pass  # unreadable: recompute and rewrite
    profile = load_cached(path, quiet=quiet, **options)
    summary = profile.summary(filters, group_by=group_by)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(entry) as handle:
            json.dump(summary.to_document(), handle, allow_nan=False)
    except (OSError, TileprofError) as exc:
        warning = escape_control(f"cannot write cache {entry}: {exc}")
        print(f"tileprof: warning: {warning}", file=sys.stderr)
    return summary
