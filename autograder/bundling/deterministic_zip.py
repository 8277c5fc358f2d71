"""A tree as a zip that is byte-identical on every build: sorted entries, fixed timestamps and modes."""

from __future__ import annotations

import io
import zipfile

from autograder.bundling.tree import Tree

EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip can store


def zip_bytes(tree: Tree, prefix: str = "") -> bytes:
    """Every file of `tree` under `prefix/` (or at the top when empty), deflated, in sorted order."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(tree.files):
            info = zipfile.ZipInfo(f"{prefix}/{name}" if prefix else name, date_time=EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, so the mode below is honoured by unzip
            info.external_attr = (0o100755 if name in tree.executable else 0o100644) << 16
            archive.writestr(info, tree.files[name], compresslevel=6)
    return buffer.getvalue()
