"""The spec registry (``tileprof.core.specs``) by hand: every check's message in full, every unit
converted, the bundled numbers held to the figures their cited sources print, and the lookups
(``peak_key``, ``ridge_intensity``, the tile and chip scaling) on spec files written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tileprof.core import specs
from tileprof.core.errors import InputError

GOOD = (
    'name = "hand"\nkind = "gpu"\nmatch = ["^hand"]\n'
    '[sources]\nme = "measured by hand"\n'
    '[peaks]\nmatrix_bf16 = { value = 100, unit = "TFLOP/s", source = "me" }\n'
    '[memory]\nbandwidth = { value = 2, unit = "TB/s", source = "me" }\n'
)


def _error(text: str) -> str:
    with pytest.raises(InputError) as info:
        specs.parse_spec("p.toml", text)
    return str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = ", "p.toml: not TOML: "),
        (GOOD + "colour = 1\n", "p.toml: memory.colour: unknown key"),
        ("colour = 1\nzeta = 2\n" + GOOD, "p.toml: colour: unknown key"),
        ('kind = "gpu"\nmatch = ["a"]\n', "p.toml: name: missing"),
        ('name = "a"\nmatch = ["a"]\n', "p.toml: kind: missing"),
        ('name = "a"\nkind = "gpu"\n', "p.toml: match: missing"),
        (
            'name = "a"\nkind = "cpu"\nmatch = ["a"]\n',
            "p.toml: kind: 'cpu' is not one of gpu, tile, chip",
        ),
        (
            'name = "a"\nkind = "gpu"\nmatch = []\n',
            "p.toml: match: not a list of regular expressions",
        ),
        (
            'name = "a"\nkind = "gpu"\nmatch = "a"\n',
            "p.toml: match: not a list of regular expressions",
        ),
        (
            'name = "a"\nkind = "gpu"\nmatch = ["a", 1]\n',
            "p.toml: match: not a list of regular expressions",
        ),
        (
            'name = "a"\nkind = "gpu"\nmatch = ["a"]\nexclude = ["(?<!x)a"]\n',
            "p.toml: exclude: not a regular expression RE2 reads (no look-arounds): ",
        ),
        (
            'name = "a"\nkind = "gpu"\nmatch = ["a"]\nsources = 1\n',
            "p.toml: sources: not a table of strings",
        ),
        (
            'name = "a"\nkind = "gpu"\nmatch = ["a"]\n[sources]\nme = 1\n',
            "p.toml: sources: not a table of strings",
        ),
        ('name = "a"\nkind = "gpu"\nmatch = ["a"]\npeaks = 1\n', "p.toml: peaks: not a table"),
        (
            'name = "a"\nkind = "gpu"\nmatch = ["a"]\n[peaks]\nmatrix_fp4 = 1\n',
            "p.toml: peaks.matrix_fp4: unknown key",
        ),
        (
            'name = "a"\nkind = "gpu"\nmatch = ["a"]\n[peaks]\nmatrix_bf16 = 1\n',
            "p.toml: peaks.matrix_bf16: not a table { value, unit, source }",
        ),
        (
            GOOD.replace(
                'source = "me" }\n[memory]', 'source = "me", tag = 1, extra = 2 }\n[memory]'
            ),
            "p.toml: peaks.matrix_bf16.extra: unknown key",
        ),
        (
            GOOD.replace('{ value = 100, unit = "TFLOP/s", ', "{ "),
            "p.toml: peaks.matrix_bf16.value: missing",
        ),
        (
            GOOD.replace('value = 100, unit = "TFLOP/s", ', "value = 100, "),
            "p.toml: peaks.matrix_bf16.unit: missing",
        ),
        (
            GOOD.replace('unit = "TFLOP/s", source = "me"', 'unit = "TFLOP/s"'),
            "p.toml: peaks.matrix_bf16.source: missing",
        ),
        (
            GOOD.replace("value = 100", "value = true"),
            "p.toml: peaks.matrix_bf16.value: True is not a number",
        ),
        (
            GOOD.replace("value = 100", 'value = "100"'),
            "p.toml: peaks.matrix_bf16.value: '100' is not a number",
        ),
        (
            GOOD.replace("value = 100", "value = -0.5"),
            "p.toml: peaks.matrix_bf16.value: negative number -0.5",
        ),
        (
            GOOD.replace('unit = "TB/s"', 'unit = "TFLOP/s"'),
            "p.toml: memory.bandwidth.unit: unit 'TFLOP/s' is not one of GB/s, TB/s, B/cycle/tile",
        ),
        (
            GOOD.replace('unit = "TB/s", source = "me"', 'unit = "TB/s", source = "you"'),
            "p.toml: memory.bandwidth.source: 'you' is not in [sources]",
        ),
    ],
)
def test_every_check_is_one_line_naming_the_file_and_the_key(text: str, message: str) -> None:
    found = _error(text)
    if message.endswith(": "):  # the parser's own words follow
        assert found.startswith(message) and "\n" not in found, found
    else:
        assert found == message


def test_a_zero_is_a_number_and_a_bool_is_not() -> None:
    spec = specs.parse_spec("p.toml", GOOD.replace("value = 100", "value = 0"))
    assert spec.peaks["matrix_bf16"].value == 0.0
    assert "value: False is not a number" in _error(GOOD.replace("value = 100", "value = false"))


@pytest.mark.parametrize(
    ("section", "key", "value", "unit", "canonical", "expected"),
    [
        ("peaks", "matrix_bf16", 3, "TFLOP/s", "TFLOP/s", 3.0),
        ("peaks", "matrix_bf16", 3, "TFLOPS", "TFLOP/s", 3.0),
        ("peaks", "matrix_int8", 3, "TOPS", "TFLOP/s", 3.0),
        ("peaks", "matrix_bf16", 3, "PFLOP/s", "TFLOP/s", 3000.0),
        ("peaks", "matrix_bf16", 3, "GFLOP/s", "TFLOP/s", 0.003),
        ("peaks", "matrix_bf16", 3, "FLOP/cycle/tile", "FLOP/cycle/tile", 3.0),
        ("peaks", "fpu_lofi", 3, "TFLOP/s/core", "TFLOP/s/core", 3.0),
        ("memory", "bandwidth", 3, "GB/s", "GB/s", 3.0),
        ("memory", "bandwidth", 3, "TB/s", "GB/s", 3000.0),
        ("memory", "bandwidth", 3, "B/cycle/tile", "B/cycle/tile", 3.0),
        ("memory", "exchange_bandwidth", 3, "TB/s", "GB/s", 3000.0),
        ("memory", "exchange_bandwidth", 3, "GB/s", "GB/s", 3.0),
        ("memory", "exchange_bandwidth", 3, "B/cycle/tile", "B/cycle/tile", 3.0),
        ("memory", "latency_floor", 3, "us", "us", 3.0),
        ("memory", "latency_floor", 3, "µs", "us", 3.0),
        ("memory", "latency_floor", 3, "ns", "us", 0.003),
        ("memory", "issue_slots", 3, "slot/cycle/tile", "slot/cycle/tile", 3.0),
    ],
)
def test_every_unit_is_converted_to_its_canonical_one(
    section: str, key: str, value: int, unit: str, canonical: str, expected: float
) -> None:
    text = (
        'name = "hand"\nkind = "gpu"\nmatch = ["^hand"]\n[sources]\nme = "measured by hand"\n'
        f'[{section}]\n{key} = {{ value = {value}, unit = "{unit}", source = "me" }}\n'
    )
    spec = specs.parse_spec("p.toml", text)
    number = (spec.peaks if section == "peaks" else spec.memory)[key]
    assert number == specs.SpecNumber(
        pytest.approx(expected, rel=1e-12), canonical, "measured by hand"
    )
    assert type(number.value) is float
    assert spec.citation(section, key) == "measured by hand"
    other = "memory" if section == "peaks" else "peaks"
    assert spec.citation(other, key) is None


def test_a_parsed_spec_keeps_every_field() -> None:
    text = GOOD.replace('match = ["^hand"]', 'match = ["^hand", "hnd"]\nexclude = ["mini"]')
    spec = specs.parse_spec("p.toml", text)
    assert (spec.name, spec.kind, spec.path) == ("hand", "gpu", "p.toml")
    assert [p.pattern for p in spec.match] == ["^hand", "hnd"]
    assert [p.pattern for p in spec.exclude] == ["mini"]
    assert spec.sources == {"me": "measured by hand"}
    assert spec.peaks == {"matrix_bf16": specs.SpecNumber(100.0, "TFLOP/s", "measured by hand")}
    assert spec.memory == {"bandwidth": specs.SpecNumber(2000.0, "GB/s", "measured by hand")}
    assert spec.matches("HAND GPU") and spec.matches("a hnd") and not spec.matches("hand mini")
    assert not spec.matches("gpu")
    # no exclude, no peaks, no memory, no sources: all empty
    bare = specs.parse_spec("p.toml", 'name = 7\nkind = "chip"\nmatch = ["x"]\n')
    assert (bare.name, bare.exclude, bare.peaks, bare.memory, bare.sources) == ("7", (), {}, {}, {})
    assert bare.latency_floor_us() is None and bare.bandwidth_gbps() is None


@pytest.mark.parametrize(
    ("dtype", "family", "key"),
    [
        ("bf16", None, "matrix_bf16"),
        ("bf16", "gemm", "matrix_bf16"),
        ("f16", "attention", "matrix_fp16"),
        ("f32", "elementwise", "vector_fp32"),
        ("tf32", "gemm", "matrix_tf32"),
        ("f8", "gemm", "matrix_fp8"),
        ("int8", "gemm", "matrix_int8"),
        ("f64", "gemm", None),
        (None, "gemm", None),
    ],
)
def test_peak_key(dtype: str | None, family: str | None, key: str | None) -> None:
    assert specs.peak_key(dtype, family) == key


TILE = (
    'name = "tiles"\nkind = "tile"\nmatch = ["^tiles"]\n[sources]\nme = "by hand"\n'
    '[peaks]\nmatrix_fp16 = { value = 128, unit = "FLOP/cycle/tile", source = "me" }\n'
    '[memory]\nbandwidth = { value = 24, unit = "B/cycle/tile", source = "me" }\n'
    'issue_slots = { value = 2, unit = "slot/cycle/tile", source = "me" }\n'
    'latency_floor = { value = 100, unit = "ns", source = "me" }\n'
)


def test_a_tile_spec_scales_by_the_targets_tiles_and_clock() -> None:
    tile = specs.parse_spec("t.toml", TILE)
    target = "tiles (1000 TILES @ 1.5 GHz)"
    assert tile.scale(target) == 1000 * 1.5e9
    assert tile.scale("tiles 10tiles@2ghz") == 10 * 2e9
    assert tile.scale("tiles") is None and tile.scale(None) is None
    # exact in binary: 128 × 1.5e12 / 1e12, 24 × 1.5e12 / 1e9, 2 × 1.5e12
    assert tile.peak_tflops("matrix_fp16", target) == 192.0
    assert tile.bandwidth_gbps(target) == 36_000.0
    assert tile.issue_slots_per_s(target) == 3e12
    assert tile.latency_floor_us() == pytest.approx(0.1)
    # no size in the target, or no such number: no figure
    assert tile.peak_tflops("matrix_fp16", "tiles") is None
    assert tile.bandwidth_gbps("tiles") is None
    assert tile.issue_slots_per_s("tiles") is None
    assert tile.peak_tflops("matrix_bf16", target) is None
    assert tile.bandwidth_gbps(target, key="exchange_bandwidth") is None
    # a GPU spec is not scaled, whatever its target says, and has no issue slots
    gpu = specs.parse_spec(
        "g.toml", GOOD + 'issue_slots = { value = 2, unit = "slot/cycle/tile", source = "me" }\n'
    )
    assert gpu.scale("hand (1000 tiles @ 1.5 GHz)") == 1.0 and gpu.scale(None) == 1.0
    assert gpu.peak_tflops("matrix_bf16", "hand (1000 tiles @ 1.5 GHz)") == 100.0
    assert gpu.bandwidth_gbps("hand (1000 tiles @ 1.5 GHz)") == 2000.0
    assert gpu.issue_slots_per_s("hand") is None


def test_a_chip_spec_gives_an_ops_peak_by_its_fidelity_and_cores() -> None:
    chip = specs.parse_spec(
        "c.toml",
        'name = "chip"\nkind = "chip"\nmatch = ["^chip"]\n[sources]\nme = "by hand"\n[peaks]\n'
        + "".join(
            f'fpu_{f} = {{ value = {v}, unit = "TFLOP/s/core", source = "me" }}\n'
            for f, v in (("lofi", 4), ("hifi2", 2), ("hifi3", 1.5), ("hifi4", 1))
        ),
    )
    assert chip.core_peak_tflops("LoFi", 10) == 40.0
    assert chip.core_peak_tflops(" HiFi2 ", 10) == 20.0
    assert chip.core_peak_tflops("hifi3", 10) == 15.0
    assert chip.core_peak_tflops("HIFI4", 2.5) == 2.5
    assert chip.core_peak_tflops("lofi", 1) == 4.0  # one core is a core
    assert chip.core_peak_tflops("lofi", 0.5) == 2.0
    assert chip.core_peak_tflops("hifi5", 10) is None
    assert chip.core_peak_tflops(None, 10) is None
    assert chip.core_peak_tflops("lofi", None) is None
    assert chip.core_peak_tflops("lofi", 0) is None
    assert chip.core_peak_tflops("lofi", -1) is None
    assert chip.core_peak_tflops("lofi", float("nan")) is None
    # a chip spec is not scaled by a target's tiles
    assert chip.scale("chip (10 tiles @ 1 GHz)") == 1.0


@pytest.mark.parametrize(
    ("target", "dtype", "family", "ridge"),
    [
        ("hand", "bf16", None, 100e12 / 2e12),
        ("hand", "bf16", "gemm", 100e12 / 2e12),
        ("hand", "bf16", "elementwise", None),  # no vector_bf16 in the spec
        ("hand", "f64", None, None),
        ("nothing matches", "bf16", None, None),
        (None, "bf16", None, None),
        ("", "bf16", None, None),
    ],
)
def test_ridge_intensity(
    tmp_path: Path, target: str | None, dtype: str, family: str | None, ridge: float | None
) -> None:
    path = tmp_path / "hand.toml"
    path.write_text(GOOD)
    specs.use_specs([path])
    try:
        found = specs.ridge_intensity(target, dtype, family)
    finally:
        specs.use_specs([])
    assert found == ridge  # 100e12 / 2e12 = 50, exact in binary


def test_a_spec_without_bandwidth_has_no_ridge(tmp_path: Path) -> None:
    for memory in ("", 'bandwidth = { value = 0, unit = "GB/s", source = "me" }\n'):
        path = tmp_path / "hand.toml"
        path.write_text(GOOD.split("[memory]")[0] + "[memory]\n" + memory)
        specs.use_specs([path])
        try:
            assert specs.ridge_intensity("hand", "bf16") is None
        finally:
            specs.use_specs([])


def test_user_specs_come_first_and_folders_are_read_in_name_order(tmp_path: Path) -> None:
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "b.toml").write_text(GOOD.replace('"hand"', '"second"'))
    (folder / "a.toml").write_text(GOOD.replace('"hand"', '"first"'))
    (folder / "notes.txt").write_text("not a spec")
    one = tmp_path / "one.toml"
    one.write_text(GOOD.replace('"^hand"', '"h200"').replace('"hand"', '"mine"'))
    loaded = specs.load_specs([one, folder])
    assert [s.name for s in loaded] == ["mine", "first", "second"]
    assert [s.path for s in loaded] == [str(one), str(folder / "a.toml"), str(folder / "b.toml")]
    specs.use_specs([one])
    try:
        assert specs.spec_for("NVIDIA H200").name == "mine"
        assert specs.registry()[0].name == "mine"
    finally:
        specs.use_specs([])
    assert specs.spec_for("NVIDIA H200").name == "NVIDIA H200"


def test_an_unreadable_spec_file_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    with pytest.raises(InputError) as info:
        specs.load_spec_file(missing)
    # the OS's words alone, not the exception's text (which repeats the path)
    assert str(info.value) == f"{missing}: cannot read: No such file or directory"
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b'name = "a\xff"\n')
    with pytest.raises(InputError) as info:
        specs.load_spec_file(binary)
    assert str(info.value) == f"{binary}: byte 9: not UTF-8 text"


# The bundled numbers, each as the source it cites prints it (the figure in the file's
# [sources] text, or the datasheet it names): a changed unit factor or a misread file moves one.
BUNDLED = [
    ("NVIDIA H200", "peaks", "matrix_bf16", 989.5, "TFLOP/s"),  # 1,979 with sparsity, halved
    ("NVIDIA H200", "peaks", "matrix_int8", 1979.0, "TFLOP/s"),  # 3,958 TOPS sparse, halved
    ("NVIDIA H200", "peaks", "vector_bf16", 133.8, "TFLOP/s"),  # whitepaper: 133.8 TFLOPS
    ("NVIDIA H200", "memory", "bandwidth", 4800.0, "GB/s"),  # datasheet: 4.8 TB/s
    ("NVIDIA H200", "memory", "latency_floor", 2.0, "us"),  # assumption: ~2 µs
    ("tile device", "peaks", "matrix_fp16", 128.0, "FLOP/cycle/tile"),  # derived: 127.7 → 128
    ("tile device", "peaks", "matrix_fp32", 32.0, "FLOP/cycle/tile"),  # derived: 31.9 → 32
    ("tile device", "memory", "bandwidth", 24.3, "B/cycle/tile"),  # derived: 24.3
    ("tile device", "memory", "exchange_bandwidth", 4.0, "B/cycle/tile"),  # derived: 4.09 → 4
    ("tile device", "memory", "issue_slots", 1.0, "slot/cycle/tile"),  # assumption: one
    ("tile device", "memory", "latency_floor", 0.1, "us"),  # assumption: 0.1 µs
    ("Tenstorrent Wormhole n150", "peaks", "fpu_lofi", 262 / 72, "TFLOP/s/core"),
    ("Tenstorrent Wormhole n150", "peaks", "fpu_hifi2", 148 / 72, "TFLOP/s/core"),
    ("Tenstorrent Wormhole n150", "peaks", "fpu_hifi3", 74 / 72 * 4 / 3, "TFLOP/s/core"),
    ("Tenstorrent Wormhole n150", "peaks", "fpu_hifi4", 74 / 72, "TFLOP/s/core"),
    ("Tenstorrent Wormhole n150", "memory", "bandwidth", 288.0, "GB/s"),  # 288 GB/sec
    # the other bundled files: each one's bandwidth and its dense 16-bit (or LoFi) peak at least
    ("NVIDIA A100 SXM 40 GB", "memory", "bandwidth", 1555.0, "GB/s"),  # datasheet: 1,555 GB/s
    ("NVIDIA A100 SXM 40 GB", "peaks", "matrix_bf16", 312.0, "TFLOP/s"),  # datasheet: 312
    ("NVIDIA A100 SXM 40 GB", "peaks", "matrix_int8", 624.0, "TFLOP/s"),  # datasheet: 624 TOPS
    ("NVIDIA A100 SXM 40 GB", "peaks", "vector_bf16", 39.0, "TFLOP/s"),  # whitepaper: 39
    ("NVIDIA A100 SXM 80 GB", "memory", "bandwidth", 2039.0, "GB/s"),  # datasheet: 2,039 GB/s
    ("NVIDIA A100 SXM 80 GB", "peaks", "matrix_bf16", 312.0, "TFLOP/s"),
    ("NVIDIA B200", "memory", "bandwidth", 7700.0, "GB/s"),  # 7.7 TB/s
    ("NVIDIA B200", "peaks", "matrix_bf16", 2250.0, "TFLOP/s"),  # 4.5 PFLOPS sparse, halved
    ("NVIDIA B200", "peaks", "matrix_int8", 4500.0, "TFLOP/s"),  # 9 POPS sparse, halved
    ("NVIDIA B200", "peaks", "matrix_fp32", 75.0, "TFLOP/s"),  # FP32 75 TFLOPS
    ("NVIDIA H100 PCIe", "memory", "bandwidth", 2000.0, "GB/s"),  # datasheet: 2 TB/s
    ("NVIDIA H100 PCIe", "peaks", "matrix_bf16", 756.5, "TFLOP/s"),  # 1,513 sparse, halved
    ("NVIDIA H100 SXM", "memory", "bandwidth", 3350.0, "GB/s"),  # datasheet: 3.35 TB/s
    ("NVIDIA H100 SXM", "peaks", "matrix_bf16", 989.5, "TFLOP/s"),  # 1,979 sparse, halved
    ("NVIDIA H100 SXM", "peaks", "vector_bf16", 133.8, "TFLOP/s"),  # whitepaper: 133.8
    ("AMD Instinct MI250X", "memory", "bandwidth", 3200.0, "GB/s"),  # 3.2 TB/s
    ("AMD Instinct MI250X", "peaks", "matrix_bf16", 383.0, "TFLOP/s"),  # FP16/BF16 383
    ("AMD Instinct MI250X", "peaks", "matrix_fp32", 95.7, "TFLOP/s"),  # FP32 Matrix 95.7
    ("AMD Instinct MI250X", "peaks", "vector_fp32", 47.9, "TFLOP/s"),  # FP32 Vector 47.9
    ("AMD Instinct MI300X", "memory", "bandwidth", 5300.0, "GB/s"),  # 5.3 TB/s
    ("AMD Instinct MI300X", "peaks", "matrix_bf16", 1307.4, "TFLOP/s"),  # FP16/BF16 1307.4
    ("AMD Instinct MI300X", "peaks", "matrix_fp8", 2614.9, "TFLOP/s"),  # FP8 2614.9
    ("Tenstorrent Blackhole p100", "memory", "bandwidth", 448.0, "GB/s"),  # 448 GB/sec
    ("Tenstorrent Blackhole p100", "peaks", "fpu_lofi", 4096 * 1.35e9 / 1e12, "TFLOP/s/core"),
    ("Tenstorrent Blackhole p100", "peaks", "fpu_hifi2", 4096 * 1.35e9 / 2e12, "TFLOP/s/core"),
    ("Tenstorrent Blackhole p100", "peaks", "fpu_hifi4", 4096 * 1.35e9 / 4e12, "TFLOP/s/core"),
    ("Tenstorrent Blackhole p150", "memory", "bandwidth", 512.0, "GB/s"),  # 512 GB/sec
    ("Tenstorrent Blackhole p150", "peaks", "fpu_lofi", 4096 * 1.35e9 / 1e12, "TFLOP/s/core"),
    ("Tenstorrent Wormhole n300", "memory", "bandwidth", 288.0, "GB/s"),  # 576 over 2 ASICs
    ("Tenstorrent Wormhole n300", "peaks", "fpu_lofi", 262 / 72, "TFLOP/s/core"),
]


@pytest.mark.parametrize(("device", "section", "key", "value", "unit"), BUNDLED)
def test_bundled_numbers_are_the_cited_figures(
    device: str, section: str, key: str, value: float, unit: str
) -> None:
    (spec,) = [s for s in specs.bundled_specs() if s.name == device]
    number = (spec.peaks if section == "peaks" else spec.memory)[key]
    assert number.value == pytest.approx(value, rel=1e-9)
    assert number.unit == unit
    assert number.source == spec.citation(section, key) and number.source in spec.sources.values()


def test_bundled_specs_are_every_file_in_name_order() -> None:
    folder = Path(specs.__file__).resolve().parent.parent / "data" / "specs"
    names = sorted(p.name for p in folder.glob("*.toml"))
    bundled = specs.bundled_specs()
    assert [s.path for s in bundled] == [f"tileprof/data/specs/{n}" for n in names]
    # the tile device's spec scales; 1472 tiles at 1.5 GHz give 282.6 TFLOP/s f16 (its header)
    (tile,) = [s for s in bundled if s.name == "tile device"]
    target = "tile device (1472 tiles @ 1.5 GHz)"
    assert tile.peak_tflops("matrix_fp16", target) == pytest.approx(282.624)
    assert tile.bandwidth_gbps(target, key="exchange_bandwidth") == pytest.approx(8832.0)
    assert tile.issue_slots_per_s(target) == pytest.approx(1472 * 1.5e9)
