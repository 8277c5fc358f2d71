"""Find the submissions of a class: a folder with one entry per student, or a Gradescope export.

    subs = discover(Path("submissions"))          # or Path("assignment_123_export.zip")
    subs[0].student, subs[0].filename, subs[0].data()

Layouts:
- a folder (or a plain zip of one): each entry is a student. A folder holding `rlhf.py` or a
  notebook, or a single file `<student>.py` / `<student>.ipynb`.
- a Gradescope "export submissions" zip (or the folder it unzips to): `submission_metadata.yml`
  beside one folder per submission (`submission_<id>/`); the metadata maps each id to its
  submitters' names and emails (`:submitters: [{":name", ":email", ":sid"}]`).
A student whose entry holds no gradable file still gets a Submission, with `problem` saying why,
so the gradebook lists every student.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

METADATA = "submission_metadata.yml"
SUFFIXES = (".py", ".ipynb")
WORLD_NAMES = {"tinylm.py", "lab_helpers.py", "training.py", "run_experiments.py", "self_check.py"}


@dataclass(frozen=True)
class Submission:
    student: str        # unique, filesystem-safe: the folder DIR/<student>/ and the gradebook's key
    name: str           # the submitters' names (Gradescope), else ""
    email: str          # the submitters' emails (Gradescope), else ""
    source: Path        # the folder or zip it comes from
    member: str         # path of the submitted file inside `source` (posix), "" when none was found
    problem: str = ""   # why nothing can be graded (no rlhf.py or notebook), else ""

    @property
    def filename(self) -> str:
        return PurePosixPath(self.member).name if self.member else ""

    def data(self) -> bytes:
        """The submitted file's bytes."""
        if self.source.is_dir():
            return (self.source / self.member).read_bytes()
        with zipfile.ZipFile(self.source) as archive:
            return archive.read(self.member)


def discover(source: Path, skip: Path | None = None) -> list[Submission]:
    """Every submission under `source` (a folder or a zip), sorted by student; `skip`: a folder to leave out
    (the output folder, when it lies inside `source`)."""
    source = Path(source)
    if source.is_dir():
        skip = skip.resolve() if skip is not None else None
        files = sorted(str(p.relative_to(source).as_posix()) for p in source.rglob("*")
                       if p.is_file() and (skip is None or skip not in p.resolve().parents))
    elif zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            files = sorted(n for n in archive.namelist() if not n.endswith("/"))
            metadata = _metadata_path(files)
            meta = _load_metadata(archive.read(metadata)) if metadata is not None else None
        files = [f for f in files if _safe(f)]
        return _assemble(source, files, metadata, meta)
    else:
        raise FileNotFoundError(f"{source} is neither a folder nor a zip file")
    metadata = _metadata_path(files)
    meta = _load_metadata((source / metadata).read_bytes()) if metadata is not None else None
    return _assemble(source, files, metadata, meta)


def _assemble(source: Path, files: list[str], metadata: str | None, meta: dict | None) -> list[Submission]:
    files = [f for f in files if not _ignored(f)]
    if metadata is not None:
        entries = _gradescope_entries(files, metadata, meta or {})
    else:
        entries = _folder_entries(files, strip_wrapper=not source.is_dir())
    taken: set[str] = set()
    subs = []
    for key, name, email, members, single in entries:
        student = _unique(_safe_name(key), taken)
        member = single or _choose(members)
        problem = "" if member else _no_file_problem(members)
        subs.append(Submission(student, name, email, source, member or "", problem))
    return sorted(subs, key=lambda s: s.student)


