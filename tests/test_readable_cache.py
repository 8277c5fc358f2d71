"""The child's view of the installed distributions is kept for the next processes (readable.runtime_files, through
private_cache) and read again whenever anything it was read from changes: a kept view never shows what a fresh one
would not. Each change below is one way a machine's packages change after a grade (pip, an instructor's hand)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder.sandbox import private_cache, readable


def install(site: Path, name: str, files: dict[str, str], requires: tuple[str, ...] = ()) -> Path:
    """A distribution `name` in `site`: its files, and a dist-info whose RECORD lists them (and itself)."""
    meta = site / f"{name}-1.0.dist-info"
    meta.mkdir(parents=True)
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
                                   + "".join(f"Requires-Dist: {r}\n" for r in requires))
    record = [*files, f"{meta.name}/METADATA", f"{meta.name}/RECORD"]
    (meta / "RECORD").write_text("".join(f"{rel},,\n" for rel in record))
    return meta


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A package folder on the import path holding `labfake` (a package with a subpackage), whose files the view
    shows (runtime_names: labfake alone), kept in a cache of the test's own."""
    folder = tmp_path / "site"
    install(folder, "labfake", {"labfake/__init__.py": "", "labfake/sub/__init__.py": "", "labfake/sub/core.py": ""},
            requires=("labfake2",))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(readable, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(readable, "runtime_names", lambda: ["labfake"])
    return folder


def kept_and_fresh(monkeypatch) -> tuple[set[Path], set[Path], bool]:
    """(what runtime_files gives now, what it gives with no cache, whether the first read the distributions)."""
    calls = []
    real = readable.closure
    monkeypatch.setattr(readable, "closure", lambda names: calls.append(1) or real(names))
    kept = set(readable.runtime_files())
    for old in readable.CACHE.iterdir():
        old.unlink()
    fresh = set(readable.runtime_files())
    monkeypatch.setattr(readable, "closure", real)
    return kept, fresh, calls == [1, 1]


def add_unlisted(site: Path) -> None:
    (site / "labfake" / "sub" / "secret_copy.py").write_text("ANSWER = 1\n")


def shorten_record(site: Path) -> None:
    record = site / "labfake-1.0.dist-info" / "RECORD"
    record.write_text("".join(line + "\n" for line in record.read_text().splitlines() if "core.py" not in line))


def install_requirement(site: Path) -> None:
    install(site, "labfake2", {"labfake2.py": ""})


def drop_requirement(site: Path) -> None:
    metadata = site / "labfake-1.0.dist-info" / "METADATA"
    metadata.write_text(metadata.read_text().replace("Requires-Dist: labfake2\n", ""))


def link_a_folder(site: Path) -> None:
    """labfake/sub replaced by a link to a folder elsewhere (the view never follows a link it does not list)."""
    elsewhere = site.parent / "elsewhere"
    (site / "labfake" / "sub").rename(elsewhere)
    (site / "labfake" / "sub").symlink_to(elsewhere)


def nothing(site: Path) -> None:
    pass


CHANGES = {  # name -> (what the machine holds first, the change)
    "a file not in RECORD put into a shown folder": (nothing, add_unlisted),
    "RECORD edited in place": (nothing, shorten_record),
    "a missing requirement installed": (nothing, install_requirement),
    "METADATA edited in place": (install_requirement, drop_requirement),
    "a folder replaced by a link": (nothing, link_a_folder)}


def test_the_next_process_reuses_the_view_while_nothing_changed(site, monkeypatch):
    first = readable.runtime_files()
    assert site / "labfake" in first  # RECORD lists every file beneath it: shown whole
    calls = []
    monkeypatch.setattr(readable, "closure", lambda names: calls.append(1) or [])
    assert readable.runtime_files() == first and not calls


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_any_change_to_what_the_view_was_read_from_reads_it_again(site, monkeypatch, change):
    first, then = CHANGES[change]
    first(site)
    before = set(readable.runtime_files())
    then(site)
    kept, fresh, read_again = kept_and_fresh(monkeypatch)
    assert read_again and kept == fresh != before


def test_a_folder_with_a_file_not_in_record_is_no_longer_shown_whole(site, monkeypatch):
    readable.runtime_files()
    add_unlisted(site)
    files = set(readable.runtime_files())
    assert site / "labfake" / "sub" / "core.py" in files
    assert not any((site / "labfake" / "sub" / "secret_copy.py").is_relative_to(p) for p in files)


@pytest.mark.parametrize("forge", ["a link", "writable by others", "not an object", "not JSON"])
def test_a_kept_file_the_judge_cannot_vouch_for_is_not_read(tmp_path, forge):
    """private_cache.read takes only a regular file of this user that no other user may write."""
    path, real = tmp_path / "kept.json", tmp_path / "real.json"
    private_cache.write(real, {"stamps": [], "files": ["/secret"]})
    if forge == "a link":
        path.symlink_to(real)
    else:
        path.write_text({"writable by others": real.read_text(), "not an object": "[1, 2]",
                         "not JSON": "{"}[forge])
        os.chmod(path, 0o666 if forge == "writable by others" else 0o600)
    assert private_cache.read(real) is not None and private_cache.read(path) is None
