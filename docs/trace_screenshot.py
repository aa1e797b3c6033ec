"""Make docs/trace-speedscope.png: a Chrome-JSON trace from ``tileprof trace`` in an offline viewer.

ui.perfetto.dev cannot be reached from the build machines and its static build is not on npm,
so the screenshot loads the Chrome trace event JSON into speedscope (npm package
``speedscope``, a static page that reads that format) in headless Chromium, served from
localhost. Run from the repository root, with the npm package unpacked:

    npm pack speedscope@1.25.0 && tar xzf speedscope-1.25.0.tgz   # gives package/dist/release
    python docs/trace_screenshot.py package/dist/release docs/trace-speedscope.png
"""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cdp import Browser, find_browser  # noqa: E402


def main() -> None:
    release, output = Path(sys.argv[1]), Path(sys.argv[2])
    browser_path = find_browser()
    if browser_path is None:
        raise SystemExit("no Chromium-family browser on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        shutil.copytree(release, site)
        trace = site / "tile-trace.json"
        command = [sys.executable, "-m", "tileprof", "trace", "--example"]
        command += ["--tile-range", "0:4", "--window", "0:60000", "-o", str(trace)]
        subprocess.run(command, check=True)
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        browser = Browser(browser_path, Path(tmp) / "profile", width=1400, height=420)
        try:
            url = f"http://127.0.0.1:{port}/index.html#profileURL=/tile-trace.json"
            browser.open(url)
            time.sleep(4)
            browser.screenshot(output)
        finally:
            browser.close()
            server.shutdown()


if __name__ == "__main__":
    main()
