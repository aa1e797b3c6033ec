"""Golden files on disk, and ``--tileprof-regen``: rewriting them from the current dumps.

The fixture ``reference_aggregates(name)`` hands out a ``GoldenFile`` rather than the parsed
numbers so that ``assert_aggregates_match`` can do the right thing in either mode: compare
against it normally, or, under ``--tileprof-regen``, write the actual aggregates over it
(atomically, only when the bytes change, keeping the hand-written thresholds and ``dump``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tileprof.core.outputs import write_text
from tileprof.testing.aggregates import Aggregates

GOLDEN_NAME = "aggregates.json"


def shown(path: Path, base: Path | None = None) -> str:
    """``path`` relative to ``base`` (default: the working folder) when under it, else as is:
    what the author would type.
    """
    try:
        return str(path.resolve().relative_to((base or Path.cwd()).resolve()))
    except ValueError:
        return str(path)


@dataclass
class RegenLog:
    """What a ``--tileprof-regen`` session did to each golden file, for the terminal summary.

    ``created``: files that did not exist; ``written``: existing files whose bytes changed;
    ``skipped``: goldens left alone, with why (their dump or spec is missing).
    """

    created: list[Path] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)

    def skip(self, path: Path, why: str) -> None:
        """Record that ``path`` was not touched, once."""
        if all(seen != path for seen, _ in self.skipped):
            self.skipped.append((path, why))


@dataclass(frozen=True)
class GoldenFile:
    """One golden aggregates file; ``regen`` is set when the session rewrites, not compares."""

    path: Path
    regen: RegenLog | None = None

    @property
    def name(self) -> str:
        """The fixture name (the folder holding the file)."""
        return self.path.parent.name

    def exists(self) -> bool:
        """Whether the file is there."""
        return self.path.is_file()

    def load(self) -> Aggregates:
        """The pinned aggregates (``InputError`` when missing or malformed)."""
        return Aggregates.load(self.path)

    def regenerate(self, actual: Aggregates) -> bool:
        """Write ``actual`` over the file; True when its bytes changed.

        Thresholds and ``dump`` come from the existing file: they are reviewed by people,
        not measured. When that ``dump`` names a file that is gone, the golden is left alone:
        numbers computed without the dump cannot be the ones it pins.
        """
        log = self.regen if self.regen is not None else RegenLog()
        previous = self.load() if self.exists() else None
        if previous is not None and previous.dump is not None:
            dump_path = self.path.parent / previous.dump
            if not dump_path.exists():
                log.skip(self.path, f"dump {previous.dump} is missing")
                return False
        merged = Aggregates(
            groups=actual.groups,
            header=actual.header,
            thresholds=previous.thresholds if previous else (),
            dump=previous.dump if previous else None,
        )
        text = merged.to_json()
        if self.exists() and self.path.read_text(encoding="utf-8") == text:
            if self.path not in log.unchanged:
                log.unchanged.append(self.path)
            return False
        created = not self.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text(self.path, text)
        done = log.created if created else log.written
        if self.path not in log.created and self.path not in log.written:
            done.append(self.path)
        return True
