"""The HTML reports as people read them: headless Chromium (the Debian package, /usr/bin/chromium).

For each report, at a desktop and a phone width, a small script added to a copy of the page (after
`load`, so every image has loaded or failed) opens every <details>, then writes into the page what it
measured; `--dump-dom` prints it. A screenshot of each is kept in the test's tmp folder (the path is
printed) for a person to look at. Nothing is installed here: without Chromium the tests skip.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.judge.outcome import Finding, GradeResult
from autograder.judge.outcome import TestResult as Result  # not collected by pytest
from autograder.judge.report import write_reports
from lab12.plots import LABELS, e2e_plots

pytestmark = pytest.mark.slow
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]
WIDTHS = {"desktop": 1280, "narrow": 420}  # headless Chromium makes the narrow one ~485 px
PROBE = """<script>
window.addEventListener("load", () => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  const root = document.documentElement;
  const wide = [...document.querySelectorAll("body *")]
    .filter(e => e.getBoundingClientRect().right > root.clientWidth + 1)
    .map(e => e.tagName + ": " + e.textContent.slice(0, 60));
  const images = [...document.images].map(i => ({alt: i.alt, loaded: i.complete && i.naturalWidth > 0,
                                                 width: i.getBoundingClientRect().width}));
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, wide, images});
  document.body.appendChild(probe);
});
</script>"""


@pytest.fixture(scope="module")
def chromium() -> Path:
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium (CI installs the Debian package `chromium`)")
    return CHROMIUM


def browse(chromium: Path, page: Path, width: int, work: Path) -> dict:
    """Load `page` at `width` px: what the probe measured; a screenshot is saved next to the copy."""
    probed = work / f"{page.stem}-{width}.html"
    unguarded = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text())  # the probe runs
    probed.write_text(unguarded.replace("</body>", PROBE + "</body>"))
    base = [str(chromium), *FLAGS, f"--user-data-dir={work / 'profile'}", f"--window-size={width},2400",
            "--virtual-time-budget=5000"]
    dom = subprocess.run([*base, "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)
    assert found, f"chromium printed no probe: {dom.stderr[-2000:]}"
    shot = work / f"{page.stem}-{width}.png"
    subprocess.run([*base, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120)
    print(f"screenshot: {shot}")
    return json.loads(found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))


def history(slope: float, n: int = 70) -> list[dict]:
    rng = random.Random(slope)
    return [{"rm_score": slope * i / 30 + rng.gauss(0, 0.05), "gold": 0.3 - slope * i / 100, "kl": i / 20,
             "malformed": min(1.0, slope * i / 60), "accuracy": 0.7 - slope * i / 200} for i in range(n)]


def student_result() -> GradeResult:
    """A grade with every kind of block: a failure with a long unbroken input and a hint, a failed e2e
    test with plots, passed unit and e2e tests (plots collapsed), printed output."""
    long_input = "rewards=tensor([" + ", ".join(f"{x / 7:.4f}" for x in range(120)) + "])"
    tests = [
        Result("gae.known_values", "GAE on a hand-computed example", ["gae"], 4, 0, "visible", "visible",
                   Finding("advantages differ from the expected values at t = 0 (the last generated token is "
                           "treated as if it had a successor: " + "x" * 150 + ")", inputs=long_input,
                           expected="tensor([0.9000, 0.8100])", got="tensor([1.9000, 0.8100])",
                           hint="the bootstrap value V(s_T) is used after the last generated token; mask it")),
        Result("gae.matches_reference", "GAE equals the reference on generated batches", ["gae"], 5, 5,
                   "visible", "after_due_date"),
        Result("e2e.ptx", "PPO-ptx keeps more arithmetic accuracy", ["e2e", "gae", "ppo_clip", "kl"], 5, 0,
                   "visible", "after_due_date",
                   Finding("PPO-ptx should keep more arithmetic accuracy than the same run without ptx",
                           details="accuracy with ptx 0.512, without 0.530 (gain -0.018, needs >= 0.05)",
                           plots=e2e_plots("ptx", {"ptx": history(1.0), "no ptx": history(0.8)}, ("accuracy",)))),
        Result("e2e.blind_spot", "PPO without a KL penalty exploits the blind spot", ["e2e", "gae"], 5, 5,
                   "visible", "after_due_date",
                   Finding(details="SFT -> after PPO without KL penalty: rm_score 0.1 -> 2.0",
                           plots=e2e_plots("blind_spot", {"run": history(2.0)}, ("rm_score", "gold", "malformed")))),
    ]
    return GradeResult("rlhf.py", tests, partial=False, execution_time=12.0,
                       output="step " + "=" * 300 + "\n", isolation="bubblewrap (secret detail)")


def test_student_report_with_a_failure_fits_the_window_and_shows_every_plot(chromium, tmp_path):
    result = student_result()
    write_reports(result, tmp_path / "report")
    page = tmp_path / "report" / "report.html"
    html = page.read_text()
    assert "secret detail" not in html and "Sandbox" not in html, "sandbox internals are for staff"
    assert html.index("FAIL gae.known_values") < html.index("PASS</span> gae.matches_reference"), "failures first"
    assert html.count("<details") == 2, "every passed test is collapsed"
    plots = sum(len(t.plots) for t in result.tests)
    for name, width in WIDTHS.items():
        seen = browse(chromium, page, width, tmp_path)
        assert seen["scrollWidth"] <= seen["clientWidth"], f"{name}: horizontal overflow by {seen['wide'][:5]}"
        assert len(seen["images"]) == plots and all(i["loaded"] for i in seen["images"]), seen["images"]
        assert all(0 < i["width"] <= seen["clientWidth"] for i in seen["images"]), (name, seen)


def test_every_e2e_plot_shows_the_metric_its_test_judges():
    """Each registered e2e test plots the per-iteration metrics its criteria judge (ptx: accuracy)."""
    import lab12.e2e_tests  # noqa: F401 - registers the lab's e2e tests
    from autograder.judge.e2e import REGISTRY
    judged = {"kl_penalty": {"gold", "malformed"}, "blind_spot": {"rm_score", "gold", "malformed"}, "ptx": {"accuracy"}}
    for name, metrics in judged.items():
        assert set(REGISTRY[name].plotted) == metrics, name
        (title, png), = e2e_plots(name, {"run": history(1.0)}, REGISTRY[name].plotted)
        assert png.startswith(b"<svg") and all(LABELS[m] in title for m in metrics), title


@pytest.mark.skipif(not (Path(__file__).parents[1] / "autograder" / "templates" / "class_report.html.j2").exists(),
                    reason="no class report template")
def test_class_report_fits_the_window_and_every_image_loads(chromium, tmp_path):
    """A real grade-all of three submissions (the reference, the starter, one that cannot be imported)."""
    import sys

    from autograder.lab.paths import REFERENCE, STARTER
    subs = tmp_path / "subs"
    for student, source in (("alice", REFERENCE.read_text()), ("bob", STARTER.read_text()),
                            ("carol", "def compute_gae(:\n")):
        (subs / student).mkdir(parents=True)
        (subs / student / "rlhf.py").write_text(source)
    done = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(subs), "--out", str(tmp_path / "out"),
                           "--only", "gae", "--workers", "2"], capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-3000:]
    page = tmp_path / "out" / "class_report.html"
    assert page.is_file(), done.stdout[-2000:]
    shutil.copy(page, tmp_path / "class_report.html")
    for name, width in WIDTHS.items():
        seen = browse(chromium, tmp_path / "out" / "class_report.html", width, tmp_path)
        assert seen["scrollWidth"] <= seen["clientWidth"], f"{name}: horizontal overflow by {seen['wide'][:5]}"
        assert seen["images"] and all(i["loaded"] for i in seen["images"]), seen["images"]