def _folder_entries(files: list[str], strip_wrapper: bool):
    """(key, name, email, files of the entry, single file or None) for a plain folder or zip."""
    if strip_wrapper:  # a zip of one folder holding the class: look inside it
        tops = {f.split("/", 1)[0] for f in files}
        if len(tops) == 1 and all("/" in f for f in files):
            top = tops.pop()
            files = [f[len(top) + 1:] for f in files]
            prefix = top + "/"
        else:
            prefix = ""
    else:
        prefix = ""
    groups: dict[str, list[str]] = {}
    for f in files:
        head, _, rest = f.partition("/")
        if rest:
            groups.setdefault(head, []).append(prefix + f)
        elif f.endswith(SUFFIXES):
            yield PurePosixPath(f).stem, "", "", [prefix + f], prefix + f
    for head, members in sorted(groups.items()):
        yield head, "", "", members, None


def _gradescope_entries(files: list[str], metadata: str, meta: dict):
    root = str(PurePosixPath(metadata).parent)
    root = "" if root == "." else root + "/"
    for sub_id, info in sorted(meta.items(), key=lambda kv: str(kv[0])):
        info = info if isinstance(info, dict) else {}
        submitters = [s for s in _field(info, "submitters") or [] if isinstance(s, dict)]
        names = "; ".join(str(_field(s, "name") or "") for s in submitters).strip("; ")
        emails = "; ".join(str(_field(s, "email") or "") for s in submitters).strip("; ")
        first = submitters[0] if submitters else {}
        key = str(_field(first, "email") or _field(first, "name") or _field(first, "sid") or sub_id)
        prefix = f"{root}{sub_id}/"
        yield key, names, emails, [f for f in files if f.startswith(prefix)], None


def _field(mapping: dict, name: str):
    """Gradescope writes Ruby symbols: the key `:name` (accept `name` too)."""
    return mapping.get(f":{name}", mapping.get(name))


def _choose(members: list[str]) -> str | None:
    """The file to grade in an entry: rlhf.py, else rlhf.ipynb, else a notebook, else a lone .py file."""
    def shallow_first(found: list[str]) -> str | None:
        return min(found, key=lambda f: (f.count("/"), f)) if found else None

    named = lambda n: [f for f in members if PurePosixPath(f).name == n]  # noqa: E731
    return (shallow_first(named("rlhf.py")) or shallow_first(named("rlhf.ipynb"))
            or shallow_first([f for f in members if f.endswith(".ipynb")])
            or shallow_first([f for f in members if f.endswith(".py") and PurePosixPath(f).name not in WORLD_NAMES]))


def _no_file_problem(members: list[str]) -> str:
    if not members:
        return "the submission is empty"
    shown = ", ".join(PurePosixPath(f).name for f in members[:5]) + (", ..." if len(members) > 5 else "")
    return f"no rlhf.py or notebook in the submission (it holds: {shown})"


def _metadata_path(files: list[str]) -> str | None:
    found = [f for f in files if PurePosixPath(f).name == METADATA and _safe(f) and not _ignored(f)]
    return min(found, key=lambda f: f.count("/")) if found else None


class _TolerantLoader(yaml.SafeLoader):
    """Safe YAML that reads Ruby-tagged values (`!ruby/object:BigDecimal ...`) as plain data."""


def _plain(loader: yaml.SafeLoader, suffix: str, node: yaml.Node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_TolerantLoader.add_multi_constructor("!", _plain)


def _load_metadata(text: bytes) -> dict:
    meta = yaml.load(text, Loader=_TolerantLoader)  # noqa: S506 - a SafeLoader subclass
    if not isinstance(meta, dict):
        raise ValueError(f"{METADATA} is not a mapping of submission ids")
    return meta


def _safe(name: str) -> bool:
    """A zip member name that stays inside the archive's tree."""
    parts = PurePosixPath(name).parts
    return not name.startswith("/") and ".." not in parts and "\\" not in name


def _ignored(name: str) -> bool:
    """Clutter that is never a submission: __MACOSX/, .ipynb_checkpoints/, __pycache__/, dotfiles."""
    return any(part.startswith((".", "__")) for part in PurePosixPath(name).parts)


def _safe_name(key: str) -> str:
    name = re.sub(r"[^\w.@+-]+", "_", key).strip("._")
    return name[:80] or "student"


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{name}-{n}"
    taken.add(candidate.lower())
    return candidate
