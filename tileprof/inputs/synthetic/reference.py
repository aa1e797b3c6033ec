"""A deterministic raw sample dump that reproduces reference summary ``004``.

The seed document ``004`` (a summary written by today's tool) gives, for one run on the
1472-tile, 1.5 GHz device, a group table aggregated over the samples of epoch 1, the number
of samples in the whole dump, the profile span, and the three longest matched samples. The
raw dump itself was not kept, so tests that want to hold tileprof to those numbers need one
rebuilt: ``build_reference_dump`` lays out a physically plausible run (no tile ever runs two
samples at once) whose epoch-1 aggregates equal every field of the seed's group table.

How the layout meets each constraint (numbers are device cycles, all on a 6-cycle grid):

* Fixed-shape kernels (rearranges, casts, GEMMs, softmax, reduce, merge) run once per tile
  on a tile subset, with start offsets drawn from a few values per kernel, one per BSP
  phase; the earliest and latest offsets are the seed's ``firstOffset`` and
  ``lastOffset - duration``, and the offsets are dense enough that the union is one interval.
* Durations come from small multisets solved by hand so that the sum, the nearest-rank p50
  and p95 and the maximum match (see ``_CAST_SHORT``, ``_REDUCE_DURATIONS``, ...).
* ``usefulCycles`` and ``physicalWorkCycles`` metadata are integers per sample whose sums
  are the numerators and denominators of the seed's ratios (e.g. reduce 2129920/2332800).
* Small kernels (fill, copy, strided copy) run in a prologue and an epilogue where every
  tile is idle, in time windows aligned across tiles so their unions are known; the rest of
  each group's ``phaseCycles`` is made up by a "pad track" of samples on tiles that run no
  f16 GEMM, placed back to back in time (one staggered sample absorbs the remainder).
* Exchange samples, four per tile (one per exchange phase), fill the gaps between compute
  kernels inside two windows whose union is the seed's exchange ``phaseCycles``; a few
  anchor exchanges cover the windows end to end, and the others' durations are chosen by
  rank bands so that the sum, p50, p95 and maximum match.
* Epochs 0 and 2 repeat a plain compute/exchange pattern before and after epoch 1 to give
  the dump its total sample count and span.

Code layout: the fixed-shape groups are data, one ``_Kernel`` entry per seed group (kernel,
tile set, offsets, duration, phase labels, usefulCycles pattern and physicalWorkCycles, so its
duration and metadata sums read off the entry) in ``_REARRANGES``, ``_F16_GEMMS`` and
``_F8_GEMMS``, laid out by ``_put_kernel``. Every group is placed by one small step of
``_STEPS`` (prologue, rearranges, casts, …, pad tracks, exchanges), run in order by
``_epoch1``: the order is the dump's sample order, and later steps fill the time the earlier
ones left. ``tests/test_pinned_bytes.py`` pins the dump's bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tileprof.core.schema import DEFAULT_CLOCK_HZ, DEFAULT_TILE_COUNT
from tileprof.inputs.synthetic.synth import DumpBuilder, SyntheticDump

IntArray = npt.NDArray[np.int64]
Pairs = list[tuple[str, str]]

TILES = DEFAULT_TILE_COUNT
SAMPLE_COUNT = 232_260
PROFILE_SPAN = 16_746_138
EPOCH1_START = 202_740
EXCHANGE_WINDOWS = ((210_342, 275_148), (321_114, 350_916))
EXCHANGE_TOTAL = 66_939_666
EXCHANGE_P50, EXCHANGE_P95, EXCHANGE_MAX = 9_930, 25_608, 38_544
UNION_TARGETS = {"fill_zero_u64": 31_272, "copy_u64": 11_892, "copy_strided_u64": 11_070}

SOFTMAX = "attention_softmax_d72_p768_tail_f8_sm4"
MERGE = "attention_merge_v72_p80_k768_out16_p8_f16"
REDUCE = "reduce_sum_f16"
FILL, COPY, STRIDED, STATIC = "fill_zero_u64", "copy_u64", "copy_strided_u64", "static_copy_u32"
CAST = "cast_f16_f8"
R64C32 = "rearrange_row_major_to_amp_f16_o2_r64_p64_c32_p32_b64x16"
R0C32 = "rearrange_row_major_to_amp_f16_o2_r0_p64_c32_p32_b64x16"
R64C16 = "rearrange_row_major_to_amp_f16_o2_r64_p64_c16_p16_b64x16"
R0C16 = "rearrange_row_major_to_amp_f16_o2_r0_p64_c16_p16_b64x16"
G16 = "gemm_f16_init_{}_rows_interleaved_k80_c{}_r121_r122"
G8 = "gemm_f8_init_{}_rows_interleaved_k128_c80_r104_r105"


def _lin(lo: int, hi: int, n: int) -> IntArray:
    """``n`` offsets from ``lo`` to ``hi`` inclusive, on the 6-cycle grid."""
    steps = (hi - lo) // 6
    return lo + 6 * np.round(np.arange(n) * steps / max(n - 1, 1)).astype(np.int64)


def _meta(
    reason: str,
    value: int,
    spec: str,
    out_elements: int,
    in_elements: int,
    useful: int | None,
    physical: int | None,
    basis: str,
    arguments: str,
    invocations: int = 1,
) -> Pairs:
    """One sample's metadata, in the order the device tool writes it.

    Samples without a useful-work estimate lack the ``usefulCycles`` (and
    ``physicalWorkCycles``) entries altogether; the statistics depend on that.
    """
    pairs: Pairs = [
        ("reason", reason),
        ("value", str(value)),
        ("kernelSpec", spec),
        ("outputElements", str(out_elements)),
        ("input0Elements", str(in_elements)),
    ]
    if useful is not None:
        pairs.append(("usefulCycles", str(useful)))
    if physical is not None:
        pairs.append(("physicalWorkCycles", str(physical)))
    pairs += [
        ("workEstimateBasis", basis),
        ("invocations", str(invocations)),
        ("uniformInvocations", "true"),
        ("arguments", arguments),
    ]
    return pairs


class _Samples:
    """Epoch-1 samples collected group by group, before they go into a ``DumpBuilder``."""

    def __init__(self) -> None:
        self.chunks: list[tuple[str, str, str, IntArray, IntArray, IntArray, IntArray, IntArray]]
        self.chunks = []
        self.options: dict[str, list[Pairs]] = {}

    def option(self, group: str, pairs: Pairs) -> int:
        """Index of a metadata list among the group's distinct lists."""
        table = self.options.setdefault(group, [])
        if pairs not in table:
            table.append(pairs)
        return table.index(pairs)

    def put(
        self,
        group: str,
        operation: str,
        tile: IntArray,
        offset: IntArray | int,
        duration: IntArray | int,
        phase: IntArray | int,
        meta: IntArray | int,
        kind: str = "compute",
    ) -> None:
        n = len(tile)

        def full(v: IntArray | int) -> IntArray:
            return np.broadcast_to(np.asarray(v, dtype=np.int64), (n,)).copy()

        self.chunks.append(
            (
                group,
                kind,
                operation,
                np.asarray(tile, dtype=np.int64),
                full(offset),
                full(duration),
                full(phase),
                full(meta),
            )
        )

    def arrays(self, group: str) -> tuple[IntArray, IntArray, IntArray]:
        """Tile, offset and duration of every sample of a group collected so far."""
        parts = [c for c in self.chunks if c[0] == group]
        if not parts:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        return (
            np.concatenate([c[3] for c in parts]),
            np.concatenate([c[4] for c in parts]),
            np.concatenate([c[5] for c in parts]),
        )


