"""The target spec registry: one TOML file per device, its peaks, bandwidth and latency floor.

Every number in a spec file is a table ``{ value, unit, source }`` (``note`` optional), and
``source`` names an entry of the file's ``[sources]`` table (a datasheet or paper title with
its URL, or a stated assumption), so every peak tileprof prints traces to a citation. The
bundled files are ``tileprof/data/specs/*.toml``; ``--spec FILE`` (or a folder of them) adds a
user's own, which are matched before the bundled ones. Files are checked on load: an unknown
key, a number without a unit, a unit tileprof cannot convert, a negative number or a source
the file does not cite is one ``InputError`` naming the file and the key.

GPU peaks are TFLOP/s per dtype class (``matrix_*`` for tensor/matrix cores, which GEMM,
convolution and attention use; ``vector_*`` for everything else); the tile device's are per
tile per cycle, turned into the device's peaks by the target's own tile count and clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import tomllib

from tileprof.core import patterns
from tileprof.core.errors import InputError

PEAK_KEYS: tuple[str, ...] = (
    "matrix_fp32",
    "matrix_tf32",
    "matrix_bf16",
    "matrix_fp16",
    "matrix_fp8",
    "matrix_int8",
    "vector_fp32",
    "vector_bf16",
    "fpu_lofi",
    "fpu_hifi2",
    "fpu_hifi3",
    "fpu_hifi4",
)
FIDELITIES: dict[str, str] = {
    "lofi": "fpu_lofi",
    "hifi2": "fpu_hifi2",
    "hifi3": "fpu_hifi3",
    "hifi4": "fpu_hifi4",
}
"""A Tenstorrent op's MATH FIDELITY (lower-cased) → the spec's per-core FPU peak key."""
MEMORY_KEYS: tuple[str, ...] = ("bandwidth", "latency_floor", "exchange_bandwidth", "issue_slots")
TOP_KEYS: tuple[str, ...] = ("name", "kind", "match", "exclude", "sources", "peaks", "memory")
NUMBER_KEYS: tuple[str, ...] = ("value", "unit", "source", "note")
KINDS: tuple[str, ...] = ("gpu", "tile", "chip")
"""``gpu``: whole-device figures; ``tile``: per tile per cycle, scaled by the target's tiles and
clock; ``chip``: whole-chip figures of a tile-array chip (Tenstorrent), with per-core FPU peaks
(``fpu_*``, per math fidelity) that an op's own core count scales."""

# unit → (canonical unit, factor): peaks to TFLOP/s, bandwidth to GB/s, times to µs; the tile
# device's per-tile-per-cycle units stay as written.
_UNITS: dict[str, dict[str, tuple[str, float]]] = {
    "peak": {
        "TFLOP/s": ("TFLOP/s", 1.0),
        "TFLOPS": ("TFLOP/s", 1.0),
        "TOPS": ("TFLOP/s", 1.0),
        "PFLOP/s": ("TFLOP/s", 1000.0),
        "GFLOP/s": ("TFLOP/s", 1e-3),
        "FLOP/cycle/tile": ("FLOP/cycle/tile", 1.0),
        "TFLOP/s/core": ("TFLOP/s/core", 1.0),
    },
    "bandwidth": {
        "GB/s": ("GB/s", 1.0),
        "TB/s": ("GB/s", 1000.0),
        "B/cycle/tile": ("B/cycle/tile", 1.0),
    },
    "latency_floor": {"us": ("us", 1.0), "µs": ("us", 1.0), "ns": ("us", 1e-3)},
    "issue_slots": {"slot/cycle/tile": ("slot/cycle/tile", 1.0)},
}
_UNITS["exchange_bandwidth"] = _UNITS["bandwidth"]

# tileprof's dtype names (core.classify.DTYPES) → the spec's precision suffix
DTYPE_CLASS: dict[str, str] = {
    "f32": "fp32",
    "tf32": "tf32",
    "f16": "fp16",
    "bf16": "bf16",
    "f8": "fp8",
    "int8": "int8",
}
MATRIX_FAMILIES: frozenset[str] = frozenset({"gemm", "attention"})
_TILE_TARGET = patterns.compile(r"(\d+)\s*tiles\s*@\s*([0-9.]+)\s*GHz", ignore_case=True)


@dataclass(frozen=True)
class SpecNumber:
    """One number of a spec file in its canonical unit, with the citation it came with."""

    value: float
    unit: str
    source: str


