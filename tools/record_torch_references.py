"""Record the torch references that tests hold tileprof's FLOP counts to, without torch.

    python tools/record_torch_references.py      # needs `pip install -e '.[torch]'`

Runs tests/torch_model.py's model under torch's FlopCounterMode and under torch.profiler and
writes, into fixtures/torch/:
- ``model_trace.json.gz``: the profiler's trace of the same step;
- ``flop_counts.json``: FlopCounterMode's per-op counts, with the torch version and platform;
- ``cpu_trace.json.gz``: a CPU-only trace (softmax of a matmul), for the Kineto reader.
tests/test_ops.py and tests/test_kineto.py read these always, and rerun the recording live
whenever torch is installed. Gzip is written with mtime 0, so a rerun on the same torch gives
the same bytes for the counts (the traces carry timestamps and differ run to run).
"""

from __future__ import annotations

import gzip
import json
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "torch"


def _gzip_copy(source: Path, target: Path) -> None:
    with target.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        out.write(source.read_bytes())


def main() -> None:
    import torch

    sys.path.insert(0, str(ROOT))
    from tests.torch_model import record_cpu_softmax, record_model

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        trace, counts = record_model(Path(scratch), torch)
        _gzip_copy(trace, OUT / "model_trace.json.gz")
        _gzip_copy(record_cpu_softmax(Path(scratch), torch), OUT / "cpu_trace.json.gz")
    document = {
        "recorded_by": "tools/record_torch_references.py",
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "flop_counts": dict(sorted(counts.items())),
    }
    (OUT / "flop_counts.json").write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {OUT} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
