"""class_report.html in headless Chromium (the Debian package): the roster sorts and filters, every image
loads, nothing overflows sideways, nothing is fetched. A screenshot is kept in the test's tmp folder.

A probe script added to a copy of the page (after `load`) clicks the "total" header twice (descending),
types into the search box, measures, and writes what it found into the page; `--dump-dom` prints it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from autograder.batch.class_report import write_class_report
from autograder.batch.jobs import failed

pytestmark = pytest.mark.slow
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]
PARTS = ["rm_loss", "gae", "ppo_clip", "kl"]
PROBE = """<script>
window.addEventListener("load", () => {
  const head = [...document.querySelectorAll("#roster th")].find(th => th.textContent.trim() === "total");
  head.click(); head.click();
  const first = () => document.querySelector("#roster tbody tr:not([hidden]) td").textContent.trim();
  const top = first();
  const search = document.getElementById("search");
  search.value = "not importable";
  search.dispatchEvent(new Event("input"));
  const shown = [...document.querySelectorAll("#roster tbody tr")].filter(r => !r.hidden).length;
  const root = document.documentElement;
  const wide = [...document.querySelectorAll("body *")]
    .filter(e => e.getBoundingClientRect().right > root.clientWidth + 1).map(e => e.tagName);
  const images = [...document.images].map(i => i.complete && i.naturalWidth > 0);
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({top, shown, wide, images, sort: head.getAttribute("aria-sort"),
                                      counter: document.getElementById("shown").textContent});
  document.body.appendChild(probe);
});
</script>"""


def records() -> list[dict]:
    found = []
    for i in range(30):
        gae = 18.0 if i % 3 else 0.0
        tests = [{"id": "gae.known_values", "part": "gae", "passed": gae > 0, "score": min(gae, 4), "max_score": 4,
                  "seconds": 1.0, "diagnosis": "" if gae else "forward recursion: run the loop from the last step",
                  "message": ""},
                 {"id": "e2e.kl_penalty", "part": "e2e", "passed": i % 2 == 0, "score": 5.0 * (i % 2 == 0),
                  "max_score": 5, "seconds": 30.0, "diagnosis": "", "message": "",
                  "metrics": {"gold_gain": 0.02 * i, "malformed": 0.01 * (i % 7)}}]
        found.append({"student": f"student{i:02d}@uni.edu", "name": f"Student {i}", "key": "k", "status": "graded",
                      "reason": "", "score": gae + 5.0 * (i % 2 == 0) + i, "max_score": 100.0,
                      "parts": {"gae": {"score": gae, "max": 20.0}, "kl": {"score": float(i % 10), "max": 20.0}},
                      "e2e": {"score": 5.0 * (i % 2 == 0), "max": 20.0}, "tests": tests, "seconds": 40.0 + i,
                      "reports": ["report.html", "staff.md"]})
    found.append({**failed({"student": "broken", "key": "k"}, "x"), "status": "not_importable", "score": 0.0,
                  "max_score": 100.0, "reason": "rlhf.py could not be imported: raised SyntaxError: invalid "
                  "syntax (rlhf.py, line 12) " + "and a long line " * 20})
    found.append({**failed({"student": "crashed", "key": "k"}, "the grading process was killed by signal 9")})
    return found


def test_class_report_in_a_browser(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium")
    page = tmp_path / "class_report.html"
    best = max((r for r in records() if r["score"] is not None), key=lambda r: r["score"])["student"]
    write_class_report(page, records(), PARTS, "Lab 12", {"kl_penalty": {"min_gold_gain": 0.34, "max_malformed": 0.1}})
    html = page.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing from the network
    probed = tmp_path / "probed.html"
    probed.write_text(html.replace("</body>", PROBE + "</body>"))
    dom = subprocess.run([str(CHROMIUM), *FLAGS, "--window-size=1280,900", "--virtual-time-budget=5000",
                          "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120).stdout
    found = json.loads(re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
    assert found["sort"] == "descending" and found["top"].startswith(best), found  # the highest total first
    assert found["shown"] == 1 and found["counter"] == "1 of 32 students", found
    assert found["wide"] == [], found
    assert found["images"] and all(found["images"]), found
    shot = tmp_path / "class_report.png"
    subprocess.run([str(CHROMIUM), *FLAGS, "--window-size=1280,2400", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
