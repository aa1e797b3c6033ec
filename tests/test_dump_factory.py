"""``TileDumpFactory`` and ``profile_from_spec``: which spec each argument names, what a
missing one tells, and that every file it writes reads back as the profile it builds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tileprof.model.profile import load
from tileprof.testing import DumpSpec, SpecError, TileDumpFactory, profile_from_spec

SPEC: dict[str, Any] = {
    "seed": 3,
    "tileCount": 8,
    "groups": [{"kernel": "k", "samples": 16, "tiles": 8, "duration": 100, "useful": 0.5}],
}


def _factory(tmp_path: Path, missing: list[Path] | None = None) -> TileDumpFactory:
    fixtures = tmp_path / "fixtures"
    (fixtures / "small").mkdir(parents=True)
    (fixtures / "small" / "spec.json").write_text(json.dumps(SPEC), encoding="utf-8")
    on_missing = None if missing is None else missing.append
    return TileDumpFactory(fixtures, tmp_path / "out", on_missing=on_missing)


def test_the_profile_names_its_seed_unless_the_spec_names_a_source() -> None:
    profile = profile_from_spec(DumpSpec.from_mapping(SPEC))
    assert (profile.source, profile.format) == ("tile_dump spec (seed 3)", "generated")
    assert (profile.tile_count, profile.samples.height) == (8, 16)
    named = profile_from_spec(DumpSpec.from_mapping(SPEC, source="spec.json"))
    assert named.source == "spec.json"


def test_each_kind_of_argument_names_one_spec(tmp_path: Path) -> None:
    factory = _factory(tmp_path)
    spec = DumpSpec.from_mapping(SPEC)
    assert factory.spec(spec) is spec
    assert factory.spec(SPEC) == spec
    assert factory.spec("small") == spec
    on_disk = tmp_path / "fixtures" / "small" / "spec.json"
    assert factory.spec(on_disk) == spec and factory.spec(str(on_disk)) == spec
    assert factory(SPEC).samples.equals(profile_from_spec(spec).samples)


def test_a_missing_fixture_is_reported_and_a_missing_file_is_not(tmp_path: Path) -> None:
    missing: list[Path] = []
    factory = _factory(tmp_path, missing)
    with pytest.raises(SpecError) as info:
        factory.spec("absent")
    expected = tmp_path / "fixtures" / "absent" / "spec.json"
    assert str(info.value) == f"{expected}: no such spec file"
    assert missing == [expected]
    # a name with a suffix, a folder in it, or given as a Path is a file, not a fixture
    for argument in ("absent.json", "sub/absent", Path("absent")):
        with pytest.raises(SpecError, match="no such spec file"):
            factory.spec(argument)
    assert missing == [expected]
    # and a factory with no callback only raises
    with pytest.raises(SpecError):
        _factory(tmp_path / "other").spec("absent")


@pytest.mark.parametrize(
    "filename", ["dump.json", "dump.ndjson", "d/dump.ndjson.gz", "dump.csv", "dump.parquet"]
)
def test_every_format_it_writes_reads_back_as_the_profile(tmp_path: Path, filename: str) -> None:
    factory = _factory(tmp_path)
    path = factory.path("small", filename)
    assert path == tmp_path / "out" / filename and path.is_file()
    read = load(path)
    built = factory("small")
    assert read.samples.equals(built.samples)
    assert (read.tile_count, read.clock_hz) == (built.tile_count, built.clock_hz)


def test_the_default_file_is_json_and_an_unknown_name_is_refused(tmp_path: Path) -> None:
    factory = _factory(tmp_path)
    path = factory.path(SPEC)
    assert path.name == "dump.json" and json.loads(path.read_bytes())["samples"]
    with pytest.raises(ValueError) as info:
        factory.path(SPEC, "dump.txt")
    assert str(info.value) == "dump.txt: name a dump format (.json, .ndjson, .csv, .parquet)"
    assert not (tmp_path / "out" / "dump.txt").exists()


def test_json_and_ndjson_are_the_generators_own_layout(tmp_path: Path) -> None:
    """The loaders' tests read what the generator writes: a key the spec leaves out is absent
    from the sample, not null (the profile writer would write null), one sample a line."""
    factory = _factory(tmp_path)
    document = json.loads(factory.path("small", "dump.json").read_bytes())
    assert len(document["samples"]) == 16
    assert not {"epoch", "operation"} & set(document["samples"][0])
    lines = factory.path("small", "dump.ndjson").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 17
    assert json.loads(lines[0]) == {"clockHz": 1_500_000_000, "tileCount": 8}
    assert not {"epoch", "operation"} & set(json.loads(lines[1]))
