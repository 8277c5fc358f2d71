"""The hostile class's CSV exports in LibreOffice Calc headless: no formula evaluates.

gradebook.csv and canvas.csv from tests/hostile_class.py (formulas in file names, import messages,
diagnoses, Gradescope names, emails and ids, an override's reason) are converted to .ods by
`soffice --headless --convert-to ods` with its default CSV import (which evaluates formulas); no cell of
the result holds a formula. A control CSV with the raw formulas proves the import does evaluate them.
Without LibreOffice (`apt-get install libreoffice-calc`) the test skips.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from hostile_class import FORMULAS, build

pytestmark = pytest.mark.slow
SOFFICE = shutil.which("soffice")


def formulas(table: Path, work: Path) -> list[str]:
    """The formulas of every cell once LibreOffice has imported `table` (a CSV file)."""
    done = subprocess.run([SOFFICE, f"-env:UserInstallation={(work / 'profile').as_uri()}", "--headless",
                           "--convert-to", "ods", "--outdir", str(work), str(table)],
                          capture_output=True, text=True, timeout=300)
    converted = work / f"{table.stem}.ods"
    assert converted.is_file(), done.stdout + done.stderr
    with zipfile.ZipFile(converted) as ods:
        content = ods.read("content.xml").decode()
    return re.findall(r'table:formula="([^"]*)"', content)


@pytest.fixture(scope="module")
def soffice():
    if SOFFICE is None:
        pytest.skip("no soffice (apt-get install libreoffice-calc)")
    pytest.importorskip("copydetect")
    pytest.importorskip("nbconvert")


def test_the_import_evaluates_raw_formulas(soffice, tmp_path):
    control = tmp_path / "control.csv"
    with open(control, "w", newline="") as f:
        csv.writer(f).writerows([["cell"], *([x] for x in FORMULAS)])
    found = formulas(control, tmp_path)  # LibreOffice reads "+1+1", "-1+1" and "@SUM" as text; Excel would not
    assert "of:=1+1" in found and any("HYPERLINK" in f for f in found), found


def test_no_formula_evaluates_in_any_export(soffice, tmp_path, monkeypatch):
    built = build(tmp_path / "class", "127.0.0.1:9", monkeypatch)
    for table in built["csv"]:
        assert "HYPERLINK" in table.read_text()
        found = formulas(table, tmp_path)
        print(f"{table.name}: {len(table.read_text().splitlines())} lines, formulas {found}")
        assert not found, (table.name, found)
