"""The ``tile_dump`` factory: a spec in, a profile or a dump file out.

Tests mostly want the profile (no parsing, fast); tests of a loader or a CLI want a file on
disk in a given format. Both come from the same spec and seed, so they hold the same samples.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tileprof.inputs import format_from_extension
from tileprof.model.profile import Profile
from tileprof.testing.spec import DumpSpec, SpecError, build_dump
from tileprof.views.writers import write_dump

SPEC_NAME = "spec.json"

SpecArgument = DumpSpec | Mapping[str, Any] | str | Path
"""A spec, a spec mapping, a fixture name (``<fixtures>/<name>/spec.json``) or a spec file."""


def profile_from_spec(spec: DumpSpec) -> Profile:
    """The profile of ``spec``'s dump, built straight into the typed frame (no parser)."""
    dump = build_dump(spec)
    samples, metadata = dump.to_frame()
    source = spec.source or f"tile_dump spec (seed {spec.seed})"
    return Profile(samples, tuple(metadata), dump.clock_hz, dump.tile_count, source, "generated")


class TileDumpFactory:
    """Builds deterministic dumps from compact specs; the ``tile_dump`` fixture is one of these.

    ``factory(spec)`` returns a ``Profile``; ``factory.path(spec, "dump.ndjson.gz")`` writes
    the dump in the format its name says and returns the path.
    """

    def __init__(
        self,
        fixtures_dir: Path,
        output_dir: Path,
        *,
        on_missing: Callable[[Path], None] | None = None,
    ) -> None:
        self.fixtures_dir = fixtures_dir
        self.output_dir = output_dir
        self.on_missing = on_missing
        """Called with a fixture's spec path when that spec file is missing."""

    def spec(self, spec: SpecArgument) -> DumpSpec:
        """Resolve any accepted spec argument to a ``DumpSpec``."""
        if isinstance(spec, DumpSpec):
            return spec
        if isinstance(spec, Mapping):
            return DumpSpec.from_mapping(spec)
        path = Path(spec)
        fixture = isinstance(spec, str) and not path.suffix and len(path.parts) == 1
        if fixture:
            path = self.fixtures_dir / str(spec) / SPEC_NAME
        if not path.is_file():
            if fixture and self.on_missing is not None:
                self.on_missing(path)
            raise SpecError(path, None, "no such spec file")
        return DumpSpec.from_file(path)

    def __call__(self, spec: SpecArgument) -> Profile:
        """The profile of the spec's dump."""
        return profile_from_spec(self.spec(spec))

    def path(self, spec: SpecArgument, filename: str = "dump.json") -> Path:
        """Write the spec's dump as ``filename`` (json, ndjson, csv, parquet; ``.gz`` ok)."""
        target = self.output_dir / filename
        format = format_from_extension(target)
        if format is None:
            raise ValueError(f"{filename}: name a dump format (.json, .ndjson, .csv, .parquet)")
        target.parent.mkdir(parents=True, exist_ok=True)
        resolved = self.spec(spec)
        if format in ("json", "ndjson"):
            dump = build_dump(resolved)
            (dump.write_json if format == "json" else dump.write_ndjson)(target)
        else:
            write_dump(profile_from_spec(resolved), target, format)
        return target