@dataclass(frozen=True)
class DeviceSpec:
    """One device's spec file, checked and in canonical units."""

    name: str
    kind: str
    path: str
    match: tuple[patterns.Pattern, ...]
    peaks: dict[str, SpecNumber]
    memory: dict[str, SpecNumber]
    sources: dict[str, str] = field(default_factory=dict)
    exclude: tuple[patterns.Pattern, ...] = ()

    def matches(self, target: str) -> bool:
        """Whether a ``match`` pattern finds the lower-cased ``target`` and no ``exclude``
        pattern does (both RE2, on the target's first ``NAME_PATTERN_LIMIT`` characters)."""
        text = target.lower()
        return any(rx.search(text) for rx in self.match) and not any(
            rx.search(text) for rx in self.exclude
        )

    def scale(self, target: str | None) -> float | None:
        """Tile specs: tiles × clock (Hz) of ``target``; GPU specs: 1. None when a tile
        target does not say its tile count and clock."""
        if self.kind != "tile":
            return 1.0
        m = _TILE_TARGET.search(target or "")
        return int(m.group(1)) * float(m.group(2)) * 1e9 if m else None

    def peak_tflops(self, key: str, target: str | None = None) -> float | None:
        """The dense peak for ``key`` (``matrix_bf16``…) in TFLOP/s at ``target``'s size."""
        number = self.peaks.get(key)
        scale = self.scale(target)
        if number is None or scale is None:
            return None
        return number.value * scale / 1e12 if self.kind == "tile" else number.value

    def core_peak_tflops(self, fidelity: str | None, cores: float | None) -> float | None:
        """A Tenstorrent op's FPU peak in TFLOP/s: the per-core figure of its math fidelity
        times the cores it ran on; None when the spec has no such figure or either is unknown."""
        key = FIDELITIES.get((fidelity or "").strip().lower())
        number = self.peaks.get(key) if key else None
        if number is None or cores is None or not cores > 0:
            return None
        return number.value * cores

    def bandwidth_gbps(self, target: str | None = None, key: str = "bandwidth") -> float | None:
        """Memory (or exchange) bandwidth in GB/s at ``target``'s size."""
        number = self.memory.get(key)
        scale = self.scale(target)
        if number is None or scale is None:
            return None
        return number.value * scale / 1e9 if self.kind == "tile" else number.value

    def issue_slots_per_s(self, target: str | None = None) -> float | None:
        """Instruction issue slots per second at ``target``'s size (tile specs only)."""
        number = self.memory.get("issue_slots")
        scale = self.scale(target)
        if number is None or scale is None or self.kind != "tile":
            return None
        return number.value * scale

    def latency_floor_us(self) -> float | None:
        number = self.memory.get("latency_floor")
        return number.value if number else None

    def citation(self, section: str, key: str) -> str | None:
        """The source text of one number."""
        table = self.peaks if section == "peaks" else self.memory
        number = table.get(key)
        return number.source if number else None


def peak_key(dtype: str | None, family: str | None = None) -> str | None:
    """The spec key a row's dtype and op family read: ``matrix_*`` for GEMM, convolution and
    attention (and when the family is not known), ``vector_*`` otherwise."""
    precision = DTYPE_CLASS.get(dtype or "")
    if precision is None:
        return None
    kind = "matrix" if family is None or family in MATRIX_FAMILIES else "vector"
    return f"{kind}_{precision}"