def union_cycles(offset: IntArray, duration: IntArray) -> int:
    """Length of the union of ``[offset, offset + duration)`` intervals."""
    if len(offset) == 0:
        return 0
    order = np.argsort(offset, kind="stable")
    start = offset[order]
    end = (offset + duration)[order]
    reach = np.maximum.accumulate(end)
    new = np.ones(len(start), dtype=bool)
    new[1:] = start[1:] > reach[:-1]
    first = np.flatnonzero(new)
    return int((np.maximum.reduceat(end, first) - start[first]).sum())


# ----------------------------------------------------------------------------- durations
# cast: 768 long-rearrange tiles and 117 r64c16 tiles run the full 3378-cycle cast, the other
# 267 short casts make up the sum 3506994; p50 = p95 = max = 3378 needs >= 577 full casts.
_CAST_FULL, _CAST_SHORT = 3378, (1938, 1944)
# reduce: sorted[735] = 3690 (p50), sorted[1398] = 3876 (p95); sum 5414976.
_REDUCE_DURATIONS = ((3876, 74), (3690, 663), (3654, 67), (3648, 668))
# fill: 306 x 12432, 606 x 1392, 726 x 1472 -> sum 5716416, sorted[7647] = 306, sorted[14530] = 726.
# copy: 1536 x 1472, 1206 x 1472, 354 x 448, 348 x 576 -> sum 4395264, p50 1206, p95 1536.
_COPY_SMALL = ((354, 448), (348, 576))
# strided copy: 480 x 1400, 912 x 840, 918 x 160, 1908 x 400 -> sum 2348160, p50 480, p95 1908.
_STRIDED = ((1908, 400), (918, 160), (912, 840), (480, 1400))

_SOFTMAX_OFFSETS = (
    270666, 272562, 272868, 273174, 273300, 273426, 273552, 273858,
    274164, 274386, 274608, 274770, 274932, 275040, 275148,
)  # fmt: skip
_MERGE_OFFSETS = (*_lin(355236, 358500, 22).tolist(), 358692, 359466, 359946)
_FILL_END, _COPY_END, _STRIDED_END = 358692, 359466, 359946


def _multiset(pairs: Sequence[tuple[int, int]]) -> IntArray:
    return np.concatenate([np.full(n, v, dtype=np.int64) for v, n in pairs])


def _pad_track(start: int, residual: int, durations: IntArray) -> tuple[IntArray, IntArray]:
    """Offsets and durations of samples laid back to back from ``start`` whose union is
    exactly ``residual`` cycles; the last one is staggered over its predecessor to absorb
    what a whole sample would overshoot. ``durations`` are used in order."""
    offsets: list[int] = []
    used: list[int] = []
    at = start
    for d in durations.tolist():
        if at - start >= residual:
            break
        missing = start + residual - at
        if d <= missing:
            offsets.append(at)
            at += d
        else:
            if not offsets:
                raise ValueError("pad track shorter than one sample")
            offsets.append(at - (d - missing))
            at += missing
        used.append(d)
    if at - start != residual:
        raise ValueError("not enough pad samples")
    return np.array(offsets, dtype=np.int64), np.array(used, dtype=np.int64)


