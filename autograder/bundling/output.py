"""Step: write a release into its --out folder, touching only the files a release owns.

The folder keeps a manifest (`.autograder-release.json`: path -> sha256 of every file the last release
wrote). A new release
  - refuses (ReleaseError) when the folder holds files the manifest does not list, or listed files
    changed since (staff's notes, nbgrader's own gradebook.db, submitted/, release/ ...), unless `force`;
  - with `force`, writes beside those files and never deletes or rewrites a file it did not write;
    a listed file that staff changed is rewritten (that is what --force says);
  - removes files that it wrote last time and no longer produces (only when unchanged), and the
    folders that this leaves empty.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from autograder.bundling.tree import Tree

MANIFEST = ".autograder-release.json"
SHOWN = 5  # paths quoted in the refusal


class ReleaseError(ValueError):
    """The release cannot be written where asked (one sentence for the user)."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _manifest(out: Path) -> dict[str, str]:
    path = out / MANIFEST
    if not path.is_file():
        return {}
    try:
        files = json.loads(path.read_text()).get("files", {})
    except (OSError, ValueError, AttributeError):
        raise ReleaseError(f"{path} is not a release manifest; remove it or choose another --out") from None
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}


def _existing(out: Path) -> dict[str, Path]:
    return {p.relative_to(out).as_posix(): p for p in sorted(out.rglob("*"))
            if (p.is_file() or p.is_symlink()) and p.name != MANIFEST}


def foreign_files(out: Path, owned: dict[str, str]) -> list[str]:
    """Files under `out` that the last release did not write, or that changed since it wrote them."""
    return [name for name, path in _existing(out).items()
            if name not in owned or path.is_symlink() or _sha(path.read_bytes()) != owned[name]]


def write_release(out: Path, files: Tree, force: bool = False) -> None:
    """Write every file of `files` under `out` (see the module docstring)."""
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"--out {out} is a file, not a folder")
    owned = _manifest(out) if out.is_dir() else {}
    foreign = foreign_files(out, owned) if out.is_dir() else []
    if foreign and not force:
        shown = ", ".join(foreign[:SHOWN]) + (f" and {len(foreign) - SHOWN} more" if len(foreign) > SHOWN else "")
        raise ReleaseError(f"--out {out} holds {len(foreign)} file(s) that no earlier release wrote or that "
                           f"changed since ({shown}); choose an empty folder, or give --force to write the "
                           "release beside them (they are kept)")
    clash = [name for name in files.files if name in foreign and (name not in owned or (out / name).is_symlink())]
    if clash:
        raise ReleaseError(f"{out / clash[0]} exists and no earlier release wrote it; move it away first")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name in sorted(set(owned) - set(files.files) - set(foreign)):
            stale = out / name
            stale.unlink(missing_ok=True)
            _remove_empty_parents(stale.parent, out)
        for name, data in sorted(files.files.items()):
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            target.chmod(0o755 if name in files.executable else 0o644)
        manifest = {"files": {name: _sha(data) for name, data in sorted(files.files.items())}}
        (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    except OSError as exc:
        raise ReleaseError(f"cannot write the release into {out}: {exc.strerror or exc}") from None


def _remove_empty_parents(folder: Path, top: Path) -> None:
    while folder != top and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