def _number(
    path: str,
    where: str,
    raw: Any,
    units: Mapping[str, tuple[str, float]],
    sources: Mapping[str, str],
) -> SpecNumber:
    """One ``{ value, unit, source }`` table, checked and converted."""
    if not isinstance(raw, dict):
        raise InputError(path, where, "not a table { value, unit, source }")
    unknown = sorted(set(raw) - set(NUMBER_KEYS))
    if unknown:
        raise InputError(path, f"{where}.{unknown[0]}", "unknown key")
    for key in ("value", "unit", "source"):
        if key not in raw:
            raise InputError(path, f"{where}.{key}", "missing")
    value = raw["value"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(path, f"{where}.value", f"{value!r} is not a number")
    if value < 0:
        raise InputError(path, f"{where}.value", f"negative number {value:g}")
    unit = raw["unit"]
    if unit not in units:
        raise InputError(path, f"{where}.unit", f"unit {unit!r} is not one of {', '.join(units)}")
    if raw["source"] not in sources:
        raise InputError(path, f"{where}.source", f"{raw['source']!r} is not in [sources]")
    canonical, factor = units[unit]
    return SpecNumber(float(value) * factor, canonical, sources[raw["source"]])


def _table(
    path: str, data: Mapping[str, Any], name: str, keys: Iterable[str], sources: Mapping[str, str]
) -> dict[str, SpecNumber]:
    raw = data.get(name, {})
    if not isinstance(raw, dict):
        raise InputError(path, name, "not a table")
    known = tuple(keys)
    out = {}
    for key, value in raw.items():
        if key not in known:
            raise InputError(path, f"{name}.{key}", "unknown key")
        units = _UNITS["peak"] if name == "peaks" else _UNITS[key]
        out[key] = _number(path, f"{name}.{key}", value, units, sources)
    return out


def parse_spec(path: str, text: str) -> DeviceSpec:
    """A spec file's text, checked (module docstring)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"not TOML: {exc}") from None
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise InputError(path, unknown[0], "unknown key")
    for key in ("name", "kind", "match"):
        if key not in data:
            raise InputError(path, key, "missing")
    if data["kind"] not in KINDS:
        raise InputError(path, "kind", f"{data['kind']!r} is not one of {', '.join(KINDS)}")
    match = _patterns(path, data, "match")
    if not match:
        raise InputError(path, "match", "not a list of regular expressions")
    sources = data.get("sources", {})
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        raise InputError(path, "sources", "not a table of strings")
    return DeviceSpec(
        name=str(data["name"]),
        kind=data["kind"],
        path=path,
        match=match,
        exclude=_patterns(path, data, "exclude"),
        peaks=_table(path, data, "peaks", PEAK_KEYS, sources),
        memory=_table(path, data, "memory", MEMORY_KEYS, sources),
        sources=dict(sources),
    )


def _patterns(path: str, data: Mapping[str, Any], key: str) -> tuple[patterns.Pattern, ...]:
    """The list of regular expressions at ``key`` (``match``, ``exclude``), compiled by RE2
    (no look-arounds: a name a ``match`` finds but must not be this device goes in
    ``exclude``)."""
    found = data.get(key, [])
    if not isinstance(found, list) or not all(isinstance(m, str) for m in found):
        raise InputError(path, key, "not a list of regular expressions")
    try:
        return tuple(patterns.compile(m) for m in found)
    except patterns.PatternError as exc:
        raise InputError(
            path, key, f"not a regular expression RE2 reads (no look-arounds): {exc}"
        ) from None


def load_spec_file(path: str | Path) -> DeviceSpec:
    """One spec file from disk."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(p, None, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(p, f"byte {exc.start}", "not UTF-8 text") from None
    return parse_spec(str(p), text)


def load_specs(paths: Iterable[str | Path]) -> tuple[DeviceSpec, ...]:
    """Spec files, and every ``*.toml`` in the folders among ``paths``, in order."""
    out: list[DeviceSpec] = []
    for path in paths:
        p = Path(path)
        files = sorted(p.glob("*.toml")) if p.is_dir() else [p]
        out.extend(load_spec_file(f) for f in files)
    return tuple(out)


def bundled_specs() -> tuple[DeviceSpec, ...]:
    """The spec files shipped in ``tileprof/data/specs``."""
    folder = resources.files("tileprof") / "data" / "specs"
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)
    return tuple(parse_spec(f"tileprof/data/specs/{f.name}", f.read_text("utf-8")) for f in files)


_BUNDLED: tuple[DeviceSpec, ...] | None = None
_USER: tuple[DeviceSpec, ...] = ()


def use_specs(paths: Iterable[str | Path]) -> None:
    """Make the spec files at ``paths`` (``--spec``) the first ones a device name is matched
    against, for the rest of this process (a command sets it once, before reading inputs)."""
    global _USER
    _USER = load_specs(paths)


def registry() -> tuple[DeviceSpec, ...]:
    """The user's specs (``--spec``) then the bundled ones."""
    global _BUNDLED
    if _BUNDLED is None:
        _BUNDLED = bundled_specs()
    return (*_USER, *_BUNDLED)


def spec_for(target: str | None) -> DeviceSpec | None:
    """The first spec whose ``match`` finds ``target`` (lower-cased), or None."""
    if not target:
        return None
    for spec in registry():
        if spec.matches(target):
            return spec
    return None


def ridge_intensity(
    target: str | None, dtype: str | None, family: str | None = None
) -> float | None:
    """The ridge point of ``target``'s roofline for ``dtype``: peak FLOP/s ÷ bandwidth, in
    FLOP per byte. An op below it is memory bound at best, above it compute bound."""
    spec = spec_for(target)
    key = peak_key(dtype, family)
    if spec is None or key is None:
        return None
    peak = spec.peak_tflops(key, target)
    bandwidth = spec.bandwidth_gbps(target)
    if peak is None or not bandwidth:
        return None
    return peak * 1e12 / (bandwidth * 1e9)
