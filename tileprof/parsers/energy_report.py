"""GPU energy report: NVML board energy of an 8192³ GEMM per precision and of INT8 inference.

Layout (seed ``003``): ``hardware`` (``gpu_name`` …), ``measurement`` and exclusions,
``gemm_8192`` (``shape``, ``MAC``, ``stages`` per precision with ``seconds_per_GEMM`` and raw
and idle-adjusted joules per GEMM) and ``ciresan_mnist_int8_inference`` (``stages`` per batching
with ``seconds_per_epoch`` and joules per epoch). Figures are kept as stated; time is converted
to µs only. Each stage's other fields, and the hardware, measurement and exclusion blocks, go
to the row's ``metadata``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from tileprof.runs import ParsedRuns, runs_from_rows

KIND = "energy report"


class Hardware(msgspec.Struct):
    gpu_name: str


class GemmStage(msgspec.Struct):
    seconds_per_GEMM: float
    raw_board_energy_J_per_GEMM: float | None = None
    idle_adjusted_board_energy_J_per_GEMM: float | None = None
    aggregate_repetitions: int | None = None
    semantics: str | None = None


class Gemm(msgspec.Struct):
    shape: list[int]
    MAC: int
    stages: dict[str, dict[str, Any]]


class InferenceStage(msgspec.Struct):
    seconds_per_epoch: float
    raw_board_energy_J_per_epoch: float | None = None
    idle_adjusted_board_energy_J_per_epoch: float | None = None
    aggregate_repetitions: int | None = None
    calls_per_epoch: int | None = None


class Inference(msgspec.Struct):
    stages: dict[str, dict[str, Any]]
    logical_MAC_per_epoch: int | None = None
    logical_dimensions: list[int] | None = None


class EnergyDoc(msgspec.Struct):
    hardware: Hardware
    measurement: dict[str, Any] = msgspec.field(default_factory=dict)
    gemm_8192: Gemm | None = None
    ciresan_mnist_int8_inference: Inference | None = None
    report_date: str | None = None


def is_energy_doc(keys: set[str]) -> bool:
    """Whether a JSON object with these top-level keys has this layout."""
    return "hardware" in keys and bool(keys & {"gemm_8192", "ciresan_mnist_int8_inference"})


def parse(path: str | Path, data: bytes) -> ParsedRuns:
    """The runs of an energy report."""
    from tileprof.parsers._decode import convert, decode_json

    doc = decode_json(path, data, EnergyDoc)
    raw: dict[str, Any] = msgspec.json.decode(data)
    name = Path(path).name
    target = doc.hardware.gpu_name
    rows: list[dict[str, Any]] = []
    if doc.gemm_8192 is not None:
        g = doc.gemm_8192
        for stage_name, stage_raw in g.stages.items():
            where = f"$.gemm_8192.stages.{stage_name}"
            s = convert(path, stage_raw, GemmStage, where)
            rows.append(
                {
                    "target": target,
                    "target_kind": "gpu",
                    "source": f"{name}: {where}",
                    "workload": "gemm_8192",
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
                    "metadata": _rest(stage_raw, GemmStage),
                }
            )
    if doc.ciresan_mnist_int8_inference is not None:
        inf = doc.ciresan_mnist_int8_inference
        for stage_name, stage_raw in inf.stages.items():
            where = f"$.ciresan_mnist_int8_inference.stages.{stage_name}"
            s2 = convert(path, stage_raw, InferenceStage, where)
            dims = inf.logical_dimensions
            rows.append(
                {
                    "target": target,
                    "target_kind": "gpu",
                    "source": f"{name}: {where}",
                    "workload": "ciresan_mnist_int8_inference",
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
                    "metadata": _rest(stage_raw, InferenceStage),
                }
            )
    inference_raw = raw.get("ciresan_mnist_int8_inference") or {}
    meta = {
        "report_date": doc.report_date,
        "hardware": raw.get("hardware"),
        "measurement": raw.get("measurement"),
        "excluded": (raw.get("measurement") or {}).get("excluded"),
        "excluded_additionally": inference_raw.get("excluded_additionally"),
    }
    return ParsedRuns(KIND, runs_from_rows(rows), metadata=meta)


def _rest(stage: dict[str, Any], struct: type[msgspec.Struct]) -> dict[str, Any]:
    used = set(struct.__struct_fields__) - {"aggregate_repetitions", "semantics"}
    return {k: v for k, v in stage.items() if k not in used}
