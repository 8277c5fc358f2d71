"""Copies of the grader's secrets are found by content wherever the child could read them, and hidden there."""

from __future__ import annotations

import dataclasses
import hashlib
import py_compile
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

import pytest

from autograder.lab import config
from autograder.lab.paths import GRADING_YAML, REFERENCE, ROOT
from autograder.sandbox import isolation, preflight, readable, secret_files

BANK = ROOT / "grading" / "bank"
HIDDEN_GAE = ROOT / "grading" / "checks" / "hidden" / "gae.py"


@pytest.fixture
def root(tmp_path):
    """A folder standing for a read root (the child's packages), searched afresh."""
    secret_files._searched.clear()
    yield tmp_path / "root"
    secret_files._searched.clear()


def found(root: Path) -> dict[str, Path]:
    return {str(c.path.relative_to(root)): c.original for c in secret_files.copies([root])}


def test_copies_are_found_by_content_whatever_their_name(root):
    (root / "share" / "lab").mkdir(parents=True)
    shutil.copy(REFERENCE, root / "share" / "lab" / "notes.txt")              # renamed
    shutil.copy(GRADING_YAML, root / "grading.yaml.bak")
    edited = REFERENCE.read_bytes().replace(b"def compute_gae", b"def compute_gae_")
    (root / "share" / "edited.py").write_bytes(edited)                       # not a copy: edited
    (root / "share" / "tiny.py").write_bytes(b"\n")                          # too small to matter
    assert found(root) == {"share/lab/notes.txt": REFERENCE, "grading.yaml.bak": GRADING_YAML}


