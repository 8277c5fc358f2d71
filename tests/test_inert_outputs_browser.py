"""The hostile class's pages in headless Chromium (the Debian package): no script runs and no request leaves.

Every page grade-all writes from tests/hostile_class.py (the class report, each similarity page, each
student's report.html, the nbgrader feedback page) is loaded from disk with a local HTTP server on the
address every payload targets (127.0.0.1, a free port): a payload's script would mark the page's root
element (`--dump-dom` shows it), and a payload's image, style sheet, import or refresh would reach the
server. A control page holding the raw payloads proves both detectors fire. Without Chromium the test skips.
"""

from __future__ import annotations

import http.server
import re
import subprocess
import threading
from pathlib import Path

import pytest
from hostile_class import RAN, build, markup, payload

pytestmark = pytest.mark.slow
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]


class Listener(http.server.BaseHTTPRequestHandler):
    heard: list[str] = []

    def do_GET(self):  # noqa: N802 - the http.server API
        Listener.heard.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium (CI installs the Debian package `chromium`)")
    pytest.importorskip("copydetect")
    pytest.importorskip("nbconvert")
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Listener)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def load(page: Path, work: Path) -> tuple[bool, list[str]]:
    """(a payload's script ran, the requests that reached the listener) when Chromium loads `page`."""
    Listener.heard.clear()
    dom = subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={work / 'profile'}", "--virtual-time-budget=5000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert "<html" in dom.stdout, dom.stderr[-2000:]
    return bool(re.search(rf"<html[^>]*{RAN}", dom.stdout)), list(Listener.heard)


def test_the_detectors_fire_on_raw_payloads(server, tmp_path):
    control = tmp_path / "control.html"
    staying = " ".join(p for p in markup(server) if "refresh" not in p)  # a refresh would leave the page
    control.write_text(f"<!doctype html><html><body>{staying}</body></html>")
    ran, heard = load(control, tmp_path)
    assert ran and {"/img", "/css", "/import"} <= set(heard), (ran, heard)
    control.write_text(f"<!doctype html><html><body>{payload(server)}</body></html>")
    assert "/r" in load(control, tmp_path)[1]


def test_no_page_runs_a_script_or_sends_a_request(server, tmp_path, monkeypatch):
    built = build(tmp_path / "class", server, monkeypatch)
    names = [p.name for p in built["pages"]]
    assert "class_report.html" in names and "report.html" in names and any(n.startswith("feedback") for n in names)
    assert sum(p.parent.name == "_similarity" for p in built["pages"]) == 3, names
    found = {str(page.relative_to(tmp_path)): load(page, tmp_path) for page in built["pages"]}
    print("\n".join(f"{name}: script ran {ran}, requests {heard}" for name, (ran, heard) in found.items()))
    assert not any(ran or heard for ran, heard in found.values()), found
