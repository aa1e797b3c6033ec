"""GPU latency benchmarks: hand-written training kernel against torch.compile Inductor.

Layout (seed ``000``): ``units``; ``held_out`` rows with ``gpu``, ``workload``, ``shape``
``[batch, in, hidden, out]``, ``trainkernel_us``, ``inductor_us`` and ``ratio``;
``h100_calibration`` rows with ``workload``, ``schedule`` and ``latency_us``; ``sources``
(links). Each ``held_out`` row becomes two runs (trainkernel, inductor), each calibration row
one; every run is one complete training step, which is what the classifier is told.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec

from tileprof.core.run_schema import ParsedRuns, runs_from_rows
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import LATENCY

KIND = LATENCY
STEP = "train step (forward+loss+backward+SGD)"


# Times are divided by (speedup = baseline / time): they must be above zero. A ratio or a shape
# dimension is never negative.
Positive = Annotated[float, msgspec.Meta(gt=0)]
NonNegative = Annotated[float, msgspec.Meta(ge=0)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


class HeldOut(msgspec.Struct):
    gpu: str
    workload: str
    shape: list[NonNegativeInt]
    trainkernel_us: Positive
    inductor_us: Positive
    ratio: NonNegative | None = None


class Calibration(msgspec.Struct):
    workload: str
    schedule: str
    latency_us: Positive


class LatencyDoc(msgspec.Struct):
    held_out: list[HeldOut]
    units: str | None = None
    h100_calibration: list[Calibration] = msgspec.field(default_factory=list)
    sources: dict[str, str] = msgspec.field(default_factory=dict)


def parse(path: str | Path, data: bytes) -> ParsedRuns:
    """The runs of a latency benchmark document."""
    from tileprof.inputs._decode import decode_json

    doc = decode_json(path, data, LatencyDoc)
    name = Path(path).name
    rows: list[dict[str, object]] = []
    for i, r in enumerate(doc.held_out):
        shape = "x".join(str(d) for d in r.shape)
        common = {
            "target": r.gpu,
            "target_kind": "gpu",
            "workload": r.workload,
            "kernel": STEP,
            "shape": shape,
            "per": "step",
            "metadata": {"shape_dims": "batch,in,hidden,out", "ratio": r.ratio},
        }
        source = f"{name}: $.held_out[{i}]"
        rows.append(
            common
            | {
                "source": source,
                "implementation": "trainkernel",
                "time_us": r.trainkernel_us,
                "baseline_implementation": "inductor",
                "baseline_time_us": r.inductor_us,
            }
        )
        rows.append(
            common | {"source": source, "implementation": "inductor", "time_us": r.inductor_us}
        )
    calib_target = _calibration_target(doc)
    # The first schedule listed per workload is the one the others are measured against
    # ("selected WMMA" in the seed).
    first: dict[str, Calibration] = {}
    for c in doc.h100_calibration:
        first.setdefault(c.workload, c)
    for i, c in enumerate(doc.h100_calibration):
        base = first[c.workload]
        rows.append(
            {
                "target": calib_target,
                "target_kind": "gpu",
                "source": f"{name}: $.h100_calibration[{i}]",
                "workload": c.workload,
                "implementation": c.schedule,
                "kernel": STEP,
                "per": "step",
                "time_us": c.latency_us,
                "baseline_implementation": None if base is c else base.schedule,
                "baseline_time_us": None if base is c else base.latency_us,
            }
        )
    meta: dict[str, object] = {"units": doc.units, "sources": doc.sources}
    return ParsedRuns(KIND, runs_from_rows(rows), metadata=meta)


def _calibration_target(doc: LatencyDoc) -> str:
    """The calibration section names no GPU beyond ``h100``: use the one H100 of
    ``held_out`` when there is exactly one, else ``H100``."""
    h100 = sorted({r.gpu for r in doc.held_out if "h100" in r.gpu.lower()})
    return h100[0] if len(h100) == 1 else "H100"


READER: Reader[ParsedRuns] = Reader(parse)
