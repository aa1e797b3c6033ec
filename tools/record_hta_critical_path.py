"""Record HTA's critical path figures for the committed Kineto traces (issue 36).

Runs Holistic Trace Analysis' ``critical_path_analysis`` (HTA 0.5.0, PyPI package
``HolisticTraceAnalysis``, which needs pandas below 3) on each trace of ``TRACES`` with
``HTA_DISABLE_NS_ROUNDING=1`` (HTA otherwise rounds every event inward to whole µs), one step
at a time (``annotation="ProfilerStep"``, ``instance_id`` 0, 1, ...), and writes its path
length and its share per ``bound_by`` class, with HTA's and pandas' versions and each step's
annotation (HTA shifts times to the trace's first event, so a step is named by its
annotation and category), to ``fixtures/hta/critical_path.json``;
``tests/test_gpu_critical.py`` holds tileprof to them. HTA is not a tileprof dependency: run
this in its own environment::

    python -m venv /tmp/hta-venv
    /tmp/hta-venv/bin/pip install "HolisticTraceAnalysis==0.5.0" "pandas<3"
    HTA_DISABLE_NS_ROUNDING=1 /tmp/hta-venv/bin/python tools/record_hta_critical_path.py
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "hta" / "critical_path.json"
TRACES: dict[str, int] = {
    "fixtures/hta/nccl_2xA100_rank0.json.gz": 2,
    "fixtures/hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz": 1,
    "fixtures/tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz": 1,
    "fixtures/tracelens/h100_Falconsai_nsfw_image_detection__1016002.json.gz": 1,
    "fixtures/tracelens/h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz": 1,
}
"""Each trace and how many ``ProfilerStep`` instances to record."""


def _step(analyzer: Any, rank: int, instance: int) -> dict[str, Any] | None:
    from hta.analyzers.critical_path_analysis import CriticalPathAnalysis

    trace_df = analyzer.t.get_trace(rank)
    names = analyzer.t.symbol_table.get_sym_id_map()
    ids = [v for k, v in names.items() if "ProfilerStep" in k]
    annotations = trace_df[trace_df.name.isin(ids)]
    if instance >= len(annotations):
        return None
    row = annotations.iloc[instance]
    table = analyzer.t.symbol_table.sym_table
    result = CriticalPathAnalysis.critical_path_analysis(analyzer.t, rank, "ProfilerStep", instance)
    if result is None or not result[1]:
        return None
    breakdown = result[0].get_critical_path_breakdown()
    total = float(breakdown.duration.sum())
    shares = breakdown.groupby("bound_by").duration.sum() / total * 100 if total else {}
    return {
        "instance": instance,
        "annotation": table[int(row["name"])],
        "category": table[int(row["cat"])],
        "duration_us": float(row["dur"]),
        "length_us": total,
        "share_percent": {str(k): float(v) for k, v in dict(shares).items()},
    }


def main() -> None:
    from hta.trace_analysis import TraceAnalysis

    if os.environ.get("HTA_DISABLE_NS_ROUNDING") != "1":
        sys.exit("set HTA_DISABLE_NS_ROUNDING=1 (HTA rounds events inward without it)")
    found: dict[str, Any] = {}
    for trace, steps in TRACES.items():
        with tempfile.TemporaryDirectory() as folder:
            shutil.copy(ROOT / trace, folder)
            analyzer = TraceAnalysis(trace_dir=folder)
            rank = next(iter(analyzer.t.traces))
            recorded = [_step(analyzer, rank, i) for i in range(steps)]
            found[trace] = [step for step in recorded if step is not None]
    document = {
        "recorded_by": "tools/record_hta_critical_path.py",
        "HolisticTraceAnalysis": version("HolisticTraceAnalysis"),
        "pandas": version("pandas"),
        "python": sys.version.split()[0],
        "HTA_DISABLE_NS_ROUNDING": "1",
        "traces": found,
    }
    OUT.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
