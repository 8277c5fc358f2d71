"""The bundle sizes quoted in README.md and docs/*.md come from the build: a fresh `release` must match
every "`NAME.zip` N KiB (M files" within 5 % and the file count exactly (one build: about a second)."""

from __future__ import annotations

import re
import zipfile

from autograder.bundling.pipeline import build_release
from autograder.lab.paths import ROOT

QUOTED = re.compile(r"`([\w.-]+\.zip)` ([\d,]+) KiB \((\d+) files")
TOLERANCE = 0.05


def quotes() -> list[tuple[str, str, int, int]]:
    """(document, zip name, KiB, files) for every size quoted in the docs (a line break may split one)."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = " ".join(doc.read_text().split())
        found += [(doc.name, name, int(kib.replace(",", "")), int(files)) for name, kib, files in QUOTED.findall(text)]
    return found


def test_quoted_sizes_are_the_builds(tmp_path):
    quoted = quotes()
    assert {name for _, name, _, _ in quoted} >= {"student.zip", "autograder.zip", "nbgrader.zip"}
    built = {p.name: p for p in build_release(tmp_path / "out").values() if p.suffix == ".zip"}
    wrong = []
    for doc, name, kib, files in quoted:
        with zipfile.ZipFile(built[name]) as z:
            count = sum(not i.is_dir() for i in z.infolist())
        size = built[name].stat().st_size / 1024
        if abs(kib - size) > TOLERANCE * size or files != count:
            wrong.append(f"{doc}: `{name}` {kib:,} KiB ({files} files) but the build makes {size:,.0f} KiB "
                         f"({count} files)")
    assert not wrong, "\n".join(wrong)
