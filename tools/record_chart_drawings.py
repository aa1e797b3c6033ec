"""Record the report's charts as drawn today (``tests.drawings.chart_drawings``) to
``fixtures/report/chart_drawings.json``, which ``tests/test_chart_drawings.py`` holds every
drawing to. Run it after a deliberate change to a chart and review the JSON's diff: each
changed field is a colour, style, label, limit or mark the page now shows differently::

    python tools/record_chart_drawings.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "report" / "chart_drawings.json"


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from tests.drawings import chart_drawings

    text = json.dumps(chart_drawings(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
