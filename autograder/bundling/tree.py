"""The unit every release step works on: the files of one output, in memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Tree:
    """Bundle path (posix, relative) -> file content, plus which files are executable."""

    files: dict[str, bytes] = field(default_factory=dict)
    executable: set[str] = field(default_factory=set)

    def add(self, path: str, data: bytes | str, executable: bool = False) -> None:
        if path.startswith("/") or ".." in Path(path).parts:
            raise ValueError(f"bundle paths are relative and stay inside the bundle: {path}")
        self.files[path] = data.encode() if isinstance(data, str) else data
        if executable:
            self.executable.add(path)

    def write(self, folder: Path) -> None:
        """Write every file under `folder` (created as needed)."""
        for path, data in sorted(self.files.items()):
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            target.chmod(0o755 if path in self.executable else 0o644)
