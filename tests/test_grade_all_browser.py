"""class_report.html in headless Chromium (the Debian package): the roster sorts and filters, every image
loads and is shown at its own size or larger (no picture of text shrunk), the pass-rate chart's text
is the page's (>= 12 px) and each bar's width is its rate, nothing overflows sideways (1280 and ~485 px),
nothing is fetched. A screenshot is kept in the test's tmp folder.

A probe script added to a copy of the page (after `load`) clicks the "total" header twice (descending),
types into the search box, measures, and writes what it found into the page; `--dump-dom` prints it.
"""

from __future__ import annotations

import base64
import hashlib
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
  const wide = [...document.querySelectorAll("body *")]  // a wide table scrolls inside its .scroll box
    .filter(e => !e.closest(".scroll") && e.getBoundingClientRect().right > root.clientWidth + 1).map(e => e.tagName);
  const images = [...document.images].map(i => i.complete && i.naturalWidth > 0);
  const shrunk = [...document.images].filter(i => i.getBoundingClientRect().width < i.naturalWidth - 1)
    .map(i => i.alt);
  const rateCells = [...document.querySelectorAll("table.rates td")];
  const rateFont = Math.min(...rateCells.map(c => parseFloat(getComputedStyle(c).fontSize)));
  const bars = [...document.querySelectorAll("table.rates tr")].slice(1).map(tr => {
    const bar = tr.querySelector(".rate"), cell = bar.parentElement, style = getComputedStyle(cell);
    const inner = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return [tr.cells[0].textContent.trim(), bar.getBoundingClientRect().width / inner];
  });
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({top, shown, wide, images, shrunk, rateFont, bars,
                                      overflow: root.scrollWidth - root.clientWidth,
                                      sort: head.getAttribute("aria-sort"),
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
                  "metrics": {"gold_gain": 0.02 * i, "malformed": 0.01 * (i % 7)},
                  "bounds": {"gold_gain": [">=", 0.34], "malformed": ["<=", 0.1]}},
                 {"id": "e2e.reward_model", "part": "e2e", "passed": True, "score": 5.0, "max_score": 5,
                  "seconds": 1.0, "diagnosis": "", "message": "", "metrics": {"accuracy": 0.921},  # replayed: all equal
                  "bounds": {"accuracy": [">=", 0.8]}}]
        found.append({"student": f"student{i:02d}@uni.edu", "name": f"Student {i}", "key": "k", "status": "graded",
                      "reason": "", "score": gae + 5.0 * (i % 2 == 0) + i, "max_score": 100.0,
                      "parts": {"gae": {"score": gae, "max": 20.0}, "kl": {"score": float(i % 10), "max": 20.0}},
                      "e2e": {"score": 5.0 * (i % 2 == 0), "max": 20.0}, "tests": tests, "seconds": 40.0 + i,
                      "reports": ["report.html", "staff.md"]})
    found.append({**failed({"student": "broken", "key": "k"}, "x"), "status": "not_importable", "score": 0.0,
                  "max_score": 100.0, "reason": "rlhf.py could not be imported: raised SyntaxError: invalid "
                  "syntax (rlhf.py, line 12) " + "and a long line " * 20})
    found.append({**failed({"student": "crashed", "key": "k"}, "the grading process was killed by signal 9")})
    found[3]["overrides"] = [{"target": "gae", "points": 20.0, "was": 18.0, "reason": "regraded by hand",
                              "applied": True}]
    found.append({"student": "zoe@uni.edu", "name": "Zoe Absent", "status": "absent", "key": None, "score": 0.0,
                  "max_score": 100.0, "parts": {}, "e2e": None, "tests": [], "seconds": 0.0, "roster": "enrolled",
                  "reason": "on the roster, but no submission", "reports": []})
    return found


def test_class_report_in_a_browser(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium")
    page = tmp_path / "class_report.html"
    best = max((r for r in records() if r["score"] is not None), key=lambda r: r["score"])["student"]
    summary = write_class_report(page, records(), PARTS, "Lab 12", enrolled=31)
    html = page.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing from the network
    probed = tmp_path / "probed.html"
    probe = PROBE.removeprefix("<script>").removesuffix("</script>")
    allowed = "sha256-" + base64.b64encode(hashlib.sha256(probe.encode()).digest()).decode()
    # the page keeps its Content-Security-Policy (its own script runs by hash: sorting and search work under
    # it); the probe is allowed by its own hash
    probed.write_text(html.replace("script-src '", f"script-src '{allowed}' '").replace("</body>", PROBE + "</body>"))
    for width in (1280, 420):  # headless Chromium makes the narrow one ~485 px
        dom = subprocess.run([str(CHROMIUM), *FLAGS, f"--window-size={width},900", "--virtual-time-budget=5000",
                              "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120).stdout
        found = json.loads(re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
        assert found["sort"] == "descending" and found["top"].startswith(best), found  # the highest total first
        assert found["shown"] == 1 and found["counter"] == "1 of 33 students", found
        assert found["wide"] == [] and found["overflow"] <= 0, (width, found["wide"], found["overflow"])
        assert found["images"] and all(found["images"]), found
        assert found["rateFont"] >= 12, found["rateFont"]  # the chart's labels are the page's text
        rates = {t["id"]: t["rate"] for t in summary["tests"]}
        assert {test for test, _ in found["bars"]} == set(rates)
        assert all(abs(share - rates[test]) < 0.02 for test, share in found["bars"]), found["bars"]
        if width == 1280:
            assert found["shrunk"] == [], found["shrunk"]  # no picture shown below its own size
    shot = tmp_path / "class_report.png"
    subprocess.run([str(CHROMIUM), *FLAGS, "--window-size=1280,2400", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.stat().st_size > 10_000
    measured = {(m["test"], m["metric"]): m for m in summary["measurements"]}
    assert measured[("e2e.reward_model", "accuracy")]["threshold"] == 0.8  # the test's own criterion
    assert "Roster: 31 enrolled, 1 of them with no submission" in html and "1 manual override applied." in html
    print(f"screenshot: {shot}")