def test_compiled_copies_are_found_by_their_code(root):
    site = root / "lib" / "site-packages"
    py_compile.compile(str(HIDDEN_GAE), cfile=str(site / "other" / "__pycache__" / "x.cpython-311.pyc"), doraise=True)
    py_compile.compile(str(REFERENCE), cfile=str(site / "helpers.pyc"), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    size = (site / "helpers.pyc").stat().st_size   # a .pyc of the same size that does not load: no copy, no crash
    (site / "junk.pyc").write_bytes((site / "helpers.pyc").read_bytes()[:16] + b"\xff" * (size - 16))
    assert found(root) == {"lib/site-packages/other/__pycache__/x.cpython-311.pyc": HIDDEN_GAE,
                           "lib/site-packages/helpers.pyc": REFERENCE}


def test_a_compiled_copy_is_found_when_a_secret_has_its_size(root):
    """A .pyc of the reference whose size equals a secret file's (the reference's own cached .pyc beside it) is
    still compared by its code, not only byte for byte."""
    site = root / "lib" / "site-packages"
    py_compile.compile(str(REFERENCE), cfile=str(site / "helpers.pyc"), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    cached = REFERENCE.parent / "__pycache__" / "test-size-twin.cpython-311.pyc"  # a secret now, of the same size
    py_compile.compile(str(REFERENCE), cfile=str(cached), doraise=True)
    try:
        secret_files._searched.clear()
        assert found(root) == {"lib/site-packages/helpers.pyc": REFERENCE}
    finally:
        cached.unlink()
        if not any(cached.parent.iterdir()):
            cached.parent.rmdir()


def test_the_cache_beside_a_copy_is_hidden_with_it(root):
    package = root / "grading" / "bank"
    package.mkdir(parents=True)
    shutil.copy(BANK / "gae.py", package / "gae.py")
    (package / "__pycache__").mkdir()
    for name in ("gae.cpython-312.pyc", "gae.cpython-311.opt-1.pyc", "gaelic.cpython-312.pyc"):
        (package / "__pycache__" / name).write_bytes(b"compiled by another interpreter")
    assert set(found(root)) == {"grading/bank/gae.py", "grading/bank/__pycache__/gae.cpython-312.pyc",
                                "grading/bank/__pycache__/gae.cpython-311.opt-1.pyc"}


def blob_id(path: Path) -> bytes:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).digest()


def test_another_checkouts_object_store_is_found_loose_or_packed(root):
    loose = root / "src" / "lab12" / ".git" / "objects"
    blob = blob_id(REFERENCE).hex()
    (loose / blob[:2]).mkdir(parents=True)
    (loose / blob[:2] / blob[2:]).write_bytes(zlib.compress(b"blob ..."))
    packed = root / "opt" / "mirror.git" / "objects"
    (packed / "pack").mkdir(parents=True)
    ids = sorted([blob_id(BANK / "kl.py"), hashlib.sha1(b"other").digest(), b"\xff" * 20])
    ends = [sum(i[0] <= b for i in ids) for b in range(256)]
    (packed / "pack" / "pack-1.idx").write_bytes(b"\377tOc\0\0\0\2" + struct.pack(">256I", *ends) + b"".join(ids))
    assert found(root) == {"src/lab12/.git/objects": REFERENCE, "opt/mirror.git/objects": BANK / "kl.py"}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_real_clone_is_found_by_its_pack(root):
    root.mkdir()
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", "--depth", "1", f"file://{ROOT}", str(root / "c")],
                   check=True, capture_output=True)
    if not (ROOT / ".git").exists() or "solutions/rlhf.py" not in subprocess.run(
            ["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True).stdout:
        pytest.skip("not a git checkout")
    if subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--", "solutions"]).returncode:
        pytest.skip("the reference has uncommitted changes: the clone holds another version")
    assert "c/.git/objects" in found(root)


def test_the_sandbox_hides_copies_under_its_read_roots(root, monkeypatch):
    (root / "lib").mkdir(parents=True)
    shutil.copy(REFERENCE, root / "lib" / "kept.py")
    (root / "lib" / "torch.py").write_text("# not a secret\n" * 10)
    monkeypatch.setattr(isolation, "view", lambda: readable.View((root,), (), ()))
    argv = isolation.Isolation(bwrap="bwrap").command(root.parent, ["python"], None, 1 << 20)
    masks = {argv[i + 2] for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 1] == "/dev/null"}
    assert str(root / "lib" / "kept.py") in masks
    read = isolation.Isolation(landlock=6).landlock_rules(root.parent)["read"]
    assert str(root / "lib" / "torch.py") in read and not [p for p in read if p.startswith(str(root / "lib" / "kept"))]


def test_the_search_is_memoised_until_a_folder_changes_and_skips_the_graders_own_folders(root, monkeypatch):
    """The same process (a grade-all worker) reuses its search while no folder it walked changed; a copy added
    since changes its folder, and the next grade searches again and finds it."""
    (root / "repo" / "solutions").mkdir(parents=True)
    shutil.copy(REFERENCE, root / "repo" / "solutions" / "rlhf.py")
    assert secret_files.copies([root], skip=[root / "repo"]) == []
    searched = []
    real = secret_files._search
    monkeypatch.setattr(secret_files, "_search", lambda *a: searched.append(1) or real(*a))
    assert secret_files.copies([root], skip=[root / "repo"]) == [] and not searched
    shutil.copy(REFERENCE, root / "late.py")
    secret_files._checked.clear()  # the next grade: the folders are checked again
    assert [c.path for c in secret_files.copies([root], skip=[root / "repo"])] == [root / "late.py"] and searched


@pytest.mark.skipif(not isolation.detect().landlock, reason="needs Landlock")
def test_a_copy_in_the_view_is_hidden_and_one_left_readable_refuses_the_grade_naming_it(monkeypatch):
    """The second line: a byte-exact copy inside what the child may read is found and hidden (the preflight's
    probe proves it); were it left readable, the refusal names it first."""
    iso = dataclasses.replace(isolation.detect(), bwrap=None)
    place = Path(tempfile.mkdtemp(prefix="autograder-copy-"))
    try:
        place.chmod(0o755)
        shutil.copy(BANK / "gae.py", place / "gae_variants.py")
        (place / "gae_variants.py").chmod(0o644)
        shown = dataclasses.replace(readable.view(), system=(*readable.view().system, place))
        monkeypatch.setattr(isolation, "view", lambda: shown)
        secret_files._searched.clear()
        preflight.ensure_secrets_hidden(config.load().limits, [], iso)
        monkeypatch.setattr(isolation, "hidden", isolation._grader_folders)  # the copy no longer hidden
        with pytest.raises(preflight.SecretsVisible, match=f"^{place}/gae_variants.py is a copy of the grader's "
                                                           f"{BANK}/gae.py that submissions could read"):
            preflight.ensure_secrets_hidden(config.load().limits, [], iso)
    finally:
        shutil.rmtree(place)
        secret_files._searched.clear()


def test_the_next_process_reuses_a_search_while_no_folder_changed(root, monkeypatch):
    (root / "lib" / "deep").mkdir(parents=True)
    shutil.copy(REFERENCE, root / "lib" / "kept.py")
    first = secret_files.copies([root])
    secret_files._searched.clear()  # as a new process: only the cache file is left
    searched = []
    real = secret_files._search
    monkeypatch.setattr(secret_files, "_search", lambda *a: searched.append(1) or real(*a))
    assert secret_files.copies([root]) == first and not searched
    secret_files._searched.clear()
    shutil.copy(BANK / "kl.py", root / "lib" / "deep" / "new.py")  # its folder's time changes
    assert root / "lib" / "deep" / "new.py" in {c.path for c in secret_files.copies([root])} and searched


def test_two_searches_are_both_kept_for_the_next_processes(root, tmp_path, monkeypatch):
    """Grades of two labs (other secrets, other roots) alternate without searching again: a file per search."""
    (root / "lib").mkdir(parents=True)
    shutil.copy(REFERENCE, root / "lib" / "kept.py")
    other = tmp_path / "other-root"
    (other / "lib").mkdir(parents=True)
    shutil.copy(BANK / "kl.py", other / "lib" / "kept.py")
    first, second = secret_files.copies([root]), secret_files.copies([other])
    searched = []
    real = secret_files._search
    monkeypatch.setattr(secret_files, "_search", lambda *a: searched.append(1) or real(*a))
    for roots, found in (([root], first), ([other], second), ([root], first)):
        secret_files._searched.clear()  # as a new process
        assert secret_files.copies(roots) == found
    assert not searched


@pytest.mark.parametrize("image", [False, True])
def test_a_search_made_while_the_image_was_built_serves_every_later_grade(root, tmp_path, monkeypatch, image):
    """The Gradescope bundle's setup.sh searches with IMAGE_BUILD set: a grade of that image, any time later (each
    container starts afresh from it), reuses the search while no folder it walked has changed; an ordinary search
    serves for SCAN_SECONDS only. Another process's later searches never delete the image's."""
    monkeypatch.setattr(secret_files, "CACHE", tmp_path / "cache")
    (root / "lib").mkdir(parents=True)
    shutil.copy(REFERENCE, root / "lib" / "kept.py")
    if image:
        monkeypatch.setenv(secret_files.IMAGE_BUILD, "1")
    first = secret_files.copies([root])
    monkeypatch.delenv(secret_files.IMAGE_BUILD, raising=False)
    later = time.time() + 30 * secret_files.SCAN_SECONDS
    monkeypatch.setattr(secret_files.time, "time", lambda: later)
    searched = []
    real = secret_files._search
    monkeypatch.setattr(secret_files, "_search", lambda *a: searched.append(1) or real(*a))
    secret_files._searched.clear()  # a grade's new process, much later
    assert secret_files.copies([root]) == first and len(searched) == (0 if image else 1)
    secret_files._searched.clear()
    (root / "lib" / "new.py").write_text("x = 1\n")  # a folder it walked changes: searched again
    secret_files.copies([root])
    assert len(searched) == (1 if image else 2)
    assert [p.name.startswith("image-") for p in sorted((tmp_path / "cache").iterdir())].count(True) == int(image)
