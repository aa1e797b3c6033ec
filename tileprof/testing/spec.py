"""Compact, deterministic dump specs: a few lines of JSON instead of a stored sample dump.

Kernel authors' tests need dumps with a known shape (this kernel on these tiles, that tail,
no work estimate here) without committing megabytes of samples. A spec names groups with
sample counts, tiles, a duration distribution, metadata, phases and epochs, plus one seed;
``build_dump`` turns it into a ``tileprof.inputs.synthetic.synth.SyntheticDump`` through the same
``DumpBuilder`` the reference profile generator uses, so a spec dump and the reference run
go through one code path.

Scheduling is simple and physically plausible: groups run one after another behind a
device-wide barrier (unless told to start with the previous group or at a fixed cycle);
inside a group each phase is a barrier too, and each tile runs its samples back to back.

What ``phase`` means here is this builder's choice, not the field's meaning in real dumps:
a spec's phase id names one device-wide barrier block (every sample of the block carries it,
and the next block starts when the block's last sample ends). In a device's dump, ``phase``
is a per-tile schedule label that only exchanges share, and supersteps come from timing
(``tileprof.analyses.supersteps``). Blocks follow each other with no idle cycle unless ``gap`` is
set,
so consecutive blocks touch and form one superstep.
A tile still busy when a group starts begins that group's work once it is free, so no
tile ever runs two samples at once.

Spec layout (JSON-friendly; every key but ``groups`` is optional)::

    {"seed": 7, "clockHz": 1500000000, "tileCount": 1472, "epoch": 1,
     "groups": [{"kernel": "gemm_f16_main", "kind": "compute", "operation": "op.3",
                 "samples": 256, "tiles": 64, "duration": {"normal": [20000, 400]},
                 "phases": 2, "epoch": 1, "useful": 0.68, "occupancy": 0.9,
                 "metadata": {"kernelSpec": "Gemm { m: 64 }"},
                 "tail": {"tiles": [3, 7], "factor": 3.0}, "gap": 0, "start": "barrier"}]}
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tileprof.core.errors import InputError
from tileprof.core.schema import DEFAULT_CLOCK_HZ, DEFAULT_TILE_COUNT
from tileprof.inputs.synthetic.synth import DumpBuilder, SyntheticDump

DISTRIBUTIONS: tuple[str, ...] = ("constant", "uniform", "normal", "lognormal", "choice", "cycle")
"""Duration distributions a group may use; ``cycle`` repeats its values exactly, in order."""

START_MODES: tuple[str, ...] = ("barrier", "with-previous")


class SpecError(InputError):
    """A spec that cannot be built; names the spec and the key at fault."""


@dataclass(frozen=True)
class Duration:
    """A duration distribution in device cycles; draws are rounded and clipped at zero."""

    kind: str
    parameters: tuple[float, ...]

    @classmethod
    def parse(cls, value: Any, where: str) -> Duration:
        """An int (constant) or a one-key mapping ``{"normal": [mean, sd]}`` and the like."""
        if isinstance(value, bool):
            raise SpecError(None, where, "duration must be a number or a distribution")
        if isinstance(value, int | float):
            return cls("constant", (float(value),))
        if not isinstance(value, Mapping) or len(value) != 1:
            raise SpecError(
                None, where, f"duration must be a number or one of {', '.join(DISTRIBUTIONS)}"
            )
        ((kind, raw),) = value.items()
        if kind not in DISTRIBUTIONS:
            raise SpecError(
                None, where, f"unknown distribution {kind!r} (one of {', '.join(DISTRIBUTIONS)})"
            )
        params = (float(raw),) if isinstance(raw, int | float) else tuple(float(v) for v in raw)
        expected = {"constant": 1, "uniform": 2, "normal": 2, "lognormal": 2}.get(kind)
        if (expected is not None and len(params) != expected) or not params:
            raise SpecError(None, where, f"{kind} takes {expected or 'some'} value(s)")
        if kind == "uniform" and params[1] < params[0]:
            raise SpecError(None, where, "uniform needs [low, high] with low ≤ high")
        if any(not math.isfinite(p) for p in params):
            raise SpecError(None, where, "distribution parameters must be finite")
        return cls(kind, params)

    def draw(self, rng: np.random.Generator, count: int) -> npt.NDArray[np.float64]:
        """``count`` durations (floats; the caller scales, rounds and clips)."""
        p = self.parameters
        if self.kind == "constant":
            return np.full(count, p[0])
        if self.kind == "uniform":
            return rng.uniform(p[0], p[1], count)
        if self.kind == "normal":
            return rng.normal(p[0], p[1], count)
        if self.kind == "lognormal":
            return p[0] * np.exp(rng.normal(0.0, p[1], count))
        if self.kind == "choice":
            return rng.choice(np.asarray(p), count)
        return np.resize(np.asarray(p), count)  # cycle

    def to_json(self) -> Any:
        """The spec form this distribution was parsed from."""
        if self.kind == "constant":
            return _number(self.parameters[0])
        return {self.kind: [_number(p) for p in self.parameters]}


@dataclass(frozen=True)
class GroupSpec:
    """One kernel (or kind) of the dump: how many samples, where, how long, with what metadata."""

    samples: int
    kernel: str | None = None
    kind: str = "compute"
    operation: str | None = None
    tiles: tuple[int, ...] | None = None
    duration: Duration = Duration("constant", (1000.0,))
    phases: tuple[int, ...] | int = 1
    epoch: int | None = None
    useful: float | None = None
    occupancy: float | None = None
    metadata: tuple[tuple[str, str], ...] = ()
    tail_tiles: tuple[int, ...] = ()
    tail_factor: float = 1.0
    gap: int = 0
    start: str | int = "barrier"

    @property
    def name(self) -> str:
        """The group name tileprof will report: the kernel, or the kind without one."""
        return self.kernel or self.kind


@dataclass(frozen=True)
class DumpSpec:
    """A whole dump: device, seed, default epoch and the groups in run order."""

    groups: tuple[GroupSpec, ...]
    seed: int = 0
    clock_hz: int = DEFAULT_CLOCK_HZ
    tile_count: int = DEFAULT_TILE_COUNT
    epoch: int | None = None
    start: int = 0
    source: str | None = field(default=None, compare=False)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str | None = None) -> DumpSpec:
        """Validate a spec mapping (e.g. parsed JSON); errors name the key at fault."""
        return _parse_spec(data, source)

    @classmethod
    def from_file(cls, path: str | Path) -> DumpSpec:
        """Read a JSON spec file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SpecError(path, None, "no such spec file") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecError(path, f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
        if not isinstance(data, Mapping):
            raise SpecError(path, None, "a spec is a JSON object with a 'groups' list")
        return _parse_spec(data, str(path))

    def build(self) -> SyntheticDump:
        """The dump this spec describes (same spec, same seed: same samples)."""
        return build_dump(self)


SpecLike = DumpSpec | Mapping[str, Any]


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _as_int(value: Any, where: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SpecError(None, where, f"expected an integer ≥ {minimum}, got {value!r}")
    return value


def _as_fraction(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise SpecError(None, where, f"expected a fraction in (0, 1], got {value!r}")
    return float(value)


def _tiles(value: Any, tile_count: int, where: str) -> tuple[int, ...]:
    if isinstance(value, Mapping):
        first = _as_int(value.get("first", 0), f"{where}.first")
        count = _as_int(value.get("count"), f"{where}.count", 1)
        tiles = tuple(range(first, first + count))
    elif isinstance(value, int) and not isinstance(value, bool):
        tiles = tuple(range(_as_int(value, where, 1)))
    elif isinstance(value, Sequence) and not isinstance(value, str) and value:
        tiles = tuple(_as_int(t, f"{where}[{i}]") for i, t in enumerate(value))
    else:
        raise SpecError(None, where, "tiles is a count, a list or {'first', 'count'}")
    if max(tiles) >= tile_count:
        raise SpecError(None, where, f"tile {max(tiles)} ≥ tileCount {tile_count}")
    return tiles


_GROUP_KEYS = frozenset(
    {
        "kernel", "kind", "operation", "samples", "tiles", "duration", "phases", "epoch",
        "useful", "occupancy", "metadata", "tail", "gap", "start",
    }
)  # fmt: skip
_SPEC_KEYS = frozenset({"seed", "clockHz", "tileCount", "epoch", "start", "groups"})


def _parse_group(raw: Any, index: int, spec_epoch: int | None, tile_count: int) -> GroupSpec:
    where = f"groups[{index}]"
    if not isinstance(raw, Mapping):
        raise SpecError(None, where, "a group is an object")
    unknown = sorted(set(raw) - _GROUP_KEYS)
    if unknown:
        raise SpecError(None, f"{where}.{unknown[0]}", "unknown key")
    samples = _as_int(raw.get("samples"), f"{where}.samples")
    kernel = raw.get("kernel")
    kind = raw.get("kind", "compute")
    if kernel is not None and not isinstance(kernel, str):
        raise SpecError(None, f"{where}.kernel", "must be a string")
    if not isinstance(kind, str) or not kind:
        raise SpecError(None, f"{where}.kind", "must be a non-empty string")
    tiles = (
        _tiles(raw["tiles"], tile_count, f"{where}.tiles")
        if "tiles" in raw
        else tuple(range(min(max(samples, 1), tile_count)))
    )
    phases_raw = raw.get("phases", 1)
    phases: tuple[int, ...] | int
    if isinstance(phases_raw, list):
        phases = tuple(_as_int(p, f"{where}.phases[{i}]") for i, p in enumerate(phases_raw))
        if not phases:
            raise SpecError(None, f"{where}.phases", "needs at least one phase")
    else:
        phases = _as_int(phases_raw, f"{where}.phases", 1)
    metadata_raw = raw.get("metadata", {})
    if not isinstance(metadata_raw, Mapping):
        raise SpecError(None, f"{where}.metadata", "metadata is an object of name: value")
    metadata = tuple(
        (str(k), v if isinstance(v, str) else json.dumps(v)) for k, v in metadata_raw.items()
    )
    tail = raw.get("tail", {})
    if not isinstance(tail, Mapping):
        raise SpecError(None, f"{where}.tail", "tail is {'tiles': [...], 'factor': x}")
    tail_tiles = _tiles(tail["tiles"], tile_count, f"{where}.tail.tiles") if tail else ()
    tail_factor = float(tail.get("factor", 1.0)) if tail else 1.0
    if not math.isfinite(tail_factor) or tail_factor < 0:
        raise SpecError(None, f"{where}.tail.factor", "must be a finite number ≥ 0")
    start = raw.get("start", "barrier")
    if not (start in START_MODES or (isinstance(start, int) and not isinstance(start, bool))):
        raise SpecError(None, f"{where}.start", f"one of {START_MODES} or a cycle")
    epoch = raw.get("epoch", spec_epoch)
    return GroupSpec(
        samples=samples,
        kernel=kernel,
        kind=kind,
        operation=raw.get("operation"),
        tiles=tiles,
        duration=Duration.parse(raw.get("duration", 1000), f"{where}.duration"),
        phases=phases,
        epoch=None if epoch is None else _as_int(epoch, f"{where}.epoch"),
        useful=None
        if raw.get("useful") is None
        else _as_fraction(raw["useful"], f"{where}.useful"),
        occupancy=None
        if raw.get("occupancy") is None
        else _as_fraction(raw["occupancy"], f"{where}.occupancy"),
        metadata=metadata,
        tail_tiles=tail_tiles,
        tail_factor=tail_factor,
        gap=_as_int(raw.get("gap", 0), f"{where}.gap"),
        start=start,
    )


def _parse_spec(data: Mapping[str, Any], source: str | None) -> DumpSpec:
    try:
        unknown = sorted(set(data) - _SPEC_KEYS)
        if unknown:
            raise SpecError(None, unknown[0], "unknown key")
        groups_raw = data.get("groups")
        if not isinstance(groups_raw, list):
            raise SpecError(None, "groups", "a spec needs a 'groups' list")
        tile_count = _as_int(data.get("tileCount", DEFAULT_TILE_COUNT), "tileCount", 1)
        clock_hz = _as_int(data.get("clockHz", DEFAULT_CLOCK_HZ), "clockHz", 1)
        epoch = data.get("epoch")
        epoch = None if epoch is None else _as_int(epoch, "epoch")
        groups = tuple(_parse_group(raw, i, epoch, tile_count) for i, raw in enumerate(groups_raw))
        return DumpSpec(
            groups=groups,
            seed=_as_int(data.get("seed", 0), "seed"),
            clock_hz=clock_hz,
            tile_count=tile_count,
            epoch=epoch,
            start=_as_int(data.get("start", 0), "start"),
            source=source,
        )
    except SpecError as exc:
        if source is None:
            raise
        raise SpecError(source, exc.where, exc.message) from None


def as_spec(spec: SpecLike) -> DumpSpec:
    """A ``DumpSpec`` from a spec or a mapping."""
    return spec if isinstance(spec, DumpSpec) else DumpSpec.from_mapping(spec)


def _metadata_of(
    group: GroupSpec, durations: npt.NDArray[np.int64]
) -> tuple[list[list[tuple[str, str]]], npt.NDArray[np.int64] | None]:
    """Distinct metadata lists and each sample's index into them (None: no metadata)."""
    if group.useful is None and not group.metadata:
        return [], None
    base = list(group.metadata)
    if group.useful is None:
        return [base], np.zeros(durations.shape[0], dtype=np.int64)
    useful = np.rint(durations * group.useful).astype(np.int64)
    physical = (
        None if group.occupancy is None else np.rint(useful / group.occupancy).astype(np.int64)
    )
    options: dict[tuple[int, int], int] = {}
    index = np.empty(durations.shape[0], dtype=np.int64)
    for i, u in enumerate(useful.tolist()):
        key = (u, -1 if physical is None else int(physical[i]))
        index[i] = options.setdefault(key, len(options))
    lists = []
    for u, p in options:
        entries = [*base, ("usefulCycles", str(u))]
        if p >= 0:
            entries.append(("physicalWorkCycles", str(p)))
        lists.append(entries)
    return lists, index


def build_dump(spec: SpecLike) -> SyntheticDump:
    """Schedule every group of ``spec`` and build the dump with ``DumpBuilder``.

    Each group draws from its own generator seeded by ``(seed, group index)``, so adding a
    group at the end never changes the samples of the groups before it.
    """
    spec = as_spec(spec)
    builder = DumpBuilder(spec.clock_hz, spec.tile_count)
    device_end = spec.start
    previous_start = spec.start
    next_phase = 0
    tile_free: dict[int, int] = {}  # when each tile is next idle: no tile runs two samples
    for index, group in enumerate(spec.groups):
        rng = np.random.default_rng([spec.seed, index])
        tiles = np.asarray(group.tiles, dtype=np.int64)
        n = group.samples
        raw = group.duration.draw(rng, n)
        if group.tail_tiles:
            sample_tiles = tiles[np.arange(n) % tiles.shape[0]]
            raw = np.where(np.isin(sample_tiles, group.tail_tiles), raw * group.tail_factor, raw)
        durations = np.clip(np.rint(raw), 0, None).astype(np.int64)
        if isinstance(group.phases, int):
            phase_ids = tuple(range(next_phase, next_phase + group.phases))
        else:
            phase_ids = group.phases
        next_phase = max(next_phase, max(phase_ids) + 1)

        if group.start == "barrier":
            start = device_end + (group.gap if index else 0)
        elif group.start == "with-previous":
            start = previous_start
        else:
            start = int(group.start)
        previous_start = start

        offsets = np.empty(n, dtype=np.int64)
        sample_tiles = np.empty(n, dtype=np.int64)
        phases = np.empty(n, dtype=np.int64)
        # Samples split into consecutive phase blocks; in each block tiles take samples in
        # turn and run them back to back; the next block starts when the block ends.
        bounds = np.linspace(0, n, len(phase_ids) + 1).round().astype(np.int64)
        block_start = start
        for phase_id, lo, hi in zip(phase_ids, bounds[:-1], bounds[1:], strict=True):
            cursor: dict[int, int] = {}
            block_end = block_start
            for i in range(int(lo), int(hi)):
                tile = int(tiles[(i - lo) % tiles.shape[0]])
                at = cursor.get(tile, max(block_start, tile_free.get(tile, 0)))
                offsets[i], sample_tiles[i], phases[i] = at, tile, phase_id
                cursor[tile] = at + int(durations[i]) + group.gap
                block_end = max(block_end, at + int(durations[i]))
                tile_free[tile] = at + int(durations[i])
            block_start = block_end + (group.gap if hi > lo else 0)
        device_end = max(device_end, block_start)

        options, metadata_index = _metadata_of(group, durations)
        if n == 0:
            continue
        builder.add(
            tile=sample_tiles,
            offset=offsets,
            duration=durations,
            phase=phases,
            epoch=group.epoch,
            kind=group.kind,
            operation=group.operation,
            kernel=group.kernel,
            metadata_options=options if metadata_index is not None else None,
            metadata_index=metadata_index,
        )
    return builder.build()
