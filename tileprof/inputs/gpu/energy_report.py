"""GPU energy report: NVML board energy of an 8192³ GEMM per precision and of INT8 inference.

Layout (seed ``003``): ``hardware`` (``gpu_name`` …), ``measurement`` and exclusions,
``gemm_8192`` (``shape``, ``MAC``, ``stages`` per precision with ``seconds_per_GEMM`` and raw
and idle-adjusted joules per GEMM) and ``ciresan_mnist_int8_inference`` (``stages`` per batching
with ``seconds_per_epoch`` and joules per epoch). Figures are kept as stated; time is converted
to µs only.

Nothing the source states is dropped: a field that a column holds is not repeated, and every
other one is kept — the top-level blocks (``report_date``, ``hardware``, ``measurement`` with
its exclusions, and any other) in the source's metadata, and a section's and a stage's other
fields (timestamps, source artifacts and their SHA-256, ``calls_per_epoch``, padded dimensions,
``excluded_additionally`` …) in each of that section's rows' ``metadata``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec

from tileprof.core.run_schema import ParsedRuns, runs_from_rows
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import ENERGY, ENERGY_GEMM, ENERGY_INFERENCE

KIND = ENERGY

GEMM = ENERGY_GEMM
INFERENCE = ENERGY_INFERENCE

# A time or MAC count is divided by (TFLOP/s, J per MAC, speedup): it must be above zero.
# Energies and counts are never negative.
Positive = Annotated[float, msgspec.Meta(gt=0)]
PositiveInt = Annotated[int, msgspec.Meta(gt=0, le=2**63 - 1)]
NonNegative = Annotated[float, msgspec.Meta(ge=0)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


class Hardware(msgspec.Struct):
    gpu_name: str


class GemmStage(msgspec.Struct):
    seconds_per_GEMM: Positive
    raw_board_energy_J_per_GEMM: NonNegative | None = None
    idle_adjusted_board_energy_J_per_GEMM: NonNegative | None = None
    aggregate_repetitions: NonNegativeInt | None = None
    semantics: str | None = None


class Gemm(msgspec.Struct):
    shape: list[NonNegativeInt]
    MAC: PositiveInt
    stages: dict[str, dict[str, Any]]


class InferenceStage(msgspec.Struct):
    seconds_per_epoch: Positive
    raw_board_energy_J_per_epoch: NonNegative | None = None
    idle_adjusted_board_energy_J_per_epoch: NonNegative | None = None
    aggregate_repetitions: NonNegativeInt | None = None
    # not a column (``calls`` is the repetitions time_us averages over): kept in metadata,
    # checked here because it is a count
    calls_per_epoch: NonNegativeInt | None = None


class Inference(msgspec.Struct):
    stages: dict[str, dict[str, Any]]
    logical_MAC_per_epoch: PositiveInt | None = None
    logical_dimensions: list[NonNegativeInt] | None = None


class EnergyDoc(msgspec.Struct):
    hardware: Hardware
    measurement: dict[str, Any] = msgspec.field(default_factory=dict)
    gemm_8192: Gemm | None = None
    ciresan_mnist_int8_inference: Inference | None = None
    report_date: str | None = None


# The source fields each column holds, per part; everything else goes to metadata.
GEMM_COLUMNS = frozenset({"stages", "shape", "MAC"})
GEMM_STAGE_COLUMNS = frozenset(
    {
        "seconds_per_GEMM",
        "raw_board_energy_J_per_GEMM",
        "idle_adjusted_board_energy_J_per_GEMM",
        "aggregate_repetitions",
        "semantics",
    }
)
INFERENCE_COLUMNS = frozenset({"stages", "logical_dimensions", "logical_MAC_per_epoch"})
INFERENCE_STAGE_COLUMNS = frozenset(
    {
        "seconds_per_epoch",
        "raw_board_energy_J_per_epoch",
        "idle_adjusted_board_energy_J_per_epoch",
        "aggregate_repetitions",
    }
)


def parse(path: str | Path, data: bytes) -> ParsedRuns:
    """The runs of an energy report."""
    from tileprof.inputs._decode import convert, decode_json

    doc = decode_json(path, data, EnergyDoc)
    raw: dict[str, Any] = decode_json(path, data, dict[str, Any])
    name = Path(path).name
    target = doc.hardware.gpu_name
    rows: list[dict[str, Any]] = []
    if doc.gemm_8192 is not None:
        g = doc.gemm_8192
        section = _rest(raw[GEMM], GEMM_COLUMNS)
        for stage_name, stage_raw in g.stages.items():
            where = f"$.{GEMM}.stages.{stage_name}"
            s = convert(path, stage_raw, GemmStage, where)
            rows.append(
                {
                    "target": target,
                    "target_kind": "gpu",
                    "source": f"{name}: {where}",
                    "workload": GEMM,
                    "implementation": stage_name,
                    "kernel": s.semantics,
                    "classify_hint": f"gemm {stage_name}",
                    "shape": "x".join(str(d) for d in g.shape),
                    "per": "GEMM",
                    "time_us": s.seconds_per_GEMM * 1e6,
                    "calls": s.aggregate_repetitions,
                    "mac": g.MAC,
                    "energy_j": s.idle_adjusted_board_energy_J_per_GEMM,
                    "energy_raw_j": s.raw_board_energy_J_per_GEMM,
                    "metadata": _metadata(stage_raw, GEMM_STAGE_COLUMNS, section, GEMM),
                }
            )
    if doc.ciresan_mnist_int8_inference is not None:
        inf = doc.ciresan_mnist_int8_inference
        section = _rest(raw[INFERENCE], INFERENCE_COLUMNS)
        for stage_name, stage_raw in inf.stages.items():
            where = f"$.{INFERENCE}.stages.{stage_name}"
            s2 = convert(path, stage_raw, InferenceStage, where)
            dims = inf.logical_dimensions
            rows.append(
                {
                    "target": target,
                    "target_kind": "gpu",
                    "source": f"{name}: {where}",
                    "workload": INFERENCE,
                    "implementation": stage_name,
                    "kernel": None,
                    "classify_hint": "int8 inference",
                    "shape": None if dims is None else "x".join(str(d) for d in dims),
                    "per": "epoch",
                    "time_us": s2.seconds_per_epoch * 1e6,
                    "calls": s2.aggregate_repetitions,
                    "mac": inf.logical_MAC_per_epoch,
                    "energy_j": s2.idle_adjusted_board_energy_J_per_epoch,
                    "energy_raw_j": s2.raw_board_energy_J_per_epoch,
                    "metadata": _metadata(stage_raw, INFERENCE_STAGE_COLUMNS, section, INFERENCE),
                }
            )
    # report_date, hardware, measurement (its exclusions included, once) and any other
    # top-level block the report adds
    meta = {k: v for k, v in raw.items() if k not in (GEMM, INFERENCE)}
    return ParsedRuns(KIND, runs_from_rows(rows), metadata=meta)


def _rest(part: dict[str, Any], columns: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in part.items() if k not in columns}


def _metadata(
    stage: dict[str, Any], columns: frozenset[str], section: dict[str, Any], section_name: str
) -> dict[str, Any]:
    """The stage's fields no column holds, then its section's; a section field whose name a
    stage field already uses is kept as ``<section>.<name>``."""
    out = _rest(stage, columns)
    for key, value in section.items():
        out[key if key not in out else f"{section_name}.{key}"] = value
    return out


READER: Reader[ParsedRuns] = Reader(parse)