def _band_durations(cap: IntArray, fixed: IntArray) -> IntArray:
    """Exchange durations, each within its gap (``cap``), with the seed's sum, nearest-rank
    p50/p95 and maximum; ``fixed`` (>= 0) pins anchors that keep the windows covered.

    Ranks 0..2942 get at most p50, rank 2943 exactly p50, ranks 2944..5592 lie between p50
    and p95, rank 5593 is exactly p95, the top 294 lie between p95 and the maximum. The
    largest gaps take the top ranks; then durations shrink toward their band's floor until
    the sum is right, which keeps every sample in its band and so the ranks intact.
    """
    n = len(cap)
    r50, r95 = (50 * n + 99) // 100 - 1, (95 * n + 99) // 100 - 1
    band_sizes = {"low": r50, "p50": 1, "mid": r95 - r50 - 1, "p95": 1, "high": n - r95 - 1}
    band = np.full(n, "", dtype=object)
    for i in np.flatnonzero(fixed >= 0):
        v = int(fixed[i])
        name = (
            "low"
            if v < EXCHANGE_P50
            else "p50"
            if v == EXCHANGE_P50
            else "mid"
            if v < EXCHANGE_P95
            else "p95"
            if v == EXCHANGE_P95
            else "high"
        )
        band[i] = name
        band_sizes[name] -= 1
    if min(band_sizes.values()) < 0:
        raise ValueError(f"anchors overfill a band: {band_sizes}")
    free = np.flatnonzero(fixed < 0)
    free = free[np.argsort(-cap[free], kind="stable")]
    at = 0
    for name in ("high", "p95", "mid", "p50", "low"):
        band[free[at : at + band_sizes[name]]] = name
        at += band_sizes[name]
    ceiling = {"low": EXCHANGE_P50, "p50": EXCHANGE_P50, "mid": EXCHANGE_P95}
    ceiling |= {"p95": EXCHANGE_P95, "high": EXCHANGE_MAX}
    floor = {"low": 600, "p50": EXCHANGE_P50, "mid": EXCHANGE_P50}
    floor |= {"p95": EXCHANGE_P95, "high": EXCHANGE_P95}
    top = np.array([ceiling[b] for b in band], dtype=np.int64)
    low = np.array([floor[b] for b in band], dtype=np.int64)
    value = np.where(fixed >= 0, fixed, np.minimum(cap, top))
    if np.any((fixed < 0) & (value < low)):
        raise ValueError("a gap is too short for its rank band")
    if not np.any(value == EXCHANGE_MAX):
        high = free[: band_sizes["high"]]
        value[high[0]] = EXCHANGE_MAX
        if cap[high[0]] < EXCHANGE_MAX:
            raise ValueError("no gap fits the longest exchange")
        low[high[0]] = EXCHANGE_MAX
    low = np.where(fixed >= 0, value, low)
    excess = int(value.sum()) - EXCHANGE_TOTAL
    if excess < 0:
        raise ValueError(f"exchange gaps are {-excess} cycles short")
    room = value - low
    cut = (room * (excess / room.sum()) // 6 * 6).astype(np.int64)
    value -= cut
    left = excess - int(cut.sum())
    for i in np.argsort(-(value - low), kind="stable"):
        if left <= 0:
            break
        step = min(left, int(value[i] - low[i]) // 6 * 6)
        value[i] -= step
        left -= step
    if left:
        raise ValueError("could not shrink exchanges to the target sum")
    return value


def _fill_meta(s: _Samples, useful: bool) -> int:
    spec = "Fill { value: 0, element: u64 }"
    if useful:
        return s.option(
            FILL,
            _meta(
                "OperatorKernel",
                17,
                spec,
                0,
                0,
                0,
                None,
                "fill: zero stores only, no arithmetic work",
                "[0]",
            ),
        )
    return s.option(
        FILL,
        _meta(
            "OperatorKernel",
            17,
            spec,
            0,
            0,
            None,
            None,
            "none: store-only vertex without a work model",
            "[0]",
        ),
    )


@dataclass(frozen=True)
class _Kernel:
    """One fixed-shape seed group: every tile of ``tiles`` runs it once.

    Tile ``i`` of the set (counting from the set's first tile) starts at
    ``offsets[i % len(offsets)]``, is labelled phase ``phases[i % len(phases)]`` and carries
    ``usefulCycles = useful[i % len(useful)]`` with ``physicalWorkCycles = physical``: the
    group's duration sum is ``len(tiles) × duration`` and its metadata sums follow from the
    patterns. The other fields are the metadata the device tool writes for the kernel.
    """

    name: str
    operation: str
    tiles: range
    offsets: tuple[int, ...]
    duration: int
    phases: tuple[int, ...]
    useful: tuple[int, ...]
    physical: int
    value: int
    spec: str
    elements: tuple[int, int]
    basis: str
    arguments: str


_REARRANGE_BASIS = "rearrange: one issue slot per 64-bit element moved"
_GEMM_BASIS = "gemm: AMP multiply-accumulate issue slots"
_REARRANGES = (
    _Kernel(
        name=R64C32,
        operation="operation.3",
        tiles=range(0, 704),
        offsets=(210924, 211374, 211830, 212280, 212736, 213186),
        duration=10752,
        phases=tuple(range(13, 19)),
        useful=(1024,),
        physical=1024,
        value=310,
        spec="Rearrange { rows: 64, cols: 32, block: 64x16 }",
        elements=(4096, 4096),
        basis=_REARRANGE_BASIS,
        arguments="[64, 32]",
    ),
    _Kernel(
        name=R0C32,
        operation="operation.3",
        tiles=range(704, 768),
        offsets=tuple(_lin(210594, 212226, 64).tolist()),
        duration=10176,
        phases=(14,),
        useful=(400,),
        physical=1024,
        value=310,
        spec="Rearrange { rows: 0, cols: 32, block: 64x16 }",
        elements=(4096, 4096),
        basis=_REARRANGE_BASIS,
        arguments="[0, 32]",
    ),
    _Kernel(
        name=R64C16,
        operation="operation.3",
        tiles=range(768, 1120),
        offsets=(211020, 211782, 212544),
        duration=2436,
        phases=(14, 15, 16),
        useful=(512,),
        physical=512,
        value=310,
        spec="Rearrange { rows: 64, cols: 16, block: 64x16 }",
        elements=(4096, 4096),
        basis=_REARRANGE_BASIS,
        arguments="[64, 16]",
    ),
    _Kernel(
        name=R0C16,
        operation="operation.3",
        tiles=range(1120, 1152),
        offsets=tuple(_lin(210060, 212268, 32).tolist()),
        duration=1968,
        phases=(14,),
        useful=(200,),
        physical=512,
        value=310,
        spec="Rearrange { rows: 0, cols: 16, block: 64x16 }",
        elements=(4096, 4096),
        basis=_REARRANGE_BASIS,
        arguments="[0, 16]",
    ),
)
"""The four rearranges, one per tile before its cast (tiles 0 … 1151)."""
_CAST_PHASES = {R64C32: (25, 25, 26, 26, 27, 27), R0C32: (24,), R64C16: (21, 22, 23), R0C16: (20,)}
"""Phase label of the cast that follows each rearrange, by tile of the rearrange's set."""


def _f16(
    size: str,
    cols: int,
    tiles: range,
    lo: int,
    hi: int,
    k: int,
    dur: int,
    useful: tuple[int, ...],
    physical: int,
) -> _Kernel:
    return _Kernel(
        G16.format(size, cols),
        "operation.7",
        tiles,
        tuple(_lin(lo, hi, k).tolist()),
        dur,
        tuple(range(40, 40 + k)),
        useful,
        physical,
        611,
        f"Gemm {{ a: f16, rows: {size}, k: 80, cols: {cols}, interleaved: true }}",
        (121 * cols, 122 * 80),
        _GEMM_BASIS,
        f"[121, 122, {cols}]",
    )


def _f8(
    size: str,
    tiles: range,
    lo: int,
    hi: int,
    k: int,
    dur: int,
    useful: tuple[int, ...],
    physical: int,
) -> _Kernel:
    return _Kernel(
        G8.format(size),
        "operation.13",
        tiles,
        tuple(_lin(lo, hi, k).tolist()),
        dur,
        tuple(range(50, 50 + k)),
        useful,
        physical,
        640,
        f"Gemm {{ a: f8, rows: {size}, k: 128, cols: 80, interleaved: true }}",
        (104 * 80, 105 * 128),
        _GEMM_BASIS,
        "[104, 105, 80]",
    )


_F16_GEMMS = (
    _f16("large", 112, range(0, 384), 240156, 240468, 4, 22998, (15372,), 17080),
    _f16("small", 112, range(384, 768), 240174, 240450, 4, 22956, (15246,), 16940),
    _f16("large", 96, range(768, 1056), 239586, 240390, 3, 19770, (12856,) * 3 + (12855,), 14640),
    _f16(
        "small", 96, range(1056, 1344), 239568, 239850, 5, 19734, (12751,) * 3 + (12750,) * 5, 14520
    ),
)
"""The f16 GEMMs, between the first exchange and the softmax (tiles 1344 … 1471 run none)."""
_F8_GEMMS = (
    _f8("small", range(128, 1280), 331386, 333528, 14, 11916, (7108,) * 3 + (7107,), 8320),
    _f8("large", range(1280, 1472), 332208, 333822, 6, 11964, (7177,) * 3 + (7176,) * 29, 8400),
)
"""The f8 GEMMs, between the third and fourth exchanges (tiles 0 … 127 run none)."""


def _put_kernel(s: _Samples, k: _Kernel, start: IntArray, duration: IntArray) -> None:
    """Lay out one fixed-shape group; record each tile's start and duration."""
    tiles = np.arange(k.tiles.start, k.tiles.stop, dtype=np.int64)
    i = np.arange(len(tiles))

    def pattern(values: tuple[int, ...]) -> IntArray:
        return np.array(values, dtype=np.int64)[i % len(values)]

    useful = pattern(k.useful)
    opts = {
        u: s.option(
            k.name,
            _meta(
                "OperatorKernel", k.value, k.spec, *k.elements, u, k.physical, k.basis, k.arguments
            ),
        )
        for u in sorted(set(useful.tolist()))
    }
    start[tiles], duration[tiles] = pattern(k.offsets), k.duration
    meta = np.array([opts[u] for u in useful.tolist()], dtype=np.int64)
    s.put(k.name, k.operation, tiles, start[tiles], k.duration, pattern(k.phases), meta)


LONG_STRIDED_TILE, LATE_REDUCE_TILE = 1000, 1001
"""The tile whose strided-copy chain sets that union, and the reduce that ends last."""


class _Layout:
    """Epoch 1 while it is laid out: the samples so far and each tile's kernel times."""

    def __init__(self, s: _Samples) -> None:
        self.s = s
        self.t = np.arange(TILES, dtype=np.int64)
        self.rng = np.random.default_rng(4)
        minus = np.full(TILES, -1, dtype=np.int64)
        self.ro, self.rd = minus.copy(), np.zeros(TILES, dtype=np.int64)  # rearrange
        self.go, self.gd = minus.copy(), np.zeros(TILES, dtype=np.int64)  # f16 GEMM
        self.fo, self.fd = minus.copy(), np.zeros(TILES, dtype=np.int64)  # f8 GEMM
        self.cast_phase = np.zeros(TILES, dtype=np.int64)
        self.copy_meta = self.strided_meta = 0
        self.strided_phase = 3
        self.pad_tile: dict[int, tuple[int, int]] = {}
        self.pad_copy: tuple[IntArray, IntArray] | None = None
        # Set by the steps, in order (see each step's docstring).
        zeros = np.zeros(TILES, dtype=np.int64)
        self.ce = self.ex1_start = self.ge = self.so = self.se = self.fe = zeros
        self.qo = self.qe = self.busy = self.chain_end = self.pad_strided = zeros
        self.order: list[int] = []
        self.strided: list[int] = []

    def put_strided(self, tile: int, chain: list[int]) -> None:
        """A chain of strided copies on ``tile``, from the end of its busy time."""
        n = len(chain)
        offs = int(self.busy[tile]) + np.concatenate([[0], np.cumsum(chain)[:-1]])
        phases = 70 + (self.strided_phase + np.arange(n)) % 33
        self.s.put(
            STRIDED,
            "operation.15",
            np.full(n, tile),
            offs,
            np.array(chain),
            phases,
            self.strided_meta,
        )
        self.strided_phase += n
        self.busy[tile] += sum(chain)
        self.chain_end[tile] = self.busy[tile]


def _prologue(lay: _Layout) -> None:
    """Every tile: four fills from 202740, two copies from 205116 (the window-2 fills come
    last, once the pads are known: ``_prologue_sevens``)."""
    s, t = lay.s, lay.t
    fourth = np.where(t < 1392, 606, 306)
    w1 = [np.full(TILES, 726), np.full(TILES, 306), np.full(TILES, 306), fourth]
    at = np.full(TILES, EPOCH1_START, dtype=np.int64)
    for k, d in enumerate(w1):
        useful = (d == 726) | (d == 306) | ((d == 606) & (t < 24))
        meta = np.where(useful, _fill_meta(s, True), _fill_meta(s, False))
        s.put(FILL, "operation.1", t, at, d, 1 + k, meta)
        at = at + d
    lay.copy_meta = s.option(
        COPY,
        _meta(
            "OperatorKernel",
            21,
            "Copy { element: u64 }",
            0,
            0,
            None,
            None,
            "none: data movement",
            "[1]",
        ),
    )
    s.put(COPY, "operation.2", t, np.full(TILES, 205116), 1536, 5, lay.copy_meta)
    s.put(COPY, "operation.2", t, np.full(TILES, 205116 + 1536), 1206, 6, lay.copy_meta)


def _rearranges(lay: _Layout) -> None:
    """The four rearrange groups of ``_REARRANGES``."""
    for k in _REARRANGES:
        i = np.arange(len(k.tiles))
        phases = _CAST_PHASES[k.name]
        lay.cast_phase[k.tiles.start : k.tiles.stop] = np.array(phases)[i % len(phases)]
        _put_kernel(lay.s, k, lay.ro, lay.rd)


def _casts(lay: _Layout) -> None:
    """A cast after each rearrange: short rearranges are followed at once (union 212028 …
    218358), long ones cast from 221766 at the earliest (union 221766 … 227316): the seed's
    3408-cycle hole. 577+ full casts make p50 = p95 = max = 3378."""
    s, t = lay.s, lay.t
    re_ = lay.ro + lay.rd
    cast_tiles = np.arange(1152)
    short = np.arange(768, 1152)
    cd = np.full(TILES, _CAST_FULL, dtype=np.int64)
    shorter = short[~np.isin(short, np.arange(768, 1120)[np.arange(352) % 3 == 2])]
    cd[shorter] = _CAST_SHORT[0]
    cd[shorter[:3]] = _CAST_SHORT[1]
    co = np.where(np.isin(t, short), re_, np.maximum(re_, 221766))
    cast_opts = [
        s.option(
            CAST,
            _meta(
                "OperatorKernel",
                402,
                "Cast { from: f16, to: f8 }",
                2048,
                2048,
                u,
                p,
                "cast: conversion issue slots",
                "[2048]",
            ),
        )
        for u in (203, 202)
        for p in (214, 213)
    ]
    cmeta = 2 * (cast_tiles % 2) + np.where(cast_tiles % 3 == 0, 0, 1)
    s.put(
        CAST,
        "operation.4",
        cast_tiles,
        co[cast_tiles],
        cd[cast_tiles],
        lay.cast_phase[cast_tiles],
        np.array(cast_opts)[cmeta],
    )
    lay.ce = co + cd


def _static_and_strided(lay: _Layout) -> None:
    """The static copy and the first strided copy, on tiles that run no rearrange; then
    where each tile's first exchange may start."""
    s = lay.s
    static_tiles = np.arange(1152, 1168)
    sm = s.option(
        STATIC,
        _meta(
            "OperatorKernel",
            33,
            "StaticCopy { element: u32 }",
            51,
            51,
            None,
            None,
            "none: data movement",
            "[51]",
        ),
    )
    s.put(STATIC, "operation.5", static_tiles, 212508 + 6 * np.arange(16), 204, 22, sm)
    lay.strided_meta = s.option(
        STRIDED,
        _meta(
            "OperatorKernel",
            22,
            "CopyStrided { element: u64 }",
            0,
            0,
            None,
            None,
            "none: data movement",
            "[8]",
        ),
    )
    s.put(STRIDED, "operation.6", np.array([1168]), np.array([212094]), 480, 23, lay.strided_meta)
    lay.ex1_start = np.full(TILES, 210342, dtype=np.int64)
    lay.ex1_start[static_tiles] = 212802
    lay.ex1_start[1168] = 212094 + 480
    lay.ex1_start[:1152] = lay.ce[:1152]


def _f16_gemms(lay: _Layout) -> None:
    """The f16 GEMM groups of ``_F16_GEMMS``."""
    for k in _F16_GEMMS:
        _put_kernel(lay.s, k, lay.go, lay.gd)
    lay.ge = lay.go + lay.gd


def _softmax(lay: _Layout) -> None:
    """Every tile, at one of ``_SOFTMAX_OFFSETS``; 12 cycles short of 1472 full runs, so one
    tile's softmax is two grid steps shorter."""
    s, t = lay.s, lay.t
    pick = 1 + (t * 5) % 14
    pick[:4] = (6, 3, 6, 0)
    lay.so = np.array(_SOFTMAX_OFFSETS)[pick]
    spec = "AttentionSoftmax { head_dimension: 72, key_columns: 729, padded_key_columns: 768 }"
    basis = "softmax: arithmetic/conversion issue slots, excluding loads and row addressing"
    sx = s.option(
        SOFTMAX,
        _meta("OperatorKernel", 505, spec, 13312, 11664, 22976, 23040, basis, "[16, 729, 0]"),
    )
    sy = s.option(
        SOFTMAX,
        _meta("OperatorKernel", 505, spec, 13312, 11664, 22617, 22680, basis, "[16, 729, 1]"),
    )
    sd = np.where(t == 1470, 48540, 48552)
    s.put(SOFTMAX, "operation.12", t, lay.so, sd, 30 + pick, np.where(t < 576, sx, sy))
    lay.se = lay.so + sd


def _f8_gemms(lay: _Layout) -> None:
    """The f8 GEMM groups of ``_F8_GEMMS``."""
    for k in _F8_GEMMS:
        _put_kernel(lay.s, k, lay.fo, lay.fd)
    lay.fe = lay.fo + lay.fd


def _reduce(lay: _Layout) -> None:
    """Most reduces start when the last exchange window closes (350916); tile 7 starts at the
    group's first offset, the long strided-copy tile early enough for its epilogue chain, and
    one tile late with the longest duration to end at the last offset, 356088."""
    s, t = lay.s, lay.t
    qd = _multiset(_REDUCE_DURATIONS)[lay.rng.permutation(TILES)]
    qo = np.full(TILES, 350916, dtype=np.int64)
    for tile, duration in ((LONG_STRIDED_TILE, 3648), (LATE_REDUCE_TILE, 3876)):
        other = int(np.flatnonzero(qd == duration)[0])
        qd[[tile, other]] = qd[[other, tile]]
    qo[[7, LONG_STRIDED_TILE, LATE_REDUCE_TILE]] = (350256, 350256, 352212)
    ropts = {
        (u, p): s.option(
            REDUCE,
            _meta(
                "OperatorKernel",
                712,
                "ReduceSum { element: f16 }",
                1024,
                65536,
                u,
                p,
                "reduce: add issue slots, excluding loads",
                "[64]",
            ),
        )
        for u in (1447, 1446)
        for p in (1585, 1584)
    }
    ru = np.where(t % 23 == 0, 1446, 1447)
    rp = np.where(t % 23 < 5, 1584, 1585)
    meta = np.array([ropts[(int(u), int(p))] for u, p in zip(ru, rp, strict=True)])
    s.put(REDUCE, "operation.14", t, qo, qd, 60 + t % 21, meta)
    lay.qo, lay.qe = qo, qo + qd


def _epilogue_start(lay: _Layout) -> None:
    """Between reduce and merge every tile runs strided copies; the long chain on one tile
    (three of the longest) sets that union and is laid first."""
    lay.busy = np.maximum(lay.qe, _STRIDED_END - 3 * 1908)
    lay.chain_end = np.zeros(TILES, dtype=np.int64)
    lay.order = [x for x in lay.rng.permutation(TILES).tolist() if x != LONG_STRIDED_TILE]
    strided = list(_multiset(_STRIDED).tolist())
    strided.remove(480)  # the one at 212094
    lay.pad_strided = np.array([strided.pop(0) for _ in range(3)])
    for _ in range(3):
        strided.remove(1908)
    lay.strided = strided
    lay.s.put(
        STRIDED,
        "operation.15",
        np.full(3, LONG_STRIDED_TILE),
        _STRIDED_END - 1908 * np.arange(3, 0, -1),
        1908,
        70 + np.arange(3),
        lay.strided_meta,
    )
    lay.chain_end[LONG_STRIDED_TILE] = _STRIDED_END


def _epilogue_copies(lay: _Layout) -> None:
    """About 85 tiles: one strided copy, then a chain of small copies ending at 359466; the
    copies left after the first chain make the copy pad track (``_pad_tracks``)."""
    copies = list(_multiset(_COPY_SMALL).tolist())
    copy_phase = first_len = 0
    while copies:
        tile = lay.order.pop()
        lay.strided.remove(480)
        lay.put_strided(tile, [480])
        room = _COPY_END - int(lay.busy[tile])
        chain: list[int] = []
        limit = 14 if lay.pad_copy is None else 12
        while copies and sum(chain) + copies[0] <= min(room, first_len or room):
            if len(chain) == limit:
                break
            chain.append(copies.pop(0))
        n = len(chain)
        lay.s.put(
            COPY,
            "operation.16",
            np.full(n, tile),
            _COPY_END - np.cumsum(chain[::-1])[::-1],
            np.array(chain),
            80 + (copy_phase + np.arange(n)) % 26,
            lay.copy_meta,
        )
        copy_phase += n
        lay.chain_end[tile] = _COPY_END
        if lay.pad_copy is None:
            first_len = sum(chain)
            residual = UNION_TARGETS[COPY] - union_cycles(*lay.s.arrays(COPY)[1:])
            lay.pad_copy = _pad_track(226002, residual, np.array(copies))
            del copies[: len(lay.pad_copy[0])]


def _epilogue_fill_chain(lay: _Layout) -> None:
    """One tile: a chain of 13 fills ending at 358692, then one strided copy."""
    tile = lay.order.pop()
    n = 13
    lay.s.put(
        FILL,
        "operation.17",
        np.full(n, tile),
        _FILL_END - 306 * np.arange(n, 0, -1),
        306,
        100 + np.arange(n),
        _fill_meta(lay.s, False),
    )
    lay.strided.remove(480)
    lay.busy[tile] = _FILL_END
    lay.put_strided(tile, [480])


def _epilogue_strided(lay: _Layout) -> None:
    """Every other tile: one strided copy each, then the rest wherever they fit."""
    strided = lay.strided
    mixed = [x for pair in zip(strided, strided[::-1], strict=True) for x in pair]
    mixed = mixed[: len(strided)]
    chains: dict[int, list[int]] = {x: [mixed.pop(0)] for x in lay.order}
    for x in lay.order * 4:
        if not mixed:
            break
        if int(lay.busy[x]) + sum(chains[x]) + mixed[0] <= _STRIDED_END:
            chains[x].append(mixed.pop(0))
    if mixed:
        raise ValueError("strided copies left over")
    for x in lay.order:
        lay.put_strided(x, chains[x])


def _merge(lay: _Layout) -> None:
    """Every tile: a merge at the first of ``_MERGE_OFFSETS`` free after its epilogue; every
    offset is used once at least (an unpicked one delays a merge that may start there)."""
    merge_at = np.array(_MERGE_OFFSETS)
    mo = merge_at[np.searchsorted(merge_at, lay.chain_end)]
    moved = np.zeros(TILES, dtype=bool)
    for option in np.flatnonzero(~np.isin(np.arange(25), np.searchsorted(merge_at, mo))):
        cand = np.flatnonzero(
            (lay.chain_end <= merge_at[option]) & (mo < merge_at[option]) & ~moved
        )
        mo[cand[0]] = merge_at[option]
        moved[cand[0]] = True
    mm = lay.s.option(
        MERGE,
        _meta(
            "OperatorKernel",
            733,
            "AttentionMerge { value_dim: 72, partitions: 80, keys: 768, out: f16 }",
            1152,
            5760,
            None,
            None,
            "none: merge has no work model yet",
            "[16, 8]",
        ),
    )
    lay.s.put(MERGE, "operation.18", lay.t, mo, 4374, 90 + np.searchsorted(merge_at, mo), mm)


def _pad_tracks(lay: _Layout) -> None:
    """Tiles without an f16 GEMM (1344 … 1471) split their long first exchange gap with one
    small-kernel sample each, placed back to back in time across tiles, so that each small
    kernel's union reaches ``UNION_TARGETS``."""
    s = lay.s
    ng = list(range(1344, 1472))
    fill_union = union_cycles(*s.arrays(FILL)[1:]) + 7 * 306  # + prologue window 2
    strided_residual = UNION_TARGETS[STRIDED] - union_cycles(*s.arrays(STRIDED)[1:])
    if lay.pad_copy is None:
        raise ValueError("no copy chain was laid out")
    tracks = (
        (
            FILL,
            _pad_track(219000, UNION_TARGETS[FILL] - fill_union, np.full(200, 306)),
            "operation.8",
            21,
            _fill_meta(s, False),
        ),
        (COPY, lay.pad_copy, "operation.9", 4, lay.copy_meta),
        (
            STRIDED,
            _pad_track(231000, strided_residual, lay.pad_strided),
            "operation.10",
            3,
            lay.strided_meta,
        ),
    )
    for name, (offs, durs), op, labels, pad_meta in tracks:
        tiles_ = np.array([ng.pop(0) for _ in offs])
        s.put(name, op, tiles_, offs, durs, 24 + np.arange(len(offs)) % labels, pad_meta)
        for x, o, dd in zip(tiles_.tolist(), offs.tolist(), durs.tolist(), strict=True):
            lay.pad_tile[x] = (o, dd)
        if name == STRIDED and len(offs) != len(lay.pad_strided):
            raise ValueError(f"strided pads changed: {len(offs)}")


def _prologue_sevens(lay: _Layout) -> None:
    """Prologue window 2: six or seven fills from 207858 on every tile; the fill count left
    over decides how many tiles run seven."""
    s, t = lay.s, lay.t
    placed = sum(len(c[3]) for c in s.chunks if c[0] == FILL)
    sevens = 15296 - placed - 6 * TILES
    k_fill = np.where(t < sevens, 7, 6)
    for k in range(7):
        tiles_ = t[k_fill > k]
        useful = (k < 2) | ((k == 2) & (tiles_ < 8))
        meta = np.where(useful, _fill_meta(s, True), _fill_meta(s, False))
        s.put(FILL, "operation.1", tiles_, 207858 + 306 * k, 306, 8 + k, meta)


def _exchange_gaps(lay: _Layout) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Per exchange round (4) and tile: where the gap starts, its length, whether the
    exchange ends at the gap's end, and the durations pinned in advance (-1: free)."""
    (lo_a, hi_a), (lo_b, hi_b) = EXCHANGE_WINDOWS
    x_start = np.zeros((4, TILES), dtype=np.int64)
    x_cap = np.zeros((4, TILES), dtype=np.int64)
    x_end_aligned = np.zeros((4, TILES), dtype=bool)
    fixed = np.full((4, TILES), -1, dtype=np.int64)
    go, so = lay.go, lay.so
    # round 1: after the cast (or the prologue) until the f16 GEMM
    x_start[0] = lay.ex1_start
    x_cap[0] = np.where(go >= 0, go, 0) - lay.ex1_start
    # tiles without f16 GEMM: split the gap at their pad (or after a full-length exchange)
    for x in range(1344, 1472):
        o, dd = lay.pad_tile.get(x, (lo_a + EXCHANGE_MAX, 0))
        x_cap[0, x] = o - lo_a
        fixed[0, x] = o - lo_a
        x_start[1, x] = o + dd
        x_cap[1, x] = min(int(so[x]) - (o + dd), EXCHANGE_MAX)
        fixed[1, x] = x_cap[1, x]
    x_start[1, :1344] = lay.ge[:1344]
    x_cap[1, :1344] = so[:1344] - lay.ge[:1344]
    x_end_aligned[1, :1344] = True
    # rounds 3 and 4: around the f8 GEMM; tiles without one split their gap in two
    r3 = np.maximum(lay.se, lo_b)
    r4_end = np.minimum(lay.qo, hi_b)
    f8 = lay.fo >= 0
    split = r3 + ((r4_end - r3) // 12) * 6
    x_start[2], x_cap[2] = r3, np.where(f8, lay.fo, split) - r3
    x_start[3] = np.where(f8, lay.fe, split)
    x_cap[3] = r4_end - x_start[3]
    x_end_aligned[3] = True
    # anchors: a full-length exchange where coverage of the windows depends on it
    anchor_e = int(np.flatnonzero(go == 239568)[np.flatnonzero(go == 239568) >= 1152][0])
    fixed[0, anchor_e] = x_cap[0, anchor_e]
    for x in (3, 4):
        fixed[2, x], fixed[3, x] = x_cap[2, x], x_cap[3, x]
    fixed[3, 7] = x_cap[3, 7]
    last = int(np.flatnonzero((so == hi_a) & (np.arange(TILES) < 1344))[0])
    fixed[1, last] = min(int(x_cap[1, last]), EXCHANGE_P95)
    return x_start, x_cap, x_end_aligned, fixed


def _exchanges(lay: _Layout) -> None:
    """Four exchanges per tile fill the gaps between compute kernels inside the two
    ``EXCHANGE_WINDOWS``; durations by rank bands (``_band_durations``)."""
    x_start, x_cap, x_end_aligned, fixed = _exchange_gaps(lay)
    durations = _band_durations(x_cap.ravel(), fixed.ravel()).reshape(4, TILES)
    offsets = np.where(x_end_aligned, x_start + x_cap - durations, x_start)
    for r, phase in enumerate((27, 45, 56, 66)):
        m = lay.s.option(
            "exchange",
            [
                ("reason", "Exchange"),
                ("value", str(900 + r)),
                ("workEstimateBasis", "exchange: no useful-work estimate"),
            ],
        )
        lay.s.put(
            "exchange",
            f"operation.{19 + r}",
            lay.t,
            offsets[r],
            durations[r],
            phase,
            m,
            kind="exchange",
        )


_STEPS: tuple[Callable[[_Layout], None], ...] = (
    _prologue,
    _rearranges,
    _casts,
    _static_and_strided,
    _f16_gemms,
    _softmax,
    _f8_gemms,
    _reduce,
    _epilogue_start,
    _epilogue_copies,
    _epilogue_fill_chain,
    _epilogue_strided,
    _merge,
    _pad_tracks,
    _prologue_sevens,
    _exchanges,
)
"""Epoch 1's layout, step by step. The order is the dump's sample order, and later steps
fit into the time earlier ones left free (pads and exchanges go last)."""


def _epoch1(s: _Samples) -> None:
    """Lay out the 37376 epoch-1 samples, tile by tile, without overlaps."""
    layout = _Layout(s)
    for step in _STEPS:
        step(layout)


def _other_epochs(builder: DumpBuilder, gemm_meta: Pairs, exchange_meta: Pairs) -> None:
    """Epochs 0 and 2: plain compute-then-exchange steps on every tile, before and after
    epoch 1, sized so the dump holds ``SAMPLE_COUNT`` samples spanning ``PROFILE_SPAN``."""
    t = np.arange(TILES, dtype=np.int64)
    skew = 6 * (t % 7)
    kernel = G16.format("large", 112)

    def step(epoch: int, base: int, compute: int, exchange: int, phase: int) -> None:
        builder.add(
            tile=t,
            offset=base + skew,
            duration=compute,
            phase=phase,
            epoch=epoch,
            kind="compute",
            operation="operation.7",
            kernel=kernel,
            metadata=gemm_meta,
        )
        builder.add(
            tile=t,
            offset=base + skew + compute,
            duration=exchange,
            phase=phase + 1,
            epoch=epoch,
            kind="exchange",
            operation="operation.19",
            metadata=exchange_meta,
        )

    for k in range(6):
        step(0, 32_000 * k, 20_000, 8_000, 2 * k)
    for k in range(60):
        step(2, 370_002 + 270_000 * k, 150_000, 60_000, 2 * k)
    epoch1 = 37_376
    extra = SAMPLE_COUNT - epoch1 - 2 * TILES * 66
    tail = t[:extra]
    start = 370_002 + 270_000 * 60
    builder.add(
        tile=tail,
        offset=start + skew[:extra],
        duration=PROFILE_SPAN - start - skew[:extra],
        phase=120,
        epoch=2,
        kind="compute",
        operation="operation.7",
        kernel=kernel,
        metadata=gemm_meta,
    )


def build_reference_dump() -> SyntheticDump:
    """The reference dump for seed ``004``: 232260 samples on 1472 tiles at 1.5 GHz.

    Deterministic (fixed RNG seed, no clock or environment input); aggregated over
    ``epoch == 1`` it reproduces every group of the seed's table, and its three longest
    epoch-1 samples are the seed's ``samples``.
    """
    s = _Samples()
    _epoch1(s)
    builder = DumpBuilder(DEFAULT_CLOCK_HZ, TILES)
    for group, kind, operation, tile, offset, duration, phase, meta in s.chunks:
        builder.add(
            tile=tile,
            offset=offset,
            duration=duration,
            phase=phase,
            epoch=1,
            kind=kind,
            operation=operation,
            kernel=None if kind == "exchange" else group,
            metadata_options=s.options[group],
            metadata_index=meta,
        )
    _other_epochs(builder, s.options[G16.format("large", 112)][0], s.options["exchange"][0])
    return builder.build()
